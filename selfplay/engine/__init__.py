"""The self-play engine: configuration and the resumable round loop behind `selfplay run`."""

from selfplay.engine.config import ConfigError, RunConfig, documented_yaml, load_config
from selfplay.engine.rounds import RoundSummary, SelfPlay, metrics_path, proposer_rewards

__all__ = [
    "ConfigError",
    "RoundSummary",
    "RunConfig",
    "SelfPlay",
    "documented_yaml",
    "load_config",
    "metrics_path",
    "proposer_rewards",
]
