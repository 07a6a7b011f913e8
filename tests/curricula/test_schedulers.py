"""The scheduler contract: `make_scheduler(name, seed).select(stats, k, graph)` -> k distinct ids."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from curricula import Scheduler, make_scheduler, register_scheduler, scheduler_names

BUILT_IN = ("uniform", "easy_to_hard", "dapo_filter", "learnability", "plr", "frontier")


def random_stats(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    attempts = rng.integers(0, 17, n)
    successes = rng.binomial(attempts, rng.random(n))
    last = np.where(attempts > 0, rng.integers(0, 50, n), -1)
    return pd.DataFrame(
        {"attempts": attempts, "successes": successes, "last_step": last},
        index=pd.Index([f"task-{i}" for i in range(n)], name="task_id"),
    )


def chain_graph(ids: list[str]) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(ids)
    graph.add_edges_from(zip(ids[:-1], ids[1:], strict=True))
    return graph


def test_all_six_built_in_schedulers_are_registered():
    assert set(BUILT_IN) <= set(scheduler_names())


@pytest.mark.parametrize("name", BUILT_IN)
@pytest.mark.parametrize("with_graph", [False, True])
def test_select_returns_k_distinct_ids_from_the_bank(name, with_graph):
    stats = random_stats(500)
    graph = chain_graph(list(stats.index[:200])) if with_graph else None
    ids = make_scheduler(name, seed=0).select(stats, 64, graph=graph)
    assert len(ids) == 64
    assert len(set(ids)) == 64
    assert set(ids) <= set(stats.index)


@pytest.mark.parametrize("name", BUILT_IN)
def test_select_returns_the_whole_bank_when_k_exceeds_it(name):
    stats = random_stats(10)
    ids = make_scheduler(name, seed=0).select(stats, 50)
    assert sorted(ids) == sorted(stats.index)


@pytest.mark.parametrize("name", BUILT_IN)
def test_select_on_an_empty_bank_or_with_k_zero_is_empty(name):
    assert make_scheduler(name).select(random_stats(0), 5) == []
    assert make_scheduler(name).select(random_stats(20), 0) == []


@pytest.mark.parametrize("name", BUILT_IN)
def test_same_seed_gives_same_choices_and_other_seeds_differ(name):
    stats = random_stats(2000)
    graph = chain_graph(list(stats.index[:300]))
    first = make_scheduler(name, seed=7).select(stats, 100, graph=graph)
    again = make_scheduler(name, seed=7).select(stats, 100, graph=graph)
    assert first == again
    others = [make_scheduler(name, seed=s).select(stats, 100, graph=graph) for s in range(3)]
    assert any(set(o) != set(first) for o in others)


@pytest.mark.parametrize("name", BUILT_IN)
def test_integer_task_ids_work_too(name):
    stats = random_stats(300).reset_index(drop=True)
    ids = make_scheduler(name).select(stats, 30, graph=chain_graph(list(range(100))))
    assert len(set(ids)) == 30 and all(isinstance(i, int) for i in ids)


def test_missing_column_and_bad_k_are_clear_errors():
    stats = random_stats(10)
    with pytest.raises(ValueError, match="last_step"):
        make_scheduler("uniform").select(stats.drop(columns="last_step"), 3)
    with pytest.raises(ValueError, match="non-negative"):
        make_scheduler("learnability").select(stats, -1)
    with pytest.raises(ValueError, match="successes <= attempts"):
        bad = stats.assign(successes=stats["attempts"] + 1)
        make_scheduler("learnability").select(bad, 3)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="learnability"):
        make_scheduler("no_such_scheduler")


def test_users_register_their_own_scheduler():
    @register_scheduler("first_k_test")
    class FirstK(Scheduler):
        def select(self, stats, k, graph=None):
            return list(stats.index[:k])

    sched = make_scheduler("first_k_test", seed=3)
    assert isinstance(sched, FirstK) and sched.seed == 3
    assert sched.select(random_stats(5), 2) == ["task-0", "task-1"]
    assert "first_k_test" in scheduler_names()


def mixed_and_uniform_records() -> tuple[pd.DataFrame, list, list]:
    """100 tasks solved about half the time, 100 always solved, 100 never solved."""
    rng = np.random.default_rng(1)
    mixed = rng.integers(5, 12, 100)
    stats = pd.DataFrame(
        {
            "attempts": np.full(300, 16),
            "successes": np.concatenate([mixed, np.full(100, 16), np.zeros(100, int)]),
            "last_step": np.full(300, 9),
        },
        index=[f"m{i}" for i in range(100)]
        + [f"s{i}" for i in range(100)]
        + [f"n{i}" for i in range(100)],
    )
    return stats, list(stats.index[100:200]), list(stats.index[200:])


@pytest.mark.parametrize("name", ["learnability", "dapo_filter", "plr", "frontier"])
def test_informed_schedulers_avoid_always_and_never_solved_tasks(name):
    stats, solved, never = mixed_and_uniform_records()
    for seed in range(5):
        ids = make_scheduler(name, seed=seed).select(stats, 32)
        if name == "plr":  # its staleness share is uniform here: most, not all, are mixed
            assert sum(i.startswith("m") for i in ids) >= 24
        else:
            assert not set(ids) & set(solved + never)


def test_uniform_does_not_avoid_them():
    """The baseline really is blind: the test above is not trivially true."""
    stats, solved, never = mixed_and_uniform_records()
    ids = make_scheduler("uniform", seed=0).select(stats, 150)
    assert set(ids) & set(solved) and set(ids) & set(never)


def test_dapo_filter_fills_up_from_filtered_tasks_when_short():
    stats, solved, never = mixed_and_uniform_records()
    ids = make_scheduler("dapo_filter").select(stats, 120)
    assert len(set(ids)) == 120
    assert {i for i in ids if i.startswith("m")} == set(stats.index[:100])


def test_dapo_filter_lets_filtered_tasks_back_after_retry_after_steps():
    stats, solved, never = mixed_and_uniform_records()
    stats.loc[solved, "last_step"] = 0
    stats.attrs["step"] = 100
    picked = make_scheduler("dapo_filter", retry_after=50).select(stats, 100)
    assert set(picked) & set(solved)
    assert not set(make_scheduler("dapo_filter", retry_after=None).select(stats, 100)) & set(solved)


def test_learnability_prefers_unknown_tasks_over_measured_hopeless_ones():
    stats = pd.DataFrame(
        {
            "attempts": [0] * 20 + [64] * 20,
            "successes": [0] * 40,
            "last_step": [-1] * 20 + [5] * 20,
        },
        index=[f"new{i}" for i in range(20)] + [f"old{i}" for i in range(20)],
    )
    ids = make_scheduler("learnability").select(stats, 10)
    assert all(i.startswith("new") for i in ids)


def test_plr_staleness_brings_back_tasks_not_seen_for_long():
    # Identical records; only the time since the last attempt differs.
    n = 200
    stats = pd.DataFrame(
        {"attempts": 8, "successes": 4, "last_step": np.r_[np.zeros(100, int), np.full(100, 99)]},
        index=[f"old{i}" for i in range(100)] + [f"fresh{i}" for i in range(100)],
    )
    counts = {"old": 0, "fresh": 0}
    for seed in range(20):
        for i in make_scheduler("plr", seed=seed, staleness_weight=0.9).select(stats, 20):
            counts["old" if i.startswith("old") else "fresh"] += 1
    assert counts["old"] > 5 * counts["fresh"]
    assert n == len(stats)


def test_plr_without_staleness_ignores_time_since_last_attempt():
    stats = pd.DataFrame(
        {"attempts": 8, "successes": 4, "last_step": np.r_[np.zeros(100, int), np.full(100, 99)]},
        index=[f"old{i}" for i in range(100)] + [f"fresh{i}" for i in range(100)],
    )
    old = sum(
        i.startswith("old")
        for seed in range(20)
        for i in make_scheduler("plr", seed=seed, staleness_weight=0.0).select(stats, 20)
    )
    assert 120 < old < 280  # about half of 400


def test_frontier_sees_a_graph_that_changed_in_place():
    # Ten untried tasks behind a failing prerequisite wait; once the edges are gone they
    # are ordinary untried tasks, and their uncertainty wins them a place.
    stats = pd.DataFrame(
        {"attempts": [16] * 11 + [0] * 10, "successes": [0] + [13] * 10 + [0] * 10},
        index=["p"] + [f"m{i}" for i in range(10)] + [f"x{i}" for i in range(10)],
    ).assign(last_step=lambda f: np.where(f["attempts"] > 0, 3, -1))
    graph = nx.DiGraph([("p", f"x{i}") for i in range(10)])
    sched = make_scheduler("frontier", explore=0.0)
    untried = {f"x{i}" for i in range(10)}
    assert not set(sched.select(stats, 10, graph=graph)) & untried
    graph.remove_edges_from(list(graph.edges))
    assert set(sched.select(stats, 10, graph=graph)) & untried


def test_easy_to_hard_takes_the_easiest_unmastered_tasks_first():
    stats = pd.DataFrame(
        {"attempts": [16, 16, 16, 16], "successes": [16, 12, 6, 1], "last_step": [1, 1, 1, 1]},
        index=["mastered", "easy", "medium", "hard"],
    )
    assert make_scheduler("easy_to_hard").select(stats, 2) == ["easy", "medium"]
    assert make_scheduler("easy_to_hard").select(stats, 4)[-1] == "mastered"
