"""Reading a YAML config into a pydantic model, and the checks several configs share.

Every config refuses unknown keys, so a typo never silently falls back to a default;
`load_yaml_config` turns every problem into one `ConfigError` sentence naming the field and,
where there is a fixed set, the allowed values.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from selfplay import kinds

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A configuration that cannot be used; the message is one sentence."""


def known_kinds(names: list[str]) -> list[str]:
    """`names` without repeats, each a registered task kind (ValueError naming the known
    ones otherwise): the registry is the one list, so a new kind needs no config edit."""
    for name in names:
        kinds.get(name)
    return list(dict.fromkeys(names))


def known_scheduler(name: str) -> str:
    """`name` if it is a registered curriculum scheduler (ValueError naming them otherwise)."""
    # Imported here: the schedulers' registry pulls in pandas and numpy, which a config
    # that is only read or printed does not need.
    from curricula import scheduler_names

    if name not in scheduler_names():
        raise ValueError(f"unknown scheduler {name!r}; allowed: {', '.join(scheduler_names())}")
    return name


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


def explain(error: ValidationError, model: type[BaseModel]) -> str:
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


def documented_yaml(config: BaseModel) -> str:
    """A config as YAML with each knob's description as a comment."""

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

    return "\n".join(lines(config, "")) + "\n"
