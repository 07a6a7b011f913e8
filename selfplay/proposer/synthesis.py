"""`synthesize`: calls of a proposed program built from what it does with its arguments.

A small model writes plausible programs and then calls them with the wrong types: `f(98)`
for a function that iterates over its argument, so every call raises and the proposal is
lost. The model's calls are not trusted to fit; candidates are built besides them from the
program itself (generate, then validate, as rStar-Coder does with its test inputs):

- each parameter's annotation (`xs: list[int]`, `s: str`, `d: dict`);
- what the body does to it: iterates, indexes or takes `len` of it (a sequence), calls
  `.items()` or `.get` (a dict), `.split()` or `.upper()` (a string), `.append` or `.copy`
  (a list), `range(n)`, `n % 2`, `n + 1` (an integer); what the body does to its elements
  when it loops over it (`x.upper()`: strings, `x % 2`: integers, `row[0]`: lists);
- the inputs of the reference tasks the proposer was shown, where they take as many
  arguments;
- small literal pools of each type and size, rotated so that no two calls repeat.

Nothing here runs: the candidates run in the sandbox in admission's first run, all calls in
one row, and admission keeps the ones that return, are distinct and give varied outputs
(`selfplay.admission.runs.keep_inputs`). Values stay small so that no candidate costs the
row its time limit.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable

from selfplay.admission.static import input_value

# Literal pools per inferred type, most telling first (an empty container raises in many
# programs that index their argument, so it comes late).
POOLS: dict[str, list[str]] = {
    "int": ["3", "10", "7", "0", "1", "25", "-4", "12", "2", "100", "-1", "5"],
    "float": ["2.5", "0.5", "-1.25", "10.0", "3.75"],
    "bool": ["True", "False"],
    "str": [
        "'hello'",
        "'Hello World'",
        "'racecar'",
        "'a1b2c3'",
        "'banana'",
        "'abc'",
        "'mississippi'",
        "'a'",
        "''",
    ],
    "list_int": [
        "[3, 1, 2]",
        "[5, -2, 7, 0, 9]",
        "[1, 2, 3, 4, 5, 6]",
        "[10, 10, 3]",
        "[4, 8, 15, 16, 23, 42]",
        "[-3, -1, -2]",
        "[7]",
        "[]",
    ],
    "list_str": [
        "['apple', 'banana', 'cherry']",
        "['a', 'bb', 'ccc', 'bb']",
        "['hello', 'world']",
        "['Zed', 'amy', 'Bob']",
        "['x']",
        "[]",
    ],
    "list_list": [
        "[[1, 2], [3, 4]]",
        "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]",
        "[[5, 1], [2], [7, 3, 4]]",
        "[[0, -1], [2, 2]]",
        "[[6]]",
    ],
    "dict": [
        "{'a': 1, 'b': 2}",
        "{'x': 5, 'y': -3, 'z': 0}",
        "{'apple': 3, 'pear': 7}",
        "{'k': 10}",
        "{}",
    ],
    "tuple": ["(1, 2)", "(3, 4, 5)", "(-2, 8)", "(0, 0, 1)"],
}
FALLBACK = ("int", "list_int", "str")
# What a use of a loop variable says about the sequence it walks.
ELEMENT_POOLS = {
    "str": ("list_str", "str"),  # a string's characters are strings too
    "int": ("list_int",),
    "seq": ("list_str",),  # an element taken `len` of or indexed: strings are the usual case
    "list": ("list_list",),
    "nested": ("list_list",),
}

DICT_METHODS = {"items", "keys", "values", "get", "setdefault", "update", "popitem"}
LIST_METHODS = {"append", "extend", "pop", "sort", "insert", "remove", "reverse", "copy"}
STR_METHODS = {
    "upper", "lower", "split", "strip", "lstrip", "rstrip", "isdigit", "isalpha", "isalnum",
    "isupper", "islower", "isspace", "replace", "startswith", "endswith", "find", "title",
    "capitalize", "swapcase", "zfill", "splitlines", "casefold", "partition", "center",
}  # fmt: skip
SEQUENCE_FUNCS = {"len", "sorted", "reversed", "enumerate", "list", "set", "tuple", "zip"}
NUMBER_SEQUENCE_FUNCS = {"sum", "max", "min"}
NUMBER_FUNCS = {"range", "abs", "bin", "hex", "chr", "divmod", "pow"}
ANNOTATIONS = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "dict": "dict",
    "Dict": "dict",
    "tuple": "tuple",
    "Tuple": "tuple",
    "list": "list_int",
    "List": "list_int",
    "Sequence": "list_int",
    "Iterable": "list_int",
}


def _annotation(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return ANNOTATIONS.get(node.id)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        outer = ANNOTATIONS.get(node.value.id)
        if outer == "list_int":
            inner = _annotation(node.slice)
            return {"str": "list_str", "list_int": "list_list"}.get(inner or "", "list_int")
        return outer
    return None


class _Evidence(ast.NodeVisitor):
    """Votes for each parameter's type from how the function body uses it."""

    def __init__(self, params: list[str]) -> None:
        self.votes = {p: Counter() for p in params}
        self.elements: dict[str, str] = {}  # loop variable -> the parameter it walks

    def _vote(self, node: ast.AST, kind: str, weight: int = 1) -> None:
        if isinstance(node, ast.Name):
            if node.id in self.votes:
                self.votes[node.id][kind] += weight
            elif node.id in self.elements:
                for holds in ELEMENT_POOLS.get(kind, ()):
                    self.votes[self.elements[node.id]][holds] += weight

    def _walks(self, target: ast.AST, iterable: ast.AST, vote: bool) -> None:
        """`for x in p`: p is a sequence, and x's uses say what it holds."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            if iterable.func.id in ("enumerate", "sorted", "reversed") and iterable.args:
                if iterable.func.id == "enumerate" and isinstance(target, ast.Tuple):
                    target = target.elts[-1]
                iterable = iterable.args[0]
        if isinstance(iterable, ast.Name) and iterable.id in self.votes:
            if vote:
                self.votes[iterable.id]["seq"] += 2
            elif isinstance(target, ast.Name):
                self.elements[target.id] = iterable.id

    def loops(self, tree: ast.AST) -> None:
        """Which names walk which parameter, found before any vote: a comprehension's
        element is read (`w.upper() for w in words`) before its loop is reached."""
        for node in ast.walk(tree):
            if isinstance(node, ast.For | ast.comprehension):
                self._walks(node.target, node.iter, vote=False)

    def visit_For(self, node: ast.For) -> None:
        self._walks(node.target, node.iter, vote=True)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._walks(node.target, node.iter, vote=True)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in DICT_METHODS:
                self._vote(func.value, "dict", 3)
            elif func.attr in STR_METHODS:
                self._vote(func.value, "str", 3)
            elif func.attr in LIST_METHODS:
                self._vote(func.value, "list", 3)
            elif func.attr == "join":
                for arg in node.args[:1]:
                    self._vote(arg, "strs", 3)
        elif isinstance(func, ast.Name):
            for arg in node.args:
                if func.id in SEQUENCE_FUNCS:
                    self._vote(arg, "seq", 2)
                elif func.id in NUMBER_SEQUENCE_FUNCS and len(node.args) == 1:
                    self._vote(arg, "list", 2)
                elif func.id in NUMBER_FUNCS:
                    self._vote(arg, "int", 2)
                elif func.id in ("str", "float"):
                    self._vote(arg, "int", 1)
                elif func.id == "int":
                    self._vote(arg, "str", 1)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self._vote(node.value, "dict", 3)
        elif isinstance(node.value, ast.Subscript):
            self._vote(node.value.value, "nested", 5)
        else:
            self._vote(node.value, "seq", 2)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(other, ast.Constant):
                if isinstance(other.value, str) and isinstance(node.op, ast.Add):
                    self._vote(side, "str", 2)
                elif isinstance(other.value, int | float) and not isinstance(other.value, bool):
                    # `p * 2` repeats a list as readily as it doubles a number: a lighter vote.
                    weight = 1 if isinstance(node.op, ast.Mult | ast.Add) else 2
                    self._vote(side, "int", weight)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        numeric = any(
            isinstance(s, ast.Constant) and isinstance(s.value, int | float) for s in sides
        )
        if numeric and not any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            for s in sides:
                self._vote(s, "int", 1)
        self.generic_visit(node)


# What a vote means as a pool: a generic sequence or list defers to what its elements say.
VOTE_POOLS = {
    "int": "int",
    "str": "str",
    "dict": "dict",
    "strs": "list_str",
    "nested": "list_list",
    "list_int": "list_int",
    "list_str": "list_str",
    "list_list": "list_list",
    "list": "list_int",
    "seq": "list_int",
}


def parameter_types(program: str, entry_point: str) -> list[list[str]] | None:
    """Each positional parameter's likely pools, likeliest first; None if `entry_point` is
    not a plain function of the program."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    fn = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point),
        None,
    )
    if fn is None:
        return None
    args = fn.args.posonlyargs + fn.args.args
    required = args[: len(args) - len(fn.args.defaults)] or args[:1]
    evidence = _Evidence([a.arg for a in required])
    evidence.loops(fn)
    for statement in fn.body:
        evidence.visit(statement)
    ranked = []
    for a in required:
        votes: Counter = Counter()
        annotated = _annotation(a.annotation)
        if annotated:
            votes[annotated] += 10
        for vote, n in evidence.votes[a.arg].items():
            votes[VOTE_POOLS[vote]] += n
        # A sequence whose elements said nothing: a list of numbers, else a string (also
        # iterable and indexable) before the fallbacks' integer.
        if votes and votes.most_common(1)[0][0] == "list_int" and "str" not in votes:
            votes["str"] = 0
        order = [k for k, _ in votes.most_common()]
        ranked.append(order + [k for k in FALLBACK if k not in order])
    return ranked


def _arity(args: str) -> int | None:
    try:
        return len(ast.literal_eval(f"({args},)"))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def synthesize(
    program: str | None,
    entry_point: str,
    written: Iterable[str] = (),
    references: Iterable[str] = (),
    limit: int = 10,
) -> list[str]:
    """Distinct argument lists for `entry_point`: the model's own (`written`) first, then
    up to `limit` built from the program's parameters, the references' inputs among them."""
    seen: set[str] = set()
    calls: list[str] = []

    def add(args: str) -> bool:
        value = input_value(args)
        if value in seen:
            return False
        seen.add(value)
        calls.append(args)
        return True

    for args in written:
        add(args)
    types = parameter_types(program or "", entry_point)
    if not types:
        return calls
    target = len(calls) + limit
    for args in references:
        if len(calls) < target and _arity(args) == len(types):
            add(args)
    # Half the calls from each parameter's likeliest pool, a quarter from each of the next
    # two (the evidence can mislead), for one parameter at a time; the n-th call of a rank
    # takes the n-th value of each pool, offset by the parameter's position. The likeliest
    # come first: admission keeps the earliest calls that return, and a string that happens
    # to run through a function of a list makes an odd example.
    ranked: list[tuple[int, str]] = []
    taken = [0, 0, 0]
    for step in range(2 * (target - len(calls))):
        rank = (0, 1, 0, 2)[step % 4]
        i = taken[rank]
        taken[rank] += 1
        doubted = (step // 4) % len(types)
        parts = []
        for j, choices in enumerate(types):
            pool = POOLS[choices[min(rank if j == doubted else 0, len(choices) - 1)]]
            parts.append(pool[(i + j) % len(pool)])
        ranked.append((rank, ", ".join(parts)))
    for _, args in sorted(ranked, key=lambda r: r[0]):
        if len(calls) >= target:
            break
        add(args)
    return calls
