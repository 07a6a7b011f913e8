"""Nothing survives a row: files, IPC objects, keyrings and the memory they hold.

Each test runs a writer row and then a reader row in the same worker (a one-worker pool), so
the reader would see whatever the writer could leave behind.
"""

import os

import pytest

from selfplay.verifier import Verifier, cgroups

LIBC = "import ctypes, ctypes.util, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"


@pytest.fixture(scope="module")
def one_worker():
    with Verifier(workers=1, timeout_s=10, memory_mb=512) as v:
        yield v


def two_rows(verifier, writer: str, reader: str):
    rows = [
        {"id": "writer", "program": writer, "tests": ["pass"]},  # a test, so that it runs
        {"id": "reader", "program": reader, "tests": [], "calls": ["left()"]},
    ]
    first, second = verifier.grade(rows)
    assert first.status == "passed", first.detail
    return second


def around(verifier, writer: str, reader: str, call: str):
    """The reader's verdicts just before and just after the writer's row, in one worker."""
    probe = {"program": reader, "tests": [], "calls": [call]}
    first, wrote, second = verifier.grade(
        [
            {"id": "a", **probe},
            {"id": "w", "program": writer, "tests": ["pass"]},
            {"id": "b", **probe},
        ]
    )
    assert wrote.passed, wrote.detail
    return first, second


def test_sysv_shared_memory_semaphores_and_queues_die_with_the_row(one_worker):
    writer = LIBC + (
        "shm = libc.shmget(0x5E1F, 4096, 0o1600)\n"  # IPC_CREAT | 0600
        "libc.shmat.restype = ctypes.c_void_p\n"
        "addr = libc.shmat(shm, None, 0)\n"
        "ctypes.memmove(addr, b'left by an earlier row', 22)\n"
        "assert libc.semget(0x5E1F, 1, 0o1600) >= 0\n"
        "assert libc.msgget(0x5E1F, 0o1600) >= 0\n"
        "assert shm >= 0\n"
    )
    reader = LIBC + (
        "def left():\n"
        "    return [libc.shmget(0x5E1F, 0, 0), libc.semget(0x5E1F, 0, 0), libc.msgget(0x5E1F, 0)]\n"
    )
    v = two_rows(one_worker, writer, reader)
    assert v.outputs == ["[-1, -1, -1]"], (v.outputs, v.detail)


def test_posix_message_queues_die_with_the_row(one_worker):
    mq = LIBC + (
        "rt = ctypes.CDLL(ctypes.util.find_library('rt') or 'librt.so.1', use_errno=True)\n"
        "rt.mq_open.restype = ctypes.c_int\n"
    )
    writer = (
        mq
        + "q = rt.mq_open(b'/selfplay-left', os.O_CREAT | os.O_RDWR, 0o600, None)\nassert q >= 0, ctypes.get_errno()\n"
    )
    reader = mq + "def left():\n    return rt.mq_open(b'/selfplay-left', os.O_RDWR)\n"
    v = two_rows(one_worker, writer, reader)
    assert v.outputs == ["-1"], (v.outputs, v.detail)


def test_files_in_every_writable_place_die_with_the_row(one_worker):
    places = ("/tmp/left", "/dev/shm/left", "/run/selfplay/left", "left-in-cwd")
    writer = "".join(f"open({p!r}, 'w').write('x')\n" for p in places)
    reader = f"import os\ndef left():\n    return [p for p in {places!r} if os.path.exists(p)]\n"
    v = two_rows(one_worker, writer, reader)
    assert v.outputs == ["[]"], (v.outputs, v.detail)


def test_a_directory_tree_thousands_of_levels_deep_leaves_the_worker_healthy(one_worker):
    writer = (
        "import os\nos.chdir('/tmp')\n"
        "for _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n"
        "open('deep', 'w').write('x')\n"
    )
    reader = "import os\ndef left():\n    return os.listdir('/tmp')\n"
    v = two_rows(one_worker, writer, reader)
    assert v.outputs == ["[]"], (v.outputs, v.detail)


def test_memory_a_row_parks_in_shared_memory_is_released_with_it(one_worker):
    # A row that fills SysV shared memory and leaves it attached to nothing: before per-row
    # IPC namespaces the pages stayed charged to the worker until it was OOM-killed.
    filler = LIBC + (
        "size = 300 << 20\n"
        "shm = libc.shmget(0, size, 0o1600)\n"  # IPC_PRIVATE
        "libc.shmat.restype = ctypes.c_void_p\n"
        "addr = libc.shmat(shm, None, 0)\n"
        "assert shm >= 0 and addr not in (None, -1 & (2**64 - 1))\n"
        "ctypes.memset(addr, 1, size)\n"
        "libc.shmdt(ctypes.c_void_p(addr))\n"
    )
    legit = {"id": "ok", "program": "def f(x):\n    return x + 1\n", "tests": ["assert f(1) == 2"]}
    for i in range(6):
        fill, ok = one_worker.grade(
            [{"id": f"fill{i}", "program": filler, "tests": ["pass"]}, legit]
        )
        assert fill.status == "passed", fill.detail
        assert ok.passed, (i, ok.detail)


def test_no_keyring_access(grade):
    program = LIBC + (
        "def add_key():\n"
        "    libc.syscall.restype = ctypes.c_long\n"
        "    rc = libc.syscall(SYS_ADD_KEY, b'user', b'selfplay', b'left', 4, -3)\n"
        "    return rc, ctypes.get_errno()\n"
    )
    import platform

    from selfplay.verifier.inside import seccomp

    nr = seccomp.ARCHES[platform.machine()][2]["add_key"]
    v = grade(program.replace("SYS_ADD_KEY", str(nr)), [], calls=["add_key()"])
    assert v.outputs == ["(-1, 1)"], (v.outputs, v.detail)  # EPERM
    assert "seccomp_denied" in v.signals


def test_a_row_cannot_ask_for_more_memory_than_the_machine_has(grade):
    program = "import resource\ndef cap():\n    return resource.getrlimit(resource.RLIMIT_AS)[0]\n"
    v = grade(program, [], calls=["cap()"], memory_mb=65536)
    limit = int(v.outputs[0])
    assert 0 < limit <= cgroups.memory_ceiling_bytes(), limit
    assert limit < 65536 << 20 or cgroups.memory_ceiling_bytes() >= 65536 << 20


def test_worker_cgroups_live_beneath_the_callers_own(one_worker):
    one_worker.start()
    groups = [d for g in one_worker._groups for d in g.dirs]
    if not groups:  # no writable hierarchy: the verifier must have said so
        assert one_worker.isolation["cgroups"] is None
        return
    for d in groups:
        parent = os.path.dirname(d)
        own = [cgroups.v1_base(c) for c in ("pids", "memory")] + [cgroups.v2_base()]
        assert parent in [o for o in own if o], (d, own)


@pytest.mark.parametrize("preload", [(), ("random",)])
def test_every_row_and_its_tests_draw_fresh_random_numbers(preload):
    # Neither the program nor the tests can predict the other rows' random numbers: the
    # generator is seeded in each process of each row, imported there or preloaded.
    program = "import random\ndef draw():\n    return random.getrandbits(64)\n"
    tests = "import random\nassert draw() != random.getrandbits(64)\n"
    rows = [
        {"id": str(i), "program": program, "tests": [tests], "calls": ["draw()"]} for i in range(6)
    ]
    with Verifier(workers=1, timeout_s=10, preload=preload) as v:
        verdicts = v.grade(rows)
    assert all(x.passed for x in verdicts), [x.detail for x in verdicts]
    drawn = [x.outputs[0] for x in verdicts]
    assert len(set(drawn)) == len(drawn), drawn


PLACES = ("/tmp", "/dev/shm", "/run/selfplay")


@pytest.mark.parametrize("by", ["program", "tests"])
def test_modes_times_and_attributes_of_the_writable_places_start_again(one_worker, by):
    # chmod would stop every later row from writing its program file; xattrs and times
    # would carry data from row to row.
    mark = (
        "import os\n"
        f"for d in {PLACES!r}:\n"
        "    os.setxattr(d, 'user.left', b'from an earlier row')\n"
        "    os.utime(d, ns=(123456789, 123456789))\n"
        "    os.chmod(d, 0o500)\n"
    )
    program = "def f(x):\n    return x + 1\n" + (mark if by == "program" else "")
    tests = [(mark if by == "tests" else "") + "assert f(1) == 2"]
    reader = (
        "import os\n"
        "def left():\n"
        f"    return [(oct(os.stat(d).st_mode), os.listxattr(d), os.stat(d).st_mtime_ns == 123456789)\n"
        f"            for d in {PLACES!r}]\n"
    )
    before = one_worker.grade([{"id": "r", "program": reader, "tests": [], "calls": ["left()"]}])[0]
    marked = one_worker.grade([{"id": "m", "program": program, "tests": tests}])[0]
    assert marked.passed, marked.detail
    after, legit = one_worker.grade(
        [
            {"id": "r", "program": reader, "tests": [], "calls": ["left()"]},
            {"id": "ok", "program": "def f(x):\n    return x + 1\n", "tests": ["assert f(1) == 2"]},
        ]
    )
    assert after.outputs == before.outputs, (before.outputs, after.outputs)
    assert "False)" in after.outputs[0] and "True" not in after.outputs[0]
    assert legit.passed, legit.detail


def test_the_number_of_files_a_row_made_does_not_reach_the_next(one_worker):
    # Inode numbers count up per file system: without fresh ones, a row that made k files
    # (and removed them itself) would tell the next row k.
    probe = "import os\ndef ino():\n    return [os.stat(open(d + '/p', 'w').name).st_ino for d in DIRS]\n"
    probe = probe.replace("DIRS", repr(PLACES))
    maker = (
        "import os\n"
        f"for d in {PLACES!r}:\n"
        "    for i in range(37):\n        open(f'{d}/f{i}', 'w')\n        os.unlink(f'{d}/f{i}')\n"
    )
    first, second = around(one_worker, maker, probe, "ino()")
    assert first.outputs == second.outputs, (first.outputs, second.outputs)


def grew_mb(verifier, field: str, rows: list[dict]) -> tuple[int, list]:
    """How many MB the machine's /proc/meminfo `field` grew over `rows` (graded in one
    worker between two readings), and their verdicts."""
    reader = (
        "def read():\n"
        "    for line in open('/proc/meminfo'):\n"
        f"        if line.startswith('{field}:'):\n"
        "            return int(line.split()[1]) >> 10\n"
    )
    probe = {"program": reader, "tests": [], "calls": ["read()"]}
    before, *graded, after = verifier.grade([{"id": "a", **probe}, *rows, {"id": "b", **probe}])
    return int(after.outputs[0]) - int(before.outputs[0]), graded


def test_what_a_row_wrote_to_its_own_program_file_is_released_with_it(one_worker):
    # The program's directory is not unmounted after each row (a new tmpfs covers the old
    # one): the program's own files are removed first, or their memory would stay taken.
    filler = "with open(__file__, 'ab') as f:\n    f.write(b'#' * (30 << 20))\n"
    fillers = [{"id": f"f{i}", "program": filler, "tests": ["pass"]} for i in range(12)]
    grew, filled = grew_mb(one_worker, "Shmem", fillers)
    assert all(f.passed for f in filled), [f.detail for f in filled]
    assert grew < 150, grew


def test_extended_attributes_on_the_program_directory_are_released_with_the_row(one_worker):
    # Kernel memory that the tmpfs's size does not bound: under a tmpfs mounted over the old
    # program directory it would stay taken, and later rows would run out of memory.
    parker = (
        "import os\n"
        "def park():\n"
        "    blob = b'x' * 65536\n"
        "    for i in range(2000):\n"
        "        os.setxattr('/run/selfplay', 'user.k%d' % i, blob)\n"
        "    return i + 1\n"
    )
    parks = [{"id": f"p{i}", "program": parker, "tests": [], "calls": ["park()"]} for i in range(3)]
    grew, parked = grew_mb(one_worker, "SUnreclaim", parks)
    assert [p.outputs for p in parked] == [["2000"]] * 3, [p.detail for p in parked]
    assert grew < 150, grew


def test_program_directories_do_not_pile_up(one_worker):
    from selfplay.verifier.inside.scratch import PROGRAM_STACK

    reader = "def mounts():\n    return sum(' /run/selfplay ' in l for l in open('/proc/self/mountinfo'))\n"
    rows = [
        {"id": str(i), "program": reader, "tests": [], "calls": ["mounts()"]}
        for i in range(2 * PROGRAM_STACK + 10)
    ]
    counts = [int(v.outputs[0]) for v in one_worker.grade(rows)]
    assert 1 <= min(counts) and max(counts) <= PROGRAM_STACK + 1, counts


@pytest.mark.parametrize("place", ["/tmp", "/run/selfplay"])
def test_a_row_that_leaves_a_hundred_thousand_directories_costs_the_next_row_nothing(
    one_worker, place
):
    maker = f"import os\nfor i in range(100_000):\n    os.mkdir('{place}/%x' % i)\n"
    legit = {"id": "ok", "program": "def f(x):\n    return x + 1\n", "tests": ["assert f(1) == 2"]}
    made, ok = one_worker.grade([{"id": "m", "program": maker, "tests": ["pass"]}, legit])
    assert made.passed, made.detail
    assert ok.passed, ok.detail


def test_the_zygotes_own_settings_a_row_can_write_are_put_back(one_worker):
    # The zygote is PID 1 of the /proc the rows see: its OOM score, core-dump filter and
    # scheduling group are writable by a row (same uid), and would persist.
    knobs = "{n: open(f'/proc/1/{n}').read() for n in ('oom_score_adj', 'coredump_filter')}"
    reader = f"def left():\n    return {knobs}\n"
    writer = (
        "import os\n"
        "for name, value in (('oom_score_adj', '777'), ('coredump_filter', '1a5'), ('autogroup', '19')):\n"
        "    try:\n        open(f'/proc/1/{name}', 'w').write(value)\n"
        "    except OSError:\n        pass\n"
    )
    first, second = around(one_worker, writer, reader, "left()")
    assert first.outputs == second.outputs, (first.outputs, second.outputs)
    assert "777" not in second.outputs[0]


def test_nothing_of_the_previous_row_is_reachable_from_the_zygotes_frames(one_worker):
    # The solution process is forked from the zygote: walking up its frames reaches the
    # zygote's loop. Neither the previous row's processes nor what they cost are there.
    sender = (
        "import os, threading, time\n"
        "def f(x):\n"
        "    threading.Thread(target=lambda: (time.sleep(0.05), os._exit(42))).start()\n"
        "    return x + 1\n"
    )
    receiver = (
        "import gc, sys\n"
        "def left():\n"
        "    found = []\n"
        "    f = sys._getframe()\n"
        "    while f is not None:\n"
        "        found += [type(v).__name__ for v in f.f_locals.values() if hasattr(v, 's_status')]\n"
        "        f = f.f_back\n"
        "    found += [type(o).__name__ for o in gc.get_objects() if hasattr(o, 's_status')]\n"
        "    return found\n"
    )
    rows = [
        {"id": "s", "program": sender, "tests": ["assert f(1) == 2"]},
        {"id": "r", "program": receiver, "tests": [], "calls": ["left()"]},
    ]
    sent, received = one_worker.grade(rows)
    assert received.outputs == ["[]"], received.outputs
