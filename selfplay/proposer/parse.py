"""Reading a proposal out of model text: the program of the first generation and the
example inputs of the second. Both arrive as continuations of a prefilled code fence, read
by the one fence reader (`selfplay.kinds.fences`): the prefilled block is the first block of
the turn, open where the stop string cut its closing fence.

Nothing here runs model code: programs are only parsed with `ast`, inputs only with
`ast.literal_eval` (never `eval`).
"""

from __future__ import annotations

import ast

from selfplay.admission.examples import literal_args
from selfplay.kinds.fences import code_blocks


def continued(prefill: str, completion: str) -> str:
    """The assistant turn as the model wrote it: the prefill and its continuation."""
    return prefill + completion


def program_from(prefill: str, completion: str) -> str | None:
    """The program of a proposal: the first code block of the turn (the prefilled one)."""
    blocks = code_blocks(continued(prefill, completion))
    if not blocks or not blocks[0].strip():
        return None
    return blocks[0].strip("\n") + "\n"


def parse_literal(text: str, *, max_chars: int = 10_000) -> object:
    """A Python literal's value; ValueError when `text` is not one (or is too long)."""
    if len(text) > max_chars:
        raise ValueError(f"literal longer than {max_chars} characters")
    try:
        return ast.literal_eval(text.strip())
    except (SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise ValueError(f"not a Python literal ({type(e).__name__})") from None


def call_arguments(line: str, entry_point: str, *, max_chars: int = 2_000) -> str | None:
    """The arguments of `entry_point(<literals>)` as source text, or None.

    Only positional literal arguments count: `f(3, [1, 2])` gives "3, [1, 2]"; keywords,
    starred arguments, names and calls inside the arguments give None.
    """
    text = line.strip().removeprefix("assert ").strip()
    if not text or len(text) > max_chars:
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        node = node.left  # `f(1) == 2`: the model wrote the expected value too; ignore it
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == entry_point
    ):
        return None
    return literal_args(node)


def inputs_from(prefill: str, completion: str, entry_point: str, limit: int) -> list[str]:
    """Distinct literal argument lists of the calls in the prefilled code block."""
    blocks = code_blocks(continued(prefill, completion))
    found: dict[str, None] = {}
    for line in (blocks[0] if blocks else "").splitlines():
        args = call_arguments(line, entry_point)
        if args is not None:
            found.setdefault(args, None)
            if len(found) >= limit:
                break
    return list(found)
