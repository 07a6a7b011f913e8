"""The `selfplay run` configuration: one YAML file, validated by pydantic.

Every knob has a default (the quickstart: the bundled model on CPU, small counts) and a
description; unknown keys are errors, so a typo never silently falls back to a default.
`load_config` turns every problem into one `ConfigError` sentence naming the field and,
where there is a fixed set, the allowed values.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from selfplay.proposer.proposer import ProposerConfig
from selfplay.solver.solver import SolverConfig

BACKENDS = ("transformers", "vllm", "openai", "scripted")
M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A configuration that cannot be used; the message is one sentence."""


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec: str = Field(
        "bundled",
        description="model: 'bundled' (Qwen2.5-Coder-0.5B-Instruct), a .gguf file, a model "
        "directory, a Hugging Face Hub id, or a served model name for 'openai'",
    )
    backend: Literal["transformers", "vllm", "openai", "scripted"] = Field(
        "transformers", description="model backend; 'scripted' replays canned completions"
    )
    batch_size: int = Field(8, ge=1, description="sequences generated together (transformers)")
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


class RunConfig(BaseModel):
    """Everything `selfplay run` does; the YAML file mirrors these fields."""

    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(1, ge=1, description="rounds to run (a killed run resumes its rounds)")
    kinds: list[Literal["codegen", "deduction", "abduction", "induction"]] = Field(
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
        from curricula import scheduler_names

        if name not in scheduler_names():
            raise ValueError(f"unknown scheduler {name!r}; allowed: {', '.join(scheduler_names())}")
        return name

    @field_validator("scheduler_options")
    @classmethod
    def _scheduler_takes_options(cls, options: dict[str, Any], info: Any) -> dict[str, Any]:
        check_scheduler_options(info.data.get("scheduler", ""), options)
        return options

    @field_validator("kinds")
    @classmethod
    def _some_kinds(cls, kinds: list[str]) -> list[str]:
        if not kinds:
            raise ValueError("give at least one task kind")
        return list(dict.fromkeys(kinds))


def make_run_backend(config: RunConfig) -> Any:
    """The backend the config's `model:` names, built by the backends' factory (nothing
    loads until it first generates)."""
    from selfplay.backends import make_backend

    m = config.model
    options = dict(m.options)
    if m.backend == "transformers":
        options.setdefault("batch_size", m.batch_size)
        options.setdefault("dtype", m.dtype)
        options.setdefault("quantize", m.quantize)
    if m.backend == "openai" and m.base_url:
        options.setdefault("base_url", m.base_url)
    if m.ray:
        return make_backend("ray", m.spec, engine=m.backend, engines=m.ray_engines,
                            address=m.ray, engine_options=options)  # fmt: skip
    return make_backend(m.backend, m.spec, **options)


def make_run_verifier(config: RunConfig) -> Any:
    """The verifier the config's `verifier:` names: local sandboxes, or actors on Ray."""
    v = config.verifier
    if v.ray:
        from selfplay.verifier import RayVerifier

        return RayVerifier(v.ray, None, v.workers, v.timeout_s, v.memory_mb)
    from selfplay.verifier import Verifier

    return Verifier(v.workers, v.timeout_s, v.memory_mb)


def check_scheduler_options(name: str, options: dict[str, Any]) -> None:
    """Refuse options the scheduler does not take (ValueError naming them)."""
    from curricula import make_scheduler, scheduler_names

    if name not in scheduler_names() or not options:
        return
    try:
        make_scheduler(name, **options)
    except TypeError as e:
        found = re.search(r"keyword argument '(\w+)'", str(e))
        option = found.group(1) if found else ", ".join(options)
        raise ValueError(f"scheduler {name!r} takes no option {option!r}") from None


def _allowed(model: type[BaseModel], loc: tuple) -> list[str]:
    """The field names allowed where `loc` points (for 'unknown key' errors)."""
    for part in loc[:-1]:
        if isinstance(part, int):
            return []
        annotation = model.model_fields[part].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def explain(error: ValidationError, model: type[BaseModel] = RunConfig) -> str:
    """The first validation problem as one sentence naming the field."""
    e = error.errors()[0]
    loc = tuple(e["loc"])
    name = ".".join(str(p) for p in loc) or "(top level)"
    if e["type"] == "extra_forbidden":
        allowed = _allowed(model, loc)
        return f"unknown field '{name}' (allowed: {', '.join(allowed)})"
    message = e["msg"].removeprefix("Value error, ")
    return f"field '{name}': {message}"


def read_yaml(path: str | Path | None, overrides: dict[str, Any]) -> dict[str, Any]:
    """The settings of a YAML file (none without a path) with `overrides` (dotted names,
    None = not given) on top; every problem is one `ConfigError` sentence."""
    import yaml

    data: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot read the config file {path} ({e})") from None
        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{path} is not valid YAML{where}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(
                f"{path} must hold a mapping of settings, not {type(loaded).__name__}"
            )
        data = loaded or {}
    for dotted, value in overrides.items():
        if value is None:
            continue
        node = data
        *parents, last = dotted.split(".")
        for part in parents:
            child = node.get(part)
            node[part] = child = child if isinstance(child, dict) else {}
            node = child
        node[last] = value
    return data


def load_yaml_config(model: type[M], path: str | Path | None, overrides: dict[str, Any]) -> M:
    """`model` validated from `path` (YAML) with `overrides` (dotted names, None = not given)
    on top; every problem is one `ConfigError` sentence naming the field."""
    data = read_yaml(path, overrides)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        where = f"{path}: " if path is not None else ""
        raise ConfigError(f"{where}{explain(e, model)}") from None


def load_config(path: str | Path | None = None, **overrides: Any) -> RunConfig:
    """The config of `path` (YAML) with `overrides` (dotted names, None = not given) on top."""
    return load_yaml_config(RunConfig, path, overrides)


def documented_yaml(config: BaseModel | None = None) -> str:
    """A config (default: `selfplay run`'s) as YAML with each knob's description as a comment."""

    def lines(model: BaseModel, indent: str) -> list[str]:
        out = []
        for name, info in type(model).model_fields.items():
            value = getattr(model, name)
            if isinstance(value, BaseModel):
                out.append(f"{indent}{name}:")
                out += lines(value, indent + "  ")
                continue
            comment = f"  # {info.description}" if info.description else ""
            rendered = "null" if value is None else repr(value) if isinstance(value, str) else value
            if isinstance(value, list):
                rendered = "[" + ", ".join(value) + "]"
            if isinstance(value, dict):
                rendered = "{}" if not value else value
            if isinstance(value, bool):
                rendered = str(value).lower()
            out.append(f"{indent}{name}: {rendered}{comment}")
        return out

    return "\n".join(lines(config if config is not None else RunConfig(), "")) + "\n"
