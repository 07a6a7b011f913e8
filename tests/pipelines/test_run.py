"""`selfplay run` as a user runs it: real subprocesses, a real bank file, the real sandbox.

The round loop runs with a rule-based stand-in model (run_scripted.py) for speed, and once
with the real bundled model (slow). Killing a run at any point and starting it again
must lose no admitted task and repeat no finished round.
"""

import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from selfplay_cli import one_sentence_error, run_cli
from small_bank import small_bank

from selfplay.backends.auto import vllm_blocker
from selfplay.config import RunConfig
from selfplay.engine import health
from task_bank.store import Bank

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "run_scripted.py"


selfplay = functools.partial(run_cli, "run")


# ---- configuration ------------------------------------------------------------------


def test_print_config_is_the_documented_default(tmp_path):
    res = selfplay("--print-config")
    assert res.returncode == 0, res.stderr
    assert "# attempts per task (n)" in res.stdout
    assert RunConfig.model_validate(yaml.safe_load(res.stdout)) == RunConfig()


def test_unknown_key_names_the_field_and_the_allowed_ones(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("solver:\n  sample: 3\n")
    one_sentence_error(selfplay("--config", str(path)), "solver.sample", "samples", "learnability")


def test_bad_value_names_the_field_and_the_allowed_values(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("solver:\n  learnability: entropy\n")
    one_sentence_error(selfplay("--config", str(path)), "solver.learnability", "absolute_zero")
    path.write_text("scheduler: fifo\n")
    one_sentence_error(selfplay("--config", str(path)), "scheduler", "uniform", "frontier")
    path.write_text("model:\n  quantize: int4\n")
    one_sentence_error(selfplay("--config", str(path)), "model.quantize", "'none'", "'fp16'")


def test_flags_override_the_file_and_are_checked_too(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model:\n  backend: transformers\n")
    one_sentence_error(selfplay("--config", str(path), "--backend", "tpu"), "model.backend", "vllm")


def test_unreadable_and_malformed_config_files(tmp_path):
    one_sentence_error(selfplay("--config", str(tmp_path / "missing.yaml")), "cannot read")
    path = tmp_path / "c.yaml"
    path.write_text("solver: [1, 2\n")
    one_sentence_error(selfplay("--config", str(path)), "not valid YAML")
    path.write_text("- 1\n- 2\n")
    one_sentence_error(selfplay("--config", str(path)), "mapping")


def test_a_missing_model_says_how_to_get_one(tmp_path):
    res = selfplay("--bank", str(tmp_path / "b.db"), "--model", str(tmp_path / "nope.gguf"))
    one_sentence_error(res, "does not exist")
    assert not (tmp_path / "b.db").exists() or Bank(tmp_path / "b.db").count() == 0


def test_a_misspelt_model_is_one_sentence_within_seconds(tmp_path):
    started = time.monotonic()
    res = selfplay("--bank", str(tmp_path / "b.db"), "--model", "smolm2-135m")
    one_sentence_error(res, "did you mean 'smollm2-135m'")
    assert time.monotonic() - started < 5
    assert not (tmp_path / "b.db").exists() or Bank(tmp_path / "b.db").count() == 0


# ---- the round loop -----------------------------------------------------------------


def scripted(bank: Path, rounds: int, delay: float = 0.0, **kw):
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), str(bank), str(rounds), str(delay)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _completions(progress: Path) -> int:
    try:
        return int(progress.read_text())
    except (FileNotFoundError, ValueError):
        return 0


def snapshot(bank: Path) -> dict:
    with sqlite3.connect(bank) as c:
        return {
            "tasks": {r[0] for r in c.execute("SELECT id FROM tasks")},
            "rounds": c.execute(
                "SELECT id, finished_at IS NOT NULL FROM rounds ORDER BY id"
            ).fetchall(),
        }


@pytest.mark.slow
def test_a_round_grows_the_bank_and_writes_its_metrics(tmp_path):
    bank = tmp_path / "b.db"
    small_bank(bank)
    proc = scripted(bank, 1)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    with Bank(bank) as b:
        (r,) = b.rounds()
        new = list(b.tasks(source="selfplay"))
        assert r["finished_at"] and r["summary"]["admitted"] == len(new) > 0
        assert {t.round_id for t in new} == {r["id"]}
        assert all(t.proposer == "scripted" and t.parent_ids for t in new)
        # Every new task and the curriculum's picks were attempted twice, with rewards.
        attempts = b.conn.execute(
            "SELECT task_id, COUNT(*), SUM(reward) FROM attempts GROUP BY task_id"
        ).fetchall()
        assert {t.id for t in new} <= {a[0] for a in attempts}
        assert all(n == 2 for _, n, _ in attempts)
        rewards = b.journal("round").get(r["id"], "rewards")
        assert set(rewards["proposer"]) == {t.id for t in new}
    (line,) = (tmp_path / "b.metrics.jsonl").read_text().splitlines()
    metrics = json.loads(line)
    assert metrics["round"] == 1 and metrics["admitted"] == len(new)
    assert metrics["proposed"] == 8 and metrics["attempts"] == len(attempts) * 2
    assert metrics["proposed"] == metrics["admitted"] + sum(metrics["rejected"].values())


@pytest.mark.slow
def test_an_empty_bank_gets_the_seeds_first(tmp_path):
    proc = scripted(tmp_path / "b.db", 1)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    with Bank(tmp_path / "b.db") as b:
        assert sum(1 for _ in b.tasks(source="seeds")) > 100
        assert sum(1 for _ in b.tasks(source="selfplay")) > 0


@pytest.mark.slow
def test_the_command_with_the_scripted_backend(tmp_path):
    """The CLI end to end: the scripted backend replays a program, its inputs, then answers."""
    completions = tmp_path / "completions.json"
    program = 'x):\n    """Return x squared minus x."""\n    return x * x - x\n```'
    completions.write_text(json.dumps([program, "2)\nf(3)\nf(-1)\n```", "```python\n6\n```"]))
    config = tmp_path / "c.yaml"
    config.write_text(
        "kinds: [deduction]\nproposer:\n  proposals_per_kind: 1\n  probe_tasks: 0\n"
        "solver:\n  tasks: 0\n  samples: 1\n"
    )
    bank = tmp_path / "b.db"
    small_bank(bank)
    res = selfplay(
        "--bank",
        str(bank),
        "--config",
        str(config),
        "--backend",
        "scripted",
        "--model",
        str(completions),
    )
    assert res.returncode == 0, res.stderr
    assert "self-play round 1" in res.stdout and "admitted" in res.stdout
    # Without a terminal, progress is plain lines; the end says where to look next.
    assert "solve: 1/1" in res.stderr and "propose deduction" in res.stderr, res.stderr
    assert f"selfplay bank list --bank {bank} --source selfplay --sort newest" in res.stderr
    assert f"selfplay curriculum show --bank {bank}" in res.stderr
    assert "b.metrics.jsonl" in res.stderr
    with Bank(bank) as b:
        (task,) = b.tasks(source="selfplay")
        assert task.examples[0] == {"input": "2", "output": "2"}
        (attempt,) = b.conn.execute("SELECT answer, passed FROM attempts").fetchall()
    assert attempt == ("```python\n6\n```", 0)  # f(2) is 2, so the answer 6 is graded wrong
    listed = run_cli("bank", "rewards", "--bank", str(bank), timeout=120)
    assert listed.returncode == 0, listed.stderr
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (row["task_id"], row["round"], row["kind"]) == (task.id, 1, "deduction")
    assert (row["attempts"], row["successes"], row["pass_rate"]) == (1, 0, 0.0)
    assert row["learnability"] == 0.0 and row["form"] == "absolute_zero"
    assert row["parent_ids"] == task.parent_ids and row["proposer"] == str(completions)
    with Bank(bank) as b:
        (proposal,) = b.proposals(1)
    assert (proposal.task_id, proposal.reward) == (task.id, 0.0)  # stored with the proposal
    # Every health figure is in the round's metrics line, and in the table.
    metrics = json.loads((tmp_path / "b.metrics.jsonl").read_text().splitlines()[-1])
    assert set(health.FIELDS) <= set(metrics)
    assert (metrics["yield_rate"], metrics["frontier"], metrics["shapes"]) == (1.0, 0, 1)
    assert metrics["near_duplicate_rate"] == 0.0 and metrics["distance_to_bank"] > 0
    assert "frontier yield" in res.stdout and "diversity" in res.stdout


def test_the_command_generates_and_grades_on_a_ray_cluster(tmp_path, ray_cluster):
    """Same round, with the scripted engine as a Ray actor and the verifier's actors on Ray."""
    completions = tmp_path / "completions.json"
    program = 'x):\n    """Return x squared minus x."""\n    return x * x - x\n```'
    completions.write_text(json.dumps([program, "2)\nf(3)\nf(-1)\n```", "```python\n2\n```"]))
    config = tmp_path / "c.yaml"
    config.write_text(
        "kinds: [deduction]\nproposer:\n  proposals_per_kind: 1\n  probe_tasks: 0\n"
        "solver:\n  tasks: 0\n  samples: 1\n"
    )
    bank = tmp_path / "b.db"
    small_bank(bank)
    res = selfplay("--bank", str(bank), "--config", str(config), "--backend", "scripted",
                   "--model", str(completions), "--ray", ray_cluster)  # fmt: skip
    assert res.returncode == 0, res.stderr
    with Bank(bank) as b:
        (task,) = b.tasks(source="selfplay")
        attempts = b.attempts_for([task.id])[task.id]
    assert task.examples[0] == {"input": "2", "output": "2"}
    assert [(answer, passed) for _, answer, passed in attempts] == [("```python\n2\n```", True)]


def test_an_unreachable_ray_cluster_is_one_sentence(tmp_path):
    bank = tmp_path / "b.db"
    res = selfplay("--bank", str(bank), "--backend", "scripted", "--ray", "127.0.0.1:9")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1 and "cannot connect to the Ray cluster" in res.stderr


@pytest.mark.slow
def test_sigkill_at_any_point_then_resume(tmp_path):
    """Kill the run repeatedly at points taken from its own progress (after the 1st, 3rd,
    6th, ... completion of each new process, wherever that lands), then let it finish: the
    bank ends with exactly the rounds asked for, every task seen at a kill is still there, each
    round has one metrics line, and no task was attempted twice within a round."""
    bank = tmp_path / "b.db"
    small_bank(bank)
    progress = bank.with_suffix(".progress")
    kept: set[str] = set()
    kills = 0
    for after in (1, 3, 6, 10, 15, 21):
        progress.unlink(missing_ok=True)  # a count from the killed process must not count
        proc = scripted(bank, 2, delay=0.05)
        while proc.poll() is None and _completions(progress) < after:
            time.sleep(0.01)
        if proc.poll() is not None:
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        state = snapshot(bank)
        assert kept <= state["tasks"]
        kept = state["tasks"]
    assert kills >= 3
    with Bank(bank) as b:
        cut = [r["id"] for r in b.rounds() if r["finished_at"] is None]
    proc = scripted(bank, 2, delay=0.3)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    # The progress lines of the killed run are gone: the new one says where it resumes.
    assert (f"resuming round {cut[0]} at " in err) if cut else ("resuming" not in err), err
    state = snapshot(bank)
    assert kept <= state["tasks"]
    assert state["rounds"] == [(1, 1), (2, 1)]
    lines = [json.loads(x) for x in (tmp_path / "b.metrics.jsonl").read_text().splitlines()]
    assert sorted(m["round"] for m in lines) == [1, 2]
    with sqlite3.connect(bank) as c:
        per_round = c.execute(
            "SELECT COUNT(*) FROM attempts GROUP BY task_id, round_id HAVING COUNT(*) != 2"
        ).fetchall()
        assert per_round == []
        admitted = c.execute("SELECT COUNT(*) FROM tasks WHERE source = 'selfplay'").fetchone()[0]
    with Bank(bank) as b:
        assert sum(r["summary"]["admitted"] for r in b.rounds()) == admitted
    # The same command again starts new rounds instead of repeating finished ones.
    proc = scripted(bank, 1)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert snapshot(bank)["rounds"] == [(1, 1), (2, 1), (3, 1)]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["transformers", "auto"])
def test_a_round_with_the_real_bundled_model(tmp_path, backend):
    """The real path: the bundled model on CPU proposes, the verifier and admission judge, the
    model solves. Tiny counts (one proposal, one attempt per task) keep it to minutes on two
    busy cores. `auto` runs vLLM's CPU build where it can run (CI installs it), and says so
    in one line; elsewhere it says why it took the transformers backend."""
    config = tmp_path / "c.yaml"
    config.write_text(
        "kinds: [deduction]\n"
        "proposer:\n  proposals_per_kind: 1\n  probe_tasks: 1\n  references: 1\n"
        "  reference_chars: 200\n"
        "  max_new_tokens: 80\n  input_max_new_tokens: 24\n"
        "solver:\n  tasks: 1\n  samples: 1\n  literal_max_new_tokens: 16\n"
    )
    bank = tmp_path / "b.db"
    small_bank(bank)
    res = selfplay("--bank", str(bank), "--config", str(config), "--backend", backend, timeout=590)
    assert res.returncode == 0, res.stderr
    if backend == "auto":
        blocker = vllm_blocker()
        said = [line for line in res.stderr.splitlines() if line.startswith("backend: ")]
        if blocker is None:
            assert len(said) == 1 and said[0].startswith("backend: vllm (vLLM runs on this ")
        else:
            assert said == [f"backend: transformers ({blocker})"]
    (metrics,) = map(json.loads, (tmp_path / "b.metrics.jsonl").read_text().splitlines())
    assert metrics["proposed"] == 1
    assert metrics["proposed"] == metrics["admitted"] + sum(metrics["rejected"].values())
    assert metrics["tokens"] > 0 and metrics["tokens_per_s"] > 0
    with Bank(bank) as b:
        new = list(b.tasks(source="selfplay"))
        assert len(new) == metrics["admitted"]
        assert all(t.proposer == "bundled" and t.round_id == 1 for t in new)
        attempts = b.conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
    # One probe task (this solver had attempted nothing), one curriculum pick, each new task.
    assert attempts == 1 + 1 + len(new)


def test_after_a_round_that_admitted_nothing_the_hint_is_the_rejections():
    from types import SimpleNamespace

    from pipelines.run import next_steps

    empty = next_steps("b.db", [SimpleNamespace(round=2, admitted=0)])
    assert empty.splitlines()[1].strip() == "selfplay bank rejections --bank b.db --round 2"
    assert "bank list" not in empty
    some = next_steps("b.db", [SimpleNamespace(round=2, admitted=3)])
    assert "bank list --bank b.db" in some and "--round 2" in some


def test_ctrl_c_says_how_to_resume_and_the_same_command_says_where(tmp_path):
    from selfplay_cli import cli_command

    completions = tmp_path / "completions.json"
    program = 'x):\n    """Return x squared minus x."""\n    return x * x - x\n```'
    completions.write_text(json.dumps([program, "2)\nf(3)\n```", "```python\n6\n```"]))
    config = tmp_path / "c.yaml"
    config.write_text("kinds: [deduction]\nproposer:\n  proposals_per_kind: 1\n  probe_tasks: 0\n"
                      "solver:\n  tasks: 0\n  samples: 1\n")  # fmt: skip
    bank = tmp_path / "b.db"
    small_bank(bank)
    command = cli_command("run", "--bank", str(bank), "--config", str(config), "--backend",
                          "scripted", "--model", str(completions))  # fmt: skip
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    # Stopped as soon as its round is open, so Ctrl-C lands inside the round whatever the
    # machine's speed.
    deadline, inside = time.monotonic() + 120, False
    while not inside and time.monotonic() < deadline and proc.poll() is None:
        with sqlite3.connect(bank) as c:
            inside = bool(c.execute("SELECT 1 FROM rounds WHERE finished_at IS NULL").fetchall())
        if inside:
            os.kill(proc.pid, signal.SIGSTOP)
            with sqlite3.connect(bank) as c:
                open_rounds = c.execute("SELECT id FROM rounds WHERE finished_at IS NULL")
                inside = bool(open_rounds.fetchall())
            os.kill(proc.pid, signal.SIGINT)
            os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.01)
    _, err = proc.communicate(timeout=120)
    assert inside and proc.returncode == 130, err
    assert "selfplay run: interrupted; run the same command again to resume." in err
    assert "Traceback" not in err
    res = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "resuming round 1 at propose deduction" in res.stderr, res.stderr
