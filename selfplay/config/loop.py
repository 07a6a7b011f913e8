"""The `selfplay loop` configuration: a self-play round, solver and proposer training and
evaluation per iteration; its `run:` and `solver:` sections are `selfplay run`'s and
`selfplay train`'s files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from selfplay.config.loading import ConfigError, load_yaml_config
from selfplay.config.run import RunConfig
from selfplay.config.train import ProposerGrpoSettings, TrainConfig


class EvalSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    held_out_fraction: float = Field(
        0.1, gt=0.0, lt=1.0, description="share of the bank's tasks held out when the loop starts"
    )
    seed: int = Field(0, description="seed of the held-out split")
    held_out_by: Literal["program", "family"] = Field(
        "program",
        description="what the split holds out whole: each normalised program, or each "
        "procedural family (gain on families never trained on)",
    )
    humaneval_limit: int | None = Field(
        None, ge=0, description="HumanEval problems (null: 16 on a CPU, all 164 on a GPU; 0: off)"
    )
    max_new_tokens: int = Field(384, ge=16, description="longest answer in evaluation")


class ProposerTraining(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="train the proposer role")
    method: Literal["dpo", "grpo"] = Field(
        "dpo",
        description="dpo on the pairs of its recorded proposals, or grpo: on-policy RL on the "
        "learnability of what it writes, each step proposing, admitting and solving anew",
    )
    max_steps: int = Field(8, ge=1, description="proposer optimizer steps per iteration")
    learning_rate: float | None = Field(
        None, gt=0.0, description="its learning rate (null: the solver section's)"
    )
    reward: Literal["learnability", "solver_gain"] = Field(
        "learnability", description="dpo: what makes a proposal better (see selfplay train)"
    )
    grpo: ProposerGrpoSettings = Field(
        default_factory=ProposerGrpoSettings,
        description="grpo: the proposer's RL steps (selfplay train's proposer_grpo section)",
    )


class LoopConfig(BaseModel):
    """Everything `selfplay loop` does; the YAML file mirrors these fields."""

    model_config = ConfigDict(extra="forbid")

    iterations: int = Field(1, ge=1, description="iterations to run (a killed loop resumes)")
    models_dir: str | None = Field(
        None, description="where checkpoints go (default: <bank>.models next to the bank)"
    )
    run: RunConfig = Field(default_factory=RunConfig, description="the self-play round")
    solver: TrainConfig = Field(default_factory=TrainConfig, description="solver training")
    proposer: ProposerTraining = Field(default_factory=ProposerTraining)
    eval: EvalSettings = Field(default_factory=EvalSettings)


def load_loop_config(path: str | Path | None = None, **overrides: Any) -> LoopConfig:
    """The config of `path` (YAML) with `overrides` (dotted names, None = not given) on top."""
    config = load_yaml_config(LoopConfig, path, overrides)
    config.solver.check()
    if config.solver.role != "solver":
        raise ConfigError("solver.role must be solver; the proposer is trained under proposer:")
    # Training grades where the round grades (its Ray cluster, the packages programs may
    # import), unless solver: says otherwise: a package the round allows must not fail a
    # rollout that imports it.
    run, own = config.run.verifier, config.solver.verifier
    update = {k: getattr(run, k) for k in ("ray", "packages") if k not in own.model_fields_set}
    if update:
        config.solver.verifier = own.model_copy(update=update)
    return config
