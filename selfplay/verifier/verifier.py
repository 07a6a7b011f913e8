"""`Verifier`: a pool of long-lived sandboxed workers that grades rows in batches."""

from __future__ import annotations

import atexit
import importlib.util
import os
import queue
import re
import sys
import threading
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from selfplay.verifier import cgroups
from selfplay.verifier.bwrap import probe_bwrap, sandbox_readable
from selfplay.verifier.inside.rowprocs import ROLES, USAGE
from selfplay.verifier.inside.signals import valid
from selfplay.verifier.readable import DEFAULT_PACKAGES, Readable, default_packages
from selfplay.verifier.records import STATUSES, InvalidRow, IOTest, Row, Verdict, invalid, parse_row
from selfplay.verifier.sandbox import IsolationUnavailable, Worker, isolation_mode, refusal

# Headroom in each worker's memory cgroup for the zygote and the test process, which each
# also carry the row's address-space limit.
_CGROUP_OVERHEAD = 512 * 1024 * 1024


_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_live_verifiers() -> None:
    # Workers die with their parent anyway; this removes their cgroups too.
    for v in list(_LIVE):
        v.close()


@dataclass(slots=True)
class Limits:
    """Defaults for every row; a row may override `timeout_s`, `memory_mb` and
    `result_items`."""

    timeout_s: float = 10.0
    memory_mb: int = 1024
    file_mb: int = 64
    max_procs: int = 64
    max_output_bytes: int = 4 * 1024 * 1024
    result_items: int = 50_000_000


class Verifier:
    """Grade untrusted programs against their tests in sandboxed worker processes.

    Workers start on first use and are reused across `grade` calls until `close`. It is safe
    to call `grade` from several threads at once. Use as a context manager.
    """

    def __init__(
        self,
        workers: int | None = None,
        timeout_s: float = 10.0,
        memory_mb: int = 1024,
        *,
        file_mb: int = 64,
        max_procs: int = 64,
        max_output_bytes: int = 4 * 1024 * 1024,
        result_items: int = 50_000_000,
        isolation: str | None = None,
        preload: Iterable[str] = (),
        packages: Iterable[str] | None = None,
        warn=None,
    ):
        self.limits = Limits(
            timeout_s, memory_mb, file_mb, max_procs, max_output_bytes, result_items
        )
        # No row gets more memory than this machine, or the caller's own cgroup, has.
        self.memory_ceiling_mb = max(64, cgroups.memory_ceiling_bytes() // (1024 * 1024))
        self.n_workers = max(1, workers or os.cpu_count() or 1)
        self.mode = isolation_mode(isolation)
        self.preload = tuple(preload)
        # What a program may import beyond the standard library: in the sandbox, nothing else
        # of the host's files is there to read (`readable`).
        self.packages = default_packages() if packages is None else tuple(packages)
        self.readable: Readable | None = None
        self._warn = warn or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self._tasks: queue.Queue = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._workers: list[Worker] = []
        self._groups: list[cgroups.WorkerCgroup] = []
        self._start_lock = threading.Lock()
        self._closed = False
        self._siblings: dict[tuple[str, ...], Verifier] = {}
        self.isolation: dict = {}
        _LIVE.add(self)

    # -- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers now (otherwise the first `grade` does)."""
        with self._start_lock:
            if self._threads:
                return
            if self._closed:
                raise RuntimeError("this Verifier is closed")
            cgroups.sweep_stale()
            sandboxed = self.mode == "sandbox"
            if sandboxed:
                reason = probe_bwrap()
                if reason:
                    raise IsolationUnavailable(refusal(reason))
                self.readable = sandbox_readable(self.packages)
                # Every page a row can read is in memory before the first row runs.
                self.readable.warm()
                # The defaults need not all be installed (pytest is a test dependency).
                absent = [p for p in self.readable.missing if p not in DEFAULT_PACKAGES]
                if absent:
                    self._warn(f"selfplay: programs cannot import {', '.join(absent)}: "
                               "not installed here")  # fmt: skip
            else:
                self._warn(
                    "selfplay: WARNING: isolation 'none' was asked for: untrusted code runs "
                    "WITHOUT a sandbox (rlimits and a scratch directory only); every verdict "
                    "says isolation=none"
                )
            cgroup_note = ""
            for _ in range(self.n_workers):
                group, cgroup_note = cgroups.create(
                    self.limits.max_procs + 8,
                    2 * self._memory_mb(None) * 1024 * 1024 + _CGROUP_OVERHEAD,
                )
                if group is not None:
                    self._groups.append(group)
                scratch_mb = self.limits.file_mb + 16
                self._workers.append(
                    Worker(sandboxed, self.preload, group, scratch_mb, self.readable)
                )
            # Each worker is started by the thread that serves it: bubblewrap's
            # --die-with-parent follows the thread that spawned it, not the process.
            ready = []
            for w in self._workers:
                started = threading.Event()
                t = threading.Thread(target=self._serve, args=(w, started), daemon=True)
                t.start()
                self._threads.append(t)
                ready.append(started)
            for started in ready:
                started.wait()
            failed = [w.failure for w in self._workers if w.proc is None]
            if failed:
                self._shutdown_threads()
                self._stop_workers()
                if any(isinstance(f, IsolationUnavailable) for f in failed):
                    raise next(f for f in failed if isinstance(f, IsolationUnavailable))
                raise RuntimeError(f"the sandbox workers failed to start: {failed[0]}")
            facts = self._workers[0].facts
            self.isolation = dict(
                facts, mode=self.mode, cgroups=cgroup_note if self._groups else None
            )
            if not self._groups:
                self._warn(
                    f"selfplay: WARNING: no cgroups ({cgroup_note}); process and memory "
                    "limits rely on rlimits and the row time limit"
                )

    def with_preload(self, modules: Iterable[str]) -> Verifier:
        """A pool like this one (limits, isolation, workers, packages) whose zygotes have also
        imported `modules`; started on first use, closed with this one, its cost in `usage`.

        For batches of rows that all import a heavy module: a row that imports numpy pays
        for the import twice (its program's process and its test process), about 0.1 s where
        the rest of a small row takes 0.01. Not for rows in general: a preloaded module's
        state is the same in every row (numpy's global random generator, seeded once in the
        zygote), where each row's own import would differ, and a fork of a bigger zygote costs
        every row that never uses it."""
        extra = tuple(m for m in dict.fromkeys(modules) if m not in self.preload)
        if not extra:
            return self
        with self._start_lock:
            if self._closed:
                raise RuntimeError("this Verifier is closed")
            key = tuple(sorted(extra))
            if key not in self._siblings:
                lim = self.limits
                self._siblings[key] = Verifier(
                    self.n_workers, lim.timeout_s, lim.memory_mb, file_mb=lim.file_mb,
                    max_procs=lim.max_procs, max_output_bytes=lim.max_output_bytes,
                    result_items=lim.result_items, isolation=self.mode,
                    preload=self.preload + extra, packages=self.packages, warn=self._warn,
                )  # fmt: skip
            return self._siblings[key]

    def usage(self) -> dict[str, dict[str, float]]:
        """What the workers' processes have cost so far, summed over workers (and over the
        pools `with_preload` made): CPU seconds and page faults of the rows' test processes,
        their solution processes (with everything they reaped) and the zygotes themselves.
        This process's own work is not included."""
        totals = [0.0] * len(USAGE)
        for w in self._workers:
            totals = [t + u for t, u in zip(totals, w.usage, strict=True)]
        usage = {
            role: {"cpu_s": totals[2 * i], "faults": totals[2 * i + 1]}
            for i, role in enumerate(ROLES)
        }
        for sibling in list(self._siblings.values()):
            for role, cost in sibling.usage().items():
                for what, amount in cost.items():
                    usage[role][what] += amount
        return usage

    def close(self) -> None:
        with self._start_lock:
            self._closed = True
            self._shutdown_threads()
            self._stop_workers()
            siblings = list(self._siblings.values())
            self._siblings.clear()
        for sibling in siblings:
            sibling.close()

    def _shutdown_threads(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)
        for t in self._threads:
            t.join()
        self._threads.clear()

    def _stop_workers(self) -> None:
        for w in self._workers:
            w.stop()
        self._workers.clear()
        for g in self._groups:
            g.remove()
        self._groups.clear()

    # -- grading ------------------------------------------------------------------------
    def grade(self, rows: Iterable[dict | Row | Verdict]) -> list[Verdict]:
        """Grade rows; verdicts come back in input order. A `Verdict` item passes through.

        Up to 1,024 rows a worker are queued at once: with a small window, one row running
        into its time limit would hold back every row queued behind it while the other
        workers idled."""
        return list(self.grade_iter(rows, window=self.n_workers * 1024))

    def grade_iter(
        self, rows: Iterable[dict | Row], window: int | None = None
    ) -> Iterator[Verdict]:
        """Grade a stream of rows lazily, keeping at most `window` rows in flight (by default
        64 per worker: rows wait in order behind the oldest one still running, and a row that
        runs into its time limit should not leave the other workers idle)."""
        self.start()
        if self.readable is not None:
            self.readable.keep_warm()
        window = window or self.n_workers * 64
        done: queue.Queue = queue.Queue()
        results: dict[int, Verdict] = {}
        it = iter(rows)
        sent = next_out = 0
        exhausted = False
        while True:
            while not exhausted and sent - next_out < window:
                try:
                    item = next(it)
                except StopIteration:
                    exhausted = True
                    break
                verdict = self._submit(item, sent, done)
                if verdict is not None:
                    results[sent] = verdict
                sent += 1
            if next_out == sent and exhausted:
                return
            while next_out not in results:
                index, verdict = done.get()
                results[index] = verdict
            yield results.pop(next_out)
            next_out += 1

    def _submit(self, item, index: int, done: queue.Queue) -> Verdict | None:
        if isinstance(item, Verdict):  # decided by the caller (an unparsable line, say)
            return item
        try:
            row = item if isinstance(item, Row) else parse_row(item)
        except InvalidRow as e:
            row_id = item.get("id") if isinstance(item, dict) else None
            return invalid(row_id if isinstance(row_id, str) else f"#{index}", str(e))
        limits = self.limits
        request = {
            "program": row.program,
            "tests": [[t.input, t.output] if isinstance(t, IOTest) else t for t in row.tests],
            "calls": row.calls,
            "limits": {
                "timeout_s": row.timeout_s or limits.timeout_s,
                "memory_mb": self._memory_mb(row.memory_mb),
                "file_mb": limits.file_mb,
                "max_procs": limits.max_procs,
                "max_output_bytes": limits.max_output_bytes,
                "result_items": row.result_items or limits.result_items,
            },
        }
        self._tasks.put((index, row, request, done))
        return None

    def _memory_mb(self, requested: int | None) -> int:
        return min(requested or self.limits.memory_mb, self.memory_ceiling_mb)

    def _serve(self, worker: Worker, started: threading.Event) -> None:
        try:
            worker.start()
        except Exception as e:
            worker.proc, worker.failure = None, e
        finally:
            started.set()
        memory_now = self._memory_mb(None)
        while True:
            task = self._tasks.get()
            if task is None:
                return
            index, row, request, done = task
            try:
                want = request["limits"]["memory_mb"]
                if want != memory_now and worker.cgroup is not None:
                    cgroups.set_memory(worker.cgroup, 2 * want * 1024 * 1024 + _CGROUP_OVERHEAD)
                    memory_now = want
                verdict = _to_verdict(row, worker.grade(request), self.mode)
                if self.readable is not None and "No module named" in verdict.detail:
                    verdict.detail = _import_hint(verdict.detail, self.packages)
            except IsolationUnavailable as e:  # a replacement worker without the sandbox
                verdict = Verdict(
                    row.id, False, "error", 0, len(row.tests), 0.0, f"verifier error: {e}"
                )
                self._warn(f"selfplay: {e}")
            except Exception as e:  # never leave a caller waiting on a lost row
                verdict = Verdict(
                    row.id, False, "error", 0, len(row.tests), 0.0, f"verifier error: {e}"
                )
            done.put((index, verdict))


def _import_hint(detail: str, packages: tuple[str, ...]) -> str:
    """Say why a module installed here is missing in the sandbox, and how to add it."""
    m = re.search(r"No module named '([\w]+)", detail)
    if m is None or importlib.util.find_spec(m.group(1)) is None:
        return detail
    return (f"{detail} ({m.group(1)} is installed here but not in the sandbox, which has the "
            f"standard library and {', '.join(packages) or 'no package'}: add it to "
            "verifier.packages or $SELFPLAY_PACKAGES)")  # fmt: skip


def _to_verdict(row: Row, raw: dict, mode: str) -> Verdict:
    """Build a Verdict from the test process's report, trusting none of its types."""
    total = len(row.tests)
    status = raw.get("status")
    status = status if status in STATUSES and status != "invalid" else "error"
    passed_n = raw.get("tests_passed")
    passed_n = min(max(passed_n, 0), total) if type(passed_n) is int else 0
    detail = raw.get("detail")
    detail = detail[:2000] if isinstance(detail, str) else ""
    duration = raw.get("duration_s")
    duration = float(duration) if isinstance(duration, int | float) else 0.0
    outputs = None
    if row.calls:
        raw_out = raw.get("outputs")
        if isinstance(raw_out, list) and len(raw_out) == len(row.calls):
            outputs = [o if isinstance(o, str) else None for o in raw_out]
        else:
            outputs = [None] * len(row.calls)
    if status == "passed" and passed_n != total:
        status = "error"
    signals = valid(raw.get("signals"))
    phases = raw.get("phases")
    phases = (
        {k: float(v) for k, v in phases.items() if isinstance(v, int | float)}
        if isinstance(phases, dict)
        else None
    )
    return Verdict(
        row.id, status == "passed", status, passed_n, total, duration, detail, outputs,
        signals, phases, mode,
    )  # fmt: skip
