"""What a person sees on an 80-column terminal when a command ends: the last screen, replayed
by a terminal emulator from the bytes the command wrote to a pseudo-terminal."""

from __future__ import annotations

import json

import pytest
from small_bank import small_bank
from terminal import run_on_terminal


@pytest.mark.slow
def test_the_round_summary_survives_the_progress_bars(tmp_path):
    """The live bars on stderr must not draw over the summary table printed on stdout."""
    completions = tmp_path / "completions.json"
    program = 'x):\n    """Return x squared minus x."""\n    return x * x - x\n```'
    answers = ["```python\n6\n```"] * 4
    completions.write_text(json.dumps([program, "2)\nf(3)\nf(-1)\n```", *answers]))
    config = tmp_path / "c.yaml"
    config.write_text(
        "kinds: [deduction]\nproposer:\n  proposals_per_kind: 1\nsolver:\n  tasks: 3\n  samples: 1\n"
    )
    bank = tmp_path / "b.db"
    small_bank(bank)
    code, screen = run_on_terminal(
        "run", "--bank", str(bank), "--config", str(config),
        "--backend", "scripted", "--model", str(completions),
    )  # fmt: skip
    text = "\n".join(screen)
    assert code == 0, text
    for row in ("self-play round 1", "solver attempts", "solve rate", "tokens/s", "time (s)",
                "tasks in bank"):  # fmt: skip
        assert row in text, text
    table = [line for line in screen if line.strip()]
    assert any(line.lstrip().startswith("└") for line in table), text  # the bottom border
    assert not any(line.lstrip().startswith(("grade", "solve ", "propose")) for line in table), text
    assert all(len(line) <= 80 for line in screen)
