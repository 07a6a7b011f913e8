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
from selfplay.task import InvalidTask
from task_bank.schema import parse_task


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


def proposal_outputs(c: Candidate, verdict: Any, max_output_chars: int) -> Reason | None:
    """A proposal's inputs all make examples: every call returned a literal of bounded
    size, and (where the kind asks, `Kind.varied_outputs`) not all the same one.

    An input that raises rejects the task rather than being dropped: the program is not
    defined where its own inputs say it is, and the inputs left would show only the part
    of it that works."""
    if verdict.status != "passed":
        return Reason(f"run_{verdict.status}", verdict.detail[:300])
    outputs = list(verdict.outputs or [None] * len(c.inputs))
    if any(o is None for o in outputs):
        if verdict.detail:  # a call raised; the verifier names the first that did
            return Reason("input_raises", verdict.detail[:300])
        # No call raised, so a None output is a value that is not plain data.
        return Reason("output_not_plain_data", "f returned an object that is not plain data")
    for out in outputs:
        if len(out) > max_output_chars:
            return Reason("output_too_large", f"an output has {len(out)} characters")
        if not is_literal(out):
            return Reason("output_not_literal", out[:200])
    # Distinct outputs are also the cheap sign that the inputs take more than one path
    # through the program; telling which branches each input reached would need the
    # sandbox to trace every call.
    if kinds.get(c.kind).varied_outputs:
        if len(set(outputs)) == 1:
            return Reason("constant_output", f"every input gives {str(outputs[0])[:100]}")
        if returns_its_input(c.inputs, outputs):
            return Reason("returns_input", "f returns each of its inputs unchanged")
    c.outputs = list(outputs)
    return None


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
        "prompt": c.draft.get("prompt") or kinds.get(c.kind).statement(c.program, ep),
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
