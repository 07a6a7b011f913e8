"""Persist a `DifficultyGraph` in a task bank (its `curriculum_nodes` and `curriculum_edges`
tables; the SQL is the bank's, `task_bank.curriculum_tables`).

Saving replaces both tables in one transaction, so a failed save leaves the previous graph
intact. Task ids are stored as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from curricula.graph import EDGE_COLUMNS, NODE_COLUMNS, DifficultyGraph

if TYPE_CHECKING:
    from task_bank.store import Bank


def _open(bank: Bank | str | Path):
    """(the bank, whether it was opened here) for a bank or the path of one."""
    from task_bank.store import Bank

    return (bank, False) if isinstance(bank, Bank) else (Bank(bank), True)


def save_graph(graph: DifficultyGraph, bank: Bank | str | Path) -> None:
    """Write the graph into `bank` (an open bank or a bank file), replacing any earlier one."""
    nodes, edges = graph.to_tables()
    node_rows = [(str(tid), *(_sql(row[c]) for c in NODE_COLUMNS)) for tid, row in nodes.iterrows()]
    edge_rows = [
        (str(r["src"]), str(r["dst"]), r["relation"], int(bool(r["prerequisite"])),
         _sql(r["weight"]), _sql(r["similarity"]))
        for r in edges.to_dict("records")
    ]  # fmt: skip
    store, opened = _open(bank)
    try:
        store.save_curriculum_graph(node_rows, edge_rows)
    finally:
        if opened:
            store.close()


def load_graph(bank: Bank | str | Path) -> DifficultyGraph:
    """Read the graph saved in `bank`; an empty graph if none was saved there."""
    store, opened = _open(bank)
    try:
        nodes, edges = store.curriculum_graph()
    finally:
        if opened:
            store.close()
    if nodes.empty:
        return DifficultyGraph()
    for col in ("attempts", "successes"):  # NULLs turned these into floats
        nodes[col] = nodes[col].astype("Int64").astype(object)
    nodes = nodes.astype(object).where(nodes.notna(), None)
    return DifficultyGraph.from_tables(nodes, edges[["src", "dst", *EDGE_COLUMNS]])


def _sql(value: object) -> object:
    """A value SQLite accepts: numpy scalars unwrapped, NaN and pandas NA as NULL."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value
