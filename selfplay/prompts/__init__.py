"""Prompt templates: one file per role and task kind, rendered with `string.Template`.

A template file holds the user message; an optional last section after a line
`--- prefill ---` is the start of the assistant turn (the model continues it, which is
what keeps a small model to the format). `$name` placeholders are filled in by
`render`; `$$` is a literal dollar sign. `string.Template` rather than `str.format`
because the filled-in values are Python programs full of braces.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

from selfplay.backends.base import Prompt

TEMPLATE_DIR = Path(__file__).resolve().parent
PREFILL_MARK = "\n--- prefill ---\n"


@cache
def _load(name: str) -> tuple[Template, Template]:
    path = TEMPLATE_DIR / f"{name}.tmpl"
    if not path.is_file():
        raise FileNotFoundError(f"there is no prompt template {name!r} in {TEMPLATE_DIR}")
    text = path.read_text(encoding="utf-8")
    body, _, prefill = text.partition(PREFILL_MARK)
    # The file's last newline is layout, not content, except after an opening fence: the
    # model should start on the fence's first line, not on the fence.
    prefill = prefill.removesuffix("\n")
    if prefill.endswith(("```python", "```")):
        prefill += "\n"
    return Template(body.strip("\n")), Template(prefill)


def render(name: str, **values: object) -> Prompt:
    """The chat prompt of template `name` with `values` substituted (all must be given)."""
    body, prefill = _load(name)
    text = {k: str(v) for k, v in values.items()}
    return Prompt.user(body.substitute(text), prefill=prefill.substitute(text))
