"""The proposal validation chain: small checks, each failing with one reason.

Static checks read the program's syntax tree (nothing runs); run checks read the
verdicts of two verifier runs of the program on the proposed inputs. Every check
returns None when the proposal passes it, else a `Reason` whose `name` is the counter
the round summary shows. Duplicates, near-duplicates and contamination are the task
bank gate's checks and are not repeated here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from selfplay import kinds
from task_bank.examples import is_literal

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


@dataclass(slots=True)
class Reason:
    name: str
    detail: str = ""


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


def static_checks(program: str | None, entry_point: str, kind: str) -> Reason | None:
    """Everything that can be said about a proposal without running it."""
    tree, reason = parse_program(program)
    if reason:
        return reason
    assert tree is not None
    reason = defines(tree, entry_point) or hidden_state(tree)
    if reason:
        return reason
    if kinds.get(kind).needs_docstring:
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point)
        doc = ast.get_docstring(fn)
        if not doc or len(doc.split()) < 5:
            return Reason("no_description", "a codegen task needs a docstring stating the task")
    return None


def run_checks(
    first: object, second: object, n_inputs: int, max_output_chars: int
) -> tuple[list[int], Reason | None]:
    """Which inputs give a usable output, judged from two verdicts of the same row.

    Returns the positions of the inputs to keep (their call returned plain data, a
    literal of bounded size, the same both times), or a reason to reject the proposal.
    """
    if first.status != "passed":  # type: ignore[attr-defined]
        return [], Reason(f"run_{first.status}", first.detail[:300])  # type: ignore[attr-defined]
    out1 = list(first.outputs or [None] * n_inputs)  # type: ignore[attr-defined]
    out2 = list(getattr(second, "outputs", None) or [None] * n_inputs)
    if getattr(second, "status", None) != "passed" or out1 != out2:
        return [], Reason("nondeterministic", "a second run gave different outputs")
    if any(o is None for o in out1) and not first.detail:  # type: ignore[attr-defined]
        # No call raised, so a None output is a value that is not plain data.
        return [], Reason("output_not_plain_data", "f returned an object that is not plain data")
    keep = []
    for i, out in enumerate(out1):
        if out is None:
            continue  # this input raised; other inputs may still make a task
        if len(out) > max_output_chars:
            return [], Reason("output_too_large", f"an output has {len(out)} characters")
        if not is_literal(out):
            return [], Reason("output_not_literal", out[:200])
        keep.append(i)
    return keep, None
