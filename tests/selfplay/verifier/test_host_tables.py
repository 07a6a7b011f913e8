"""The host's physical-memory tables read as empty files from a row: their page flags and map
counts show the host's memory, the page cache among it (which pages of a library are
cached), and nothing a graded program needs is there."""

from __future__ import annotations

import os

from selfplay.verifier.inside.osutil import HOST_TABLES

READER = """
def f(path):
    try:
        with open(path, "rb") as fh:
            return len(fh.read(4096))
    except OSError:
        return -1
"""


def test_a_row_reads_the_hosts_page_tables_as_empty_and_its_own_proc_as_it_is(verifier):
    present = [p for p in HOST_TABLES if os.path.exists(p)]
    paths = [*present, "/proc/self/status", "/proc/self/maps"]
    rows = [
        {"id": str(i), "program": READER, "tests": [], "calls": [f"f({p!r})"]}
        for i, p in enumerate(paths)
    ]
    verdicts = verifier.grade(rows)
    sizes = {p: int(v.outputs[0]) for p, v in zip(paths, verdicts, strict=True)}
    assert "/proc/kpageflags" in present  # the machines this runs on have them
    assert all(sizes[p] <= 0 for p in present), sizes
    # The legitimate twin: a row's own entries under /proc read as before.
    assert sizes["/proc/self/status"] > 0 and sizes["/proc/self/maps"] > 0, sizes
