"""Answers out of model responses, and strict comparison of values. Nothing here runs code.

Where an answer sits in a response:
- a code answer (codegen, induction) is the answer's fenced block (`fences.last_code_block`);
- a value answer (deduction, abduction) is that block, else the text after the last `Answer:`,
  else the last non-empty line.

Values are read by `parse_value`, an evaluator of literal syntax only: what `ast.literal_eval`
accepts, plus `inf`, `nan`, `float('inf')`, `float('-inf')`, `float('nan')`, `set()`,
`set([...])`, `frozenset()` and `frozenset({...})`, so that every value a reference program
can return as data has a form an answer can take (its `repr`). `same` compares with types, all
the way down: `True` does not answer `1`, `1.0` does not answer `1`, `{True: 'a'}` does not
answer `{1: 'a'}`, `-0.0` does not answer `0.0`; NaN answers NaN.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from typing import Any

from selfplay.kinds.fences import last_code_block

MAX_VALUE_CHARS = 100_000  # longer answers are not values a task asks for
_ANSWER = re.compile(r"answer\s*(?:is)?\s*[:=]\s*(.+)", re.IGNORECASE)
_CONSTANTS = {"inf": math.inf, "nan": math.nan}


def answer_text(text: str) -> str | None:
    """Where a value answer sits in a response (see the module docstring)."""
    block = last_code_block(text)
    if block is not None:
        return block.strip()
    text = (text or "").strip()
    if not text:
        return None
    found = _ANSWER.findall(text)
    if found:
        return found[-1].strip().strip("`").strip() or None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1].strip("`").strip() or None


class NotAValue(ValueError):
    """Text that is not a value in the accepted forms."""


def parse_value(text: str) -> Any:
    """The value `text` denotes; NotAValue if it is not one of the accepted forms."""
    if len(text) > MAX_VALUE_CHARS:
        raise NotAValue("too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise NotAValue("not Python syntax") from None
    try:
        return _value(tree.body, 0)
    except RecursionError:
        raise NotAValue("nested too deeply") from None


def _value(node: ast.AST, depth: int) -> Any:
    if depth > 200:
        raise NotAValue("nested too deeply")
    d = depth + 1
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _value(node.operand, d)
        if type(v) in (int, float, complex):
            return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        # Complex literals: 1+2j, -1.5-0j
        left, right = _value(node.left, d), _value(node.right, d)
        if type(left) in (int, float) and type(right) is complex:
            return left + right if isinstance(node.op, ast.Add) else left - right
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, d) for e in node.elts)
    if isinstance(node, ast.List):
        return [_value(e, d) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_value(e, d) for e in node.elts}
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_value(k, d): _value(v, d) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name, args = node.func.id, node.args
        if name == "float" and len(args) == 1:
            v = _value(args[0], d)
            if type(v) is str and v.strip().lower() in ("inf", "-inf", "+inf", "nan"):
                return float(v)
        if name in ("set", "frozenset") and len(args) <= 1:
            items = _value(args[0], d) if args else ()
            if type(items) in (list, tuple, set, frozenset, str):
                return (set if name == "set" else frozenset)(items)
    raise NotAValue(f"not a value: {ast.unparse(node)[:100]}")


def canonical(v: Any) -> Any:
    """A hashable form of `v` that keeps every type, the sign of zero and NaN."""
    t = type(v)
    if t is float:
        if v != v:
            return ("float", "nan")
        return ("float", v, math.copysign(1.0, v))
    if t is complex:
        return ("complex", canonical(v.real), canonical(v.imag))
    if t in (int, bool, str, bytes, type(None)):
        return (t.__name__, v)
    if t in (list, tuple):
        return (t.__name__, tuple(canonical(x) for x in v))
    if t in (set, frozenset):
        return (t.__name__, frozenset(canonical(x) for x in v))
    if t is dict:
        return ("dict", frozenset((canonical(k), canonical(x)) for k, x in v.items()))
    return ("other", t.__name__, repr(v))


def same(a: Any, b: Any) -> bool:
    """Equal as values and as types, inside containers and dict keys too."""
    return canonical(a) == canonical(b)


def same_repr(answer: str, expected: str) -> bool:
    """Two texts denote the same value, or (neither being a value) are the same text."""
    try:
        return same(parse_value(answer), parse_value(expected))
    except NotAValue:
        return answer.strip() == expected.strip()


def call_arguments(text: str, entry_point: str | None) -> str | None:
    """The arguments of an abduction answer as source text: `3, [1, 2]`, `f(3, [1, 2])` or
    `f(s='ab')` (keywords kept), or the one call statements make (`_one_call`); each argument
    must be a value. None if it is not one."""
    if len(text) > MAX_VALUE_CHARS:
        return None
    try:
        body = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return _one_call(text, entry_point)
    args = _arguments(body, entry_point)
    if args is None:  # `f(6, 3) == 20`, `print(f(6, 3))`: an expression around the call
        return _one_call(text, entry_point)
    return args


def _arguments(body: ast.expr, entry_point: str | None) -> str | None:
    keywords: list[ast.keyword] = []
    if (
        isinstance(body, ast.Call)
        and isinstance(body.func, ast.Name)
        and body.func.id in {entry_point, "f"}
    ):
        parts, keywords = body.args, body.keywords
    elif isinstance(body, ast.Tuple) and body.elts and body.elts[0].col_offset == body.col_offset:
        # `3, [1, 2]` parses as a tuple without parentheses: the arguments themselves;
        # `(3, [1, 2])` starts before its first element: one tuple argument.
        parts = body.elts
    else:
        parts = [body]
    if not parts and not keywords:
        return None
    rendered = []
    for part in parts:
        if isinstance(part, ast.Starred):
            return None
        try:
            _value(part, 0)
        except (NotAValue, RecursionError):
            return None
        rendered.append(ast.unparse(part))
    for kw in keywords:
        if kw.arg is None:  # **kwargs
            return None
        try:
            _value(kw.value, 0)
        except (NotAValue, RecursionError):
            return None
        rendered.append(f"{kw.arg}={ast.unparse(kw.value)}")
    return ", ".join(rendered)


def _one_call(text: str, entry_point: str | None) -> str | None:
    """The arguments of the one call an answer written as statements makes: `result = f(6, 3)`,
    `print(f(6, 3))`, `assert f(6, 3) == 20`, often after the model copied the program out.
    A small model answers this way more often than with a bare call, and a right answer read
    as no answer is a wrong reward. Only calls outside any definition count (a copied body's
    own calls are not the answer), and only when they all are one call: an answer listing
    several candidates is not an answer, so listing them gains a policy nothing."""
    try:
        module = ast.parse(text.strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names = {entry_point, "f"}
    found: set[str] = set()
    pending: list[ast.AST] = list(module.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            args = _arguments(node, entry_point)
            if args is None:
                return None  # a call the answer makes with names or expressions: not literal
            found.add(args)
        pending.extend(ast.iter_child_nodes(node))
    return found.pop() if len(found) == 1 else None


# The end-of-turn and padding tokens of the major chat templates, for when the tokenizer that
# decoded a response is not at hand: ChatML, Llama 3, Phi and Cohere write `<|name|>`
# (`<|im_end|>`, `<|endoftext|>`, `<|eot_id|>`, `<|end_of_text|>`, `<|end|>`), DeepSeek
# writes the same with fullwidth bars (`<｜end▁of▁sentence｜>`), Llama 2 and Mistral `</s>`,
# Gemma `<end_of_turn>` and `<eos>`; `<pad>` fills a batch after any of them.
_TOKEN = r"<\|[^|<>\s]{1,40}\|>|<｜[^｜<>\s]{1,40}｜>|</s>|<eos>|<end_of_turn>|<pad>"
_SPECIAL_TAIL = re.compile(rf"(?:\s*(?:{_TOKEN}))+\s*$")


def strip_special_tokens(text: str, special_tokens: Iterable[str] | None = None) -> str:
    """A response without the end-of-turn tokens a trainer decoded with it: OpenRLHF decodes
    with special tokens, and a closing fence followed by `<|im_end|>` would not close its block.

    `special_tokens` (a tokenizer's `all_special_tokens`) are the tokens to strip where the
    tokenizer is known; without them, the end tokens of the major chat templates are."""
    text = text or ""
    if special_tokens is None:
        return _SPECIAL_TAIL.sub("", text)
    tokens = sorted({t for t in special_tokens if t}, key=len, reverse=True)
    rest, found = text, False
    while True:
        tail = rest.rstrip()
        token = next((t for t in tokens if tail.endswith(t)), None)
        if token is None:
            return tail if found else text
        rest, found = tail[: -len(token)], True
