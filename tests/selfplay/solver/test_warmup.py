"""The warm-up before choosing: every candidate task gets an estimate, tasks with a record
keep theirs; and the procedural level knob moves a solver's measured pass rate."""

from __future__ import annotations

import ast
import random
import re

import pytest

from selfplay import procedural
from selfplay.admission import Admission, AdmissionConfig
from selfplay.backends.base import Backend, Completion
from selfplay.config import SolverConfig
from selfplay.solver import Solver
from selfplay.solver.warmup import blind, warm_up
from task_bank.store import Attempt


class Tracer(Backend):
    """Answers a deduction prompt by running its program, slipping at each step with
    probability `slip` (the value is off by one after that statement): a solver whose
    accuracy falls with the number of steps it must trace, as a small model's does."""

    name = "tracer"

    def __init__(self, slip: float, seed: int = 0) -> None:
        super().__init__("tracer")
        self.slip = slip
        self.rng = random.Random(seed)

    def _answer(self, text: str) -> str:
        program = re.search(r"```python\n(.*?)```", text, re.S).group(1)
        call = re.search(r"What does `f\((.*)\)` return\?", text).group(1)
        fn = ast.parse(program).body[0]
        var = fn.args.args[0].arg
        body = []
        for statement in fn.body[:-1]:  # every step; the return last
            body.append(statement)
            if self.rng.random() < self.slip:
                body.append(ast.parse(f"{var} = {var} + {'1' if var == 'x' else '[0]'}").body[0])
        fn.body = [*body, fn.body[-1]]
        env: dict = {}
        exec(ast.unparse(fn), env)  # noqa: S102 - the test's own generated program
        return f"```python\n{env['f'](ast.literal_eval(call))!r}\n```"

    def _generate(self, prompts, n, sampling):
        return [
            [Completion(self._answer(p.messages[-1]["content"]), 5, "stop") for _ in range(n)]
            for p in prompts
        ]


@pytest.fixture()
def procedural_bank(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    admission.admit(
        procedural.candidates(levels=(1, 3, 6), per_level=24, seed=5, families=["arith", "lists"])
    )
    return bank


def test_the_warm_up_gives_every_candidate_an_estimate(procedural_bank, verifier):
    bank = procedural_bank
    tasks = list(bank.tasks(source="procedural"))
    known = tasks[:5]  # these already have a record by the solver
    bank.add_attempts(Attempt(t.id, "tracer", "```python\n0\n```", "wrong_answer", False, 0.0)
                      for t in known)  # fmt: skip
    assert set(blind(bank, [t.id for t in tasks], ["tracer"])) == {t.id for t in tasks[5:]}
    solver = Solver(Tracer(slip=0.2), verifier, SolverConfig(samples=2))
    report = warm_up(bank, solver, tasks, solvers=["tracer"])
    stats = bank.solve_stats("tracer")
    assert report.candidates == len(tasks) and report.warmed == len(tasks) - 5
    assert report.attempts == 2 * report.warmed
    assert (stats.loc[[t.id for t in tasks], "attempts"] > 0).all()
    assert stats.loc[[t.id for t in known], "attempts"].tolist() == [1] * 5  # not redone
    assert blind(bank, [t.id for t in tasks], ["tracer"]) == []
    again = warm_up(bank, solver, tasks, solvers=["tracer"])
    assert again.warmed == 0 and again.attempts == 0


def test_the_depth_knob_lowers_the_measured_solve_rate(procedural_bank, verifier):
    solver = Solver(Tracer(slip=0.25, seed=1), verifier, SolverConfig(samples=4))
    rates = {}
    for depth in (1, 3, 6):
        tasks = [t for t in procedural_bank.tasks() if t.metadata["level"] == depth]
        results = solver.attempt(tasks).results
        rates[depth] = sum(r.pass_rate for r in results) / len(results)
    assert rates[1] > rates[3] > rates[6], rates
    # Not a constant answer: with no slips the tracer is right on every task.
    exact = Solver(Tracer(slip=0.0), verifier, SolverConfig(samples=1))
    assert all(r.pass_rate == 1.0 for r in exact.attempt(list(procedural_bank.tasks())).results)
