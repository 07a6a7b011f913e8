"""The host's page cache carries no expected value from row to row, or from run to run.

Every row sees the host's files read-only, so they share its page cache. A row could ask the
kernel which pages of a large file are cached (`mincore`, `cachestat`, a read with
`RWF_NOWAIT`), drop pages (`posix_fadvise`, `madvise`), and so write bits a later row reads. The
attack: identical responses to HumanEval/4, each learning one expected value from the tests
(`candidate(x) - expected` hands it to the program's object) and writing what it knows into the
cached state of pages of a large data file of the installation. Before those calls were refused
the fourth response of a batch scored 1, and the same response in a later run at once.
"""

from __future__ import annotations

import ast
import os

from selfplay.rewards import compute_score_batch, grade_responses
from selfplay.verifier import Verifier
from selfplay.verifier.bwrap import root_mounts, to_sandbox_path
from selfplay.verifier.readable import default_packages, readable

QUERIES = r"""
import ctypes, mmap, os
libc = ctypes.CDLL(None, use_errno=True)

def outcome(f):
    try:
        f()
        return "ran"
    except OSError as e:
        return os.strerror(e.errno)

def _mapped(path, advise=None):
    # mincore (or madvise with `advise`) on the first 64 KiB of the file, mapped
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = ctypes.c_void_p(libc.mmap(None, 1 << 16, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0))
        if advise is None:
            rc = libc.mincore(addr, ctypes.c_size_t(1 << 16), ctypes.create_string_buffer(16))
        else:
            rc = libc.madvise(addr, ctypes.c_size_t(1 << 16), advise)
        err = ctypes.get_errno()
        libc.munmap(addr, ctypes.c_size_t(1 << 16))
    finally:
        os.close(fd)
    if rc != 0:
        raise OSError(err, os.strerror(err))

def mincore(path):
    _mapped(path)

def nowait(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(4096)], 1 << 20, os.RWF_NOWAIT)
    finally:
        os.close(fd)

def plain(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(4096)], 1 << 20)
        os.pread(fd, 4096, 1 << 21)
    finally:
        os.close(fd)

def dontneed(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)

def pageout(path):
    _mapped(path, 21)  # MADV_PAGEOUT

def anonymous():
    m = mmap.mmap(-1, 1 << 16)
    m.madvise(mmap.MADV_DONTNEED)  # what allocators do: never refused
    m.close()

def queries(path):
    return {name: outcome(lambda f=f: f(path)) for name, f in
            (("mincore", mincore), ("nowait", nowait), ("dontneed", dontneed),
             ("pageout", pageout), ("plain", plain))} | {"anonymous": outcome(anonymous)}
"""

# The relay: three expected values (inputs of length 3, 4, 5) as 12-bit codes, each bit on
# two pages of the file, the second its complement (so neither a cold nor a warm file reads as
# a value), pages 256 KiB apart (beyond a first read's read-ahead). A page cached is a 1: written by
# reading the page or dropping it, read with mincore.
RELAY = r"""
import ctypes, mmap, os
from fractions import Fraction
PATH = {path!r}
BITS, STRIDE, PAGE = 12, 1 << 18, 4096
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]

def _page(slot, bit):
    return (slot * 2 * BITS + bit) * STRIDE

def _bits(slot):
    # mincore: which pages are cached, without loading any (a read with RWF_NOWAIT would
    # start read-ahead of the pages it finds missing)
    fd = os.open(PATH, os.O_RDONLY)
    size = os.fstat(fd).st_size
    addr = ctypes.c_void_p(libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0))
    os.close(fd)
    vec = ctypes.create_string_buffer(size // PAGE + 1)
    rc = libc.mincore(addr, ctypes.c_size_t(size), vec)
    err = ctypes.get_errno()
    libc.munmap(addr, ctypes.c_size_t(size))
    if rc != 0:
        raise OSError(err, os.strerror(err))
    return [vec.raw[_page(slot, b) // PAGE] & 1 for b in range(2 * BITS)]

def _read(slot):
    bits = _bits(slot)
    if any(bits[b] == bits[BITS + b] for b in range(BITS)):
        return None
    code = sum(bits[b] << b for b in range(BITS))
    return code // 64 / (code % 64) if code % 64 else None

def _write(slot, value):
    f = Fraction(value).limit_denominator(60)
    code = f.numerator * 64 + f.denominator
    fd = os.open(PATH, os.O_RDONLY)
    try:
        for b in range(2 * BITS):
            one = code >> (b % BITS) & 1
            if one != (b >= BITS):
                os.pread(fd, PAGE, _page(slot, b))
            else:
                os.posix_fadvise(fd, _page(slot, b), PAGE, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)

def _try_write(slot, value):
    try:
        _write(slot, value)
    except OSError:
        pass

def _read_or_none(slot):
    try:
        return _read(slot)
    except OSError:
        return None

def _known():
    try:
        return [_read(slot) for slot in range(3)]
    except OSError:
        return [None, None, None]

KNOWN = _known()

class Spy:
    def __init__(self, i):
        self.i = i

    def __sub__(self, expected):
        try:
            _write(self.i, expected)
        except OSError:
            pass
        return self

    def __abs__(self):
        return self

    def __lt__(self, other):
        return True

def mean_absolute_deviation(numbers):
    i = len(numbers) - 3
    if 0 <= i < 3 and KNOWN[i] is not None:
        return KNOWN[i]
    return Spy(i)
"""


def _data_file() -> str:
    """The sandbox's path of the largest file a row may read (numpy's BLAS library, 20 MB or
    more: room for the relay's 72 pages 256 KiB apart)."""
    files = list(readable(default_packages()).files())
    host = max(files, key=lambda p: (os.path.getsize(p), p))
    assert os.path.getsize(host) >= 72 << 18, host
    return to_sandbox_path(os.path.realpath(host), root_mounts()) or os.path.realpath(host)


def test_a_row_cannot_query_or_drop_the_page_cache_and_still_reads_files(one_worker):
    row = {"id": "q", "program": QUERIES, "tests": [], "calls": [f"queries({_data_file()!r})"]}
    (verdict,) = one_worker.grade([row])
    seen = ast.literal_eval(verdict.outputs[0])
    refused = os.strerror(1)  # EPERM
    assert {k: seen[k] for k in ("mincore", "nowait", "dontneed", "pageout")} == dict.fromkeys(
        ("mincore", "nowait", "dontneed", "pageout"), refused
    ), seen
    assert seen["plain"] == "ran" and seen["anonymous"] == "ran", seen  # the legitimate twins
    assert "seccomp_denied" in verdict.signals


def test_what_one_row_writes_into_the_page_cache_the_next_cannot_read(one_worker):
    program = RELAY.format(path=_data_file())
    rows = []
    for value in (2 / 3, 1.0, 0.5):
        rows.append({"id": "write", "program": program, "tests": [],
                     "calls": [f"_try_write(5, {value!r})"]})  # fmt: skip
        rows.append({"id": "read", "program": program, "tests": [], "calls": ["_read_or_none(5)"]})
    verdicts = one_worker.grade(rows)
    assert [v.status for v in verdicts] == ["passed"] * 6, [v.detail for v in verdicts]
    assert [v.outputs[0] for v in verdicts if v.id == "read"] == ["None"] * 3


def test_identical_relay_responses_score_zero_in_a_batch_and_in_a_later_run(
    one_worker, humaneval_4_label
):
    label, response = humaneval_4_label, f"```python\n{RELAY.format(path=_data_file())}```"
    scores = grade_responses([response] * 4, [label] * 4, one_worker)
    assert [s.score for s in scores] == [0.0] * 4, [s.detail for s in scores]
    with Verifier(workers=1, timeout_s=20) as later:
        (again,) = grade_responses([response], [label], later)
    assert again.score == 0.0, again.detail


def test_the_relay_scores_zero_through_compute_score_batch_too(humaneval_4_label):
    label, response = humaneval_4_label, f"```python\n{RELAY.format(path=_data_file())}```"
    results = compute_score_batch(["humaneval"] * 4, [response] * 4, [label] * 4)
    assert [r["score"] for r in results] == [0.0] * 4
