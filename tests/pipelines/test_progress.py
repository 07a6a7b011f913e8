"""Progress without a terminal: a line per phase start, advance and end, a heartbeat while a
phase stands still, and the note (a training loss) on its line."""

from __future__ import annotations

import io
import time

from rich.console import Console

from pipelines.progress import Progress


def _plain() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_a_phase_that_stands_still_keeps_saying_it_is_alive():
    console, out = _plain()
    with Progress(console=console, every_s=0.05, quiet_s=0.1) as bars:
        bars.update("generate", 0, 11)
        deadline = time.monotonic() + 10
        while out.getvalue().count("generate: 0/11") < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        bars.update("generate", 11, 11)
    lines = out.getvalue().splitlines()
    assert sum(line.startswith("generate: 0/11") for line in lines) >= 3, lines
    assert lines[-1].startswith("generate: 11/11")
    seen = len(lines)
    time.sleep(0.3)  # a finished phase is not repeated
    assert len(out.getvalue().splitlines()) == seen


def test_the_note_rides_on_the_phase_line():
    console, out = _plain()
    with Progress(console=console, every_s=0.0) as bars:
        bars.update("train", 0, 4)
        bars.update("train", 2, 4, note="loss 1.234")
        bars.update("train", 4, 4)
        bars.update("train", 4, 4, note="loss 0.5")  # TRL's last log comes after the last step
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines
    assert "loss 1.234" not in lines[0]
    assert lines[1].startswith("train: 2/4") and lines[1].endswith("loss 1.234)")
    assert lines[2].startswith("train: 4/4") and "loss 1.234" in lines[2]  # the last known


def test_show_prints_through_on_a_terminal_and_plainly_elsewhere():
    out = io.StringIO()
    term = Console(file=out, force_terminal=True, width=80)
    table = io.StringIO()
    target = Console(file=table, force_terminal=False, width=80)
    with Progress(console=term) as bars:
        bars.update("grade", 1, 4)
        bars.show("the summary", target)
        assert bars.bars.live.is_started  # the bars came back after the summary
    assert table.getvalue() == "the summary\n"
