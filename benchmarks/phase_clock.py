"""Wall and CPU seconds per phase of a benchmark, the long-running children included.

`resource.RUSAGE_CHILDREN` only counts children once they have exited and been waited for;
the verifier's sandbox workers and vLLM's engine process live through a whole phase, so a
phase's CPU is read from /proc instead: this process, every live descendant (with the
children each of them has reaped) and the children this process reaped.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")
START = time.perf_counter()


def say(text: str) -> None:
    print(f"[{time.perf_counter() - START:6.0f} s] {text}", file=sys.stderr, flush=True)


def in_child(script: str, args: list[str]) -> dict[str, Any]:
    """`script` run with `args` in a fresh Python process (its own imports, its own peak
    memory); the last line it prints, as JSON. A failure ends the benchmark with its error."""
    import json
    import subprocess

    res = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def time_train_steps() -> list[float]:
    """The seconds of every step that `selfplay.training.train` runs from now on in this
    process, filled in as they end: a clock on each run's own progress callback."""
    from selfplay.training import trl_job

    times: list[float] = []
    made = trl_job.progress_callback

    def timed(progress, log, doing=None):
        callback = made(progress, log, doing)
        begin, end = callback.on_step_begin, callback.on_step_end

        def on_step_begin(*a, **k):
            callback.started = time.perf_counter()
            return begin(*a, **k)

        def on_step_end(*a, **k):
            times.append(time.perf_counter() - callback.started)
            return end(*a, **k)

        callback.on_step_begin, callback.on_step_end = on_step_begin, on_step_end
        return callback

    trl_job.progress_callback = timed
    return times


def _stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and its reaped children) from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    # After the name: state ppid ... utime(14) stime(15) cutime(16) cstime(17), 1-based.
    return int(fields[1]), sum(int(x) for x in fields[11:15]) / TICK


def tree_cpu() -> float:
    """CPU seconds of this process, its reaped children and every live descendant."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    parent, cpu = {}, {}
    for pid in os.listdir("/proc"):
        if pid.isdigit() and (row := _stat(pid)) is not None:
            parent[int(pid)], cpu[int(pid)] = row
    me = os.getpid()
    for pid in parent:
        up, seen = parent[pid], 0
        while up not in (0, 1, me) and up in parent and seen < 64:
            up, seen = parent[up], seen + 1
        if up == me and pid != me:
            total += cpu[pid]
    return total


@dataclass
class Clock:
    """Wall and CPU seconds (`tree_cpu`) per named phase."""

    phases: dict[str, dict[str, float]] = field(default_factory=dict)

    def run(self, name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), tree_cpu()
        out = fn(*args, **kwargs)
        self.phases[name] = {
            "wall_s": round(time.perf_counter() - wall, 1),
            "cpu_s": round(tree_cpu() - cpu, 1),
        }
        say(f"{name}: {self.phases[name]['wall_s']} s wall, {self.phases[name]['cpu_s']} s CPU")
        return out

    def cpu_of(self, *names: str) -> float:
        return sum(self.phases[n]["cpu_s"] for n in names if n in self.phases)
