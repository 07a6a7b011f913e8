"""Prompt template files: the one loader, for a kind's own templates and for the prompts no kind
owns (`selfplay/prompts/`).

A template file (`*.tmpl`) holds the user message; an optional last section after a line
`--- prefill ---` is the start of the assistant turn (the model continues it, which is what
keeps a small model to the format). `$name` placeholders are filled in by `render`; `$$` is a
literal dollar sign. `string.Template` rather than `str.format` because the filled-in values
are Python programs full of braces.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

PREFILL_MARK = "\n--- prefill ---\n"
SUFFIX = ".tmpl"


@dataclass(frozen=True, slots=True)
class Rendered:
    """A filled-in template: the user message and the start of the assistant turn."""

    message: str
    prefill: str = ""


@cache
def _load(path: Path) -> tuple[Template, Template]:
    if not path.is_file():
        raise FileNotFoundError(f"there is no prompt template {path.name!r} in {path.parent}")
    body, _, prefill = path.read_text(encoding="utf-8").partition(PREFILL_MARK)
    # The file's last newline is layout, not content, except after an opening fence: the
    # model should start on the fence's first line, not on the fence.
    prefill = prefill.removesuffix("\n")
    if prefill.endswith(("```python", "```")):
        prefill += "\n"
    return Template(body.strip("\n")), Template(prefill)


def render(path: Path, **values: object) -> Rendered:
    """The template file at `path` with `values` substituted (all must be given)."""
    body, prefill = _load(Path(path).resolve())
    text = {k: str(v) for k, v in values.items()}
    return Rendered(body.substitute(text), prefill.substitute(text))
