"""The self-play engine: the resumable round loop behind `selfplay run` (its configuration is
`selfplay.config.RunConfig`)."""

from selfplay.engine.build import make_run_backend, make_run_verifier
from selfplay.engine.rounds import SelfPlay
from selfplay.engine.summary import RoundSummary, metrics_path, proposer_rewards

__all__ = [
    "RoundSummary",
    "SelfPlay",
    "make_run_backend",
    "make_run_verifier",
    "metrics_path",
    "proposer_rewards",
]
