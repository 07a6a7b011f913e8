"""The proposer's prompts as a backend takes them, read by the kinds' template loader
(`selfplay.kinds.template`).

`proposer_<kind>` is that kind's own propose template (`selfplay/kinds/<kind>.propose.tmpl`);
any other name is a prompt no kind owns, a file `<name>.tmpl` here (`proposer_inputs`: the
calls that become a proposal's example inputs).
"""

from __future__ import annotations

from pathlib import Path

from selfplay import kinds
from selfplay.backends.base import Prompt
from selfplay.kinds.template import SUFFIX
from selfplay.kinds.template import render as render_file

TEMPLATE_DIR = Path(__file__).resolve().parent
KIND_PREFIX = "proposer_"


def render(name: str, **values: object) -> Prompt:
    """The chat prompt of template `name` with `values` substituted (all must be given)."""
    kind = name.removeprefix(KIND_PREFIX)
    if name.startswith(KIND_PREFIX) and kind in kinds.NAMES:
        text = kinds.get(kind).render("propose", **values)
    else:
        text = render_file(TEMPLATE_DIR / f"{name}{SUFFIX}", **values)
    return Prompt.user(text.message, prefill=text.prefill)
