"""The `selfplay train` configuration: one YAML file, validated like `selfplay run`'s.

Defaults fit a 2-core CPU: LoRA adapters on the model, a batch of two, short completions,
float32 weights (CPUs without native bf16 emulate it slowly). On a GPU the same file trains
in bf16 and, for GRPO, generates with vLLM (TRL's `use_vllm`) when vLLM is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from selfplay import methods
from selfplay.config.loading import (
    ConfigError,
    check_scheduler_options,
    known_kinds,
    known_scheduler,
    load_yaml_config,
)
from selfplay.config.run import VerifierConfig


class LoraSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="train LoRA adapters instead of every weight")
    r: int = Field(16, ge=1, description="adapter rank")
    alpha: int = Field(32, ge=1, description="adapter scale numerator (scale = alpha / r)")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="dropout on the adapter input")
    target_modules: str | list[str] = Field(
        "all-linear", description="layers that get adapters ('all-linear' or a list of names)"
    )


class DataSettings(BaseModel):
    """Which tasks of the bank training sees: the curriculum's filter on the bank."""

    model_config = ConfigDict(extra="forbid")

    kinds: list[str] = Field(default_factory=list, description="only these task kinds (empty: all)")
    sources: list[str] = Field(default_factory=list, description="only these sources (empty: all)")
    tasks: list[str] = Field(default_factory=list, description="only these task ids (empty: all)")
    min_pass_rate: float | None = Field(
        None, ge=0.0, le=1.0, description="only tasks solved at least this often"
    )
    max_pass_rate: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="only tasks solved at most this often (sft: skip mastered)",
    )
    references: bool = Field(True, description="sft: train on reference solutions too")
    held_out_fraction: float = Field(
        0.1,
        ge=0.0,
        lt=1.0,
        description="never train on the test split selfplay export and selfplay eval bank "
        "make with this fraction and held_out_seed (0: train on every task)",
    )
    held_out_seed: int = Field(0, description="seed of that split")
    held_out_by: Literal["program", "family"] = Field(
        "program",
        description="what that split holds out whole: each normalised program, or each "
        "procedural family",
    )

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, names: list[str]) -> list[str]:
        return known_kinds(names)


class GrpoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scheduler: str = Field(
        "learnability", description="curriculum scheduler picking each batch's tasks"
    )
    scheduler_options: dict[str, Any] = Field(
        default_factory=dict, description="options of the scheduler, e.g. {half_life: 20}"
    )
    num_generations: int = Field(2, ge=2, description="completions per prompt (the group)")
    max_completion_length: int | None = Field(
        None,
        ge=8,
        description="longest completion, tokens (None: the longest answer budget among the "
        "training tasks' kinds, from the kind registry: short for values, long for programs)",
    )
    temperature: float = Field(1.0, gt=0.0, description="sampling temperature of rollouts")
    beta: float = Field(0.0, ge=0.0, description="KL coefficient (0: no reference model)")
    reward: Literal["binary", "fraction"] = Field(
        "binary", description="binary, or the share of tests passed"
    )
    warmup_samples: int = Field(
        2,
        ge=0,
        description="attempts at each training task the policy has no record of, before the "
        "first batch, so the scheduler never picks blind (0: no warm-up)",
    )
    use_vllm: Literal["auto", "yes", "no"] = Field(
        "auto", description="generate with vLLM ('auto': on a CUDA GPU when vllm is installed)"
    )


class ProposerGrpoSettings(BaseModel):
    """The proposer's RL (`--role proposer --method grpo`, `selfplay.training.proposer_rl`):
    each step proposes from fresh references, admits, lets the solver attempt the admitted
    tasks and takes a group-relative step on the learnability reward."""

    model_config = ConfigDict(extra="forbid")

    kinds: list[str] = Field(
        default_factory=lambda: ["deduction", "abduction", "induction", "codegen"],
        description="task kinds the proposer writes",
    )
    groups_per_kind: int = Field(1, ge=1, description="prompts (reference sets) per kind a step")
    group_size: int = Field(8, ge=2, description="proposals sampled per prompt (the group)")
    references: int = Field(2, ge=1, le=16, description="bank tasks shown in each prompt")
    grounding: Literal["bank", "imported"] = Field(
        "bank",
        description="where references come from, drawn without replacement: any task of the "
        "bank, or only tasks the proposer did not write (imported, seeds, generated)",
    )
    solver_samples: int = Field(
        4, ge=2, description="attempts by the solver at each admitted task (its pass rate)"
    )
    solver_model: str | None = Field(
        None,
        description="the solver that attempts the proposals (null: the model training starts "
        "from, frozen, on the same engine)",
    )
    repetition_penalty: float = Field(
        1.0,
        ge=0.0,
        description="weight of the penalty for a proposal's share of its step's batch with "
        "the same normalised program (R-Zero's; 0: none)",
    )
    temperature: float = Field(1.0, gt=0.0, description="sampling temperature of proposals")
    micro_batch: int = Field(
        8, ge=1, description="completions of one prompt per forward pass of a step"
    )

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, names: list[str]) -> list[str]:
        if not names:
            raise ValueError("give at least one task kind")
        return known_kinds(names)


class ExpertSettings(BaseModel):
    """Expert iteration (`method: ei`): sample, keep what the sandbox passes, SFT, repeat."""

    model_config = ConfigDict(extra="forbid")

    iterations: int = Field(2, ge=1, description="sample-grade-train iterations")
    scheduler: str = Field(
        "learnability", description="curriculum scheduler picking each iteration's tasks"
    )
    scheduler_options: dict[str, Any] = Field(
        default_factory=dict, description="options of the scheduler, e.g. {half_life: 20}"
    )
    tasks: int = Field(64, ge=1, description="tasks the scheduler picks per iteration")
    samples: int = Field(4, ge=1, description="answers sampled per picked task")
    temperature: float = Field(1.0, gt=0.0, description="sampling temperature")
    max_new_tokens: int | None = Field(
        None,
        ge=4,
        description="token budget of an answer (None: the kind's, from the kind registry); an "
        "answer the budget cuts off before it closes its block is a failure",
    )


class DpoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    beta: float = Field(0.1, gt=0.0, description="DPO temperature")
    max_pairs_per_task: int = Field(4, ge=1, description="pairs per task (or proposer prompt)")


class TrainConfig(BaseModel):
    """Everything `selfplay train` does; the YAML file mirrors these fields."""

    model_config = ConfigDict(extra="forbid")

    # Any method registered in `selfplay.methods` (checked by `_known_method`).
    method: str = Field("sft", description=methods.described())
    role: Literal["solver", "proposer"] = Field(
        "solver",
        description="train the solver (tasks) or the proposer (its proposals: sft, dpo, or "
        "grpo, on-policy RL on the learnability of what it writes)",
    )
    model: str = Field("bundled", description="the model to start from (any --model spec)")
    max_steps: int = Field(16, ge=1, description="optimizer steps (ei: per iteration)")
    learning_rate: float = Field(1e-4, gt=0.0, description="peak learning rate")
    batch_size: int = Field(2, ge=1, description="sequences per device and step")
    gradient_accumulation_steps: int = Field(1, ge=1, description="batches per optimizer step")
    max_length: int = Field(1024, ge=32, description="sft/dpo: longest prompt + answer, tokens")
    save_steps: int = Field(
        4, ge=1, description="checkpoint every N steps (where a resumed run continues)"
    )
    seed: int = Field(0, description="seed of data order, sampling and adapters")
    dtype: Literal["auto", "float32", "bfloat16"] = Field(
        "auto", description="training dtype ('auto': bf16 on a GPU that has it, else float32)"
    )
    average: float = Field(
        1.0,
        ge=0.0,
        le=1.0,
        description="weight of the trained model in a weight-space average with the model it "
        "started from (WiSE-FT): 1 keeps the trained weights, 0.5 lands halfway and keeps more "
        "of what the starting model could do",
    )
    lora: LoraSettings = Field(default_factory=LoraSettings)
    data: DataSettings = Field(default_factory=DataSettings)
    grpo: GrpoSettings = Field(default_factory=GrpoSettings)
    dpo: DpoSettings = Field(default_factory=DpoSettings)
    ei: ExpertSettings = Field(default_factory=ExpertSettings)
    proposer_grpo: ProposerGrpoSettings = Field(default_factory=ProposerGrpoSettings)
    proposer_reward: Literal["learnability", "solver_gain"] = Field(
        "learnability",
        description="proposer dpo: what makes a proposal better (the solver's pass rate on it, "
        "or the solver's gain on the probe set after training on its round's tasks)",
    )
    verifier: VerifierConfig = Field(
        default_factory=VerifierConfig,
        description="the sandbox grading rollouts (grpo) and samples (ei), as in selfplay run",
    )
    generation_backend: Literal["auto", "transformers", "vllm"] = Field(
        "auto",
        description="engine of generation outside the trainer (GRPO's warm-up, ei's samples): 'auto' = vllm "
        "where it runs (its CPU build too), else transformers",
    )

    @model_validator(mode="before")
    @classmethod
    def _flat_verifier_keys(cls, data: Any) -> Any:
        """`verifier_workers: N` (the key before training had a `verifier:` section) still
        reads, as `verifier: {workers: N}`."""
        if isinstance(data, dict) and "verifier_workers" in data:
            data = dict(data)
            section = dict(data.get("verifier") or {})
            section.setdefault("workers", data.pop("verifier_workers"))
            data["verifier"] = section
        return data

    @field_validator("method")
    @classmethod
    def _known_method(cls, name: str) -> str:
        if name not in methods.METHODS:
            raise ValueError(f"Input should be {methods.choices()}")
        return name

    @field_validator("grpo", "ei")
    @classmethod
    def _known_scheduler(cls, settings: Any) -> Any:
        known_scheduler(settings.scheduler)
        check_scheduler_options(settings.scheduler, settings.scheduler_options)
        return settings

    def check(self) -> TrainConfig:
        """Combinations no single field can refuse."""
        if self.role not in methods.get_method(self.method).roles:
            needs = "needs solver tasks" if self.role == "proposer" else "trains the proposer only"
            raise ConfigError(
                f"the {self.role} role trains with method {methods.trained_on(self.role)}; "
                f"{self.method} {needs}"
            )
        if (self.batch_size * self.gradient_accumulation_steps) % self.grpo.num_generations:
            if self.method == "grpo" and self.role == "solver":
                raise ConfigError(
                    "grpo needs batch_size x gradient_accumulation_steps to be a multiple of "
                    f"grpo.num_generations ({self.grpo.num_generations})"
                )
        return self


def load_train_config(path: str | Path | None = None, **overrides: Any) -> TrainConfig:
    """The config of `path` (YAML) with `overrides` (dotted names, None = not given) on top."""
    return load_yaml_config(TrainConfig, path, overrides).check()
