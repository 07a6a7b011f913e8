"""Persist a `DifficultyGraph` as two tables in a SQLite file (normally the bank's own).

The tables are prefixed `curriculum_` so they sit beside the bank's tables without touching
them; saving replaces both tables in one transaction, so a failed save leaves the previous
graph intact. Task ids are stored as text.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd

from curricula.graph import EDGE_COLUMNS, NODE_COLUMNS, DifficultyGraph

SCHEMA = """
CREATE TABLE IF NOT EXISTS curriculum_nodes (
    task_id TEXT PRIMARY KEY,
    kind TEXT,
    skill TEXT,
    attempts INTEGER,
    successes INTEGER,
    pass_rate REAL,
    learnability REAL
);
CREATE TABLE IF NOT EXISTS curriculum_edges (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    relation TEXT NOT NULL,
    prerequisite INTEGER NOT NULL,
    weight REAL,
    similarity REAL,
    PRIMARY KEY (src, dst)
);
"""


def save_graph(graph: DifficultyGraph, db: str | Path | sqlite3.Connection) -> None:
    """Write the graph into `db` (a path or an open connection), replacing any earlier one."""
    conn = db if isinstance(db, sqlite3.Connection) else sqlite3.connect(db)
    try:
        nodes, edges = graph.to_tables()
        node_rows = [
            (str(tid), *(_sql(row[c]) for c in NODE_COLUMNS)) for tid, row in nodes.iterrows()
        ]
        edge_rows = [
            (str(r["src"]), str(r["dst"]), r["relation"], int(bool(r["prerequisite"])),
             _sql(r["weight"]), _sql(r["similarity"]))
            for r in edges.to_dict("records")
        ]  # fmt: skip
        conn.executescript(SCHEMA)
        # One explicit transaction, so it is all or nothing also on autocommit connections
        # (the bank opens its connection with isolation_level=None).
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DELETE FROM curriculum_nodes")
            conn.execute("DELETE FROM curriculum_edges")
            conn.executemany("INSERT INTO curriculum_nodes VALUES (?, ?, ?, ?, ?, ?, ?)", node_rows)
            conn.executemany("INSERT INTO curriculum_edges VALUES (?, ?, ?, ?, ?, ?)", edge_rows)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        if conn is not db:
            conn.close()


def load_graph(db: str | Path | sqlite3.Connection) -> DifficultyGraph:
    """Read the graph saved in `db`; an empty graph if none was saved there."""
    conn = db if isinstance(db, sqlite3.Connection) else sqlite3.connect(db)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "curriculum_nodes" not in tables:
            return DifficultyGraph()
        nodes = pd.read_sql_query("SELECT * FROM curriculum_nodes", conn).set_index("task_id")
        edges = pd.read_sql_query("SELECT * FROM curriculum_edges", conn)
    finally:
        if conn is not db:
            conn.close()
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
