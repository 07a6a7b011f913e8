"""The `selfplay run` configuration: the model, the proposer, the solver and the verifier.

Every knob has a default (the quickstart: the bundled model on CPU, small counts) and a
description, which `selfplay run --print-config` and the CLI's help show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from selfplay.config.loading import (
    check_scheduler_options,
    known_kinds,
    known_scheduler,
    load_yaml_config,
)

# How a task's pass rate p becomes the proposer's reward (`selfplay.solver.learnability`).
Learnability = Literal["variance", "absolute_zero"]


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec: str = Field(
        "bundled",
        description="model: 'bundled' (Qwen2.5-Coder-0.5B-Instruct), a .gguf file, a model "
        "directory, a Hugging Face Hub id, or a served model name for 'openai'",
    )
    backend: Literal["auto", "transformers", "vllm", "openai", "scripted"] = Field(
        "auto",
        description="model backend; 'auto' = vllm where it runs (its CPU build or a GPU), "
        "else transformers; 'scripted' replays canned completions",
    )
    batch_size: int = Field(8, ge=1, description="sequences generated together (transformers)")
    threads: int | None = Field(
        None,
        ge=1,
        description="CPU cores for the model (null: the backend's own choice; vllm keeps one "
        "core for its engine process)",
    )
    # 'auto' leaves the choice to the backend (float32 on CPUs without native bf16, where the
    # long prompt pass of self-play ran 2.3x slower in bf16).
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        "auto", description="weights dtype (transformers); 'auto' picks bf16 where supported"
    )
    quantize: Literal["auto", "none", "fp16"] = Field(
        "auto",
        description="packed fp16 linear layers (transformers, CPU); 'auto' = fp16 on a CPU "
        "with float32 weights, where it decodes 2.5 to 6 times faster with the same tokens",
    )
    base_url: str | None = Field(None, description="server URL for the 'openai' backend")
    options: dict[str, Any] = Field(
        default_factory=dict, description="extra keyword arguments for the backend"
    )
    ray: str | None = Field(
        None,
        description="run the backend as engines on this Ray cluster ('local', an address, "
        "'auto'); null: in this process",
    )
    ray_engines: int | None = Field(
        None, ge=1, description="engines on Ray (null: one per GPU for vllm, else one)"
    )


class ProposerConfig(BaseModel):
    """How the proposer samples and what a proposal must satisfy."""

    model_config = ConfigDict(extra="forbid")

    proposals_per_kind: int | None = Field(
        None,
        ge=1,
        description="programs sampled per task kind per round, in one wave (null: waves of 3 "
        "a kind on the transformers backend, 32 on vllm, until budget_s is spent; "
        "docs/self-play.md)",
    )
    budget_s: float = Field(
        120.0,
        gt=0,
        description="seconds of proposing per round when proposals_per_kind is null: another "
        "wave starts while the time spent plus the last wave's fits",
    )
    references: int = Field(2, ge=0, le=16, description="bank tasks shown in the proposer prompt")
    # The length the prompt asks for is the proposer's difficulty knob: over four default
    # rounds of the bundled model, 41% of its admitted programs of at most 6 lines were at
    # the solver's frontier against 25% of longer ones (abduction left out: none reached it).
    max_lines: int = Field(
        6, ge=1, le=200, description="most lines the proposer prompt asks a program to have"
    )
    scheduler: str = Field(
        "learnability",
        description="curriculum scheduler choosing the reference tasks: by default the ones "
        "this solver solves sometimes",
    )
    probe_tasks: int | None = Field(
        None,
        ge=0,
        description="bank tasks of each kind the solver has never attempted that it attempts "
        "before proposing, so references are chosen on evidence (null: 8 on vllm, 1 on "
        "the transformers backend; 0: none)",
    )
    inputs_per_task: int = Field(
        5, ge=2, le=20, description="calls of f asked for per program, and kept as its examples"
    )
    synthesized_inputs: int = Field(
        10,
        ge=0,
        le=40,
        description="calls of f built from the program itself besides the model's (0: only "
        "the model's)",
    )
    temperature: float = Field(1.0, ge=0.0, description="sampling temperature of both generations")
    top_p: float = Field(0.95, gt=0.0, le=1.0, description="nucleus sampling threshold")
    max_new_tokens: int = Field(200, ge=16, description="token budget for the program")
    input_max_new_tokens: int = Field(80, ge=8, description="token budget for the inputs")
    max_program_chars: int = Field(2000, ge=100, description="longer programs are rejected")
    max_output_chars: int = Field(1000, ge=10, description="longer outputs are rejected")
    reference_chars: int = Field(500, ge=100, description="reference programs are cut to this")

    @field_validator("scheduler")
    @classmethod
    def _known_scheduler(cls, name: str) -> str:
        return known_scheduler(name)


class SolverConfig(BaseModel):
    """How the solver samples and how its results become rewards."""

    model_config = ConfigDict(extra="forbid")

    tasks: int = Field(
        1, ge=0, description="bank tasks the curriculum picks per round, besides the new ones"
    )
    # 8 attempts at temperature 1.0, as Absolute Zero estimates learnability: the pass rate
    # that makes a task learnable is the one under the sampling an RL trainer uses (1.0),
    # and with 4 attempts a task solved one time in eight is seen as never solved half the
    # time (docs/self-play.md, "The proposer's yield").
    samples: int = Field(8, ge=1, description="attempts per task (n); the pass rate is over these")
    temperature: float = Field(1.0, ge=0.0, description="sampling temperature")
    top_p: float = Field(0.95, gt=0.0, le=1.0, description="nucleus sampling threshold")
    max_new_tokens: int = Field(384, ge=8, description="token budget for a program answer")
    literal_max_new_tokens: int = Field(
        96, ge=4, description="token budget for an input/output answer"
    )
    learnability: Learnability = Field(
        "absolute_zero",
        description="proposer reward: 'variance' = p(1-p), 'absolute_zero' = 1-p on 0<p<1",
    )


class VerifierConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workers: int = Field(2, ge=1, description="sandboxed verifier workers")
    timeout_s: float = Field(5.0, gt=0, le=600, description="wall-clock limit per program run")
    memory_mb: int = Field(1024, ge=64, description="memory limit per program run")
    ray: str | None = Field(
        None,
        description="grade on this Ray cluster ('local', an address, 'auto'; workers are "
        "per actor, one actor per node); null: in this process",
    )
    packages: list[str] | None = Field(
        None,
        description="what programs may import beyond the standard library, with what these "
        "need (nothing else of this machine's files is readable in the sandbox); null: "
        "$SELFPLAY_PACKAGES, else numpy, pandas and pytest",
    )


class RunConfig(BaseModel):
    """Everything `selfplay run` does; the YAML file mirrors these fields."""

    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(1, ge=1, description="rounds to run (a killed run resumes its rounds)")
    kinds: list[str] = Field(
        default_factory=lambda: ["deduction", "abduction", "induction", "codegen"],
        description="task kinds the proposer writes, in this order",
    )
    scheduler: str = Field(
        "uniform", description="curriculum scheduler choosing references and solver tasks"
    )
    scheduler_options: dict[str, Any] = Field(
        default_factory=dict,
        description="options of the scheduler, for example {half_life: 3} (rounds)",
    )
    seed: int = Field(0, description="seed of the scheduler and of sampling")
    metrics: str | None = Field(
        None,
        description="JSONL file with one metrics line per round (default: <bank>.metrics.jsonl)",
    )
    model: ModelConfig = Field(default_factory=ModelConfig)
    proposer: ProposerConfig = Field(default_factory=ProposerConfig)
    solver: SolverConfig = Field(default_factory=SolverConfig)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)

    @field_validator("scheduler")
    @classmethod
    def _known_scheduler(cls, name: str) -> str:
        return known_scheduler(name)

    @field_validator("scheduler_options")
    @classmethod
    def _scheduler_takes_options(cls, options: dict[str, Any], info: Any) -> dict[str, Any]:
        check_scheduler_options(info.data.get("scheduler", ""), options)
        return options

    @field_validator("kinds")
    @classmethod
    def _some_kinds(cls, names: list[str]) -> list[str]:
        if not names:
            raise ValueError("give at least one task kind")
        return known_kinds(names)


def load_config(path: str | Path | None = None, **overrides: Any) -> RunConfig:
    """The config of `path` (YAML) with `overrides` (dotted names, None = not given) on top."""
    return load_yaml_config(RunConfig, path, overrides)
