"""What the solution process can reach: nothing of the row's tests, nothing of earlier rows.

Each test plants a token in what the solution must never see (the tests, an expected stdout,
an earlier row) and runs a program that looks for it everywhere a process can look: its own
frames and heap (gc), every readable mapping of its memory (/proc/self/mem, guided by
/proc/self/maps), its environment and descriptors, other processes' /proc entries, and every
writable place on disk. The program holds only the token's prefix and hash, so finding its own
needle is impossible; a control row that does contain the token proves the search works.
"""

import hashlib
import secrets

import pytest

LOOKER = """
import gc, glob, hashlib, os, re, sys

PREFIX = b"TOK" + b"EN-"
TARGET = {target!r}


def _hit(data):
    for m in re.finditer(re.escape(PREFIX) + rb"[0-9a-f]{{16}}", data):
        if hashlib.sha256(m.group()).hexdigest() == TARGET:
            return True
    return False


def _strings(obj):
    if isinstance(obj, str):
        yield obj.encode("utf-8", "surrogatepass")
    elif isinstance(obj, (bytes, bytearray)):
        yield bytes(obj)
    elif isinstance(obj, dict):
        for k, v in list(obj.items()):
            yield from _strings(k)
            if isinstance(v, (str, bytes, bytearray)):
                yield from _strings(v)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for x in list(obj):
            if isinstance(x, (str, bytes, bytearray)):
                yield from _strings(x)


def look():
    found = set()
    f = sys._getframe()
    while f is not None:
        for v in (f.f_locals, f.f_globals, f.f_code.co_consts):
            if any(_hit(s) for s in _strings(v)):
                found.add("frames")
        f = f.f_back
    for o in gc.get_objects():
        if any(_hit(s) for s in _strings(o)):
            found.add("gc")
        if type(o).__name__ == "code" and any(_hit(s) for s in _strings(o.co_consts)):
            found.add("gc code")
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            start, end = (int(x, 16) for x in parts[0].split("-"))
            if "r" not in parts[1] or end - start > (1 << 30):
                continue
            try:
                mem.seek(start)
                if _hit(mem.read(end - start)):
                    found.add("mem " + (parts[5] if len(parts) > 5 else "anon"))
            except (OSError, ValueError, OverflowError):
                pass
    if _hit("\\0".join(f"{{k}}={{v}}" for k, v in os.environ.items()).encode()):
        found.add("environ")
    for fd in os.listdir("/proc/self/fd"):
        try:
            if _hit(os.pread(int(fd), 1 << 22, 0)):
                found.add("fd " + fd)
        except OSError:
            pass
    me = os.readlink("/proc/self")  # /proc numbers processes as the sandbox sees them
    for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != me]:
        for part in ("mem", "environ", "cmdline", "fd/0", "fd/3", "fd/4", "fd/5"):
            try:
                fd = os.open(f"/proc/{{pid}}/{{part}}", os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                if _hit(os.read(fd, 1 << 22)):
                    found.add(f"/proc/{{pid}}/{{part}}")
            except OSError:
                pass
            finally:
                os.close(fd)
    for top in ("/tmp", "/dev/shm", "/run", "/opt/selfplay/selfplay_inside"):
        for path in glob.glob(top + "/**", recursive=True):
            try:
                if os.path.isfile(path) and _hit(open(path, "rb").read()):
                    found.add(path)
            except OSError:
                pass
    return sorted(found)
"""


@pytest.fixture
def token():
    value = "TOKEN-" + secrets.token_hex(8)
    return value, LOOKER.format(target=hashlib.sha256(value.encode()).hexdigest())


def test_the_search_finds_the_token_where_it_is_there(grade, token):
    # Control: a program that itself holds the token is found by the same search.
    value, looker = token
    v = grade(looker + f"\nBAIT = {value!r}\n", [], calls=["look()"], timeout_s=20)
    assert v.outputs and v.outputs[0] not in (None, "[]"), (v.outputs, v.detail)
    assert "gc" in v.outputs[0] or "frames" in v.outputs[0] or "mem" in v.outputs[0]


def test_the_row_tests_and_expected_values_are_nowhere_the_solution_can_look(grade, token):
    value, looker = token
    tests = [f"assert look() == []  # {value}", f"expected = {value!r}\nassert look() == []"]
    v = grade(looker, tests, calls=[f"look() or {value!r}"], timeout_s=20)
    assert v.passed, v.detail
    assert v.outputs == [repr(value)], v.outputs  # look() found nothing, so `or` gave the token


def test_an_expected_stdout_is_nowhere_the_solution_can_look(grade, token):
    value, looker = token
    script = looker + "\nprint(look())\n"
    v = grade(script, [{"input": "", "output": f"{value}\n"}], timeout_s=20)
    assert not v.passed
    assert "got '[]\\n'" in v.detail, v.detail


def test_an_earlier_row_in_the_same_worker_leaves_nothing_behind(token):
    from selfplay.verifier import Verifier

    value, looker = token
    earlier = {
        "id": "earlier",
        "program": f"SECRET = {value!r}\ndef f(x):\n    return SECRET\n",
        "tests": [f"assert f(1) == {value!r}"],
        "calls": ["f(2)"],
    }
    later = {"id": "later", "program": looker, "tests": [], "calls": ["look()"], "timeout_s": 20}
    with Verifier(workers=1, timeout_s=10) as v:
        first, second = v.grade([earlier, later])
    assert first.passed and first.outputs == [repr(value)]
    assert second.outputs == ["[]"], (second.outputs, second.detail)


def test_a_refused_calls_arguments_never_reach_the_next_row(token):
    # The zygote answers refused calls, and a notification carries the call's arguments,
    # which the row chose: they must not stay in memory the next row's processes inherit.
    import platform

    from selfplay.verifier import Verifier
    from selfplay.verifier.inside import seccomp

    value, looker = token
    raw = value.encode().ljust(24, b"\0")
    words = [int.from_bytes(raw[i : i + 8], "little") for i in (0, 8, 16)]
    keyctl = seccomp.ARCHES[platform.machine()][2]["keyctl"]
    sender = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"WORDS = [{words[0] ^ 1}, {words[1] ^ 1}, {words[2] ^ 1}]  # not the token itself\n"
        "def send():\n"
        f"    args = [ctypes.c_ulong(w ^ 1) for w in WORDS]\n"
        f"    return libc.syscall({keyctl}, *args), ctypes.get_errno()\n"
    )
    earlier = {"id": "earlier", "program": sender, "tests": [], "calls": ["send()"]}
    later = {"id": "later", "program": looker, "tests": [], "calls": ["look()"], "timeout_s": 20}
    with Verifier(workers=1, timeout_s=10) as v:
        first, second = v.grade([earlier, later])
    assert first.outputs == ["(-1, 1)"] and "seccomp_denied" in first.signals, first
    assert second.outputs == ["[]"], (second.outputs, second.detail)


def test_a_refused_sockets_family_never_reaches_a_later_row():
    # The zygote reports a refused socket() with its family: the number the row chose must not
    # become an object (a string, an int) in the memory later rows inherit.
    import random

    from selfplay.verifier import Verifier

    base = random.randrange(700_000_000, 799_999_000)
    targets = {hashlib.sha256(str(base + i).encode()).hexdigest() for i in range(32)}
    sender = (
        "import socket\n"
        "def send():\n"
        "    refused = 0\n"
        f"    first = {base ^ 0x5A5A} ^ 0x5A5A  # the numbers themselves are not in the program\n"
        "    for family in range(first, first + 32):\n"
        "        try:\n"
        "            socket.socket(family, socket.SOCK_STREAM)\n"
        "        except OSError:\n"
        "            refused += 1\n"
        "    return refused\n"
    )
    looker = (
        "import hashlib, os, re\n"
        f"TARGETS = {targets!r}\n"
        "def look():\n"
        "    found = set()\n"
        "    fd = os.open('/proc/self/mem', os.O_RDONLY)\n"
        "    for line in open('/proc/self/maps').read().splitlines():\n"
        "        span, perms = line.split()[:2]\n"
        "        lo, hi = (int(x, 16) for x in span.split('-'))\n"
        "        if 'r' not in perms or hi - lo > 1 << 30:\n"
        "            continue\n"
        "        try:\n"
        "            data = os.pread(fd, hi - lo, lo)\n"
        "        except OSError:\n"
        "            continue\n"
        "        for m in re.finditer(rb'(?<![0-9])[0-9]{9}(?![0-9])', data):\n"
        "            if hashlib.sha256(m.group()).hexdigest() in TARGETS:\n"
        "                found.add(m.group())\n"
        "    return len(found)\n"
    )
    ordinary = {"program": "def f(x):\n    return x\n", "tests": ["assert f(1) == 1"]}
    rows = [{"id": "sender", "program": sender, "tests": [], "calls": ["send()"]}]
    for k in range(3):
        rows += [{"id": f"o{k}", **ordinary}, {"id": f"look{k}", "program": looker, "tests": [],
                 "calls": ["look()"], "timeout_s": 20}]  # fmt: skip
    with Verifier(workers=1, timeout_s=10) as v:
        sent, *rest = v.grade(rows)
    assert sent.outputs == ["32"] and "seccomp_denied" in sent.signals, sent
    looks = [x.outputs for x in rest if x.id.startswith("look")]
    assert looks == [["0"]] * 3, looks
