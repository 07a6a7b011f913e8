"""The self-play gain benchmark's sets: the pool never holds a held-out family or a held-out
program (normalised) under any input, proposals are split by program, and training on the
pool sees only pool tasks; every arm of both presets is a valid training configuration."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from selfplay.admission.normalize import ast_hash
from selfplay.admission.schema import parse_task
from selfplay.config import TrainConfig
from selfplay.training.data import solver_items
from task_bank.store import Bank

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import gain_sets  # noqa: E402
import selfplay_gain  # noqa: E402


def _proposal_bank(path: Path) -> Path:
    """A bank of 'self-play proposals': 20 programs, each under two spellings and two kinds."""
    tasks = []
    for k in range(20):
        for spelling, kind in (("x", "deduction"), ("n", "abduction")):
            program = f"def f({spelling}):\n    return {spelling} * {k + 2} - 1\n"
            tasks.append(parse_task({
                "id": f"p{k}-{kind}", "kind": kind, "prompt": "A task.", "program": program,
                "entry_point": "f", "tests": [f"assert f(3) == {3 * (k + 2) - 1}"],
                "examples": [{"input": "3", "output": str(3 * (k + 2) - 1)}],
            }, source="selfplay"))  # fmt: skip
    with Bank(path) as bank:
        hashes = [ast_hash(t.program) for t in tasks]
        bank.add_tasks(tasks, ast_hashes=hashes, dedup_keys=[t.id for t in tasks])
    return path


def test_no_held_out_family_or_program_reaches_the_pool(tmp_path, verifier):
    args = argparse.Namespace(
        seed=3, levels="1,2", other_levels="1,2,3", train_families="arith,strings",
        other_families="recursion,search", in_family=24, other_families_n=24, proposals=8,
        pool_procedural=30, pool_proposals=100, pool_seeds=10,
        proposal_banks=str(_proposal_bank(tmp_path / "rounds.db")),
    )  # fmt: skip
    with Bank(tmp_path / "gain.db") as bank:
        sets = gain_sets.build(bank, verifier, args)
        assert sets.counts["in_family"] == 24 and sets.counts["other_families"] == 24
        pool_programs = {ast_hash(t.program) for t in sets.pool}
        for name, held in sets.held.items():
            assert held and not {ast_hash(i.task.program) for i in held} & pool_programs, name
        # The pool's procedural tasks are of the training families only.
        assert {t.metadata["family"] for t in sets.pool if t.source == "procedural"} == {
            "arith", "strings"}  # fmt: skip
        assert {i.task.metadata["family"] for i in sets.held["other_families"]} <= {
            "recursion", "search"}  # fmt: skip
        # Proposals: one task per kind and program; half the programs held out (at most 8
        # tasks), the rest trained on, a program's two kinds on one side.
        held = {ast_hash(i.task.program) for i in sets.held["proposals"]}
        trained = {ast_hash(t.program) for t in sets.pool if t.source == "selfplay"}
        assert len(sets.held["proposals"]) == 8 and len(held) == 4 and len(trained) == 10
        # The bundled seeds asked for join the pool, none of them a HumanEval look-alike.
        seeds = [t for t in sets.pool if t.source == "seeds"]
        assert len(seeds) == 10 and not any(t.contaminated for t in seeds)
        # Training on the pool (what every arm does) sees pool tasks only.
        pool_ids = {t.id for t in sets.pool}
        config = TrainConfig(model="bundled", data={"tasks": sorted(pool_ids),
                                                     "held_out_fraction": 0})  # fmt: skip
        assert {i.task.id for i in solver_items(bank, config)} == pool_ids
        # Another seed draws other tasks.
        args.seed = 4
        other = gain_sets.build(bank, verifier, args)
        assert {i.task.id for i in other.held["in_family"]}.isdisjoint(
            i.task.id for i in sets.held["in_family"])  # fmt: skip


@pytest.mark.parametrize("preset", list(selfplay_gain.PRESETS))
def test_every_arm_of_a_preset_is_a_valid_training_configuration(preset):
    args = selfplay_gain.parse_args(["--preset", preset, "--model", "smollm2-135m"])
    arms = selfplay_gain.plan(args)
    assert [a for a, _, _ in arms] == args.arms.split(",")
    for _arm, method, scheduler in arms:
        config = selfplay_gain.train_config(args, method, args.model, scheduler=scheduler)
        assert config.data.held_out_fraction == 0
        if method == "ei":
            assert config.ei.scheduler == scheduler and config.ei.iterations == 1
            # Each iteration is its own train call, with its own seed: `uniform` draws other
            # tasks each time, as it does within one multi-iteration `train --method ei`.
            seeds = [selfplay_gain.train_config(args, method, args.model, scheduler=scheduler,
                                                iteration=i).seed for i in (1, 2, 3)]  # fmt: skip
            assert seeds[0] == args.seed and len(set(seeds)) == 3
            assert config.ei.tasks * config.ei.samples == args.ei_tasks * args.ei_samples
        if method == "sft":  # the sandbox-answer arm: references, as many steps as ei
            assert config.data.references and config.max_steps == args.sft_steps * args.iterations
    with pytest.raises(SystemExit, match="unknown arm"):
        selfplay_gain.plan(selfplay_gain.parse_args(["--arms", "ei:nope"]))


def _report(name: str, passed: list[bool]):
    from selfplay.evaluate import EvalReport, pass1_interval

    rows = [{"task_id": f"t{i}", "passed": p} for i, p in enumerate(passed)]
    return EvalReport(benchmark=name, model="m", problems=len(rows), samples=1,
                      pass_at_k={"pass@1": sum(passed) / len(passed)}, rows=rows,
                      interval=pass1_interval([[p] for p in passed]))  # fmt: skip


def test_an_averaged_arm_is_reported_on_its_own_scores(tmp_path):
    """`<arm>@W` (--average) carries its own evaluation, not the curve of the arm it came
    from, into the JSON, the tables and the figure."""
    from phase_clock import Clock

    args = selfplay_gain.parse_args(["--average", "0.5"])
    sets = argparse.Namespace(counts={"in_family": 4})
    before = {"in_family": _report("in_family", [False] * 4)}
    curve = [{"iteration": 1, "sampled": 8, "passed": 2, "truncated": 0, "rows": 2,
              "picked_warmup": {}, "cpu_s": 1.0, "passing_per_1000": 250.0,
              "scores": {"in_family": _report("in_family", [True] * 4)}}]  # fmt: skip
    arms = {
        "ei:frontier": {"model": "x", "curve": curve, "cpu_s": 60.0},
        "ei:frontier@0.5": {"model": "y", "rows": 2, "averaged": 0.5, "cpu_s": 61.0,
                            "scores": {"in_family": _report("in_family", [True, False] * 2)}},
    }  # fmt: skip
    result = selfplay_gain.report_of(args, Clock(), sets, before, arms, 0.0)
    raw, averaged = result["arms"]["ei:frontier"], result["arms"]["ei:frontier@0.5"]
    assert raw["scores"]["in_family"]["paired"]["gained"] == 4
    assert averaged["scores"]["in_family"]["paired"]["gained"] == 2
    assert averaged["averaged"] == 0.5 and averaged["rows"] == 2 and "curve" not in averaged
    assert "`ei:frontier@0.5`" in selfplay_gain.tables(result)
    selfplay_gain.plot(result, tmp_path / "gain.png")
    assert (tmp_path / "gain.png").stat().st_size > 0


@pytest.mark.parametrize("passes", [True, False])
def test_an_averaged_run_scores_its_averaged_model_on_every_set(tmp_path, monkeypatch, passes):
    """With --train-average below 1 an ei arm ends as `selfplay train --average` does: each
    raw iteration is scored in-family only (the curve) and the averaged model, made once from
    the last iteration against the start, is the arm's final model, scored on every set; when
    nothing ever passed, that model is the start's."""
    from phase_clock import Clock

    import selfplay.training
    import selfplay.training.average
    from selfplay.training.trainer import TrainResult

    start = tmp_path / "start"
    start.mkdir()
    (start / "config.json").write_text("{}")
    args = selfplay_gain.parse_args(["--model", str(start), "--iterations", "2",
                                     "--train-average", "0.7"])  # fmt: skip

    def fake_train(bank, config, out, exclude):
        if not passes:
            raise selfplay.training.TrainError("no answer passed")
        Path(out).mkdir(parents=True)
        (Path(out) / "config.json").write_text("{}")
        (Path(out) / "from").write_text(config.model)
        return TrainResult(model_id=Path(out).name, path=str(out), method="ei", role="solver",
                           steps=1, rows=3,
                           log=[{"sampled": 8, "passed": 3, "rows": 3, "picked": []}])  # fmt: skip

    averaged = []
    monkeypatch.setattr(selfplay.training, "train", fake_train)
    monkeypatch.setattr(selfplay.training.average, "average",
                        lambda s, t, w: averaged.append((Path(s), Path(t).name, w)))  # fmt: skip
    scored = []

    def evaluate(model, sets=selfplay_gain.SETS):
        scored.append((Path(model).name, tuple(sets)))
        return {s: _report(s, [True, False]) for s in sets}

    entry = selfplay_gain.run_ei(args, None, Clock(), "ei:frontier", "frontier", set(),
                                 evaluate, tmp_path / "work")  # fmt: skip
    raw = ["ei:frontier-1", "ei:frontier-2"] if passes else ["start", "start"]
    assert scored == [(raw[0], ("in_family",)), (raw[1], ("in_family",)),
                      ("ei-frontier-averaged", selfplay_gain.SETS)]  # fmt: skip
    assert averaged == [(start.resolve(), "ei-frontier-averaged", 0.7)]
    if passes:  # the average was made from the last iteration, which trained from the first
        assert (Path(entry["model"]) / "from").read_text().endswith("ei:frontier-1")
    else:  # from a copy of the start
        assert (Path(entry["model"]) / "config.json").is_file()
        assert not (Path(entry["model"]) / "from").exists()
    assert entry["averaged"] == 0.7 and set(entry["scores"]) == set(selfplay_gain.SETS)


def test_the_sandbox_answer_arm_takes_its_batch_in_passes_and_is_averaged_too():
    args = selfplay_gain.parse_args(["--model", "smollm2-135m"])
    config = selfplay_gain.train_config(args, "sft", args.model, scheduler="uniform")
    assert config.batch_size * config.gradient_accumulation_steps == args.sft_batch
    assert config.gradient_accumulation_steps == args.verified_accumulation > 1
    assert config.average == args.train_average < 1
    with pytest.raises(SystemExit, match="outside 0 to 1"):
        selfplay_gain.plan(selfplay_gain.parse_args(["--train-average", "1.5"]))
