"""Procedural families: each draws runnable programs at a level, registers itself, and its
level is a knob a tracer's measured solve rate falls with; the graph sees levels as
prerequisites."""

from __future__ import annotations

import math
import random
import re
import sys

import pandas as pd
import pytest

from curricula.inspect import bank_graph
from selfplay import families, procedural
from selfplay.admission import Admission, AdmissionConfig
from selfplay.backends.base import Backend, Completion
from selfplay.config import SolverConfig
from selfplay.solver import Solver

NAMES = list(families.FAMILIES)


def _run(program: str, call: str) -> tuple[object, int]:
    """The value of `f(call)` and the lines executed to get it (comprehensions included)."""
    code = compile(program, "<family>", "exec")
    env: dict = {}
    exec(code, env)  # noqa: S102 - the family's own generated program, in the test
    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        if frame.f_code.co_filename != "<family>":
            return None
        if event == "line":
            lines += 1
        return trace

    sys.settrace(trace)
    try:
        value = eval(f"f({call})", env)  # noqa: S307 - our own literal arguments
    finally:
        sys.settrace(None)
    return value, lines


class Tracer(Backend):
    """Answers a deduction prompt by running its program and keeping the answer with
    probability exp(-lines / 12): a solver that slips more the longer the trace it follows,
    as a small model does. Its wrong answer is a string no family returns."""

    name = "tracer"

    def __init__(self, seed: int = 0) -> None:
        super().__init__("tracer")
        self.rng = random.Random(seed)

    def _answer(self, text: str) -> str:
        program = re.search(r"```python\n(.*?)```", text, re.S).group(1)
        call = re.search(r"What does `f\((.*)\)` return\?", text).group(1)
        value, lines = _run(program, call)
        kept = self.rng.random() < math.exp(-lines / 12)
        return f"```python\n{value!r}\n```" if kept else "```python\n'slipped'\n```"

    def _generate(self, prompts, n, sampling):
        return [
            [Completion(self._answer(p.messages[-1]["content"]), 5, "stop") for _ in range(n)]
            for p in prompts
        ]


def test_eight_families_of_distinct_skills_register_themselves():
    assert len(NAMES) >= 8
    assert len({f.skill for f in families.FAMILIES.values()}) == len(NAMES)
    assert all(f.knob for f in families.FAMILIES.values())
    with pytest.raises(ValueError, match="unknown procedural family 'nope'"):
        families.get("nope")


def test_a_new_family_is_one_registered_class():
    @families.register
    class Constant(families.Family):
        name = "constant-test"
        skill = "returning a number"
        knob = "none"

        def draw(self, level, rng, n_inputs):
            return families.Drawn(f"def f(x):\n    return {level}\n", ["1", "2"][:n_inputs])

    try:
        batch = procedural.candidates(levels=(2,), per_level=1, families=["constant-test"])
        assert batch[0].program == "def f(x):\n    return 2\n"
        assert batch[0].draft["tags"][:2] == ["family:constant-test", "level-2"]
    finally:
        del families.FAMILIES["constant-test"]


@pytest.mark.parametrize("name", NAMES)
def test_every_draw_runs_on_its_inputs_and_the_seed_decides(name):
    family = families.get(name)
    for level in (1, 3, 5):
        drawn = family.draw(level, random.Random(level), 5)
        assert len(drawn.inputs) == 5 and len(set(drawn.inputs)) == 5
        for call in drawn.inputs:
            _run(drawn.program, call)  # raises if a draw does not fit its program
        again = family.draw(level, random.Random(level), 5)
        assert again == drawn
    other = [family.draw(3, random.Random(s), 5).program for s in range(6)]
    assert len(set(other)) > 1


def test_candidates_carry_family_level_and_difficulty():
    batch = procedural.candidates("abduction", levels=(1, 7), per_level=8, seed=3)
    assert {c.draft["metadata"]["family"] for c in batch} == set(NAMES)
    for c in batch:
        meta = c.draft["metadata"]
        assert meta["difficulty"] == min(meta["level"], 5)
        assert c.draft["tags"][:2] == [f"family:{meta['family']}", f"level-{meta['level']}"]
        assert c.kind == "abduction"
    with pytest.raises(ValueError, match="levels run from 1"):
        procedural.candidates(levels=(0,))


@pytest.fixture(scope="module")
def family_bank(tmp_path_factory, verifier):
    from task_bank.store import Bank

    bank = Bank(tmp_path_factory.mktemp("families") / "bank.db")
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    report = admission.admit(
        procedural.candidates(levels=(1, 3, 5), per_level=24 * len(NAMES), seed=11)
    )
    assert report.admitted >= 0.9 * report.seen, report.rejected
    yield bank
    bank.close()


def test_each_knob_lowers_a_tracers_measured_solve_rate(family_bank, verifier):
    solver = Solver(Tracer(seed=1), verifier, SolverConfig(samples=8))
    rates = {}
    for task, result in zip(tasks := list(family_bank.tasks()), solver.attempt(tasks).results,
                            strict=True):  # fmt: skip
        key = (task.metadata["family"], task.metadata["level"])
        rates.setdefault(key, []).append(result.pass_rate)
    for name in NAMES:
        mean = [sum(rates[name, lv]) / len(rates[name, lv]) for lv in (1, 3, 5)]
        assert mean[0] > mean[1] > mean[2], (name, mean)


def test_frontier_sees_levels_as_prerequisites(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    admission.admit(procedural.candidates(levels=(1, 2, 3), per_level=8, families=["strings"]))
    level = {t.id: t.metadata["level"] for t in bank.tasks()}
    _, graph = bank_graph(bank, save=False)
    for tid, lv in level.items():
        below = [u for u, _, d in graph.graph.in_edges(tid, data=True)
                 if d["relation"] == "level" and d["prerequisite"]]  # fmt: skip
        assert all(level[u] == lv - 1 for u in below)
        assert len(below) == (0 if lv == 1 else min(3, sum(v == lv - 1 for v in level.values())))

    def stats(solved: set[int]) -> pd.DataFrame:
        rows = [(10, 10 if level[t] in solved else 0, 1) for t in level]
        return pd.DataFrame(rows, index=list(level), columns=["attempts", "successes", "last_step"])

    frontier = set(graph.frontier(stats({1, 2})))
    assert frontier == {t for t, lv in level.items() if lv == 3}
    frontier = set(graph.frontier(stats({1})))
    assert frontier == {t for t, lv in level.items() if lv == 2}
