"""Neighbour sums updated incrementally agree with a full pass."""

from __future__ import annotations

import numpy as np
import pytest

from curricula.sparse import FULL_PASS_EVERY, SparseSum


def full(src, dst, w, n, x):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        return np.bincount(dst, weights=w * x[src], minlength=n)
    return np.stack(
        [np.bincount(dst, weights=w * x[src, c], minlength=n) for c in range(x.shape[1])], 1
    )


@pytest.mark.parametrize("columns", [None, 2])
def test_small_changes_are_pushed_and_match_a_full_pass(columns):
    rng = np.random.default_rng(0)
    n, m = 2000, 9000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.random(m)
    shape = (n,) if columns is None else (n, columns)
    x = rng.integers(0, 20, shape).astype(float)
    sums = SparseSum(src, dst, w, n)
    sums(x)
    for _ in range(30):
        x = x.copy()  # callers hand in a fresh array each call
        rows = rng.choice(n, 40, replace=False)
        x[rows] += rng.integers(1, 9, (40, *shape[1:]))
        got = sums(x)
        np.testing.assert_allclose(got, full(src, dst, w, n, x), rtol=1e-9, atol=1e-9)
    assert 0 < sums._updates < FULL_PASS_EVERY  # the incremental path really ran


def test_results_are_read_only():
    sums = SparseSum(np.array([0, 1]), np.array([1, 2]), np.ones(2), 3)
    with pytest.raises(ValueError):
        sums(np.array([1.0, 1.0, 0.0]))[0] = 3.0


def test_many_changes_take_a_full_pass_and_shape_changes_too():
    rng = np.random.default_rng(1)
    n = 500
    src, dst = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    w = np.ones(2000)
    sums = SparseSum(src, dst, w, n)
    sums(np.zeros(n))
    x = rng.random(n)
    np.testing.assert_allclose(sums(x), full(src, dst, w, n, x))
    assert sums._updates == 0
    x2 = rng.random((n, 2))
    np.testing.assert_allclose(sums(x2), full(src, dst, w, n, x2))
