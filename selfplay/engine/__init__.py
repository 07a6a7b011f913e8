"""The self-play engine: the resumable round loop behind `selfplay run` (its configuration is
`selfplay.config.RunConfig`). A round is a list of steps (`round_steps`, one module each in
`selfplay.engine.steps`) run by `selfplay.engine.runner`; `SelfPlay(steps=...)` runs another
list, such as the default one with a `Step` of one's own added."""

from selfplay.engine.build import make_run_backend, make_run_verifier
from selfplay.engine.rounds import SelfPlay, round_steps
from selfplay.engine.runner import Context, Step
from selfplay.engine.summary import RoundSummary, metrics_path, proposer_rewards

__all__ = [
    "Context",
    "RoundSummary",
    "SelfPlay",
    "Step",
    "make_run_backend",
    "make_run_verifier",
    "metrics_path",
    "proposer_rewards",
    "round_steps",
]
