"""Fenced code blocks in model text: the one reader of fences, for answers and for proposals.

A fence is a line of three or more backticks or tildes, indented at most three spaces; an info
string (`python`, `py`, `text`, ...) may follow an opening fence. A block ends at a line of the
same character at least as long with nothing else on it, or at the end of the text, where it is
left open. These are Markdown's (CommonMark's) rules, the ones a model learnt to write by: a
fence inside a line (`s = "```"`, `return x```) neither opens nor closes a block, and a
``` ```text ``` block is a block like any other.

Which block is the answer (`last_code_block`): the last closed block that is not empty; an open
block only where no closed one comes before it. An open block is the whole answer when a stop
string cut the response at its closing fence (a prefilled proposal, a trainer that stops on
"```"); after a closed block it is the tail of a response cut off by its token budget, and the
closed block is what the model finished.

The proposer read proposals with a regular expression until both readers became this one; they
disagreed where that expression opened only `python`/`py`/bare fences (the closing fence of a
``` ```text ``` block then opened a block on the prose after it) and closed a block at "```"
anywhere in a line. `tests/selfplay/kinds/test_fences.py` shows those cases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})([^\n]*)$")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: its body (the lines between the fences) and whether it was closed."""

    body: str
    closed: bool


def blocks(text: str) -> list[Block]:
    """The fenced blocks of `text`, in order; only the last can be open."""
    found: list[Block] = []
    lines = (text or "").split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        # A backtick fence's info string cannot hold a backtick: "```code```" is inline code.
        if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
            i += 1
            continue
        fence = m.group(1)
        close = re.compile(rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i])
            i += 1
        found.append(Block("\n".join(body), closed=i < len(lines)))
        i += 1
    return found


def code_blocks(text: str) -> list[str]:
    """The bodies of the fenced blocks of `text`, in order (an open last block counts)."""
    return [b.body for b in blocks(text)]


def last_code_block(text: str) -> str | None:
    """The answer's block (see the module docstring): the last closed non-empty block, else
    an open non-empty one; None when there is neither."""
    full = [b for b in blocks(text) if b.body.strip()]
    closed = [b for b in full if b.closed]
    if closed:
        return closed[-1].body
    return full[-1].body if full else None


def fence(body: str) -> str:
    """`body` as a response writes it: in one ```python block."""
    return f"```python\n{body.rstrip()}\n```"


def as_response(answer: str) -> str:
    """A stored attempt answer as a response: kept if it already has a fence, else fenced."""
    return answer if "```" in answer else fence(answer)
