"""Mending a proposal's program once, before admission judges it.

Two faults lose a small model's programs that are otherwise fine:
- **cut off**: the program ran into the token budget mid-statement, or prose followed it
  inside the fence, so it does not parse. `trim` keeps the longest run of whole lines from
  the top that parses and still defines the function.
- **no docstring**: a codegen task is its docstring (the solver sees only the signature and
  the docstring), and the model often writes none, or a few words. `signature` gives the
  function's first line for a second prompt whose prefill opens the docstring
  (`proposer_docstring.tmpl`): the model then can only write a docstring. `with_docstring`
  puts the answer in place.

Each mend is tried once and counted (`ProposalReport.repaired`); the mended program is
screened again and goes through admission like any other, so a mend never lowers the gate.
"""

from __future__ import annotations

import ast
import inspect

DOCSTRING_END = '"""'


def _function(program: str, entry_point: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point),
        None,
    )


def trim(program: str | None, entry_point: str) -> str | None:
    """The longest top part of an unparseable program, cut at a line end, that parses and
    defines `entry_point`; None if there is none."""
    if not program:
        return None
    lines = program.rstrip("\n").split("\n")
    for end in range(len(lines) - 1, 0, -1):
        head = "\n".join(lines[:end]).rstrip() + "\n"
        if _function(head, entry_point) is not None:
            return head
    return None


def _docstring_node(fn: ast.FunctionDef) -> ast.Expr | None:
    first = fn.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def signature(program: str | None, entry_point: str) -> str | None:
    """The `def` line(s) of `entry_point`, as written; None if it does not parse."""
    fn = _function(program or "", entry_point)
    if fn is None or fn.decorator_list:
        return None
    lines = (program or "").split("\n")
    body = fn.body[0].lineno - 1
    head = lines[fn.lineno - 1 : body] if body >= fn.lineno else []
    if not head or not head[-1].rstrip().endswith(":") or fn.col_offset:
        return None  # a one-line function (`def f(x): return x`) has no place for one
    return "\n".join(head)


def docstring_from(completion: str, finished: bool) -> str | None:
    """The docstring the model wrote after the prefilled opening quotes: the text before
    the closing quotes (a stop string, so the engine has cut them), if it ended there or at
    the end of its turn and not at the token budget."""
    text, closed, _ = completion.partition(DOCSTRING_END)
    text = inspect.cleandoc(text)
    if not (closed or finished) or not text or "\\" in text:
        return None
    return text


def with_docstring(program: str, entry_point: str, doc: str) -> str | None:
    """`program` with `doc` as the docstring of `entry_point` (replacing a short one)."""
    fn = _function(program, entry_point)
    if fn is None:
        return None
    lines = program.split("\n")
    old = _docstring_node(fn)
    start = fn.body[0].lineno - 1
    end = old.end_lineno if old is not None and old.end_lineno else start
    if old is not None and len(fn.body) == 1:
        return None  # the docstring was the whole body
    rest = fn.body[1] if old is not None else fn.body[0]
    indent = " " * rest.col_offset
    body = [indent + line if line else "" for line in doc.split("\n")]
    body[0] = indent + '"""' + doc.split("\n")[0]
    body[-1] = body[-1] + '"""'
    mended = "\n".join(lines[:start] + body + lines[end:])
    return mended if _function(mended, entry_point) is not None else None
