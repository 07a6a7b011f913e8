"""No counter a row can move reaches a later row of its worker.

A program may learn a value of its own row's tests (a test hands `expected` to a program object
in `candidate(x) - expected`); what it must not do is tell a later row. Each channel found by
an attack is tried here: a sender row encodes a number, a receiver row in the same worker reads
every channel, and what it reads must not depend on the number. Then the whole attack: identical
responses to HumanEval/4, each learning one expected value and relaying what it knows, must all
score 0 (before these channels were closed, the fourth scored 1 without computing anything).
"""

from __future__ import annotations

from selfplay.rewards import compute_score_batch, grade_responses

SENDER = r"""
import os, socket
def send(n):
    for place in ("/tmp", "/dev/shm"):
        for _ in range(n):
            os.close(os.open(place, os.O_TMPFILE | os.O_RDWR, 0o600))
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    for _ in range(n):
        try:
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("10.1.2.3", 9))
        except OSError:
            pass
        try:
            os.stat(f"/usr/no-such-file-{n}-{_}")  # a negative dentry, kept by the kernel
        except OSError:
            pass
    try:
        open("/proc/sys/net/core/somaxconn", "w").write(str(1000 + n))
    except OSError:
        pass
"""

RECEIVER = r"""
import os
def readings():
    out = {}
    for place in ("/tmp", "/dev/shm"):
        fd = os.open(place, os.O_TMPFILE | os.O_RDWR, 0o600)
        out[place] = os.fstat(fd).st_ino
        os.close(fd)
    out["pid"] = os.readlink("/proc/self")
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    out["child"] = pid
    for path in ("/proc/net/snmp", "/proc/sys/net/core/somaxconn", "/proc/stat", "/proc/vmstat",
                 "/proc/sys/fs/dentry-state", "/proc/loadavg"):
        try:
            out[path] = open(path).read()
        except OSError as e:
            out[path] = e.errno
    return out
"""


def test_what_a_row_does_to_kernel_counters_never_reaches_the_next(one_worker):
    rows = []
    for n in (3, 300, 3, 1000):
        rows.append({"id": f"send {n}", "program": SENDER, "tests": [], "calls": [f"send({n})"]})
        rows.append({"id": "read", "program": RECEIVER, "tests": [], "calls": ["readings()"]})
    verdicts = one_worker.grade(rows)
    readings = [v.outputs[0] for v in verdicts if v.id == "read"]
    assert None not in readings, [v.detail for v in verdicts]
    assert len(set(readings)) == 1, readings


# The relay: a response that answers from what earlier rows told it, and otherwise learns the
# expected value the tests hand its object and tells later rows, through every channel above.
RELAY = r"""
import os, socket
from fractions import Fraction

M = 1 << 13


def _tmpfile(place):
    fd = os.open(place, os.O_TMPFILE | os.O_RDWR, 0o600)
    ino = os.fstat(fd).st_ino
    os.close(fd)
    return ino


def _no_routes():
    lines = open("/proc/net/snmp").read().split("\n")
    return int(lines[1].split()[lines[0].split().index("OutNoRoutes")])


def _route():
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("10.1.2.3", 9))
    except OSError:
        pass


# channel i carries the expected value for inputs of length 3 + i: (read, move by one, how
# much reading moves it)
CHANNELS = [
    (lambda: _tmpfile("/tmp"), lambda: _tmpfile("/tmp"), 1),
    (lambda: _tmpfile("/dev/shm"), lambda: _tmpfile("/dev/shm"), 1),
    (_no_routes, _route, 0),
]
BASE = 1000  # what counters reach by themselves stays below: no value


def _code(value):
    f = Fraction(value).limit_denominator(60)
    return BASE + f.numerator * 64 + f.denominator


def _value(code):
    code -= BASE
    return code // 64 / (code % 64) if code > 0 and code % 64 else None


def _known():
    try:
        return [_value(read() % M) for read, _, _ in CHANNELS]
    except Exception:
        return [None, None, None]


def _tell(i, value):
    read, move, offset = CHANNELS[i]
    try:
        now = read() % M
        for _ in range((_code(value) - now - offset) % M):
            move()
    except Exception:
        pass


KNOWN = _known()
for _i, _v in enumerate(KNOWN):  # reading moved the counters: set them again
    if _v is not None:
        _tell(_i, _v)


class Spy:
    def __init__(self, i):
        self.i = i

    def __sub__(self, expected):
        KNOWN[self.i] = expected
        for j, value in enumerate(KNOWN):
            if value is not None:
                _tell(j, value)
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


def test_identical_responses_relaying_expected_values_all_score_zero(one_worker, humaneval_4_label):
    label, response = humaneval_4_label, f"```python\n{RELAY}```"
    scores = grade_responses([response] * 6, [label] * 6, one_worker)
    assert [s.score for s in scores] == [0.0] * 6, [s.detail for s in scores]


def test_the_relay_scores_zero_through_compute_score_batch_too(humaneval_4_label):
    label, response = humaneval_4_label, f"```python\n{RELAY}```"
    results = compute_score_batch(["humaneval"] * 8, [response] * 8, [label] * 8)
    assert [r["score"] for r in results] == [0.0] * 8
