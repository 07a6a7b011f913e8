"""`selfplay loop` as a user runs it: real subprocesses, a real bank file, the real sandbox,
real TRL on SmolLM2-135M. Killed mid-training and mid-evaluation, the same command continues
and loses nothing it committed."""

from __future__ import annotations

import functools
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from selfplay_cli import cli_command, one_sentence_error, run_cli

from selfplay.config import LoopConfig
from task_bank.store import Bank

CONFIG = {
    "iterations": 1,
    "run": {
        "kinds": ["deduction"],
        "model": {"spec": "smollm2-135m", "backend": "transformers"},
        "proposer": {"proposals_per_kind": 2, "max_new_tokens": 96, "input_max_new_tokens": 32},
        "solver": {"tasks": 2, "samples": 2, "max_new_tokens": 64, "literal_max_new_tokens": 24},
    },
    "solver": {"method": "sft", "max_steps": 2, "save_steps": 1, "data": {"kinds": ["deduction"]}},
    "proposer": {"max_steps": 1},
    "eval": {"held_out_fraction": 0.05, "humaneval_limit": 2, "max_new_tokens": 48},
}


# A loop iteration trains and evaluates a model: ten minutes before a call counts as hung.
cli = functools.partial(run_cli, "loop", timeout=600)


def committed(bank: Path) -> set[tuple[int, str]]:
    """The loop steps the bank holds, read the way another process would."""
    if not bank.exists():
        return set()
    try:
        with sqlite3.connect(f"file:{bank}?mode=ro", uri=True, timeout=5) as conn:
            return set(conn.execute("SELECT id, step FROM steps WHERE scope = 'loop'"))
    except sqlite3.OperationalError:  # the table is not there yet
        return set()


def kill_when(command: list[str], ready, limit: float = 500) -> None:
    """Start `selfplay loop`, SIGKILL it the moment `ready()` holds."""
    proc = subprocess.Popen(
        cli_command("loop", *command),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + limit
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()


def test_print_config_is_the_documented_default():
    res = cli("--print-config")
    assert res.returncode == 0, res.stderr
    assert "# share of the bank's tasks held out when the loop starts" in res.stdout
    assert LoopConfig.model_validate(yaml.safe_load(res.stdout)) == LoopConfig()


def test_bad_config_is_one_sentence(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("eval:\n  held_out: 0.1\n")
    one_sentence_error(
        cli("--config", str(path), "--bank", str(tmp_path / "b.db")), "eval.held_out"
    )
    path.write_text("solver:\n  role: proposer\n  method: dpo\n")
    one_sentence_error(cli("--config", str(path), "--bank", str(tmp_path / "b.db")), "proposer")
    assert not (tmp_path / "b.db").exists()


@pytest.mark.slow
def test_a_loop_killed_mid_training_and_mid_eval_finishes_and_loses_nothing(tmp_path):
    bank = tmp_path / "b.db"
    config = tmp_path / "loop.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    command = ["--config", str(config), "--bank", str(bank)]
    checkpoint = tmp_path / "b.models" / "iter-1-solver" / "checkpoints" / "checkpoint-1"

    # 1. Killed once the round is committed and training has saved its first checkpoint.
    kill_when(command, lambda: (checkpoint / "trainer_state.json").exists())
    steps = committed(bank)
    assert {(0, "held_out"), (0, "eval"), (1, "round")} <= steps
    assert (1, "train.solver") not in steps

    # 2. Killed as evaluation of the trained model starts.
    kill_when(command, lambda: (1, "train.proposer") in committed(bank))
    steps = committed(bank)
    assert (1, "train.solver") in steps and (1, "eval") not in steps

    # 3. The same command finishes the iteration.
    res = cli(*command, "--json")
    assert res.returncode == 0, res.stderr
    assert "it1 eval held-out: " in res.stderr, res.stderr  # the bars say iteration and step
    assert "resuming the loop at iteration 1 of 1 at eval (kept: round, train.solver" in (
        res.stderr
    ), res.stderr
    rows = json.loads(res.stdout)
    assert [r["iteration"] for r in rows] == [0, 1]
    first = rows[1]
    assert first["train_steps"] == 2 and first["train_loss"] is not None
    assert first["held_out"] is not None and len(first["held_out_interval"]) == 2
    assert first["humaneval"] is not None and first["bank_tasks"] >= rows[0]["bank_tasks"] > 0
    # The round's health reaches the loop's rows (the table, the JSON and the curve).
    assert first["yield_rate"] is not None and "frontier_yield" in first and "diversity" in first
    assert Path(tmp_path / "b.loop.png").stat().st_size > 10_000

    with Bank(bank) as store:
        rounds = [r for r in store.rounds() if r["config"].get("selfplay")]
        models = store.models()
        loop_steps = store.journal("loop").all()
    # One round, one solver model (resumed, not restarted), evaluated; nothing done twice.
    assert len(rounds) == 1 and rounds[0]["finished_at"]
    solver = [m for m in models if m.role == "solver"]
    assert len(solver) == 1 and solver[0].status == "done" and solver[0].steps == 2
    assert "held_out" in solver[0].evaluation
    assert loop_steps[1]["train.solver"]["resumed_from"] == 1
    assert loop_steps[1]["done"]["model"] in {m.path for m in models}
    assert first["model"] == loop_steps[1]["done"]["model"]


def test_the_readme_quick_config_is_valid_and_short():
    """`examples/loop-quick.yaml`, the README's first loop, parses under today's schema (a
    renamed option would make it fail for every new user) and stays a short run."""
    path = Path(__file__).resolve().parents[2] / "examples" / "loop-quick.yaml"
    cfg = LoopConfig.model_validate(yaml.safe_load(path.read_text()))
    assert cfg.iterations == 1 and cfg.solver.max_steps <= 4 and cfg.eval.humaneval_limit == 4
    assert cfg.run.kinds == ["deduction"] and cfg.run.model.spec == "bundled"


def test_the_readme_gpu_config_is_valid_and_sized_for_a_gpu():
    path = Path(__file__).resolve().parents[2] / "examples" / "loop-gpu.yaml"
    cfg = LoopConfig.model_validate(yaml.safe_load(path.read_text()))
    assert cfg.run.model.backend == "vllm" and cfg.solver.method == "grpo"
    assert cfg.eval.humaneval_limit == 164 and cfg.solver.learning_rate <= 1e-5


def test_a_loop_too_small_to_show_a_change_says_it_is_a_smoke_run():
    from pipelines.loop import smoke_notes
    from selfplay.engine.loop import IterationRow

    wide = IterationRow(0, "m", held_out=0.4, held_out_interval=[0.12, 0.77],
                        humaneval=1.0, humaneval_interval=[0.51, 1.0])  # fmt: skip
    notes = smoke_notes([wide])
    assert len(notes) == 2 and all(n.startswith("smoke run: ") for n in notes)
    assert "0.12 to 0.77" in notes[0] and "HumanEval" in notes[1]
    narrow = IterationRow(0, "m", held_out=0.2, held_out_interval=[0.16, 0.25],
                          humaneval=0.58, humaneval_interval=[0.51, 0.66])  # fmt: skip
    assert smoke_notes([narrow]) == []
