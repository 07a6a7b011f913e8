"""What untrusted code can reach: one test per isolation property."""

import socket
import threading
import uuid
from pathlib import Path

import pytest

from selfplay.verifier import IsolationUnavailable, Verifier
from selfplay.verifier.bwrap import root_mounts


def test_sandbox_reports_full_isolation_on_this_machine(verifier_5s_512mb):
    verifier_5s_512mb.start()
    facts = verifier_5s_512mb.isolation
    assert facts["sandbox"] and facts["pid_namespace"] and facts["private_scratch"]
    assert facts["privileges_dropped"] and facts["network"] is False
    assert facts["kernel_settings_read_only"]


def test_no_connection_to_a_server_on_host_loopback(grade):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted = []
    t = threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True)
    t.start()
    port = server.getsockname()[1]
    program = (
        "import socket\n"
        "def probe(port):\n"
        "    try:\n"
        "        socket.create_connection(('127.0.0.1', port), timeout=1).close()\n"
        "        return 'connected'\n"
        "    except OSError as e:\n"
        "        return 'blocked'\n"
    )
    v = grade(program, [f"assert probe({port}) == 'blocked'"])
    server.close()
    assert v.passed, v.detail
    assert accepted == []


def test_no_dns(grade):
    program = (
        "import socket\n"
        "def resolve(name):\n"
        "    try:\n"
        "        return socket.getaddrinfo(name, 80)[0][4][0]\n"
        "    except OSError:\n"
        "        return None\n"
    )
    v = grade(
        program, ["assert resolve('pypi.org') is None", "assert resolve('localhost') is None"]
    )
    assert v.passed, v.detail


def test_scratch_directory_is_fresh_per_row_and_nothing_else_is_writable(verifier_5s_512mb):
    writer = (
        "import os\n"
        "open('left-behind', 'w').write('x')\n"
        "open('/tmp/also-left', 'w').write('x')\n"
        "open('/dev/shm/shm-left', 'w').write('x')\n"
        "def try_write(path):\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        return True\n"
        "    except OSError:\n"
        "        return False\n"
    )
    tests = ["assert os.getcwd() == '/tmp'"] + [
        f"assert not try_write({p!r})" for p in ("/usr/evil", "/evil", "/opt/evil", "/dev/evil")
    ]
    reader = (
        "import os\n"
        "def leftovers():\n"
        "    return [p for p in ('left-behind', '/tmp/also-left', '/dev/shm/shm-left')\n"
        "            if os.path.exists(p)]\n"
    )
    verdicts = verifier_5s_512mb.grade(
        [{"id": "w", "program": writer, "tests": tests}]
        + [
            {"id": f"r{i}", "program": reader, "tests": ["assert leftovers() == []"]}
            for i in range(4)
        ]
    )
    assert all(v.passed for v in verdicts), [v.detail for v in verdicts]


def test_host_secrets_are_invisible(grade, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("token")
    paths = [
        str(secret),
        # The working directory's files (the directory itself shows where a virtual
        # environment lives below it: its path down to the environment is bound)
        str(Path.cwd() / "pyproject.toml"),
        str(Path.cwd() / "README.md"),
        str(Path(__file__).resolve()),
        "/etc/shadow",
        "/root/.bashrc",
    ]
    program = (
        "import os\n"
        "def visible(paths):\n"
        "    return [p for p in paths if os.path.exists(p)]\n"
        "def home_listing(home):\n"
        "    return sorted(os.listdir(home)) if os.path.isdir(home) else []\n"
    )
    v = grade(program, [], calls=[f"visible({paths!r})", f"home_listing({str(Path.home())!r})"])
    assert v.outputs[0] == "[]"
    # The home directory shows at most the paths down to the Python installation and the
    # virtual environment, where they live there (both are bound read-only).
    home = Path.home().resolve()
    roots = [Path(r) for r, inside in root_mounts() if r == inside]
    allowed = sorted({r.relative_to(home).parts[0] for r in roots if r.is_relative_to(home)})
    assert v.outputs[1] == repr(allowed)


def test_environment_variables_are_not_inherited(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    program = "import os\ndef env():\n    return dict(os.environ)\n"
    with Verifier(workers=1) as v:
        verdict = v.grade([{"id": "e", "program": program, "tests": [], "calls": ["env()"]}])[0]
    assert "hf_secret_value" not in verdict.outputs[0]
    assert "HF_TOKEN" not in verdict.outputs[0]


def test_standard_library_and_installed_packages_import(grade):
    v = grade("import json, collections, numpy\n", ["assert numpy.arange(3).sum() == 3"])
    assert v.passed, v.detail


def test_refuses_without_bubblewrap_and_runs_unsandboxed_only_when_asked(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    monkeypatch.delenv("SELFPLAY_ISOLATION", raising=False)
    with pytest.raises(IsolationUnavailable, match="bubblewrap.*not installed"):
        with Verifier(workers=1, warn=lambda _: None) as v:
            v.grade([{"id": "d", "program": "x = 1\n", "tests": []}])
    warnings = []
    with Verifier(workers=1, isolation="none", warn=warnings.append) as v:
        verdict = v.grade([{"id": "d", "program": "x = 1\n", "tests": ["assert x == 1"]}])[0]
    assert verdict.passed and verdict.isolation == "none"
    assert any("WARNING" in w and "WITHOUT a sandbox" in w for w in warnings)


def test_processes_that_call_setsid_die_with_their_row(grade, processes_with):
    marker = f"selfplay-orphan-{uuid.uuid4().hex}"
    program = (
        "import subprocess, sys\n"
        "def spawn():\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}],\n"
        "                     start_new_session=True)\n"
        "    return True\n"
    )
    v = grade(program, ["assert spawn()"])
    assert v.passed, v.detail
    assert processes_with(marker) == []


def test_nothing_of_a_row_runs_when_the_next_row_in_its_worker_starts():
    # The verdict is sent before the cleanup; the next row must still find nothing of it.
    marker = f"selfplay-straggler-{uuid.uuid4().hex}"
    leave = (
        "import subprocess, sys\n"
        "def spawn():\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}],\n"
        "                     start_new_session=True)\n"
        "    return True\n"
    )
    look = (
        "import os\n"
        "def left():\n"
        "    found = []\n"
        "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "        try:\n"
        "            found += [pid] if MARK in open(f'/proc/{pid}/cmdline').read() else []\n"
        "        except OSError:\n"
        "            pass\n"
        "    return found\n"
    ).replace("MARK", repr(marker))
    with Verifier(workers=1, timeout_s=5.0) as v:
        first, second = v.grade(
            [
                {"id": "a", "program": leave, "tests": ["assert spawn()"]},
                {"id": "b", "program": look, "tests": ["assert left() == []"]},
            ]
        )
    assert first.passed, first.detail
    assert second.passed, second.detail


# What a row may write under /proc: its own processes' entries, nothing kernel-wide and
# nothing of the worker's network namespace.
_WRITABLE_UNDER_PROC = (
    "import os\n"
    "def writable():\n"
    "    out = []\n"
    "    for root, dirs, files in os.walk('/proc'):\n"
    "        top = root.split('/')[2:3]\n"
    "        if top and (top[0].isdigit() or top[0] in ('self', 'thread-self')):\n"
    "            dirs[:] = []\n"
    "            continue\n"
    "        for name in files + dirs:\n"
    "            path = os.path.join(root, name)\n"
    "            if not name.isdigit() and os.access(path, os.W_OK):\n"
    "                out.append(path)\n"
    "    return out\n"
)


def test_nothing_kernel_wide_under_proc_is_writable_from_a_row(grade):
    v = grade(_WRITABLE_UNDER_PROC, [], calls=["writable()"])
    assert v.outputs == ["[]"], v.outputs


def test_kernel_settings_cannot_be_written_from_a_row(grade):
    program = (
        "def write(path, value):\n"
        "    try:\n"
        "        with open(path, 'w') as f:\n"
        "            f.write(value)\n"
        "        return 'written'\n"
        "    except OSError as e:\n"
        "        return e.errno\n"
    )
    import errno

    paths = {
        "/proc/sys/kernel/core_pattern": "|/bin/true",
        "/proc/sys/vm/drop_caches": "1",
        "/proc/sys/fs/file-max": "9223372036854775807",
        "/proc/sys/net/core/somaxconn": "1234",
        "/proc/sysrq-trigger": "h",
    }
    calls = [f"write({p!r}, {val!r})" for p, val in paths.items()]
    v = grade(program, [], calls=calls)
    assert v.outputs[:4] == [str(errno.EROFS)] * 4, v.outputs
    # /proc/sysrq-trigger is there only where the kernel was built with it
    assert v.outputs[4] in (str(errno.EROFS), str(errno.ENOENT)), v.outputs


def test_a_network_setting_written_by_one_row_is_not_read_by_the_next(verifier_5s_512mb):
    """Read-only /proc/sys: the worker's network namespace keeps its settings, so a value
    one row chose cannot reach the next."""
    writer = (
        "def write():\n"
        "    try:\n"
        "        open('/proc/sys/net/core/somaxconn', 'w').write('1234')\n"
        "    except OSError:\n"
        "        pass\n"
    )
    reader = "def read():\n    return open('/proc/sys/net/core/somaxconn').read().strip()\n"
    rows = []
    for i in range(4):
        rows.append({"id": f"w{i}", "program": writer, "tests": [], "calls": ["write()"]})
        rows.append({"id": f"r{i}", "program": reader, "tests": [], "calls": ["read()"]})
    verdicts = verifier_5s_512mb.grade(rows)
    assert all(v.outputs[0] != "'1234'" for v in verdicts if v.id.startswith("r"))
