"""The frontier-gain benchmark's plumbing on a CPU: the GPU preset's script parses into valid
training configurations with a tiny model standing in, and the paired statistics it reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from selfplay.evaluate import EvalReport, mcnemar_p, paired, paired_solved

ROOT = Path(__file__).resolve().parents[2]


def test_the_gpu_preset_parses_and_plans_every_arm_with_a_tiny_model(tmp_path):
    script = ROOT / "benchmarks" / "gpu_loop.sh"
    assert os.access(script, os.X_OK)
    env = {**os.environ, "MODEL": "smollm2-135m", "OUT": str(tmp_path / "gpu.json")}
    done = subprocess.run(
        [str(script), "--dry-run", "--held-out", "12", "--pool", "12", "--backend", "transformers"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    plan = json.loads(done.stdout)
    assert plan["held_out_tasks"] == 12 and plan["pool_tasks"] == 12
    arms = plan["arms"]
    assert list(arms) == ["sft", "grpo:uniform", "grpo:learnability", "grpo:frontier"]
    for name, config in arms.items():
        assert config["model"] == "smollm2-135m" and config["data"]["held_out_fraction"] == 0
        if name.startswith("grpo"):
            assert config["grpo"]["scheduler"] == name.split(":")[1]
            assert config["grpo"]["num_generations"] == 8 and config["batch_size"] % 8 == 0
            assert config["grpo"]["warmup_samples"] > 0


def test_an_unknown_arm_or_model_is_one_sentence(tmp_path):
    bench = str(ROOT / "benchmarks" / "frontier_gain.py")
    for extra in (["--arms", "ppo"], ["--model", "./no/such/model"]):
        done = subprocess.run([sys.executable, bench, "--dry-run", *extra], capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-1500:]


def _report(passed: dict[str, bool]) -> EvalReport:
    rows = [{"task_id": t, "passed": p} for t, p in passed.items()]
    return EvalReport("b", "m", len(rows), 1, {}, rows, None)


def test_the_paired_test_counts_discordant_problems():
    before = _report({"a": True, "b": False, "c": False, "d": True})
    after = _report({"a": True, "b": True, "c": True, "d": False})
    got = paired(before, after)
    assert (got["before"], got["after"], got["gained"], got["lost"]) == (2, 3, 2, 1)
    assert got["change"] == 0.25 and got["p_value"] == 1.0
    # 12 gained, none lost: 2 / 2**12 two-sided.
    assert mcnemar_p(12, 0) == pytest.approx(2 / 4096)
    assert mcnemar_p(0, 0) == 1.0 and mcnemar_p(5, 5) == 1.0
    with pytest.raises(ValueError, match="same problems"):
        paired(before, _report({"a": True}))
    # From solved ids alone (the loop's journal keeps only those): the same counts.
    assert paired_solved({"a", "d"}, {"a", "b", "c"}, 4) == got
