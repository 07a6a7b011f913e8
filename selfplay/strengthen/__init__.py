"""Tests for existing problems: known-wrong solutions (`mutants`) that a task's tests must
fail."""

from selfplay.strengthen.mutants import DEGENERATE, Mutant, degenerate, mutants

__all__ = ["DEGENERATE", "Mutant", "degenerate", "mutants"]
