"""The proposer: a model writes new tasks; it generates and parses, admission judges."""

from selfplay.proposer.proposer import ProposalReport, Proposer

__all__ = ["ProposalReport", "Proposer"]
