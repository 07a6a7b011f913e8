"""The `selfplay` command as a user runs it: a fresh interpreter per call, from the tests.

tests/conftest.py puts this folder on sys.path (with --import-mode=importlib test folders
are not on it). The folder holds helpers only: tests/ itself cannot go on sys.path, since its
subfolders (tests/selfplay, tests/task_bank, ...) would be found as namespace packages in
place of the real ones wherever the project is not on sys.path ahead of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping

# How `selfplay` is started unless a call has code to run first: the installed entry point
# is `pipelines.cli:main`, and `-m` runs the same function from this interpreter's packages.
_MODULE = [sys.executable, "-m", "pipelines.cli"]


def cli_command(*args: str) -> list[str]:
    """The argv of `selfplay ARGS...`, for tests that start it with Popen (to kill it)."""
    return [*_MODULE, *args]


def run_cli(
    *args: str,
    env: Mapping[str, str | None] | None = None,
    inherit_env: bool = True,
    stdin: str | None = None,
    timeout: float = 300,
    before: str = "",
) -> subprocess.CompletedProcess:
    """Run `selfplay ARGS...` to the end; returns its exit code and its stdout and stderr as
    text.

    env: variables set for this call over this process's environment (or over nothing, with
    inherit_env=False: the child sees exactly these); a value of None removes the variable.
    stdin: text fed to the command. timeout: seconds before the call fails the test with
    subprocess.TimeoutExpired (a hung command must not hang the suite). before: Python run
    in the child, with sys imported, before the command is imported (to hide a package from
    it, say); the command then sees argv[0] 'selfplay', as the installed script does.
    """
    child_env = dict(os.environ) if inherit_env else {}
    for name, value in (env or {}).items():
        if value is None:
            child_env.pop(name, None)
        else:
            child_env[name] = value
    if before:
        program = f"import sys\n{before}\nfrom pipelines.cli import main\nsys.argv[0] = 'selfplay'\nmain()"
        argv = [sys.executable, "-c", program, *args]
    else:
        argv = cli_command(*args)
    return subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env,
    )


def one_sentence_error(res: subprocess.CompletedProcess, *needles: str) -> None:
    """The command refused with exit code 2 and one line on stderr naming every needle."""
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert not any(p in res.stderr for p in ("?.", "..\n", "!.")), f"doubled: {res.stderr}"
    for needle in needles:
        assert needle in res.stderr, res.stderr
