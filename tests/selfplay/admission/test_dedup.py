"""Exact and near-duplicate detection: copies collapse, look-alikes are kept."""

from __future__ import annotations

import numpy as np
import pytest
from bank_samples import SUM_EVENS, SUM_ODDS, codegen_row

from selfplay.admission.dedup import Vectorizer
from selfplay.admission.normalize import ast_hash
from selfplay.admission.schema import parse_task
from task_bank.vectors import NearDupIndex

RENAMED = """def add_up_evens(values):
    acc = 0
    for v in values:
        if v % 2 == 0:
            acc += v
    return acc
"""
REFORMATTED = """def sum_evens( nums ) :
    # a comment that changes nothing
    total=0
    for n in nums :
        if n%2==0 : total+=n   # trailing comment
    return total"""
ANNOTATED = """def sum_evens(nums: list[int]) -> int:
    total: int = 0
    for n in nums:
        if n % 2 == 0:
            total += n
    return total
"""
# Same behaviour, different AST: only the near-duplicate path can catch this one.
REWRITTEN = SUM_EVENS.replace("if n % 2 == 0:", "if not n % 2:")
TESTS = ["assert sum_evens([1, 2, 3, 4]) == 6", "assert sum_evens([]) == 0"]


def test_renamed_reformatted_commented_annotated_copies_share_the_hash():
    h = ast_hash(SUM_EVENS)
    assert ast_hash(RENAMED) == h
    assert ast_hash(REFORMATTED) == h
    assert ast_hash(ANNOTATED) == h


def test_constants_and_builtins_keep_programs_apart():
    assert ast_hash(SUM_ODDS) != ast_hash(SUM_EVENS)
    assert ast_hash("def f(x):\n    return len(x)\n") != ast_hash("def f(x):\n    return sum(x)\n")


def test_vectors_of_copies_are_close_and_unrelated_programs_far():
    v = Vectorizer()
    tasks = [
        parse_task(codegen_row(p, "f", ["assert True"], prompt="Sum the even numbers."))
        for p in (SUM_EVENS, RENAMED, "def f(s):\n    return s[::-1].upper()\n")
    ]
    x = v.vectorize(tasks)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    assert x[0] @ x[1] > 0.99
    assert x[0] @ x[2] < 0.6


def test_index_search_returns_keys_above_threshold():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(50, 32)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    index = NearDupIndex(32)
    index.add(np.arange(100, 150), base)
    hits = index.search(base[[3, 7]], threshold=0.999)
    assert [h[0][0] for h in hits] == [103, 107]
    assert index.search(-base[:1], threshold=0.5) == [[]]


@pytest.mark.slow
def test_ivf_index_finds_exact_copies_in_a_larger_bank():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(20_000, 64)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    index = NearDupIndex(64, ivf_min=10_000)
    index.add(np.arange(len(base)), base)
    hits = index.search(base[:200], threshold=0.999)
    assert sum(1 for i, h in enumerate(hits) if h and h[0][0] == i) >= 195


def test_gate_collapses_copies_and_rejects_behavioural_near_duplicates(admission):
    rows = [
        codegen_row(SUM_EVENS, "sum_evens", TESTS, prompt="Sum the even numbers of a list."),
        codegen_row(
            RENAMED,
            "add_up_evens",
            [t.replace("sum_evens", "add_up_evens") for t in TESTS],
            prompt="Add up the even values.",
        ),
        codegen_row(REFORMATTED, "sum_evens", TESTS, prompt="Sum of evens."),
        codegen_row(REWRITTEN, "sum_evens", TESTS, prompt="Sum the even numbers of a list."),
    ]
    report = admission.admit([parse_task(r, source="t") for r in rows])
    assert report.admitted == 1
    assert report.rejected == {"duplicate": 2, "near_duplicate": 1}
    assert admission.bank.count() == 1


def test_look_alikes_that_behave_differently_are_both_kept(admission):
    evens = codegen_row(SUM_EVENS, "sum_evens", TESTS, prompt="Sum the even numbers of a list.")
    odds = codegen_row(
        SUM_ODDS,
        "sum_odds",
        ["assert sum_odds([1, 2, 3, 4]) == 4", "assert sum_odds([]) == 0"],
        prompt="Sum the odd numbers of a list.",
    )
    tasks = [parse_task(evens, source="t"), parse_task(odds, source="t")]
    x = admission.vectorizer.vectorize(tasks)
    # They are similar enough to be near-duplicate candidates, so behaviour decides.
    assert x[0] @ x[1] >= admission.config.near_dup_threshold
    report = admission.admit(tasks[:1])
    report2 = admission.admit(tasks[1:])
    assert report.admitted == report2.admitted == 1
    assert admission.bank.count() == 2


def test_near_duplicates_are_found_across_batches_and_sessions(bank, verifier):
    from selfplay.admission import Admission

    first = Admission(bank, verifier)
    first.admit([parse_task(codegen_row(SUM_EVENS, "sum_evens", TESTS), source="t")])
    # A fresh admission loads the stored vectors from the bank file.
    second = Admission(bank, verifier)
    report = second.admit([parse_task(codegen_row(REWRITTEN, "sum_evens", TESTS), source="t")])
    assert report.rejected == {"near_duplicate": 1}


def test_gate_config_names_an_unknown_or_bad_field():
    from pydantic import ValidationError

    from selfplay.admission import AdmissionConfig

    with pytest.raises(ValidationError, match="near_dup_treshold"):
        AdmissionConfig(near_dup_treshold=0.5)
    with pytest.raises(ValidationError, match="near_dup_threshold"):
        AdmissionConfig(near_dup_threshold=1.5)
