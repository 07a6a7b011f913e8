"""`Solver.attempt` with replayed answers and the real sandboxed verifier: grading per kind,
attempts with solver rewards and pass counts (the proposer's reward from those counts:
test_learnability.py)."""

import pytest

from selfplay.config import SolverConfig
from selfplay.solver import Solver

PROGRAM = "def f(s):\n    return s[::-1].upper()\n"


@pytest.fixture()
def tasks(make_task):
    inputs, outputs = ["'ab'", "'xyz'", "'q'", "''"], ["'BA'", "'ZYX'", "'Q'", "''"]
    return {
        "deduction": make_task("deduction", PROGRAM, inputs, outputs),
        "abduction": make_task("abduction", PROGRAM, inputs, outputs),
        "induction": make_task("induction", PROGRAM, inputs, outputs),
        "codegen": make_task(
            "codegen", PROGRAM, inputs, outputs, prompt="Write `f(s)`: reverse s, upper-case it."
        ),
    }


def fence(body: str) -> str:
    return f"```python\n{body}\n```"


# Per kind: one right answer, one wrong one, one that is no answer at all. Responses are whole
# assistant turns, as a model writes them and as a trainer's reward grades them.
REPLIES = {
    "deduction": [fence("'BA'"), fence("'AB'"), "I am not sure."],
    "abduction": [fence("f('ab')"), fence("f('ba')"), "??"],
    "induction": [
        fence("def f(s):\n    return ''.join(reversed(s)).upper()"),
        fence("def f(s):\n    return s[::-1]"),
        fence("def f(s):\n    return ("),
    ],
    "codegen": [
        fence("def f(s):\n    return s.upper()[::-1]"),
        fence("def f(s):\n    while True:\n        pass"),
        "no code here",
    ],
}
MARKERS = {
    "deduction": "What does `f('ab')` return?",
    "abduction": "Find arguments",
    "induction": "Examples:",
    "codegen": "reverse s, upper-case it",
}


@pytest.mark.parametrize("kind", list(REPLIES))
def test_grading_per_kind(kind, tasks, verifier_3s_512mb, answers):
    backend = answers({MARKERS[kind]: REPLIES[kind]})
    solver = Solver(backend, verifier_3s_512mb, SolverConfig(samples=3))
    report = solver.attempt([tasks[kind]], round_id=None, step=7)
    passed = [a.passed for a in report.attempts]
    assert passed == [True, False, False]
    assert [a.reward for a in report.attempts] == [1.0, 0.0, 0.0]
    assert report.attempts[2].status in ("no_answer", "not_literal", "error")
    assert report.attempts[0].answer == REPLIES[kind][0]  # the whole response is stored
    assert all(a.task_id == tasks[kind].id and a.step == 7 for a in report.attempts)
    (result,) = report.results
    assert result.successes == 1 and result.pass_rate == pytest.approx(1 / 3)


def test_a_timeout_is_a_failed_attempt_not_a_crash(tasks, verifier_3s_512mb, answers):
    backend = answers({MARKERS["codegen"]: [REPLIES["codegen"][1]]})
    report = Solver(backend, verifier_3s_512mb, SolverConfig(samples=1)).attempt([tasks["codegen"]])
    assert report.attempts[0].status == "timeout" and not report.attempts[0].passed


def test_the_prompt_shows_only_what_the_kind_allows(tasks, verifier_3s_512mb, answers):
    backend = answers({m: REPLIES[k] for k, m in MARKERS.items()})
    seen = []
    backend._generate, inner = (lambda p, n, s: seen.extend(p) or inner(p, n, s)), backend._generate
    Solver(backend, verifier_3s_512mb, SolverConfig(samples=1)).attempt(list(tasks.values()))
    text = {k: p.messages[-1]["content"] for k, p in zip(tasks, seen, strict=True)}
    assert "f('ab')" in text["deduction"] and "'BA'" not in text["deduction"]
    assert "'BA'" in text["abduction"]
    assert (
        "f('ab') == 'BA'" in text["induction"] and "'ZYX'" not in text["induction"].split("xyz")[0]
    )
    assert "'Q'" not in text["induction"]  # held out
    assert PROGRAM.strip() not in text["induction"] and PROGRAM.strip() not in text["codegen"]


def test_attempts_carry_the_hack_signals_the_verifier_saw(tasks, verifier_3s_512mb, answers):
    hack = fence("def f(s):\n    import gc\n    gc.get_objects()\n    return s[::-1].upper()")
    backend = answers({MARKERS["codegen"]: [hack, REPLIES["codegen"][0]]})
    report = Solver(backend, verifier_3s_512mb, SolverConfig(samples=2)).attempt([tasks["codegen"]])
    hacked, clean = report.attempts
    assert hacked.passed and hacked.signals == ["gc_scan"]  # a signal never changes a verdict
    assert clean.passed and clean.signals == []


def test_an_answer_cut_off_by_its_budget_is_a_failure_never_graded(tasks, verifier_3s_512mb,
                                                                   answers):  # fmt: skip
    """The open block of a response the budget ended may hold the right value (here: 'BA'
    then the budget): it is not what the model finished, so it neither passes nor trains. A
    response that closed its answer before running on to the budget is graded as usual."""
    backend = answers({MARKERS["deduction"]: [
        ("```python\n'BA'\n", "length"),
        (fence("'BA'") + "\nBecause reversing", "length"),
        ("```python\n'BA'\n", "stop"),
    ]})  # fmt: skip
    report = Solver(backend, verifier_3s_512mb, SolverConfig(samples=3)).attempt(
        [tasks["deduction"]]
    )
    assert [(a.status, a.passed) for a in report.attempts] == [
        ("truncated", False), ("passed", True), ("passed", True)
    ]  # fmt: skip
    assert report.results[0].successes == 2
