"""Tests for existing problems: new tests for a task until its reference's mutants and the
degenerate answers fail (`strengthen`, `strengthen_bank`), and how much a proposer's own tests
catch (`discrimination`)."""

from selfplay.strengthen.bank import SourceReport, strengthen_bank
from selfplay.strengthen.discrimination import Discrimination, discrimination
from selfplay.strengthen.mutants import DEGENERATE, Mutant, degenerate, mutants
from selfplay.strengthen.strengthen import Strengthened, strengthen

__all__ = [
    "DEGENERATE",
    "Discrimination",
    "Mutant",
    "SourceReport",
    "Strengthened",
    "degenerate",
    "discrimination",
    "mutants",
    "strengthen",
    "strengthen_bank",
]
