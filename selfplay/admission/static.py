"""A proposal's static steps: what can be said about it before anything runs.

Each step reads the program's text or syntax tree and returns None when the proposal
passes it, else a `Reason` whose `name` is the counter the round summary shows. They
apply to proposals only: an imported task is judged by its own tests.
"""

from __future__ import annotations

import ast
import builtins
import symtable

from selfplay import kinds
from selfplay.admission.candidate import Candidate, Reason

# Calls whose result changes from run to run or process to process.
RANDOM_MODULES = {"random", "secrets", "uuid"}
ALWAYS_RANDOM_ATTRS = {"urandom", "getrandom", "uuid1", "uuid4", "token_hex", "token_bytes"}
TIME_ATTRS = {
    "time",
    "time_ns",
    "perf_counter",
    "perf_counter_ns",
    "monotonic",
    "monotonic_ns",
    "process_time",
    "now",
    "today",
    "utcnow",
    "localtime",
    "gmtime",
    "ctime",
}
# hash() of str/bytes depends on the per-process hash seed; id() on memory layout.
PROCESS_DEPENDENT_BUILTINS = {"hash", "id", "input", "open"}
# What a program's module can read without defining it (the sandbox runs it as a module with
# these builtins); dunders such as `__name__` are the module's own attributes.
BUILTIN_NAMES = frozenset(dir(builtins))


def parse_program(program: str | None) -> tuple[ast.Module | None, Reason | None]:
    if program is None or not program.strip():
        return None, Reason("no_code", "the completion has no code block")
    try:
        return ast.parse(program), None
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        return None, Reason("unparseable", f"{type(e).__name__}: {e}"[:300])


def defines(tree: ast.Module, entry_point: str) -> Reason | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            if not node.args.args and not node.args.vararg:
                return Reason("no_parameters", f"{entry_point} takes no arguments")
            return None
    return Reason("no_entry_point", f"no top-level function {entry_point}")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def hidden_state(tree: ast.Module) -> Reason | None:
    """Unseeded randomness, clocks and process-dependent builtins, found by name.

    `random` counts as seeded when the program calls `seed(<arg>)` or builds
    `Random(<arg>)`; clocks and `uuid4`-style calls are never deterministic. The
    determinism run catches what this misses within one process; this catches what
    two runs forked from the same interpreter cannot (for example `hash()` of strings).
    """
    imported: set[str] = set()
    seeded = False
    random_used = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
            names = {a.name for a in node.names}
            if node.module.split(".")[0] == "time" or names & TIME_ATTRS:
                return Reason(
                    "time_dependence", f"imports {', '.join(sorted(names))} from {node.module}"
                )
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if name in PROCESS_DEPENDENT_BUILTINS:
                return Reason("hidden_state", f"calls {name}(), which differs between processes")
            if last in ALWAYS_RANDOM_ATTRS:
                return Reason("unseeded_randomness", f"calls {name}()")
            if last in TIME_ATTRS and name.split(".")[0] in {"time", "datetime", "date"}:
                return Reason("time_dependence", f"calls {name}()")
            if (last == "seed" or last == "Random") and node.args:
                seeded = True
        if isinstance(node, ast.Name | ast.Attribute) and _dotted(node).split(".")[0] == "random":
            random_used = True
    if imported & {"secrets", "uuid"}:
        return Reason("unseeded_randomness", "imports secrets or uuid")
    if "time" in imported:
        return Reason("time_dependence", "imports time")
    if ("random" in imported or random_used) and not seeded:
        return Reason("unseeded_randomness", "uses random without a fixed seed")
    return None


def undefined_names(tree: ast.Module, program: str) -> Reason | None:
    """A name read somewhere in the program that nothing binds: neither a builtin, a
    parameter or local, an import, a module-level definition, nor a `global` assigned in a
    function. The inputs given may never reach it (a guard returns first), but another input
    would raise NameError, so the task is not what its examples show. `symtable` resolves
    the scopes (comprehensions, lambdas, class bodies) as the compiler does."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None  # `import *` binds names the text does not show
    try:
        top = symtable.symtable(program, "<program>", "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        return Reason("unparseable", f"{type(e).__name__}: {e}"[:300])
    bound = {
        s.get_name()
        for s in top.get_symbols()
        if s.is_assigned() or s.is_imported() or s.is_namespace()
    }
    read: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for sym in table.get_symbols():
            if sym.is_declared_global() and sym.is_assigned():
                bound.add(sym.get_name())
            if sym.is_global() and sym.is_referenced():
                read.add(sym.get_name())
    missing = sorted(
        name
        for name in read - bound - BUILTIN_NAMES
        if not (name.startswith("__") and name.endswith("__"))
    )
    if missing:
        return Reason("undefined_name", f"uses {', '.join(missing)[:200]}, which nothing defines")
    return None


def static_checks(program: str | None, entry_point: str, kind: str) -> Reason | None:
    """Everything that can be said about a proposal without running it."""
    tree, reason = parse_program(program)
    if reason:
        return reason
    assert tree is not None and program is not None
    reason = defines(tree, entry_point) or hidden_state(tree) or undefined_names(tree, program)
    if reason:
        return reason
    if kinds.get(kind).needs_docstring:
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point)
        doc = ast.get_docstring(fn)
        if not doc or len(doc.split()) < 5:
            return Reason("no_description", "a codegen task needs a docstring stating the task")
    return None


def too_long(candidate: Candidate, max_chars: int) -> Reason | None:
    program = candidate.program
    if program is not None and len(program) > max_chars:
        return Reason("too_long", f"{len(program)} characters")
    return None


def input_value(args: str) -> str:
    """The value an argument list denotes, as text: `1` and `+1` are one input, `1` and
    `1.0` two (their types differ, and so may what the program does with them)."""
    try:
        return repr(ast.literal_eval(f"({args},)"))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return args


def distinct_inputs(candidate: Candidate) -> Reason | None:
    """An input given twice shows the program nothing new, and its second example repeats
    the first."""
    seen: set[str] = set()
    for args in candidate.inputs:
        value = input_value(args)
        if value in seen:
            return Reason("repeated_inputs", f"f({args[:100]}) is given twice")
        seen.add(value)
    return None


def enough_inputs(candidate: Candidate) -> Reason | None:
    """A kind needs some literal calls to make examples of (`Kind.proposal_inputs`)."""
    if len(candidate.inputs) < kinds.get(candidate.kind).proposal_inputs:
        return Reason("too_few_inputs", f"{len(candidate.inputs)} literal calls")
    return None


def check_inputs(candidate: Candidate) -> Reason | None:
    """A proposal's inputs, before they run: distinct, and as many as its kind needs."""
    return distinct_inputs(candidate) or enough_inputs(candidate)


def screen(candidate: Candidate, max_program_chars: int) -> Reason | None:
    """The program's static steps in order (the inputs are not needed yet): the first
    reason found, or None."""
    entry_point = candidate.entry_point or ""
    return too_long(candidate, max_program_chars) or static_checks(
        candidate.program, entry_point, candidate.kind
    )
