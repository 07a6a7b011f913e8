"""`strengthen`: new tests for a task, each kept only where it fails a wrong solution.

For a codegen task with an entry point:

1. Inputs: the literal arguments its own tests call it with, then their near variants
   (`selfplay.strengthen.inputs`: one value a small step away, types and shapes kept, so
   they stay in the task's domain); only a task whose tests call it with no literal
   arguments gets arguments built from the reference's parameters and body
   (`selfplay.proposer.synthesis`, the proposer's synthesis).
2. Expected outputs: the reference runs on every input in the sandbox, twice; an input is kept
   where both runs return the same literal of bounded size. Never a model's output.
3. Known-wrong solutions: the reference's mutants and the degenerate answers
   (`selfplay.strengthen.mutants`), each run in the sandbox against the task's own tests and
   on every kept input.
4. A mutant is wrong where it fails the task's tests or answers some input differently from
   the reference (one that answers every input alike may be an equivalent mutant: it counts
   for nothing). The original tests kill the ones they fail; of the wrong mutants they let
   through, a greedy set cover picks the fewest new tests (`assert f(args) == output`) that
   kill the most, up to `per_task`. A new test the reference fails is impossible by
   construction (its output is the expectation) and is checked anyway.

The result says how many wrong mutants there were and how many the original and the
strengthened tests kill (the mutation score before and after).

A near variant can still leave what a task means (a range's low end stepped above its high
end), where the reference's answer is an accident another correct solution need not share.
Variants are kept only inside what the task's own arguments always are
(`selfplay.strengthen.inputs.domain`: signs, non-empty, sorted, `lo <= hi` across two or
more given calls); what a task's arguments never show (a precondition in prose) stays a risk,
reported by `selfplay eval` as the tasks whose original and strengthened verdicts differ.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from selfplay.admission.examples import inputs_from_tests, is_literal
from selfplay.admission.runs import test_of
from selfplay.proposer.synthesis import synthesize
from selfplay.strengthen.inputs import domain, variants
from selfplay.strengthen.mutants import Mutant, degenerate, mutants

MAX_OUTPUT_CHARS = 1000
MUTANT_TIMEOUT_MIN_S, MUTANT_TIMEOUT_MAX_S = 1.0, 10.0


@dataclass(slots=True)
class Strengthened:
    """One task's new tests and what they buy."""

    task_id: str
    tests: list[Any] = field(default_factory=list)  # asserts, or stdin/stdout pairs
    inputs: int = 0  # inputs the reference answered the same way twice
    mutants: int = 0  # wrong ones: fail the tests or answer some input differently
    killed_before: int = 0  # by the task's own tests
    killed_after: int = 0  # by its own and the new ones
    attempts_wrong: int = 0  # solver attempts its tests passed that answer an input wrongly
    reason: str | None = None  # why nothing could be added, where nothing was

    @property
    def score_before(self) -> float | None:
        return self.killed_before / self.mutants if self.mutants else None

    @property
    def score_after(self) -> float | None:
        return self.killed_after / self.mutants if self.mutants else None


def strengthen(task: Any, verifier: Any, *, per_task: int = 8, synthesized: int = 20,
               mutant_limit: int = 48, written: list[str] = (),
               attempts: list[str] = ()) -> Strengthened:  # fmt: skip
    """New discriminating tests for one codegen task (see the module docstring); `written`:
    argument lists a model wrote for it (`edge_cases`), tried besides the others;
    `attempts`: programs of solver attempts its tests passed, wrong where they answer some
    input differently from the reference (the tests' own blind spots, as models find them)."""
    out = Strengthened(task.id)
    entry = task.entry_point
    if (
        task.kind == "codegen"
        and not entry
        and task.tests
        and all(isinstance(t, dict) and "input" in t for t in task.tests)
    ):
        from selfplay.strengthen.stdio import strengthen_stdio

        return strengthen_stdio(task, verifier, out, per_task=per_task, synthesized=synthesized,
                                mutant_limit=mutant_limit)  # fmt: skip
    if task.kind != "codegen" or not entry or any(not isinstance(t, str) for t in task.tests):
        out.reason = "not_function_codegen"
        return out
    given = inputs_from_tests(task.tests, entry, 50)
    # Near the task's own arguments first (they stay in its domain); synthesised from the
    # reference's parameters only where its tests call it with no literal arguments.
    inside = domain(given)
    near = [v for group in zip_longest(*map(variants, given)) for v in group
            if v is not None and inside(v)]  # fmt: skip
    inputs = list(dict.fromkeys([*given, *near]))[: len(given) + synthesized]
    if not given:
        inputs = synthesize(task.program, entry, limit=synthesized)
    inputs = list(dict.fromkeys([*inputs, *(w for w in written if inside(w))]))
    if not inputs:
        out.reason = "no_inputs"
        return out
    calls = [f"{entry}({args})" for args in inputs]
    first, second, expected = reference_outputs(
        verifier, task.program, inputs, calls, _outputs, is_literal
    )
    out.inputs = len(expected)
    if not expected:
        out.reason = "no_outputs"
        return out
    kept = list(expected)
    candidates = mutants(task.program, entry, mutant_limit) + degenerate(task.program, entry)
    candidates += [Mutant("attempt", 0, program) for program in dict.fromkeys(attempts)]
    limit = mutant_timeout(first, second)
    verdicts = verifier.grade([
        {"id": f"m{i}", "program": m.program, "tests": task.tests,
         "calls": [f"{entry}({args})" for args in kept], "timeout_s": limit}
        for i, m in enumerate(candidates)
    ])  # fmt: skip
    outcomes = []
    for v in verdicts:
        outputs = _outputs(v, kept)
        differs = [not _same(o, expected[args]) for args, o in zip(kept, outputs, strict=True)]
        # The tests passed and some call never returned: which one is unknown.
        undecided = v.status == "timeout" and v.tests_passed == v.tests_total
        outcomes.append((v.status != "passed", undecided, differs))
    killers, survivors = tally(out, outcomes, len(kept))
    out.attempts_wrong = sum(candidates[i].operator == "attempt" for i in survivors)
    return keep(out, verifier, task.program, killers, survivors, per_task,
                lambda j: _test(entry, kept[j], expected[kept[j]]))  # fmt: skip


def tally(out: Strengthened, outcomes: Any, inputs: int) -> tuple[list[set[int]], set[int]]:
    """Count the wrong candidates into `out` from each one's (failed its tests, undecided,
    differs from the reference per input); the candidates each input kills, and the wrong
    ones the task's own tests let through."""
    killers: list[set[int]] = [set() for _ in range(inputs)]
    survivors = set()
    for i, (failed, undecided, differs) in enumerate(outcomes):
        if undecided:
            continue
        if failed:
            out.mutants += 1
            out.killed_before += 1
        elif any(differs):
            out.mutants += 1
            survivors.add(i)
            for j, d in enumerate(differs):
                if d:
                    killers[j].add(i)
    return killers, survivors


def keep(out: Strengthened, verifier: Any, reference: str, killers: list[set[int]],
         survivors: set[int], per_task: int, test_for: Any) -> Strengthened:  # fmt: skip
    """The fewest inputs that kill the most survivors, as tests (`test_for(input index)`),
    kept once the reference passes them all: checked, not assumed."""
    chosen = _cover(killers, survivors, per_task)
    tests = [test_for(j) for j in chosen]
    if tests:
        (check,) = verifier.grade([{"id": "check", "program": reference, "tests": tests}])
        if check.status != "passed":
            out.reason = f"reference_fails: {check.detail[:200]}"
            return out
    out.tests = tests
    out.killed_after = out.killed_before + len(set().union(*(killers[j] for j in chosen)))
    if not tests:
        out.reason = "nothing_to_kill" if not survivors else "no_discriminating_input"
    return out


def reference_outputs(
    verifier: Any,
    program: str,
    inputs: list[Any],
    calls: list[str],
    read: Callable[[Any, list[str]], list[str | None]],
    usable: Callable[[str], bool],
) -> tuple[Any, Any, dict[Any, str]]:
    """The reference's two runs of `calls` and the expected output per input: kept where both
    runs gave the same `usable` output of at most MAX_OUTPUT_CHARS (never a model's)."""
    first, second = verifier.grade(
        [{"id": f"ref-{n}", "program": program, "tests": [], "calls": calls} for n in (1, 2)]
    )
    expected = {}
    for x, a, b in zip(inputs, read(first, calls), read(second, calls), strict=True):
        if a is not None and a == b and usable(a) and len(a) <= MAX_OUTPUT_CHARS:
            expected[x] = a
    return first, second, expected


def mutant_timeout(*reference: Any) -> float:
    """A mutant's time limit: 20 times the reference's slowest run on the same calls, at
    least 1 s and at most 10 s. A mutant that turns a loop's step into 0 never returns, and
    at the verifier's own limit each would cost seconds of a worker."""
    slowest = max((v.duration_s for v in reference), default=0.0)
    return min(MUTANT_TIMEOUT_MAX_S, max(MUTANT_TIMEOUT_MIN_S, 20 * slowest))


def _test(entry: str, args: str, output: str) -> str:
    """`assert f(args) == output`; for a float, equal to 1e-6 relative (a correct solution
    that sums in another order differs in the last digits, and must not fail here)."""
    try:
        value = ast.literal_eval(output)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = None
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return (f"import math\nassert math.isclose({entry}({args}), {output}, rel_tol=1e-6, "
                "abs_tol=1e-9)")  # fmt: skip
    return test_of(entry, args, output)


def _outputs(verdict: Any, calls: list[str]) -> list[str | None]:
    got = list(verdict.outputs or [])
    return got + [None] * (len(calls) - len(got))


def _same(output: str | None, expected: str) -> bool:
    """Whether the test `assert f(args) == expected` would pass on this output."""
    if output is None:
        return False
    if output == expected:
        return True
    try:
        return ast.literal_eval(output) == ast.literal_eval(expected)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _cover(killers: list[set[int]], survivors: set[int], limit: int) -> list[int]:
    """Greedy set cover: inputs, in order of how many uncovered survivors each kills."""
    left, chosen = set(survivors), []
    while left and len(chosen) < limit:
        best = max(range(len(killers)), key=lambda j: (len(killers[j] & left), -j))
        gain = killers[best] & left
        if not gain:
            break
        chosen.append(best)
        left -= gain
    return chosen
