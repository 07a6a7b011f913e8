"""The proposer: a model writes new tasks; a chain of checks and the bank gate admit them."""

from selfplay.proposer.checks import Reason, run_checks, static_checks
from selfplay.proposer.proposer import MIN_INPUTS, ProposalReport, Proposer

__all__ = [
    "MIN_INPUTS",
    "ProposalReport",
    "Proposer",
    "Reason",
    "run_checks",
    "static_checks",
]
