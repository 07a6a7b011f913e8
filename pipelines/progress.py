"""Progress on stderr: rich bars on a terminal, plain lines elsewhere.

A job's output piped to a file or a CI log still says where it is: without a terminal each
phase prints a line when it starts, at most every `every_s` seconds while it advances, when
it completes (as pip and datasets do), and every `quiet_s` seconds while it advances not at
all (a long generation call), instead of rich's bars, which draw nothing there.

On a terminal the bars are a live display that redraws itself in place; anything printed to
another stream while it runs (the round summary on stdout) would be drawn over, so such
output goes through `show`, which lifts the bars off first.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from pipelines.console import stderr


class Progress:
    """`update(phase, done, total, note=None)` from any callback; use as a context manager."""

    def __init__(self, *, every_s: float = 5.0, quiet_s: float = 30.0, console: Any = None) -> None:
        self.console = console or stderr
        self.every_s = every_s
        self.quiet_s = quiet_s
        self.bars = None
        self.tasks: dict[str, Any] = {}
        self.last: dict[str, float] = {}
        self.started: dict[str, float] = {}
        self.state: dict[str, tuple[int, int | None, str | None]] = {}
        self.ended: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        if self.console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import (
                Progress as Bars,
            )

            self.bars = Bars(
                TextColumn("{task.description:<24}"),
                BarColumn(bar_width=24),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[note]}"),
                console=self.console,
                transient=True,
            )

    def __enter__(self) -> Progress:
        if self.bars is not None:
            self.bars.__enter__()
        else:
            self._stop.clear()
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bars is not None:
            self.bars.__exit__(*exc)
        elif self._beat is not None:
            self._stop.set()
            self._beat.join()
            self._beat = None

    def update(self, phase: str, done: int, total: int | None, note: str | None = None) -> None:
        if self.bars is not None:
            fields = {"note": note} if note is not None else {}
            if phase not in self.tasks:
                self.tasks[phase] = self.bars.add_task(phase, total=total, note=note or "")
            self.bars.update(self.tasks[phase], completed=done, total=total, **fields)
            return
        with self._lock:
            finished = total is not None and done >= total
            if phase in self.ended and finished:
                return  # said already (a last log after the last step, say)
            self.ended.discard(phase)
            now = time.monotonic()
            first = phase not in self.last
            if first:
                self.started[phase] = now
            previous = self.state.get(phase)
            note = note if note is not None else (previous[2] if previous else None)
            self.state[phase] = (done, total, note)
            if first or finished or now - self.last[phase] >= self.every_s:
                self._line(phase, now)
                if finished:
                    del self.last[phase], self.state[phase]
                    self.ended.add(phase)

    def show(self, renderable: Any, console: Any) -> None:
        """Print `renderable` on `console` where the bars cannot draw over it."""
        if self.bars is None or not self.bars.live.is_started:
            console.print(renderable)
            return
        self.bars.stop()  # transient: the bars are erased, the cursor is where they began
        try:
            console.print(renderable)
        finally:
            self.bars.start()

    def clear(self) -> None:
        """Forget the phases (a new round starts its own)."""
        if self.bars is not None:
            for task_id in self.tasks.values():
                self.bars.remove_task(task_id)
        with self._lock:
            self.tasks.clear()
            self.last.clear()
            self.state.clear()
            self.ended.clear()

    def _line(self, phase: str, now: float) -> None:
        done, total, note = self.state[phase]
        self.last[phase] = now
        of = f"/{total}" if total is not None else ""
        tail = f", {note}" if note else ""
        elapsed = now - self.started[phase]
        self.console.print(
            f"{phase}: {done}{of} ({elapsed:.0f} s{tail})", highlight=False, soft_wrap=True
        )

    def _heartbeat(self) -> None:
        # A phase that has not moved for quiet_s still says it is alive (and for how long).
        while not self._stop.wait(min(self.every_s, self.quiet_s)):
            with self._lock:
                now = time.monotonic()
                for phase in list(self.state):
                    if now - self.last[phase] >= self.quiet_s:
                        self._line(phase, now)
