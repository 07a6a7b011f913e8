"""Every configuration the YAML files and the CLI load, and the one loader.

`selfplay run`, `selfplay train` and `selfplay loop` each read one YAML file into a pydantic
model (`RunConfig`, `TrainConfig`, `LoopConfig`; a loop's file holds the other two). The
models sit here, below everything that uses them, so the engine, training, the proposer and
the CLI all import their settings from one place and never from each other. The task kinds
and schedulers a config may name are checked against their registries (`selfplay.kinds`,
`curricula`), so registering a new one needs no edit here.
"""

from selfplay.config.loading import (
    ConfigError,
    check_scheduler_options,
    documented_yaml,
    load_yaml_config,
)
from selfplay.config.loop import EvalSettings, LoopConfig, ProposerTraining, load_loop_config
from selfplay.config.run import (
    Learnability,
    ModelConfig,
    ProposerConfig,
    RunConfig,
    SolverConfig,
    VerifierConfig,
    load_config,
)
from selfplay.config.train import (
    DataSettings,
    DpoSettings,
    GrpoSettings,
    LoraSettings,
    TrainConfig,
    load_train_config,
)

__all__ = [
    "ConfigError",
    "DataSettings",
    "DpoSettings",
    "EvalSettings",
    "GrpoSettings",
    "Learnability",
    "LoopConfig",
    "LoraSettings",
    "ModelConfig",
    "ProposerConfig",
    "ProposerTraining",
    "RunConfig",
    "SolverConfig",
    "TrainConfig",
    "VerifierConfig",
    "check_scheduler_options",
    "documented_yaml",
    "load_config",
    "load_loop_config",
    "load_train_config",
    "load_yaml_config",
]
