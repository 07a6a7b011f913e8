"""Prompts as a backend takes them: a kind's propose template, or a prompt no kind owns.

A kind owns its propose template (`selfplay/kinds/<kind>.propose.tmpl`, rendered by
`Kind.render`); `propose(kind, ...)` asks the kind for it. Any other prompt is a file
`<name>.tmpl` here (`proposer_inputs`: the calls that become a proposal's example inputs).
"""

from __future__ import annotations

from pathlib import Path

from selfplay import kinds
from selfplay.backends.base import Prompt
from selfplay.kinds.template import SUFFIX, Rendered
from selfplay.kinds.template import render as render_file

TEMPLATE_DIR = Path(__file__).resolve().parent


def _prompt(text: Rendered) -> Prompt:
    return Prompt.user(text.message, prefill=text.prefill)


def propose(kind: str, **values: object) -> Prompt:
    """The chat prompt that asks the proposer for a task of `kind` (the kind's own template)."""
    return _prompt(kinds.get(kind).render("propose", **values))


def render(name: str, **values: object) -> Prompt:
    """The chat prompt of template file `name` here, with `values` substituted (all given)."""
    return _prompt(render_file(TEMPLATE_DIR / f"{name}{SUFFIX}", **values))
