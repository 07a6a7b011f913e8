"""What a round of `SelfPlay` records and what its scheduler is shown.

A real bank (seeded once, copied per test), the real sandbox, the scripted backend.
"""

from __future__ import annotations

import shutil

import pytest

from curricula import register_scheduler
from curricula.schedulers import Uniform
from selfplay.backends.base import BackendError, Prompt
from selfplay.backends.scripted import ScriptedBackend
from selfplay.config import ConfigError, RunConfig, load_config
from selfplay.engine import SelfPlay
from task_bank.store import Attempt, Bank
from task_bank.training import ModelRecord

SEEN: list = []


@register_scheduler("recording")
class Recording(Uniform):
    """Uniform, and keeps the stats and the option it was given."""

    def __init__(self, seed: int = 0, *, flavor: str = "plain") -> None:
        super().__init__(seed)
        self.flavor = flavor

    def select(self, stats, k, graph=None):
        SEEN.append((self.flavor, stats.copy(), dict(stats.attrs)))
        return super().select(stats, k, graph)


def reply(prompt: Prompt, index: int) -> str:
    if prompt.prefill.endswith("def f("):
        # The first program parses; the second is not Python.
        if index == 0:
            return 'x):\n    """Return x times 41 plus one."""\n    return x * 41 + 1\n```'
        return "x) -> this is not python\n```"
    if prompt.prefill.endswith("f("):
        return "1)\nf(2)\nf(5)\nf(-3)\n```"
    return "7\n```"


def config(scheduler: str = "uniform", **options) -> RunConfig:
    return RunConfig.model_validate(
        {
            "kinds": ["deduction"],
            "scheduler": scheduler,
            "scheduler_options": options,
            "proposer": {"proposals_per_kind": 2, "references": 1, "probe_tasks": 0},
            "solver": {"tasks": 2, "samples": 1},
        }
    )


@pytest.fixture(scope="module")
def seeded(tmp_path_factory, verifier_3s):
    path = tmp_path_factory.mktemp("seeded") / "bank.db"
    with Bank(path) as bank:
        SelfPlay(bank, ScriptedBackend("scripted", script=reply), verifier_3s, config()).run()
    return path


@pytest.fixture
def seeded_bank(seeded, tmp_path):
    """This test's own copy of the bank after the module's first round."""
    shutil.copy(seeded, tmp_path / "bank.db")
    with Bank(tmp_path / "bank.db") as b:
        yield b


def test_a_round_records_every_program_with_its_prompt_and_outcome(seeded_bank):
    bank = seeded_bank
    proposals = bank.proposals(1)
    assert [p.item for p in proposals] == [0, 1]
    admitted, broken = proposals
    assert admitted.outcome == "admitted" and admitted.task_id in bank.new_task_ids(1, "selfplay")
    assert broken.outcome == "unparseable" and broken.task_id is None
    # The prompt as the model saw it, and the assistant turn as it wrote it (prefill included).
    assert admitted.prompt[-1]["role"] == "user" and "Puzzle" in admitted.prompt[-1]["content"]
    assert admitted.completion.startswith("```python\ndef f(x):")
    assert {p.proposer for p in proposals} == {"scripted"}


def test_the_scheduler_sees_this_solvers_line_only_at_the_rounds_step(seeded_bank, verifier_3s):
    bank = seeded_bank
    task = bank.new_task_ids(1, "selfplay")[0]
    # Another model's attempts must not count; the model this one was trained from does.
    bank.add_attempts([Attempt(task, "someone-else", "x", "wrong", False, step=1)] * 5)
    bank.add_model(ModelRecord("child", "scripted", "sft", "solver", "/nowhere"))
    bank.add_attempts([Attempt(task, "child", "y", "passed", True, step=1)])
    own = bank.solve_stats(["child", "scripted"])  # before the round adds its attempts
    SEEN.clear()
    backend = ScriptedBackend("child", script=reply)
    SelfPlay(bank, backend, verifier_3s, config("recording", flavor="salty")).run()
    assert SEEN and {flavor for flavor, _, _ in SEEN} == {"salty"}
    assert [attrs for _, _, attrs in SEEN] == [{"step": 2}] * len(SEEN)
    _, solver_stats, _ = SEEN[-1]
    # The solver's pick leaves out the round's new tasks; the rest are counted as the line's.
    assert (solver_stats == own.loc[solver_stats.index]).all().all()
    assert solver_stats.loc[task].tolist()[:2] == [2, 1]  # scripted's 1 miss + child's 1 pass


def test_scheduler_options_a_scheduler_does_not_take_are_refused():
    with pytest.raises(
        ConfigError,
        match="field 'scheduler_options': scheduler 'uniform' takes no option 'half_life'",
    ):
        load_config(scheduler="uniform", scheduler_options={"half_life": 3})
    assert load_config(scheduler="learnability", scheduler_options={"half_life": 3})


def _failing(after_proposals: bool):
    def script(prompt: Prompt, index: int) -> str:
        if after_proposals and prompt.prefill.endswith("f("):
            return reply(prompt, index)
        raise BackendError("this model cannot generate")

    return script


@pytest.mark.parametrize("after_proposals", [False, True], ids=["nothing done", "proposed"])
def test_a_round_resumed_with_another_model_records_the_one_it_finished_with(
    seeded_bank, verifier_3s, after_proposals
):
    first = config()
    first.model.spec = "typo-model"
    backend = ScriptedBackend("typo-model", script=_failing(after_proposals))
    with pytest.raises(BackendError):
        SelfPlay(seeded_bank, backend, verifier_3s, first).run()
    (left_open,) = [r for r in seeded_bank.rounds() if r["finished_at"] is None]
    assert left_open["config"]["model"]["spec"] == "typo-model"

    second = config()
    second.model.spec = "scripted"
    SelfPlay(seeded_bank, ScriptedBackend("scripted", script=reply), verifier_3s, second).run()
    (done,) = [r for r in seeded_bank.rounds() if r["id"] == left_open["id"]]
    assert done["finished_at"] is not None
    assert done["config"]["model"]["spec"] == "scripted"
    # Steps the first model did are said to be its; with none, it is not named at all.
    assert done["config"].get("earlier_models", []) == (["typo-model"] if after_proposals else [])


class Counting(ScriptedBackend):
    """The scripted backend, keeping the prefill of every prompt of every generate call."""

    def __init__(self) -> None:
        super().__init__("scripted", script=reply)
        self.calls: list[list[str]] = []

    def _generate(self, prompts, n, sampling):
        self.calls.append([p.prefill for p in prompts])
        return super()._generate(prompts, n, sampling)


def test_every_kinds_programs_are_written_in_one_call_and_committed_per_kind(
    seeded, tmp_path, verifier_3s
):
    shutil.copy(seeded, tmp_path / "bank.db")
    backend = Counting()
    kinds = ["deduction", "abduction", "codegen"]
    cfg = config().model_copy(update={"kinds": kinds})
    with Bank(tmp_path / "bank.db") as bank:
        SelfPlay(bank, backend, verifier_3s, cfg).run()
        steps = bank.journal("round").all()[2]
        proposals = bank.proposals(2)
    # The first call holds one prompt per kind (each sampled twice), the second the inputs
    # of every program that parsed, the solver's calls come after.
    assert [len(c) for c in backend.calls[:2]] == [len(kinds), len(kinds)]
    assert all(p.endswith("def f(") for p in backend.calls[0])
    assert all(p.endswith("f(") and not p.endswith("def f(") for p in backend.calls[1])
    assert not any(p.endswith("f(") for call in backend.calls[2:] for p in call)
    assert {f"propose.{k}" for k in kinds} <= set(steps)
    assert sorted({p.kind for p in proposals}) == sorted(kinds)
    assert sum(steps[f"propose.{k}"]["proposed"] for k in kinds) == len(proposals) == 6


def test_without_a_fixed_count_waves_of_proposals_fill_the_budget(
    seeded, tmp_path, verifier_3s, monkeypatch
):
    import itertools
    from types import SimpleNamespace

    from selfplay.engine.steps import propose

    # Every wave takes 0.2 s by the engine's clock, however fast this machine is: 7 fit 1.5 s.
    ticks = itertools.count()
    monkeypatch.setattr(propose, "time", SimpleNamespace(perf_counter=lambda: 0.2 * next(ticks)))
    shutil.copy(seeded, tmp_path / "bank.db")
    cfg = RunConfig.model_validate(
        {
            "kinds": ["deduction"],
            "proposer": {"budget_s": 1.5, "references": 1},
            "solver": {"tasks": 0, "samples": 1},
        }
    )
    with Bank(tmp_path / "bank.db") as bank:
        SelfPlay(bank, ScriptedBackend("scripted", script=reply), verifier_3s, cfg).run()
        steps = bank.journal("round").all()[2]
        proposals = bank.proposals(2)
    waves = steps["propose.waves"]
    assert waves["waves"] == 7 and round(waves["last"], 6) == 0.2
    # Every wave but the last started with the budget unspent; the last would overrun it.
    assert waves["seconds"] - waves["last"] <= 1.5 < waves["seconds"] + waves["last"]
    per_wave = len(proposals) // waves["waves"]
    assert per_wave * waves["waves"] == len(proposals) == steps["propose.deduction"]["proposed"]
    assert sorted(p.item for p in proposals) == list(range(len(proposals)))


def test_a_solver_new_to_a_kind_attempts_a_few_of_its_tasks_before_proposing(
    seeded, tmp_path, verifier_3s
):
    shutil.copy(seeded, tmp_path / "bank.db")
    cfg = config().model_copy(deep=True)
    cfg.proposer.probe_tasks = 3
    cfg.solver.tasks = 0
    cfg.kinds = ["deduction", "abduction"]
    backend = Counting()
    with Bank(tmp_path / "bank.db") as bank:
        # The module's first round attempted deduction tasks, never an abduction task: only
        # abduction is probed, 3 tasks, before the first program is asked for.
        SelfPlay(bank, backend, verifier_3s, cfg).run()
        probe = bank.journal("round").get(2, "probe")
        assert [bank.get(i).kind for i in probe["tasks"]] == ["abduction"] * 3
        assert not any(p.endswith("def f(") for p in backend.calls[0])
        attempted = bank.attempted_task_ids(2, "scripted")
        assert set(probe["tasks"]) <= set(attempted)
        # Next round the solver has attempts of both kinds: nothing is probed.
        SelfPlay(bank, backend, verifier_3s, cfg).run()
        assert bank.journal("round").get(3, "probe") is None


def test_probed_tasks_are_not_the_curriculums_picks_of_the_same_round(
    seeded, tmp_path, verifier_3s
):
    shutil.copy(seeded, tmp_path / "bank.db")
    cfg = config().model_copy(deep=True)
    cfg.proposer.probe_tasks = 3
    cfg.solver.tasks = 10_000  # the curriculum picks every task it may
    cfg.kinds = ["abduction"]
    with Bank(tmp_path / "bank.db") as bank:
        SelfPlay(bank, ScriptedBackend("scripted", script=reply), verifier_3s, cfg).run()
        journal = bank.journal("round")
        probed, plan = set(journal.get(2, "probe")["tasks"]), journal.get(2, "solve.plan")["tasks"]
        attempts = bank.conn.execute(
            "SELECT task_id, COUNT(*) FROM attempts WHERE round_id = 2 GROUP BY task_id"
        ).fetchall()
    # Picked again, a probed task would count as attempted already and its solve be skipped.
    assert len(probed) == 3 and not probed & set(plan)
    assert len(plan) > 3 and {t for t, _ in attempts} == probed | set(plan)
    assert all(n == cfg.solver.samples for _, n in attempts)


class ChosenOnLoad(ScriptedBackend):
    """Like `auto`: says which engine generates only once loaded (here: vLLM)."""

    def __init__(self) -> None:
        super().__init__("scripted", script=reply)
        self.chosen: str | None = None

    def _load(self) -> None:
        super()._load()
        self.chosen = "vllm"


def test_the_probe_size_follows_the_engine_a_backend_chooses_when_it_loads(
    seeded, tmp_path, verifier_3s
):
    from selfplay.engine.steps.propose import PROBE_DEFAULT, PROBE_VLLM

    shutil.copy(seeded, tmp_path / "bank.db")
    cfg = config().model_copy(deep=True)
    cfg.proposer.probe_tasks = None  # the engine's size
    cfg.solver.tasks = 0
    cfg.kinds = ["abduction"]
    with Bank(tmp_path / "bank.db") as bank:
        SelfPlay(bank, ChosenOnLoad(), verifier_3s, cfg).run()
        probe = bank.journal("round").get(2, "probe")
    # Asked before loading, the backend had no engine yet and got the small probe.
    assert PROBE_VLLM > PROBE_DEFAULT and len(probe["tasks"]) == PROBE_VLLM
