"""`Verifier.with_preload`: a second pool, like the first, whose zygotes imported more."""

import pytest

from selfplay.verifier import Verifier

# Whether numpy was in the row's process before the program imported it.
SEES = {
    "program": "import sys\nPRE = 'numpy' in sys.modules\nimport numpy\ndef f():\n    return PRE\n",
    "tests": [],
    "calls": ["f()"],
}


def test_rows_of_the_preloaded_pool_find_numpy_imported_and_the_pool_goes_with_its_parent():
    v = Verifier(workers=1, timeout_s=7, memory_mb=700)
    numpy_pool = v.with_preload(["numpy"])
    assert v.with_preload(("numpy",)) is numpy_pool and v.with_preload([]) is v
    assert numpy_pool.limits == v.limits and numpy_pool.mode == v.mode
    assert numpy_pool.n_workers == 1 and numpy_pool.packages == v.packages
    plain, *_ = v.grade([{"id": f"p{i}", **SEES} for i in range(3)])
    preloaded, *_ = numpy_pool.grade([{"id": f"n{i}", **SEES} for i in range(3)])
    assert plain.passed and preloaded.passed, (plain.detail, preloaded.detail)
    assert plain.outputs == ["False"] and preloaded.outputs == ["True"]
    # Its rows' cost is the parent's too; it closes with the parent.
    assert v.usage()["solution"]["faults"] > numpy_pool.usage()["solution"]["faults"] > 0
    v.close()
    with pytest.raises(RuntimeError, match="closed"):
        numpy_pool.grade([{"id": "late", **SEES}])
    with pytest.raises(RuntimeError, match="closed"):
        v.with_preload(["numpy"])
