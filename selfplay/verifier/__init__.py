"""The verifier: grade untrusted, model-written Python against its tests, in a sandbox.

Everything in selfplay that runs model-written code goes through `Verifier.grade`: proposal
validation, solver grading, bank imports and the RL reward functions.

How a row runs
--------------
Each worker is one bubblewrap sandbox whose first process is a long-lived *zygote*
interpreter (no bubblewrap reaper inside, so nothing in the sandbox but the zygote holds the
host's pipes, and the zygote keeps capabilities that rows lack, so they cannot open its /proc
entries). Per row the zygote forks a *test process* that is the first process of a new PID
namespace, drops every capability, makes itself non-dumpable, and forks a *solution process*
that executes the program under rlimits. The worker grades one row at a time and wipes its
only writable places, /tmp and /dev/shm (tmpfs), after every row. The tests run in the test process, which never executes the program:
the program's functions reach them as proxies whose calls go to the solution process and come
back as plain data (exact built-in types) or opaque handles.

Threat model: what is covered
-----------------------------
- Network: the sandbox has its own network namespace with loopback down; no DNS, no
  connection to 127.0.0.1 or anywhere else.
- Filesystem: the root is read-only; only the interpreter, installed packages and system
  libraries are visible (read-only). No home directories, no host /tmp, no project or working
  directory, no environment variables from the host (HF_TOKEN and the like). /tmp and /dev/shm
  are private to the worker and emptied after every row; a worker whose scratch cannot be
  emptied is replaced.
- Limits per row: wall-clock timeout enforced from outside (also for code stuck in C), address
  space (memory), file size, CPU time, processes and threads (cgroup pids where available),
  captured output size. When a verdict is returned the row's PID namespace is gone, so every
  process it started is gone too, including ones that called setsid.
- Reward hacking: early exit (sys.exit, os._exit, signals, atexit) only ends the solution
  process and fails the row; `__eq__` tricks and int/str/list subclasses cannot cross as data
  and a handle never equals test data; patched builtins or standard library stay in the
  solution process; forged pass markers on stdout/stderr or inherited descriptors reach
  nothing that decides the verdict; expected values live only in the test process's memory,
  which the solution cannot read (no capabilities, non-dumpable target) and are never on disk.
- Starving the worker: fork and thread bombs (pids cgroup, PID namespace teardown), memory
  bombs (RLIMIT_AS, memory cgroup with the solution as preferred OOM victim), output floods
  (bounded capture), deep recursion and crashes (the solution process dies alone).

Not covered
-----------
- Kernel vulnerabilities: the sandbox shares the host kernel (no seccomp filter, no VM).
- Side channels and CPU contention between concurrent rows.
- Where bubblewrap or user namespaces are unavailable the verifier warns loudly and degrades
  to rlimits, process groups and a temporary working directory (`require_isolation=True`
  refuses instead); processes that call setsid can then outlive their row.
- Without a writable cgroup hierarchy a fork bomb is bounded only by RLIMIT_NPROC (which
  does not apply to uid 0) and the row's time limit.
- Tests are trusted not to attack the verdict: they run in the test process (still inside the
  sandbox, without privileges), so a test that deliberately passes itself passes.
- Only plain data and the program's own objects cross between tests and program: a test that
  passes a lambda to the program fails with a TypeError naming the limitation, and a program
  object compared with test data is unequal even if its class would say otherwise.
"""

from selfplay.verifier.records import InvalidRow, IOTest, Row, Verdict, parse_row
from selfplay.verifier.sandbox import IsolationUnavailable
from selfplay.verifier.verifier import Limits, Verifier

__all__ = [
    "IOTest",
    "InvalidRow",
    "IsolationUnavailable",
    "Limits",
    "Row",
    "Verdict",
    "Verifier",
    "parse_row",
]
