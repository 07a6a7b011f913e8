"""`RayVerifier` on a real local Ray cluster: the local verifier's verdicts, in input order,
and nothing lost or duplicated when an actor process is killed mid-batch."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from selfplay.verifier import Verdict
from selfplay.verifier.cluster import RayVerifier

pytestmark = pytest.mark.slow


def comparable(verdict: Verdict) -> dict:
    """Everything but the measured run time."""
    d = verdict.to_dict()
    del d["duration_s"]
    return d


def test_verdicts_equal_the_local_verifiers_in_input_order(ray_cluster, verifier_5s_512mb):
    rows = [
        {
            "id": f"r{i}",
            "program": f"def f():\n    return {i}\n",
            "tests": [f"assert f() == {i % 3}"],
        }
        for i in range(24)
    ]
    rows += [
        {
            "id": "calls",
            "program": "def g(x):\n    return [x] * 2\n",
            "tests": [],
            "calls": ["g(3)"],
        },
        {"id": "loop", "program": "while True:\n    pass\n", "tests": ["pass"], "timeout_s": 0.5},
        {"id": "exit", "program": "import sys\nsys.exit(0)\n", "tests": ["assert False"]},
        {"program": "x = 1\n", "tests": []},  # no id: named by its position, as locally
        {"id": "bad-tests", "program": "x = 1\n", "tests": "assert x"},
        Verdict("decided", False, "invalid", 0, 0, 0.0, "decided by the caller"),
    ]
    with RayVerifier(actors=2, workers=1, timeout_s=5.0, memory_mb=512) as ray_verifier:
        remote = ray_verifier.grade(rows)
        assert (
            len(set(ray_verifier.actor_pids())) == 2
            and os.getpid() not in ray_verifier.actor_pids()
        )
        streamed = list(ray_verifier.grade_iter(iter(rows), chunk_rows=3))
        assert ray_verifier.retried == 0
    local = verifier_5s_512mb.grade(rows)
    assert [comparable(v) for v in remote] == [comparable(v) for v in local]
    assert [comparable(v) for v in streamed] == [comparable(v) for v in local]
    assert [v.status for v in remote[2:5]] == ["passed", "failed", "failed"]
    assert remote[-3].id == "#27" and remote[-1].detail == "decided by the caller"


def test_killing_an_actor_mid_batch_loses_and_duplicates_nothing(ray_cluster):
    # Each row takes a while and proves its own identity, so a verdict delivered for the wrong
    # row, twice, or not at all shows.
    rows = [
        {
            "id": f"row-{i}",
            "program": f"import time\ntime.sleep(0.15)\nvalue = {i}\n",
            "tests": [f"assert value == {i}"],
        }
        for i in range(40)
    ]
    with RayVerifier(actors=2, workers=1, timeout_s=10.0, chunk_rows=2) as ray_verifier:
        victim = ray_verifier.actor_pids()[1]
        verdicts = []
        for verdict in ray_verifier.grade_iter(rows):
            verdicts.append(verdict)
            if len(verdicts) == 3:  # both actors hold chunks in flight now
                threading.Thread(target=os.kill, args=(victim, signal.SIGKILL)).start()
        retried = ray_verifier.retried
        # The restarted actor grades again: its share of a new batch needs no retry.
        again = ray_verifier.grade(rows[:6])
        assert ray_verifier.retried == retried
    assert [v.id for v in verdicts] == [r["id"] for r in rows]
    assert [v.status for v in verdicts] == ["passed"] * len(rows), [v.detail for v in verdicts]
    assert retried > 0 and retried % 2 == 0  # whole chunks, each of two rows
    assert [v.status for v in again] == ["passed"] * 6


def test_one_actor_per_n_cores_of_each_node(ray_cluster):
    import ray

    cpus = int(sum(n["Resources"].get("CPU", 0) for n in ray.nodes() if n["Alive"]))
    with RayVerifier(cores_per_actor=1) as ray_verifier:
        assert len(ray_verifier.actor_pids()) == cpus and ray_verifier.n_workers == cpus
        [verdict] = ray_verifier.grade([{"id": "a", "program": "x = 1\n", "tests": ["assert x"]}])
    assert verdict.passed


def alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


def test_shared_actors_outlive_their_creator(ray_cluster):
    import ray

    settings = dict(actors=1, workers=1, timeout_s=10.0, shared=True)
    # Another process of this job (an actor, as a trainer's reward worker is) creates them.
    creator = ray.remote(num_cpus=0)(RayVerifier).remote(**settings)
    [first] = ray.get(creator.actor_pids.remote())
    rows = [
        {"id": f"r{i}", "program": f"v = {i}\n", "tests": [f"assert v == {i}"]} for i in range(6)
    ]
    with RayVerifier(**settings) as mine:
        assert mine.actor_pids() == [first]  # found by name, not started again
        ray.kill(creator)  # the actor dies with its creator and is not restarted
        for _ in range(300):
            if not alive(first):
                break
            threading.Event().wait(0.1)
        verdicts = mine.grade(rows)
        assert mine.retried > 0  # sent again to the actor created anew
    assert [v.id for v in verdicts] == [r["id"] for r in rows] and all(v.passed for v in verdicts)
    with RayVerifier(**settings) as again:
        [second] = again.actor_pids()
    assert second != first and alive(second)  # `close` left the shared actor running
    with RayVerifier(**dict(settings, shared=False)) as own:
        assert own.actor_pids() != [second]


def test_a_local_cluster_binds_loopback_only(ray_cluster):
    import subprocess
    import sys

    import ray

    # The suite's cluster, and one that `connect("local")` starts in a fresh process.
    assert ray_cluster.startswith("127.0.0.1:")
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    script = (
        "import ray\nfrom selfplay.verifier.connect import connect\nconnect('local')\n"
        "print(ray.get_runtime_context().gcs_address, ray.nodes()[0]['NodeManagerAddress'])\n"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    gcs, node = res.stdout.split()
    assert gcs.startswith("127.0.0.1:") and node == "127.0.0.1"
