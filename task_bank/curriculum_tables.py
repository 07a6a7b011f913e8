"""The curriculum's difficulty graph as two tables of the bank (`curriculum_nodes`,
`curriculum_edges`); `curricula.graph_store` turns a `DifficultyGraph` into rows and back.

Saving replaces both tables in one transaction, so a failed save leaves the previous graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


class CurriculumTables:
    """Mixed into `task_bank.store.Bank` (which provides `conn` and `_write`)."""

    def save_curriculum_graph(self, nodes: Sequence[tuple], edges: Sequence[tuple]) -> None:
        """Replace the saved graph: nodes (task_id, kind, skill, attempts, successes,
        pass_rate, expected_variance), edges (src, dst, relation, prerequisite, weight, similarity)."""
        with self._write() as c:
            c.execute("DELETE FROM curriculum_nodes")
            c.execute("DELETE FROM curriculum_edges")
            c.executemany("INSERT INTO curriculum_nodes VALUES (?, ?, ?, ?, ?, ?, ?)", nodes)
            c.executemany("INSERT INTO curriculum_edges VALUES (?, ?, ?, ?, ?, ?)", edges)

    def curriculum_graph(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The saved nodes (indexed by task id) and edges; both empty if none was saved."""
        import pandas as pd

        nodes = pd.read_sql_query("SELECT * FROM curriculum_nodes", self.conn)
        edges = pd.read_sql_query("SELECT * FROM curriculum_edges", self.conn)
        return nodes.set_index("task_id"), edges
