"""Every Python snippet of every card runs as printed: the fenced blocks of the README.md an
export writes, each in a fresh interpreter in the export directory (where the card says to
run them), on CPU, with the tiny bundled model named by MODEL as the card says."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from selfplay.export import ExportOptions, export_bank

# Formats and the tasks each exports: small sets, so one training step stays short.
CASES = {
    "trl": ExportOptions(split="none", kinds=["deduction"]),
    "verl": ExportOptions(kinds=["deduction"]),
    "openrlhf": ExportOptions(split="difficulty", kinds=["deduction"]),
    "sft": ExportOptions(split="none", kinds=["deduction"]),
    "dpo": ExportOptions(split="none"),
}


def python_blocks(card: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", card, re.DOTALL | re.MULTILINE)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", list(CASES))
def test_every_python_snippet_of_the_card_runs_as_printed(built_bank, tmp_path, fmt):
    pytest.importorskip("trl", reason="needs the train extra: pip install 'selfplay[train]'")
    from selfplay.backends.models import local_model_dir

    out = tmp_path / fmt
    export_bank(built_bank, fmt, out, CASES[fmt])
    blocks = python_blocks((out / "README.md").read_text(encoding="utf-8"))
    assert blocks, "the card has a Python snippet"
    env = {
        **os.environ,
        "MODEL": local_model_dir("smollm2-135m"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"),
        "CUDA_VISIBLE_DEVICES": "",
    }
    before = sorted(p.name for p in out.iterdir())
    for block in blocks:
        done = subprocess.run([sys.executable, "-c", block], cwd=out, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
    # A one-step check saves nothing, and nothing into the export directory.
    assert sorted(p.name for p in out.iterdir()) == before
