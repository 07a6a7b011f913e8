"""Progress on stderr: rich bars on a terminal, plain lines elsewhere.

A job's output piped to a file or a CI log still says where it is: without a terminal each
phase prints a line when it starts, at most every `every_s` seconds while it runs, and when it
completes (as pip and datasets do), instead of rich's bars, which draw nothing there.
"""

from __future__ import annotations

import time
from typing import Any

from pipelines.console import stderr


class Progress:
    """`update(phase, done, total)` from any callback; use as a context manager."""

    def __init__(self, *, every_s: float = 5.0, console: Any = None) -> None:
        self.console = console or stderr
        self.every_s = every_s
        self.bars = None
        self.tasks: dict[str, Any] = {}
        self.last: dict[str, float] = {}
        self.started: dict[str, float] = {}
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
                TextColumn("{task.description:<22}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )

    def __enter__(self) -> Progress:
        if self.bars is not None:
            self.bars.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bars is not None:
            self.bars.__exit__(*exc)

    def update(self, phase: str, done: int, total: int | None) -> None:
        if self.bars is not None:
            if phase not in self.tasks:
                self.tasks[phase] = self.bars.add_task(phase, total=total)
            self.bars.update(self.tasks[phase], completed=done, total=total)
            return
        now = time.monotonic()
        first = phase not in self.last
        if first:
            self.started[phase] = now
        finished = total is not None and done >= total
        if first or finished or now - self.last[phase] >= self.every_s:
            self.last[phase] = now
            of = f"/{total}" if total is not None else ""
            elapsed = now - self.started[phase]
            self.console.print(
                f"{phase}: {done}{of} ({elapsed:.0f} s)", highlight=False, soft_wrap=True
            )
            if finished:
                del self.last[phase]

    def clear(self) -> None:
        """Forget the phases (a new round starts its own)."""
        if self.bars is not None:
            for task_id in self.tasks.values():
                self.bars.remove_task(task_id)
        self.tasks.clear()
        self.last.clear()
