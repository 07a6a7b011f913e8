"""`selfplay train` as a user runs it: real subprocesses, a real bank file, real TRL and peft
on SmolLM2-135M. A run killed at any point continues when the same command runs again, and the model directory
it writes is a model that `selfplay eval` and `selfplay run` take."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import time

import pytest
import yaml
from selfplay_cli import cli_command, one_sentence_error, run_cli

from selfplay.backends.auto import vllm_blocker
from selfplay.config import TrainConfig
from task_bank.store import Bank

# Training runs a model: ten minutes before a call counts as hung, not five.
cli = functools.partial(run_cli, timeout=600)


def test_print_config_is_the_documented_default():
    res = cli("train", "--print-config")
    assert res.returncode == 0, res.stderr
    assert "# curriculum scheduler picking each batch's tasks" in res.stdout
    assert TrainConfig.model_validate(yaml.safe_load(res.stdout)) == TrainConfig()


def test_bad_input_is_one_sentence_and_nothing_is_written(bank_file, tmp_path):
    before = bank_file.read_bytes()
    bad = tmp_path / "bad.yaml"
    bad.write_text("grpo:\n  schedular: frontier\n")
    out = tmp_path / "out"
    one_sentence_error(cli("train", "--bank", str(bank_file)), "--out")
    one_sentence_error(
        cli("train", "--bank", str(bank_file), "--config", str(bad), "--out", str(out)),
        "grpo.schedular",
    )
    one_sentence_error(
        cli("train", "--bank", str(bank_file), "--method", "rlhf", "--out", str(out)),
        "'grpo', 'sft', 'dpo' or 'ei'",
    )
    one_sentence_error(
        cli(
            "train",
            "--bank",
            str(bank_file),
            "--role",
            "proposer",
            "--method",
            "ei",
            "--out",
            str(out),
        ),  # fmt: skip
        "proposer role trains with method grpo",
    )
    one_sentence_error(
        cli("train", "--bank", str(tmp_path / "none.db"), "--out", str(out)), "none.db"
    )
    assert not out.exists() and bank_file.read_bytes() == before


def test_a_misspelt_model_is_one_sentence_within_seconds(bank_file, tmp_path):
    """No network is asked about a bare name that is no alias: the answer names the alias."""
    before = bank_file.read_bytes()
    started = time.monotonic()
    res = cli("train", "--bank", str(bank_file), "--model", "bundeld", "--out", str(tmp_path / "o"))
    one_sentence_error(res, "did you mean 'bundled'")
    assert time.monotonic() - started < 5
    assert bank_file.read_bytes() == before


@pytest.mark.slow
def test_killed_training_resumes_and_its_model_serves_eval_and_run(bank_file, tmp_path):
    out = tmp_path / "sft"
    config = tmp_path / "train.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "method": "sft",
                "model": "smollm2-135m",
                "max_steps": 4,
                "save_steps": 2,
                "data": {"kinds": ["deduction", "abduction"]},
            }  # fmt: skip
        )
    )
    command = ["train", "--bank", str(bank_file), "--config", str(config), "--out", str(out)]
    proc = subprocess.Popen(
        cli_command(*command),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Killed once its first checkpoint is complete (TRL writes trainer_state.json last).
    first = out / "checkpoints" / "checkpoint-2"
    deadline = time.monotonic() + 400
    while not (first / "trainer_state.json").exists() and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    # A kill while the next checkpoint was being written leaves it without its state: it is
    # not resumed from (it would fail) but removed, and the complete one is used.
    partial = out / "checkpoints" / "checkpoint-3"
    partial.mkdir(exist_ok=True)
    (partial / "model.safetensors").write_bytes(b"cut short")

    # Another config into the same directory is refused; the same command resumes, and says so.
    other = [*command, "--max-steps", "5"]
    one_sentence_error(cli(*other), "unfinished training run with another configuration")
    res = cli(*command, "--json")
    assert res.returncode == 0, res.stderr
    assert f"resuming the training run in {out} at step 2" in res.stderr
    # The last step ends the phase with its own loss, not the step before's.
    assert re.search(r"^train: 4/4 \(\d+ s, loss \d+\.\d{3}\)$", res.stderr, re.M), res.stderr
    result = json.loads(res.stdout)
    assert result["steps"] == 4 and result["resumed_from"] == 2, result
    assert not (out / "checkpoints").exists() and (out / "selfplay-trained.json").is_file()
    with Bank(bank_file) as bank:
        [record] = bank.models()
    assert record.id == result["model_id"] and record.status == "done" and record.steps == 4

    # The directory is a model: eval (vLLM where it runs: the merged weights are what it
    # serves) and a self-play round load it and name it by its bank id.
    res = cli("eval", "bank", "--bank", str(bank_file), "--model", str(out), "--split", "test",
              "--test-fraction", "0.03", "--max-new-tokens", "24", "--json",
              "--out", str(tmp_path / "completions.jsonl"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["model"] == str(out) and report["problems"] >= 1, report
    engine = "vllm" if vllm_blocker() is None else "transformers"
    assert f"backend: {engine} (" in res.stderr
    run_config = tmp_path / "run.yaml"
    run_config.write_text(
        yaml.safe_dump(
            {
                "kinds": ["deduction"],
                "model": {"spec": str(out), "backend": "transformers"},
                "proposer": {
                    "proposals_per_kind": 1,
                    "max_new_tokens": 48,
                    "input_max_new_tokens": 24,
                },
                "solver": {"tasks": 1, "samples": 1, "literal_max_new_tokens": 16},
            }
        )  # fmt: skip
    )
    res = cli("run", "--bank", str(bank_file), "--config", str(run_config), "--rounds", "1")
    assert res.returncode == 0, res.stderr
    with Bank(bank_file) as bank:
        attempts = bank.attempts_for([t.id for t in bank.tasks()])
    solvers = {solver for rows in attempts.values() for solver, _, _ in rows}
    assert record.id in solvers
