"""The verifier: grade untrusted, model-written Python against its tests, in a sandbox.

`Verifier` grades on this machine; `RayVerifier` (`selfplay.verifier.cluster`) spreads the same
work over a Ray cluster, each of its actors owning a local `Verifier`, so what follows holds on
every node.

Everything in selfplay that runs model-written code goes through `Verifier.grade`: proposal
validation, solver grading, bank imports and the RL reward functions. An RL policy is an
optimiser against this code: whatever a solution process can reach, a policy will eventually
find. The design therefore keeps the answers out of reach, rather than guarding them.

How a row runs
--------------
Each worker is one bubblewrap sandbox whose first process is a long-lived *zygote*
interpreter. The zygote never reads a row: per row the host sends it the limits and two
descriptors (a memfd holding the row, an empty memfd for the verdict), which it passes on
unread. Before a row arrives (once the previous one is cleaned up) the zygote forks the row's
two processes into a new PID namespace and a new IPC namespace: the *test process*, the
namespace's first process, and beside it the *solution process*, the zygote's child rather
than the test process's. Each drops every capability and takes a session of its own; both
carry the seccomp filter the zygote installed on itself when it started (the zygote answers
the calls it refuses), and the solution process tells the test process its pid, then waits.
Neither has seen a row, and the solution process never shares a page the test process
wrote. The row's descriptors then go to the test process only. The solution process receives
the program text (and later, call by call, the arguments the tests pass) and runs the program
as the module `solution`; the tests run in the test process, against proxies of the program's
objects, from code the host compiled. When the test process is done the host gets its verdict;
the zygote then kills the test process (its PID namespace takes every process of the row with
it, and the IPC namespace dies with the last), reaps, puts back its own settings a row can
write through /proc (it is PID 1 of the /proc rows see), and mounts fresh tmpfs on the
sandbox's only writable places (/tmp, /dev/shm, /run/selfplay) for every row, touched or not
(over the old ones where the row left them empty: the covered ones are unmounted together
every 64 rows), and sets the worker's PID counter back, before it forks the next row's
processes.

What the solution process can reach
-----------------------------------
- Its own memory: a copy of the zygote (the interpreter and preloaded standard-library modules,
  the zygote's configuration, no row ever) plus the program text and what the tests hand the
  program's objects: the arguments of calls made so far, and the other operand where a test
  combines a program object with its own data (`candidate(x) - expected` hands `expected` to
  the object's `__sub__`). Not the tests' code, not an expected value the tests only compare
  with, not their expected stdout, not the row's calls, and not any earlier row: the zygote
  never held them, and the solution process was forked before its test process read the row
  (tested by scanning frames, gc, every readable mapping of /proc/self/mem, environment,
  descriptors and files for a planted token). What a row learns of its own tests reaches no
  later row: nothing it can write survives it (below), kernel settings are read-only, and the
  counters it can move and a later row could read are renewed, set back or still copies
  (`test_cross_row_channels.py`: identical responses relaying expected values score 0).
- Descriptors: stdin (an empty memfd, or the test's input), stdout and stderr (pipes the test
  process drains, bounded), and the call channel to the test process, on which anything other
  than the call protocol ends the row (`channel_forgery`). Never the verdict memfd, the row
  memfd or the host's channel.
- Other processes: the test process and the zygote are non-dumpable and the solution has no
  capabilities, so their memory, descriptors and environment are closed to it; ptrace and
  process_vm_readv are refused by seccomp as well. It can signal processes of its own row
  only: the test process is PID 1 of the row's namespace and ignores them, the zygote (its
  parent) is outside the namespace (`os.getppid()` is 0), and its process group is its own.
  While a row runs no other row's processes exist in its worker.
- Files: a read-only root with the interpreter, installed packages and system libraries; no
  home directories, no host /tmp, no project or working directory, no host environment
  (HF_TOKEN and the like). Writable: the row's own tmpfs (/tmp, /dev/shm, /run/selfplay,
  where the program's module file lives), new for every row (their inode counters start
  again). /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus, /proc/fs, /proc/mtrr and
  /proc/pressure are read-only to every process of the sandbox (rows run as uid 0 without
  capabilities, and the kernel lets the owner of many sysctls write them by mode alone:
  core_pattern, drop_caches, the network settings), so nothing under /proc but a row's own
  processes' entries is writable from a row (tested by walking /proc). Kernel-wide counters
  under /proc (`osutil.STILL_COUNTERS`: /proc/stat, vmstat, meminfo, loadavg, dentry-state,
  slab and interrupt counts...) are still copies taken when the worker started. The host's
  physical-memory tables (`osutil.HOST_TABLES`: /proc/kpageflags, kpagecount, kpagecgroup,
  one entry per page frame, the page cache's among them; mode 0400 was all that guarded them
  from a uid-0 row) read as empty files. A row's processes get the same PID numbers in the
  worker's namespace every row.
- IPC and kernel state: SysV shared memory, semaphores, message queues and POSIX message
  queues live in the row's own IPC namespace; kernel keyrings, new user namespaces, mounts,
  bpf, perf events, userfaultfd, io_uring, module loading and sockets other than Unix and IP
  are refused by the seccomp filter (`selfplay.verifier.inside.seccomp` lists every refused
  call and why), and so are IP sockets: there is no network to reach (loopback is down, no
  name service), but a failed send would move the worker's network counters. The zygote
  answers each refusal from memory its children do not inherit, so a refused call's arguments
  never reach a later row.
- Limits per row: wall-clock timeout enforced from outside (also for code stuck in C), address
  space (capped by the machine's memory and the caller's own cgroup), file size, CPU time,
  processes and threads (cgroup pids beneath the caller's cgroup where available), captured
  output size, and `result_items` (the size of one value returned to the tests).

What crosses back, and how comparisons work
-------------------------------------------
Values the program returns are rebuilt in the test process by the standard library, never by
running program code there: exact built-in types, and Counter, defaultdict, OrderedDict, deque,
namedtuples, enum members, Fraction, Decimal, bytearray, array, range, slices, dict views,
datetime values, numpy arrays and scalars, and standard-library functions and classes
(`inside/values.py`, `inside/decoder.py`, `inside/simple.py`). Anything else is a handle
(`inside/remote.py`): methods, attributes, indexing, iteration, `len`, `bool`, `str`,
formatting, copying and comparison with other handles ask the program; comparison with test
data never does (`==` is False, ordering fails), conversion to a number fails, and arithmetic
with test data must yield a program object that is then *marked* and cannot become a number
through `abs` or `-`. Arguments the program mutates in place are copied back into the tests'
objects after each call, an argument the program returns comes back as the tests' own object,
and globals the program changes during a call are updated in the tests' namespace, except the
names the tests bind themselves (read by the host from the tests' bytecode: assignments,
imports, definitions, `global` statements; and any name that no longer holds what the program
last sent): those stay the tests', the program's new value reaches only `solution.<name>`, and
the attempt is the signal `name_rebind`. Everything
the solution process sends, its manifest of globals included, is checked as untrusted: no
dunder name is taken (a forged `__builtins__` replaces nothing), builtins keep their meaning
(the program's `max` is `solution.max`), and a module name only ever stands for the real module
of the standard library or a few numerical packages. The test process imports a module on the
program's say-so (a module global, an exception's or enum's module, a reference to a class)
only where it has imported it already or every part of the name is public and none names a
module that acts when imported (`__main__`, test suites, conftest, `this`, GUI and installer
packages: `channel.importable`): `numpy.f2py.__main__` ran f2py on the test process's own
arguments, which evaluates expressions from a file the program wrote in /tmp. A handle always
comes with its class from the program; one without (the program's functions and classes) may
claim only `type` or a function type as its `__class__`, never a class `isinstance` would then
trust (`tests/selfplay/verifier/test_code_in_test_process.py`).

Reward-hacking signals
----------------------
Every verdict carries `signals`: what the row tried that no ordinary program does (frame walks,
gc scans, /proc memory, ctypes, refused system calls, signals to other processes, early exits,
a forged channel, program objects compared with test data, oversized values, globals named
like modules, patched builtins). A signal explains a verdict; it never changes one. One
signal is about the tests rather than the program: `degenerate_pass`, a row that passed while
every value a call of a program function returned was None, an empty container or string,
NaN or an empty array, its arguments left as they were (an empty array satisfies
`np.allclose(f(x), 3.14)`: true over zero elements). Calls that raised count in neither
direction, and a row whose tests never call the program gets no signal: tests that assert
nothing (a `def test_x():` never called) are admission's to turn away, where every
degenerate probe passes them. The verdict stands; the codegen reward reads the signal and scores
such a pass 0 unless the label says the task's reference itself returns such values
(`degenerate_ok`, which admission's degenerate-response probe sets: `selfplay.admission.
degenerate`, which also turns away codegen tasks whose tests such answers pass).

Not covered
-----------
- Kernel vulnerabilities in the calls the filter allows: the sandbox shares the host kernel.
- Side channels and CPU contention between concurrent rows, and covert channels from one row
  to a later one that need a sender in the earlier row: kernel-wide counters outside the
  still copies (inode numbers of pipes, sockets and memfds, which come from counters the
  whole kernel shares; dentries behind a row's reads, seen only in timing; mount IDs, and how many tmpfs are stacked on a writable place, in
  /proc/self/mountinfo: a row that leaves files sets one bit, a reset of the stack), timing,
  and numbers the zygote handled for earlier rows (exit statuses, counts) that may linger in
  its freed memory, which every row's processes inherit (nothing refers to them; what the
  zygote keeps about earlier rows is in memory the children do not inherit). What a sender
  can send is what its own process held: its program, the arguments it was called with, the
  operands the tests combined with its objects, and its results.
- The host's page cache. Every row reads through it, so which pages are cached is shared
  state, and a read that has to wait for the disk can be told from one that does not (by
  timing it, by `getrusage`'s major faults and block reads, by /proc/self/io). Two defences.
  The calls that ask which pages are cached or drop them (`mincore`, `cachestat`, reads with
  `RWF_NOWAIT`, `posix_fadvise`, `readahead`, `MADV_COLD`/`MADV_PAGEOUT`,
  `process_madvise`, Linux AIO) are refused by the seccomp filter
  (`tests/selfplay/verifier/test_page_cache.py`). And a row can read nothing cold: the
  sandbox holds only the interpreter, the standard library (less its own tests and GUI), the
  packages a program may import and the shared libraries they load (`readable.py`), and the
  verifier reads every page of it when it starts and every 30 s while it grades, so every
  read a row makes hits memory (`tests/selfplay/verifier/test_readable.py`: a row that reads
  all 9,400 files it can see reads 0 bytes from the disk, after the host had dropped them).
  What remains: a page the kernel drops under memory pressure from outside the sandbox is
  loaded again by the next read, which a row can see but not cause (a row's own pressure
  reclaims only pages its cgroup loaded).
- Warnings the program raises during a call (under an "always" filter, as inside
  `pytest.warns`) cross as data, at most 32 a call: a warning class and its message, warned
  again in the test process; a category of the program's own arrives as its nearest
  built-in warning class.
- Tests run as a script would: their module is `__main__` (so `if __name__ == "__main__":
  unittest.main()` runs their TestCase classes, with an argv of its own), and a SystemExit
  they raise with a success code (unittest's `False`) passes the test; one the program
  raised never does.
- Tests are trusted not to attack the verdict: they run in the test process (unprivileged,
  filtered), so a test that deliberately passes itself passes. A test that makes a refused
  system call gets EPERM.
- Tests are as strong as they are: admission turns away codegen tasks whose tests a
  degenerate answer passes and the reward zeroes such passes (above), but tests that a
  plausible wrong program passes are outside both. A label that never went through admission
  and whose every tested answer is empty scores its correct, all-empty answers 0: tests that
  cannot tell work from none get no reward rather than a free one.
- Where bubblewrap or user namespaces are unavailable, or a worker starts without any of its
  isolation properties (`sandbox.REQUIRED`), the verifier refuses (`IsolationUnavailable`);
  the probe tries a failure three times before it reports one, and a worker replaced mid-run
  is held to the same facts. Only `isolation="none"` (explicit) runs rows on rlimits, process
  groups, a scratch directory per row and a zygote that kills whatever a row left (it
  inherits orphans as subreaper); rows then share IPC, the network and the host's file
  system, and every verdict, attempt and dataset card says `isolation: none`.
- Without a writable cgroup hierarchy a fork bomb is bounded only by RLIMIT_NPROC (which
  does not apply to uid 0) and the row's time limit.
- Only data, the program's own objects and standard-library functions cross (paths,
  SimpleNamespace, ChainMap, numpy arrays of numbers or strings and matrices,
  `partial` of a crossing function, `itemgetter`/`attrgetter` included; from the program a
  `partial` only of its own function, an `attrgetter` of public names only): a test cannot
  pass its own function (a lambda, say) to the program; an iterator the tests pass (a
  generator, `map`) is consumed in the test process first, up to 100,000 items, and arrives as
  an iterator of those items (its side effects happen before the call); a handle is never
  equal to test data even if its class would say so (subclasses of list or dict included),
  and mirrored enum and namedtuple classes have the program's names, members, fields and
  defaults (their methods are asked of the program), not its other class attributes or
  custom ordering. A masked array of the program's stays a handle (numpy.testing ignores
  masked entries, so as data it would pass against anything). pandas Series, DataFrames and indexes of plain data (numeric,
  boolean, date, string or atom-object columns, a plain or range index, atom labels) cross
  as data both ways, rebuilt by pandas' constructors from their parts (`inside/frames.py`);
  others (categorical or nullable dtypes, a MultiIndex, objects in a column, `attrs`) stay
  handles, which `assert_frame_equal` refuses; a frame the tests pass arrives as a copy, so
  the program's in-place changes to it do not reach the tests; and `dataclasses.fields`/`replace` refuse a program
  dataclass (they read `__dataclass_fields__` objects that live in the program).
- State the tests set reaches the program before each call where it changed
  (`inside/ambient.py`): environment variables, the working directory, the decimal context,
  and a seed the tests gave `random` or numpy's global generator, while nothing was drawn
  from it since (a generator drawn from could be run backwards to what the tests drew).
- Data crosses as a copy: a returned list is the tests' own, so a test that mutates what the
  program returned and expects the program to see it (an internal list leaked by a getter)
  sees the copy; changes the tests make to the program's globals stay in the tests.
- Generators are consumed in growing batches (1, 2, 4, ... up to 1024 items per round trip),
  so a generator with side effects visible to the tests may run a few items ahead.
- `type(obj)` of a program object in a test is the proxy's class, named after the program's
  class and holding exactly the protocol methods the object has (so `callable`, `iter`, `in`
  and `isinstance` with the standard ABCs answer as for the object; Sequence, Mapping and
  Set by the program's registration); `obj.__class__` is that class, which equals the
  program class's handle and asks it for what it lacks; `inspect.signature`, `dataclasses.asdict` and subclassing a program
  class in a test do not; `contextlib.redirect_stdout` and mocks of builtins in the tests do
  not reach the program; a call costs a round trip between two processes (about 0.1 ms).
- A program imports only the standard library and the configured packages (numpy, pandas,
  pytest by default; `verifier.packages`, $SELFPLAY_PACKAGES): a correct program that needs
  another package fails with `ModuleNotFoundError` until it is named.
- The paths of the directories bound into the sandbox (interpreter, packages) are visible in
  /proc/self/mountinfo; the test process's memory size is visible in /proc.
"""

from selfplay.verifier.cluster import RayVerifier
from selfplay.verifier.connect import RayUnavailable
from selfplay.verifier.inside.signals import NAMES as SIGNALS
from selfplay.verifier.records import InvalidRow, IOTest, Row, Verdict, parse_row
from selfplay.verifier.sandbox import IsolationUnavailable
from selfplay.verifier.verifier import Limits, Verifier

__all__ = [
    "IOTest",
    "InvalidRow",
    "IsolationUnavailable",
    "Limits",
    "RayUnavailable",
    "RayVerifier",
    "Row",
    "SIGNALS",
    "Verdict",
    "Verifier",
    "parse_row",
]
