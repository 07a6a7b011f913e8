"""A writer killed with SIGKILL leaves a consistent bank holding every committed write."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from bank_samples import write_jsonl
from selfplay_cli import cli_command, run_cli

from task_bank.store import Bank

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from selfplay.admission.dedup import keys
    from selfplay.admission.schema import parse_task
    from task_bank.store import Attempt, Bank

    bank = Bank(sys.argv[1])
    start = bank.count() // 50
    for batch in range(start, start + 10_000):
        tasks = [
            parse_task({"kind": "codegen", "prompt": f"p{batch}-{i}",
                        "program": f"def f(x):\\n    return x + {batch * 1000 + i}\\n",
                        "entry_point": "f", "tests": ["assert True"]}, source="crash")
            for i in range(50)
        ]
        hashes, dedup = keys(tasks)
        bank.add_tasks(tasks, vectors=np.ones((50, 16), dtype=np.float32),
                       ast_hashes=hashes, dedup_keys=dedup)
        bank.add_attempts([Attempt(t.id, "m", "a", "passed", True, step=batch) for t in tasks])
        print(batch, flush=True)
    """
)


def _consistent(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    orphans = conn.execute(
        "SELECT COUNT(*) FROM tasks WHERE key NOT IN (SELECT task_key FROM vectors)"
    ).fetchone()[0]
    assert orphans == 0 or conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 0
    return conn


@pytest.mark.slow
def test_killed_store_writer_keeps_every_committed_batch_and_no_partial_one(tmp_path):
    path = tmp_path / "bank.db"
    Bank(path).close()
    for round_, kill_after in enumerate((0.7, 1.3, 2.1)):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
        )
        time.sleep(kill_after)
        proc.send_signal(signal.SIGKILL)
        committed = [int(line) for line in proc.stdout.read().split()]
        proc.wait()
        conn = _consistent(path)
        tasks = conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
        attempts = conn.execute("SELECT SUM(attempts) FROM task_stats").fetchone()[0] or 0
        assert tasks % 50 == 0, "a batch was half written"
        if committed:
            last = committed[-1]
            marker = f"p{last}-49"
            assert conn.execute("SELECT 1 FROM tasks WHERE prompt = ?", (marker,)).fetchone()
        # Attempts go in their own transaction after the tasks: whole batches only, and at
        # most one batch behind per kill.
        assert (tasks - attempts) % 50 == 0 and 0 <= tasks - attempts <= 50 * (round_ + 1)
        conn.close()
        Bank(path).close()  # the next writer reopens the bank after the crash


@pytest.mark.slow
def test_killed_import_keeps_committed_batches_and_a_rerun_completes_it(tmp_path):
    rows = [
        {
            "kind": "codegen",
            "prompt": f"Return the {name} of x.",
            "program": body,
            "entry_point": "f",
            "tests": [test],
        }
        for name, body, test in [
            (f"op{i}", f"def f(x):\n    return {expr}\n", f"assert f(3) == {value}")
            for i, (expr, value) in enumerate(
                [(f"x * {k} - {k // 3}", 3 * k - k // 3) for k in range(2, 62)]
            )
        ]
    ]
    source = write_jsonl(tmp_path / "many.jsonl", rows)
    path = tmp_path / "bank.db"
    args = [
        "bank",
        "import",
        str(source),
        "--bank",
        str(path),
        "--batch-size",
        "4",
        "--workers",
        "1",
    ]
    proc = subprocess.Popen(
        cli_command(*args),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seen: set[str] = set()
    deadline = time.time() + 120
    while len(seen) < 8 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if path.exists():
            try:
                with sqlite3.connect(path) as conn:
                    seen = {r[0] for r in conn.execute("SELECT id FROM tasks")}
            except sqlite3.OperationalError:
                pass  # schema not created yet
    assert proc.poll() is None, "the import finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    conn = _consistent(path)
    after = {r[0] for r in conn.execute("SELECT id FROM tasks")}
    conn.close()
    assert seen <= after and len(after) < len(rows)
    rerun = run_cli(*args, "--json", timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["already_present"] == len(after)
    assert report["admitted"] + report["already_present"] == len(rows), report
    with Bank(path) as bank:
        assert bank.count() == len(rows)
