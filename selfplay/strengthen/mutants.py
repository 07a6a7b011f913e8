"""Known-wrong solutions of a task: mutants of its reference, and degenerate answers.

A test earns its place by failing a wrong solution that the other tests let through. Wrong
solutions come from the reference itself, one small change at a time (the mutation operators
of mutation testing, as EvalPlus and CURE use them):

- `compare`: a comparison operator for its neighbour (`<` and `<=`, `>` and `>=`, `==` and
  `!=`, `in` and `not in`, `is` and `is not`);
- `arith`: an arithmetic operator for another (`+` and `-`, `*` and `//`, `%` and `//`, `/`
  and `*`), in a binary operation or an augmented assignment;
- `constant`: an integer constant one more and one less (the off-by-one);
- `boolean`: `and` for `or`, and a condition negated (`if c` becomes `if not c`);
- `branch`: an `if`'s body dropped (its `else`, where there is one, runs instead);
- `args`: the first two arguments of a call swapped;
- `early_return`: the entry point returns its first argument before doing anything.

A mutant may still be correct (an equivalent mutant: `x * 1` for `x // 1`); only running it
tells, which is why a mutant counts as wrong only where its output differs from the
reference's on some input (`selfplay.strengthen`). The degenerate answers (an empty list,
string, dict or array, None, 0, NaN, an object equal to everything) are wrong answers of every
task whose reference returns none of them, and are added beside the mutants.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import zip_longest

COMPARE = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
ARITH = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv, ast.Div: ast.Mult,
}  # fmt: skip
# The degenerate answers: what a policy returns to pass tests without solving anything.
DEGENERATE = {
    "empty_list": "[]",
    "empty_string": "''",
    "empty_dict": "{}",
    "none": "None",
    "zero": "0",
    "nan": "float('nan')",
    "empty_array": "__import__('numpy').array([])",
    "equals_everything": "type('Any', (), {'__eq__': lambda s, o: True, "
    "'__ne__': lambda s, o: False, '__hash__': lambda s: 0})()",
}


@dataclass(frozen=True, slots=True)
class Mutant:
    """One known-wrong candidate: the operator that made it, the line it changed (0 for a
    degenerate answer) and the whole program."""

    operator: str
    line: int
    program: str


def mutants(program: str, entry_point: str | None, limit: int = 64) -> list[Mutant]:
    """Up to `limit` distinct mutants of `program`, spread over its lines and operators in a
    fixed order (the same program gives the same mutants); none equal to the reference."""
    try:
        tree = ast.parse(program)
    except SyntaxError:
        return []
    original = ast.unparse(tree)
    seen, found = {original}, []
    sites = list(_sites(tree, entry_point))
    # Round-robin over operators, so a program with many comparisons still gets its
    # constants and branches mutated within the limit.
    by_operator: dict[str, list[tuple[int, str]]] = {}
    for site in sites:
        by_operator.setdefault(site[1], []).append(site)
    order = [s for group in zip_longest(*by_operator.values()) for s in group if s is not None]
    for index, operator in order:
        mutated = copy.deepcopy(tree)
        node = _nth(mutated, index)
        if node is None or not _apply(node, operator, mutated, entry_point):
            continue
        ast.fix_missing_locations(mutated)
        try:
            text = ast.unparse(mutated)
        except (ValueError, AttributeError):
            continue
        if text in seen:
            continue
        seen.add(text)
        found.append(Mutant(operator, getattr(node, "lineno", 0), text + "\n"))
        if len(found) >= limit:
            break
    return found


def degenerate(program: str, entry_point: str) -> list[Mutant]:
    """The reference with its entry point answering degenerately, whatever it is called
    with: one candidate per degenerate answer."""
    out = []
    for name, value in DEGENERATE.items():
        text = f"{program.rstrip()}\n\n\ndef {entry_point}(*args, **kwargs):\n    return {value}\n"
        out.append(Mutant(f"degenerate:{name}", 0, text))
    return out


def _nth(tree: ast.AST, index: int) -> ast.AST | None:
    for i, node in enumerate(ast.walk(tree)):
        if i == index:
            return node
    return None


def _sites(tree: ast.AST, entry_point: str | None) -> Iterator[tuple[int, str]]:
    """(position in `ast.walk` order, operator) of every place a mutation applies."""
    for i, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in COMPARE:
            yield i, "compare"
        elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in ARITH:
            yield i, "arith"
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            yield i, "constant+"
            yield i, "constant-"
        elif isinstance(node, ast.BoolOp):
            yield i, "boolean"
        elif isinstance(node, ast.If):
            yield i, "negate"
            yield i, "branch"
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            yield i, "args"
        elif isinstance(node, ast.FunctionDef) and node.name == entry_point and node.args.args:
            yield i, "early_return"


def _apply(node: ast.AST, operator: str, tree: ast.AST, entry_point: str | None) -> bool:
    """Change `node` in place by `operator`; False where it does not apply."""
    if operator == "compare" and isinstance(node, ast.Compare):
        node.ops[0] = COMPARE[type(node.ops[0])]()
    elif operator == "arith" and isinstance(node, ast.BinOp | ast.AugAssign):
        node.op = ARITH[type(node.op)]()
    elif operator in ("constant+", "constant-") and isinstance(node, ast.Constant):
        node.value += 1 if operator == "constant+" else -1
    elif operator == "boolean" and isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif operator == "negate" and isinstance(node, ast.If):
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
    elif operator == "branch" and isinstance(node, ast.If):
        node.test, node.body = ast.Constant(False), [ast.Pass()]
    elif operator == "args" and isinstance(node, ast.Call):
        node.args[0], node.args[1] = node.args[1], node.args[0]
    elif operator == "early_return" and isinstance(node, ast.FunctionDef):
        first = node.args.args[0].arg
        node.body.insert(0, ast.Return(ast.Name(first, ast.Load())))
    else:
        return False
    return True
