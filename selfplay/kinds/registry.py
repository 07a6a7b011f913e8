"""The registry of task kinds: the built-in ones, and any registered from a directory.

A kind is a module `<name>.py` defining one `Kind` subclass whose `name` is `<name>`, with its
two templates beside it, `<name>.solve.tmpl` and `<name>.propose.tmpl`. `register_dir(path)`
imports every such module in a directory and adds its kind; from then on `get`, `NAMES`, the
configs' kind lists, the bank, the solver, the rewards and the exports know it, and nothing else
needs an edit. The registry lives in this process: a process that grades a registered kind
(a trainer's reward worker, say) registers the same directory first.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from selfplay.kinds.base import ROLES, Kind
from selfplay.task import Task

KINDS: dict[str, Kind] = {}
# A live view, so that a module holding it (`selfplay.admission.schema`, the configs) sees a kind
# registered after it was imported.
NAMES = KINDS.keys()
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_MODULE_PREFIX = "selfplay_kind_"


class KindError(ValueError):
    """A kind that cannot be registered; the message is one sentence."""


def get(name: str) -> Kind:
    """The kind called `name`; ValueError naming the known ones otherwise."""
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown task kind {name!r} (known: {', '.join(NAMES)})") from None


def chat(task: Task) -> list[dict[str, str]]:
    """The prompt of `task` as chat messages: its kind's (what the solver and trainers see)."""
    return get(task.kind).chat(task)


def reference_answer(task: Task) -> str:
    """The reference solution of `task` written as a response should be (what SFT trains on)."""
    return get(task.kind).reference_answer(task)


def register(kind: Kind) -> Kind:
    """Add `kind` to the registry; KindError if its name is taken or a template is missing."""
    _check_free(kind.name)
    for role in ROLES:
        path = kind.template_path(role)
        if not path.is_file():
            raise KindError(f"task kind {kind.name!r} has no {role} template: expected {path}")
    KINDS[kind.name] = kind
    return kind


def register_dir(path: str | Path) -> list[Kind]:
    """Import every kind module (`<name>.py`) in the directory `path` and register its kind.

    All or nothing: every module is checked (its name, its two templates, one `Kind`
    subclass called `<name>`) before any kind is added.
    """
    folder = Path(path).resolve()
    if not folder.is_dir():
        raise KindError(f"{folder} is not a directory of task kinds")
    files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    if not files:
        raise KindError(f"there is no kind module (<name>.py) in {folder}")
    found: list[Kind] = []
    try:
        for file in files:
            name = file.stem
            if not _NAME.fullmatch(name):
                raise KindError(f"{file.name}: a kind's name is lower-case letters, digits and _")
            _check_free(name)
            for role in ROLES:
                template = file.with_name(f"{name}.{role}.tmpl")
                if not template.is_file():
                    raise KindError(
                        f"task kind {name!r} has no {role} template: expected {template}"
                    )
            found.append(_kind_of(_import(file), file))
    except BaseException:
        for kind in found:
            sys.modules.pop(type(kind).__module__, None)
        raise
    for kind in found:
        register(kind)
    return found


def unregister(name: str) -> None:
    """Remove the kind called `name` (and the module it was imported from by `register_dir`)."""
    kind = KINDS.pop(name, None)
    if kind is not None and type(kind).__module__.startswith(_MODULE_PREFIX):
        sys.modules.pop(type(kind).__module__, None)


def _check_free(name: str) -> None:
    if name in KINDS:
        where = sys.modules[type(KINDS[name]).__module__].__file__
        raise KindError(f"a task kind named {name!r} is already registered (from {where})")


def _import(file: Path) -> Any:
    # Under a name of its own, in sys.modules: a kind finds its templates beside its module.
    module_name = _MODULE_PREFIX + file.stem
    spec = importlib.util.spec_from_file_location(module_name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _kind_of(module: Any, file: Path) -> Kind:
    classes = [
        c
        for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, Kind) and c.__module__ == module.__name__
    ]
    named = [c for c in classes if c.name == file.stem]
    if len(named) != 1:
        del sys.modules[module.__name__]
        raise KindError(
            f"{file} must define one Kind subclass with name = {file.stem!r}, found {len(named)}"
        )
    return named[0]()
