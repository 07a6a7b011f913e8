"""The curriculum inspection notebook runs from top to bottom (so it cannot rot)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "curriculum_inspection.ipynb"


@pytest.mark.slow
def test_curriculum_notebook_executes(tmp_path, monkeypatch):
    monkeypatch.delenv("SELFPLAY_NOTEBOOK_BANK", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "tasks" in text and "attempted" in text
    assert "no selfplay loop iterations yet" in text  # the built bank ran no loop
    assert "round health of the default round" in text  # nor any round: the benchmark's
    assert "no proposer RL steps in this bank" in text  # nor any RL step: the benchmark's
    tables = "".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "frontier_yield" in tables and "diversity" in tables
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 4  # graph, learnability, rounds, simulation
