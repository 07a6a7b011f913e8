"""No row changes another's verdict: whatever memory a row fills until it is killed is free
again before the next row of its worker starts, so a correct row right after a flood passes,
every time. In a GRPO group one sibling's flood must not turn the next sibling's correct answer
into a 0."""

from __future__ import annotations

import pytest

from selfplay.rewards import GroundTruth, compute_score_batch, trl_reward
from selfplay.verifier import Verifier

MB20 = 20 << 20

FLOODS = {
    # SysV segments, detached (the address-space limit does not stop them), until killed
    "sysv shared memory": f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
def flood():
    for _ in range(1000):
        sid = libc.shmget(0, {MB20}, 0o1600)
        addr = libc.shmat(sid, None, 0) if sid >= 0 else None
        if addr and addr != ctypes.c_void_p(-1).value:
            ctypes.memset(addr, 1, {MB20})
            libc.shmdt(ctypes.c_void_p(addr))
""",
    "sysv message queues": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def flood():
    buf = ctypes.create_string_buffer(8 + 8000)
    ctypes.memset(buf, 1, 8)
    for _ in range(32000):
        q = libc.msgget(0, 0o1600)
        if q < 0:
            break
        while libc.msgsnd(q, buf, 8000, 0o4000) == 0:  # IPC_NOWAIT
            pass
""",
    "posix shared memory": f"""
import os, mmap
def flood():
    for i in range(1000):
        fd = os.open(f"/dev/shm/f{{i}}", os.O_CREAT | os.O_RDWR)
        os.ftruncate(fd, {MB20})
        with mmap.mmap(fd, {MB20}) as m:
            m.write(b"x" * {MB20})
        os.close(fd)
""",
    "files in /tmp": f"""
def flood():
    for i in range(1000):
        with open(f"/tmp/f{{i}}", "wb") as f:
            f.write(b"x" * {MB20})
""",
    "memfds and pipes kept open": f"""
import os, mmap
kept = []
def flood():
    for _ in range(1000):
        r, w = os.pipe()
        os.set_blocking(w, False)
        try:
            while True:
                os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
        fd = os.memfd_create("x")
        os.ftruncate(fd, {MB20})
        with mmap.mmap(fd, {MB20}) as m:
            m.write(b"x" * {MB20})
        kept.append((r, w, fd))
""",
}
CORRECT = {
    "program": "def total(n):\n    return sum(list(range(n)))\n",
    "tests": ["assert total(10**5) == 4999950000"],
}


@pytest.fixture(scope="module")
def one_worker():
    with Verifier(workers=1, timeout_s=10, memory_mb=128) as v:
        yield v


def test_a_correct_row_after_each_flood_passes_every_time(one_worker):
    """Five rounds here; `benchmarks/verify_chaos.py` repeats the floods in long mixed batches
    on a busy machine."""
    rows = []
    for rep in range(5):
        for name in sorted(FLOODS):
            rows.append(
                {"id": f"flood {name}", "program": FLOODS[name], "tests": [], "calls": ["flood()"]}
            )
            rows.append({"id": f"{rep}: after {name}", **CORRECT})
            if rep % 2 == 0:  # other rows in between, as in a mixed batch
                rows.append({"id": "loop", "program": "def f():\n    while True: pass\n",
                             "tests": ["f()"], "timeout_s": 0.5})  # fmt: skip
    verdicts = one_worker.grade(rows)
    failed = [
        (v.id, v.status, v.detail[:120]) for v in verdicts if "after" in v.id and not v.passed
    ]
    assert failed == []
    # the floods did fill the worker's memory until they were stopped
    assert {v.status for v in verdicts if v.id == "flood sysv shared memory"} == {"memory"}


@pytest.mark.parametrize("reward", [compute_score_batch, trl_reward])
def test_a_flooding_sibling_never_zeroes_the_next_siblings_correct_answer(reward):
    label = GroundTruth(kind="codegen", entry_point="total", tests=CORRECT["tests"]).to_json()
    flood = f"```python\n{FLOODS['sysv shared memory']}\ntotal = flood\n```"
    correct = f"```python\n{CORRECT['program']}```"
    group = [correct, flood, correct, correct, flood, correct, correct, correct]
    if reward is compute_score_batch:
        scores = [r["score"] for r in reward(["x"] * 8, group, [label] * 8)]
    else:
        scores = reward(["p"] * 8, group, ground_truth=[label] * 8)
    assert scores == [0.0 if r is flood else 1.0 for r in group]
