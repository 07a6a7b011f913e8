"""Program normalization: the AST with names renamed canonically.

Two programs that differ only in the names they bind (functions, arguments,
variables, classes, import aliases), in comments, docstrings, type annotations or
layout normalize to the same text and hash. Names the program does not bind
(builtins such as `sum` or `len`, attributes such as `.append`) keep their spelling,
and constants are kept, so `x % 2 == 0` and `x % 2 == 1` stay different.
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import lru_cache

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|\S")


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:] or [ast.Pass()]
    return body


class _Binder(ast.NodeVisitor):
    """Collects the names a program binds, in order of first appearance."""

    def __init__(self) -> None:
        self.names: dict[str, None] = {}

    def _bind(self, name: str | None) -> None:
        if name:
            self.names.setdefault(name, None)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self._bind(node.arg)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self._bind(node.id)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        self._bind(node.asname)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self._bind(name)

    visit_Nonlocal = visit_Global


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def _new(self, name: str) -> str:
        return self.names.get(name, name)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.name = self._new(node.name)
        node.returns = None
        node.body = _strip_docstring(node.body)
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._new(node.name)
        node.body = _strip_docstring(node.body)
        return self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        if node.arg:
            node.arg = self._new(node.arg)
        return self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        if node.name:
            node.name = self._new(node.name)
        return self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> ast.AST:
        if node.asname:
            node.asname = self._new(node.asname)
        return node

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> ast.AST:
        node.names = [self._new(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return ast.Pass()
        return self.generic_visit(ast.Assign(targets=[node.target], value=node.value, lineno=0))


def normalize_tree(program: str) -> ast.Module:
    """Parse and normalize; raises SyntaxError/ValueError for text that is not Python."""
    tree = ast.parse(program)
    tree.body = _strip_docstring(tree.body)
    binder = _Binder()
    binder.visit(tree)
    names = {name: f"v{i}" for i, name in enumerate(binder.names)}
    tree = _Renamer(names).visit(tree)
    return ast.fix_missing_locations(tree)


@lru_cache(maxsize=4096)
def normalized_source(program: str) -> str:
    """Normalized program text; the raw text when it does not parse."""
    try:
        return ast.unparse(normalize_tree(program))
    except (SyntaxError, ValueError, RecursionError):
        return program


def ast_hash(program: str) -> str:
    """Hash of the normalized AST (the exact-duplicate key)."""
    try:
        dump = ast.dump(normalize_tree(program), annotate_fields=False)
    except (SyntaxError, ValueError, RecursionError):
        dump = "raw:" + program
    return hashlib.sha256(dump.encode()).hexdigest()


def code_tokens(program: str) -> list[str]:
    """Tokens of the normalized program."""
    return _TOKEN.findall(normalized_source(program))


def word_tokens(text: str) -> list[str]:
    """Lower-case word tokens of prose."""
    return re.findall(r"[a-z0-9]+", text.lower())


class _Shape(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(type(node.value).__name__)


def program_shape(program: str) -> str:
    """The normalized program with its constants abstracted to their types: `x + 1` and
    `x + 2` are one shape (the health figures' diversity, the proposer's repetition
    penalty)."""
    try:
        tree = normalize_tree(program)
    except (SyntaxError, ValueError, RecursionError):
        return "raw:" + program
    return ast.dump(_Shape().visit(tree), annotate_fields=False)
