"""Generation on a real local Ray cluster: engines as actors behind one `generate`.

The engines are OpenAI-backend actors talking to a real chat server on loopback in this
process (a scripted model that says which prompt it got and which server process answered),
so the order, the spread over engines and a killed engine's retry are all visible.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from selfplay.backends import BackendError, Prompt, Sampling, make_backend
from selfplay.backends.scripted import ScriptedBackend
from selfplay.backends.serve import ChatServer


def _slow_echo(prompt, index):
    time.sleep(0.05)  # long enough for an engine to be killed mid-call
    return f"{prompt.messages[-1]['content']}#{index}"


@pytest.fixture
def server():
    with ChatServer(ScriptedBackend(script=_slow_echo), port=0, model_name="m", max_batch=1) as s:
        yield s


def _ray_backend(server, engines=2, **options):
    return make_backend("ray", "m", engine="openai", engines=engines, cpus_per_engine=0,
                        engine_options={"base_url": server.url, "concurrency": 1},
                        **options)  # fmt: skip


def test_completions_come_back_in_prompt_order_from_every_engine(ray_cluster, server):
    import ray

    prompts = [Prompt.user(f"q{i}") for i in range(10)]
    with _ray_backend(server) as backend:
        results = backend.generate(prompts, n=2, sampling=Sampling(max_new_tokens=20))
        pids = set(ray.get([a.pid.remote() for a in backend._actors]))
    assert [[c.text for c in r] for r in results] == [[f"q{i}#0", f"q{i}#1"] for i in range(10)]
    assert backend.retried == 0 and len(pids) == 2


def test_an_engine_killed_mid_call_has_its_prompts_answered_by_another(ray_cluster, server):
    import ray

    prompts = [Prompt.user(f"q{i}") for i in range(40)]
    with _ray_backend(server) as backend:
        victim = ray.get(backend._actors[1].pid.remote())
        killer = threading.Timer(0.5, os.kill, (victim, signal.SIGKILL))
        killer.start()
        results = backend.generate(prompts, n=1, sampling=Sampling(max_new_tokens=20))
        killer.join()
    # Every prompt answered exactly once, in order; the dead engine's share was sent again.
    assert [r[0].text for r in results] == [f"q{i}#0" for i in range(40)]
    assert backend.retried == 20


def test_an_engine_that_cannot_start_is_one_sentence(ray_cluster, tmp_path):
    backend = make_backend("ray", str(tmp_path / "missing.json"), engine="scripted", engines=1,
                           cpus_per_engine=0)  # fmt: skip
    with pytest.raises(BackendError, match="failed to start") as e:
        backend.load()
    assert "\n" not in str(e.value)
