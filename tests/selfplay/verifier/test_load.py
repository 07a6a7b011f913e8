"""A mixed batch with timeouts and memory bombs: healthy rows still pass, nothing leaks."""

import os

import pytest

from selfplay.verifier import Verifier

HEALTHY = {"program": "def f(x):\n    return x * 2\n", "tests": ["assert f(2) == 4"]}
SLOW = {
    "program": "def f(x):\n    while True:\n        pass\n",
    "tests": ["f(1)"],
    "timeout_s": 0.3,
}
GREEDY = {"program": "def f(x):\n    return bytearray(4 * 1024 ** 3)\n", "tests": ["f(1)"]}


def _children(pid: int) -> set[int]:
    out = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.add(int(p))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _cgroups() -> set[str]:
    out = set()
    for root in ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory"):
        if os.path.isdir(root):
            out |= {d for d in os.listdir(root) if d.startswith(f"selfplay-{os.getpid()}-")}
    return out


@pytest.mark.slow
def test_mixed_batch_keeps_healthy_rows_and_leaks_nothing(tmp_path):
    rows = []
    for i in range(300):
        kind = SLOW if i % 20 == 0 else GREEDY if i % 20 == 10 else HEALTHY
        rows.append({"id": str(i), **kind})
    fds_before = set(os.listdir("/proc/self/fd"))
    children_before = _children(os.getpid())
    tmp_before = set(os.listdir("/tmp"))
    cgroups_before = _cgroups()  # other verifiers of this process (the shared fixture)
    with Verifier(workers=2, timeout_s=5) as v:
        verdicts = v.grade(rows)
        assert _cgroups() - cgroups_before, "expected per-worker cgroups on this machine"
    by_id = {x.id: x for x in verdicts}
    assert [x.id for x in verdicts] == [r["id"] for r in rows]
    for r in rows:
        expected = {SLOW["program"]: "timeout", GREEDY["program"]: "memory"}.get(
            r["program"], "passed"
        )
        assert by_id[r["id"]].status == expected, by_id[r["id"]]
    assert _children(os.getpid()) == children_before
    assert set(os.listdir("/proc/self/fd")) == fds_before
    assert {n for n in os.listdir("/tmp") if n.startswith("selfplay")} <= tmp_before
    assert _cgroups() == cgroups_before


def test_grade_can_be_called_from_several_threads(verifier_5s_512mb):
    from concurrent.futures import ThreadPoolExecutor

    def batch(k):
        rows = [
            {
                "id": f"{k}-{i}",
                "program": f"def f():\n    return {k}\n",
                "tests": [f"assert f() == {k}"],
            }
            for i in range(10)
        ]
        return verifier_5s_512mb.grade(rows)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(batch, range(4)))
    for k, verdicts in enumerate(results):
        assert [v.id for v in verdicts] == [f"{k}-{i}" for i in range(10)]
        assert all(v.passed for v in verdicts)
