"""The reward functions pick up Ray from the environment and score as they do locally."""

from __future__ import annotations

import multiprocessing
from dataclasses import asdict

import pytest

from selfplay.rewards import GroundTruth, compute_score_batch, grade_responses, pool, trl_reward
from selfplay.verifier.cluster import RayVerifier


def humaneval_batch() -> tuple[list[str], list[str]]:
    """HumanEval's 492 benchmark rows (canonical, empty, swapped) as responses and labels."""
    from selfplay.evaluate import humaneval_problems

    problems = humaneval_problems()
    responses, labels = [], []
    for i, p in enumerate(problems):
        label = GroundTruth(
            kind="codegen",
            entry_point=p["entry_point"],
            tests=[p["test"] + f"\ncheck({p['entry_point']})\n"],
        ).to_json()
        other = problems[(i + 1) % len(problems)]
        for body in (p["canonical_solution"], "    pass\n", other["canonical_solution"]):
            responses.append(f"Here it is.\n```python\n{p['prompt']}{body}```\n")
            labels.append(label)
    return responses, labels


@pytest.fixture
def joined(ray_cluster, monkeypatch):
    """Rewards in a process connected to Ray, with no selfplay setting: as inside verl."""
    monkeypatch.delenv("SELFPLAY_RAY_ADDRESS")
    pool.close_shared()
    yield
    pool.close_shared()


@pytest.mark.slow
def test_rewards_on_ray_equal_the_local_ones_on_humaneval(joined, verifier):
    responses, labels = humaneval_batch()
    assert isinstance(pool.shared_verifier(), RayVerifier)
    remote = compute_score_batch(["humaneval"] * len(labels), responses, labels)
    local = [asdict(s) for s in grade_responses(responses, labels, verifier)]
    assert len(remote) == 492
    assert [(r["score"], r["reason"], r["tests_passed"]) for r in remote] == [
        (s["score"], s["reason"], s["tests_passed"]) for s in local
    ]
    assert sum(r["score"] for r in remote) >= 164  # every canonical solution, at least
    assert trl_reward([""] * 6, responses[:6], ground_truth=labels[:6]) == [
        s["score"] for s in local[:6]
    ]


def test_the_environment_chooses_where_rewards_grade(ray_cluster, monkeypatch):
    monkeypatch.setenv("SELFPLAY_RAY_ADDRESS", "off")
    assert pool.ray_target() is None
    monkeypatch.delenv("SELFPLAY_RAY_ADDRESS")
    assert pool.ray_target() == pool.JOINED  # this process is connected
    monkeypatch.setenv("SELFPLAY_RAY_ADDRESS", "10.1.2.3:6379")
    assert pool.ray_target() == "10.1.2.3:6379"


def test_a_forked_child_of_a_ray_process_grades_locally(ray_cluster, monkeypatch):
    monkeypatch.delenv("SELFPLAY_RAY_ADDRESS")
    with multiprocessing.get_context("fork").Pool(1) as children:
        assert children.apply(pool.ray_target) is None
    assert pool.ray_target() == pool.JOINED
