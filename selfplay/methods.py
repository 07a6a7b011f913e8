"""The training methods `selfplay train` knows, by name: the one list of them.

A method is a module (or any object) with `build(ctx: TrainContext) -> Job`
(`selfplay.training.context`). `METHODS` maps each name to a `Method`, which says what the
method trains each role on and where its module is; the module is imported only when the
method is chosen, so a base install reads configs and lists methods without TRL. The
configs' `method` field, the roles it may train and the CLI's help all come from here.

To add a method, write its module and register it:

    register_method(Method("mine", "mypackage.mine", roles={"solver": "what it learns from"}))

`Method.module` may also be the module object itself (or any object with `build`). The
registry lives in this process, like the task kinds' and the schedulers'.

This module sits below `selfplay.config` and imports nothing of selfplay: the config checks
names against it, and `selfplay.training` loads the modules it names.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ROLES = ("solver", "proposer")


@dataclass(frozen=True, slots=True)
class Method:
    """A training method: its name, what it trains each role on, and its module."""

    name: str
    # The module with `build(ctx)`: its dotted name (imported when the method is chosen), or
    # the module or object itself.
    module: str | Any
    # Role -> what the method trains that role on ('' when the summary says it): the roles
    # it may train, and what a config that asks for another role is told.
    roles: Mapping[str, str] = field(default_factory=lambda: {"solver": ""})
    summary: str = ""  # what help texts say after the name

    def load(self) -> Any:
        """The object whose `build(ctx)` makes the method's job."""
        if isinstance(self.module, str):
            return importlib.import_module(self.module)
        return self.module


METHODS: dict[str, Method] = {}


def register_method(method: Method) -> Method:
    """Add `method` (ValueError if its name is taken, a role unknown, or it has no build)."""
    if method.name in METHODS:
        raise ValueError(f"a training method named {method.name!r} is already registered")
    unknown = set(method.roles) - set(ROLES)
    if unknown or not method.roles:
        raise ValueError(f"method {method.name!r}: roles are some of {', '.join(ROLES)}")
    if not isinstance(method.module, str) and not callable(getattr(method.module, "build", None)):
        raise ValueError(f"method {method.name!r}: {method.module!r} has no build(ctx)")
    METHODS[method.name] = method
    return method


def unregister_method(name: str) -> None:
    METHODS.pop(name, None)


def get_method(name: str) -> Method:
    """The method called `name`; ValueError naming the known ones otherwise."""
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown training method {name!r} (known: {choices()})") from None


def names(role: str | None = None) -> list[str]:
    """The registered methods' names (those that train `role`), built-in ones first."""
    return [m.name for m in _training(role)]


def choices() -> str:
    """The names a `method` setting may take: "'grpo', 'sft', 'dpo' or 'ei'"."""
    return either([repr(name) for name in names()])


def described(role: str | None = None) -> str:
    """The methods (those that train `role`) with their summaries, for help texts:
    'grpo, sft (verified solutions in the bank), dpo, or ei (expert iteration: ...)'."""
    said = [f"{m.name} ({m.summary})" if m.summary else m.name for m in _training(role)]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + ", or " + said[-1]


def trained_on(role: str) -> str:
    """The methods that train `role`, each with what it trains it on, for an error:
    'sft (its admitted, learnable programs) or dpo (pairs of its own proposals)'."""
    return either([f"{m.name} ({m.roles[role]})" if m.roles[role] else m.name
                   for m in _training(role)])  # fmt: skip


def either(words: list[str]) -> str:
    """'a, b or c'."""
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def _training(role: str | None) -> list[Method]:
    return [m for m in METHODS.values() if role is None or role in m.roles]


for _method in (
    Method(
        "grpo",
        "selfplay.training.grpo",
        roles={"solver": "", "proposer": "on-policy RL on the learnability of its proposals"},
    ),
    Method(
        "sft",
        "selfplay.training.sft",
        roles={
            "solver": "verified solutions in the bank",
            "proposer": "its admitted, learnable programs",
        },
        summary="verified solutions in the bank",
    ),
    Method(
        "dpo",
        "selfplay.training.dpo",
        roles={
            "solver": "pairs of a passing and a failing attempt",
            "proposer": "pairs of its own proposals",
        },
    ),
    Method(
        "ei",
        "selfplay.training.expert",
        summary="expert iteration: the model's own attempts, sampled and graded as it trains",
    ),
):
    register_method(_method)
del _method
