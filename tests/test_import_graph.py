"""The packages form layers: no import cycle between them.

Nodes are the subpackages and top-level modules of `selfplay` (`selfplay.verifier`,
`selfplay.task`, ...) and the packages `task_bank`, `curricula` and `pipelines`. Every
import counts, including one inside a function: an import moved into a function to dodge
a cycle is still a cycle for whoever reads the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("selfplay", "task_bank", "curricula", "pipelines")


def _node(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "selfplay" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def _imports(path: Path, module: str) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return {name for name in found if name.split(".")[0] in PACKAGES}


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            source = _node(module)
            graph.add_node(source)
            for name in _imports(path, module):
                target = _node(name)
                if target != source:
                    graph.add_edge(source, target)
                    graph.edges[source, target].setdefault("files", set()).add(
                        str(path.relative_to(ROOT))
                    )
    return graph


def test_the_graph_sees_the_packages():
    graph = import_graph()
    # A broken walk (wrong root, no files) would find no cycle trivially.
    assert {"selfplay.verifier", "selfplay.kinds", "task_bank", "pipelines"} <= set(graph)
    assert graph.has_edge("pipelines", "task_bank")


def test_no_import_cycle_between_packages():
    graph = import_graph()
    cycles = sorted(nx.simple_cycles(graph), key=len)
    where = [
        " -> ".join(c + [c[0]])
        + " ("
        + "; ".join(
            f"{a} imports {b} in {', '.join(sorted(graph.edges[a, b]['files']))}"
            for a, b in zip(c, c[1:] + [c[0]], strict=True)
        )
        + ")"
        for c in cycles[:5]
    ]
    assert not cycles, "import cycles between packages:\n" + "\n".join(where)


def test_the_task_record_and_the_verifier_sit_below_the_bank():
    graph = import_graph()
    below = nx.descendants(graph, "task_bank") | {"task_bank"}
    for low in ("selfplay.task", "selfplay.verifier", "selfplay.kinds"):
        assert "task_bank" not in nx.descendants(graph, low), f"{low} imports the bank"
    assert "selfplay.engine" not in below and "pipelines" not in below


# The top-level packages are layers too: pipelines (the CLI) over selfplay, selfplay over the
# bank, the bank and the curriculum at the bottom. The bank stores records, so it may import
# the record types it stores (`selfplay.task`) and nothing else of selfplay; parsing untrusted
# rows and reading sources are admission's, above it.
RECORDS = {"selfplay.task"}


def test_the_bank_imports_of_selfplay_only_the_records_it_stores():
    graph = import_graph()
    reached = {n for n in nx.descendants(graph, "task_bank") if n.startswith("selfplay")}
    assert reached <= RECORDS, f"task_bank reaches {sorted(reached - RECORDS)}"
    assert not set(graph.predecessors("task_bank")) <= {"pipelines"}, "nothing uses the bank?"


def test_admission_sits_above_the_bank_with_no_arrow_back():
    graph = import_graph()
    assert graph.has_edge("selfplay.admission", "task_bank")
    assert not nx.has_path(graph, "task_bank", "selfplay.admission")


def test_the_curriculum_never_imports_selfplay():
    graph = import_graph()
    direct = sorted(n for n in graph.successors("curricula") if n.startswith("selfplay"))
    assert not direct, f"curricula imports {direct} in " + "; ".join(
        ", ".join(sorted(graph.edges["curricula", n]["files"])) for n in direct
    )
    assert "pipelines" not in nx.descendants(graph, "curricula")
