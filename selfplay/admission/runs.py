"""The two runs every candidate's program gets, and the steps that read them.

Run 1 executes the program with its own tests (a proposal has none yet) and calls it on
its inputs: an import's example inputs (or the literal calls found in its tests), a
proposal's model-written inputs. A proposal's tests are then built from run 1's outputs,
values the verifier computed, never the model's text. Run 2 executes the program again
with those tests and the kept calls, and must pass with the same outputs: that is the
determinism check and the proof that the task passes its own tests, in one execution.
"""

from __future__ import annotations

import ast
import time
from typing import Any

from selfplay import kinds
from selfplay.admission.candidate import Candidate, Reason
from selfplay.admission.examples import inputs_from_tests, is_literal, same_value
from selfplay.admission.schema import parse_task
from selfplay.task import InvalidTask


def test_of(entry_point: str, args: str, output: str) -> str:
    """`assert f(args) == output`, or a comparison of reprs where the output is no literal
    that compares equal to itself (`nan`, `inf`, `frozenset()`)."""
    try:
        value = ast.literal_eval(output)
        if value == value:
            return f"assert {entry_point}({args}) == {output}"
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return f"assert repr({entry_point}({args})) == {output!r}"


def _row(tag: str, program: str, tests: list, calls: list[str], timeout_s: float | None):
    row: dict[str, Any] = {"id": tag, "program": program, "tests": tests, "calls": calls}
    if timeout_s:
        row["timeout_s"] = timeout_s
    return row


def prepare(c: Candidate, max_examples: int) -> None:
    """The inputs an import is called on: its given examples, else those its tests use."""
    if c.task is not None:
        given = [e["input"] for e in c.task.examples]
        c.inputs = given or inputs_from_tests(c.task.tests, c.task.entry_point, max_examples)
    c.calls = [f"{c.entry_point}({x})" for x in c.inputs]


def first_row(c: Candidate, tag: str, timeout_s: float | None) -> dict[str, Any]:
    tests = c.task.tests if c.task is not None else []
    assert c.program is not None
    return _row(tag, c.program, tests, c.calls, timeout_s)


def second_row(c: Candidate, tag: str, timeout_s: float | None) -> dict[str, Any]:
    assert c.task is not None
    return _row(tag, c.task.program, c.task.tests, c.calls, timeout_s)


# ---- after run 1 ------------------------------------------------------------------------


# What a dropped call says, most telling first: the reason a proposal left with too few
# examples is rejected for.
DROPPED = (
    "run_timeout",
    "run_memory",
    "input_raises",
    "output_too_large",
    "output_not_literal",
    "output_not_plain_data",
)
PARTIAL = ("timeout", "memory")  # the row died at one call; the calls before it returned


def proposal_outputs(c: Candidate, verdict: Any, max_output_chars: int, keep: int) -> Reason | None:
    """A proposal's examples: of its calls (the model's, then the synthesised ones), those
    that returned a literal of bounded size, at most `keep`, the model's first and varied
    outputs before repeated ones.

    A call that raises or returns no value is dropped, not held against the program: the
    candidates are guesses at what the program takes (`selfplay.proposer.synthesis`), and
    an integer given to a function of a list says nothing about the function. The gate on
    what is kept is as strict as on the model's own calls: at least the kind's number of
    distinct inputs (2 or more), not all one output, not the identity, and run 2 must give
    the same outputs again."""
    outputs = list(verdict.outputs or [])
    outputs += [None] * (len(c.inputs) - len(outputs))
    if verdict.status != "passed" and not (verdict.status in PARTIAL and any(outputs)):
        return Reason(f"run_{verdict.status}", verdict.detail[:300])
    dropped: dict[str, str] = {}
    ran: list[tuple[int, str, str]] = []
    for n, (args, out) in enumerate(zip(c.inputs, outputs, strict=True)):
        if out is None:
            # The row died at this call, or a call raised (the verifier names the first
            # that did), else it returned an object that is not plain data.
            name = "input_raises" if verdict.detail else "output_not_plain_data"
            if verdict.status in PARTIAL:
                name = f"run_{verdict.status}"
            dropped.setdefault(
                name, verdict.detail[:300] or "f returned an object that is not plain data"
            )
        elif len(out) > max_output_chars:
            dropped.setdefault("output_too_large", f"an output has {len(out)} characters")
        elif not is_literal(out):
            dropped.setdefault("output_not_literal", out[:200])
        else:
            ran.append((n, args, out))
    written = c.draft.get("written_inputs", len(c.inputs))  # the model's come first
    kept = _choose(ran, written, keep)
    if len(kept) < kinds.get(c.kind).proposal_inputs:
        name = next((d for d in DROPPED if d in dropped), None)
        if name is None:
            return Reason("too_few_inputs", f"{len(kept)} inputs returned a value")
        return Reason(name, dropped[name])
    # Distinct outputs are also the cheap sign that the inputs take more than one path
    # through the program; telling which branches each input reached would need the
    # sandbox to trace every call.
    if kinds.get(c.kind).varied_outputs:
        if len({out for _, _, out in kept}) == 1:
            return Reason("constant_output", f"every input gives {kept[0][2][:100]}")
        if returns_its_input([a for _, a, _ in kept], [o for _, _, o in kept]):
            return Reason("returns_input", "f returns each of its inputs unchanged")
    c.draft.setdefault("metadata", {})["synthesized_inputs"] = sum(n >= written for n, _, _ in kept)
    c.inputs = [a for _, a, _ in kept]
    c.outputs = [o for _, _, o in kept]
    c.calls = [f"{c.entry_point}({x})" for x in c.inputs]
    return None


def _choose(ran: list[tuple[int, str, str]], written: int, keep: int) -> list[tuple[int, str, str]]:
    """At most `keep` of the calls that returned, in the order they were made: the model's
    own before synthesised ones and each new output before a repeated one; if all those
    chosen return their input unchanged while another call does not, that one replaces
    the last (an identity on some inputs only must not look like one)."""
    order = sorted(ran, key=lambda r: (r[0] >= written, r[0]))
    chosen: list[tuple[int, str, str]] = []
    outputs: set[str] = set()
    for r in order:
        if len(chosen) < keep and r[2] not in outputs:
            chosen.append(r)
            outputs.add(r[2])
    for r in order:
        if len(chosen) < keep and r not in chosen:
            chosen.append(r)
    if chosen and returns_its_input([r[1] for r in chosen], [r[2] for r in chosen]):
        other = next((r for r in order if not returns_its_input([r[1]], [r[2]])), None)
        if other is not None:
            chosen[-1] = other
    return sorted(chosen)


def returns_its_input(inputs: list[str], outputs: list[str]) -> bool:
    """Every call `f(x)` gave back `x` itself (same value, same type): an identity function
    in disguise, whose examples give the answer away."""
    for args, out in zip(inputs, outputs, strict=True):
        try:
            given, got = ast.literal_eval(f"({args},)"), ast.literal_eval(out)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        if len(given) != 1 or type(given[0]) is not type(got) or given[0] != got:
            return False
    return True


def build(c: Candidate) -> Reason | None:
    """A proposal becomes a task: tests and examples from run 1's outputs."""
    ep = c.draft["entry_point"]
    pairs = list(zip(c.inputs, c.outputs, strict=True))
    assert c.program is not None
    row = {
        **{k: v for k, v in c.draft.items() if k in ("entry_point", "source", "tags")},
        "prompt": c.draft.get("prompt") or kinds.get(c.kind).statement(c.program, ep, pairs),
        "kind": c.kind,
        "program": c.program,
        "tests": [test_of(ep, x, y) for x, y in pairs],  # type: ignore[arg-type]
        "examples": [{"input": x, "output": y} for x, y in pairs],
    }
    try:
        task = parse_task(row, source=c.source)
    except InvalidTask as e:
        return Reason("invalid_task", str(e))
    task.parent_ids = list(c.draft.get("parent_ids", []))
    task.proposer = c.draft.get("proposer")
    task.round_id = c.draft.get("round_id")
    task.metadata = dict(c.draft.get("metadata", {}))
    c.task = task
    return None


def import_outputs(c: Candidate, verdict: Any) -> Reason | None:
    """An import's reference must pass its own tests; its examples get computed outputs,
    and given example outputs must match them."""
    t = c.task
    assert t is not None
    if not verdict.passed:
        return Reason(f"reference_{verdict.status}", verdict.detail)
    outputs = list(verdict.outputs or [None] * len(c.inputs))
    if t.examples:
        for e, out in zip(t.examples, outputs, strict=True):
            if out is None or (e["output"] is not None and not same_value(e["output"], out)):
                name = "example_error" if out is None else "example_mismatch"
                return Reason(name, f"input {e['input']}: given {e['output']}, ran {out}")
    else:
        # Inputs found in the tests are kept only where the result is a plain value: an
        # object repr (with its address) is no example.
        outputs = [o if o is not None and is_literal(o) else None for o in outputs]
    c.outputs = outputs
    return None


# ---- after run 2 ------------------------------------------------------------------------


def same_again(c: Candidate, verdict: Any) -> Reason | None:
    """Run 2 passed the tests and gave run 1's outputs (where run 1 kept one)."""
    again = list(verdict.outputs or [None] * len(c.calls))
    if not verdict.passed or any(
        out is not None and out != other for out, other in zip(c.outputs, again, strict=True)
    ):
        return Reason("nondeterministic", "a second run gave a different result")
    return None


def finish(c: Candidate, deterministic: bool) -> Reason | None:
    """The examples and verification facts go on the task; then the kind's own check."""
    t = c.task
    assert t is not None
    t.examples = [
        {"input": x, "output": out}
        for x, out in zip(c.inputs, c.outputs, strict=True)
        if out is not None
    ]
    problem = kinds.get(t.kind).check(t)
    if problem:
        return Reason(*problem)
    t.verified_at, t.deterministic = time.time(), deterministic
    return None
