"""Figures (matplotlib, Agg backend: files only, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from curricula.graph import DifficultyGraph
from curricula.inspect import BankView
from curricula.simulate import RunResult, SimConfig
from curricula.suite import TARGETS


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_simulation(runs: list[RunResult], cfg: SimConfig, path: str | Path) -> Path:
    """Held-out success against rollouts (one line per seed, median bold), and
    rollouts-to-target per scheduler (box over seeds)."""
    plt = _pyplot()
    fig, (ax_curve, ax_box) = plt.subplots(1, 2, figsize=(13, 4.8))
    colors = plt.get_cmap("tab10")
    names = [n for n in cfg.schedulers if any(r.scheduler == n for r in runs)]
    for i, name in enumerate(names):
        mine = [r for r in runs if r.scheduler == name]
        for r in mine:
            ax_curve.plot(r.curve_rollouts, r.curve_success, color=colors(i), alpha=0.25, lw=0.8)
        # Median curve over seeds on a common grid; a finished run holds its last value.
        grid = np.linspace(0, max(r.curve_rollouts[-1] for r in mine), 200)
        ys = [np.interp(grid, r.curve_rollouts, r.curve_success) for r in mine]
        ax_curve.plot(grid, np.median(ys, axis=0), color=colors(i), lw=2, label=name)
    ax_curve.axhline(cfg.target, color="black", ls="--", lw=1, label=f"target {cfg.target}")
    ax_curve.set_xlabel("rollouts")
    ax_curve.set_ylabel("held-out success (learnable tasks)")
    ax_curve.set_title("Learning curves")
    ax_curve.legend(fontsize=8)
    values = [
        [r.rollouts_to_target or cfg.max_rollouts for r in runs if r.scheduler == name]
        for name in names
    ]
    ax_box.boxplot(values, tick_labels=names)
    ax_box.set_ylabel(f"rollouts to reach {cfg.target} (budget {cfg.max_rollouts:,})")
    ax_box.set_title(f"Rollouts to target over {len(values[0]) if values else 0} seeds")
    ax_box.tick_params(axis="x", rotation=20)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_suite(results: dict[str, list[RunResult]], cfg: SimConfig, path: str | Path) -> Path:
    """One panel per structure: each scheduler's rollouts-to-target over seeds, as a
    multiple of uniform's median on that structure (box over seeds; dashed: the targets)."""
    plt = _pyplot()
    names = list(results)
    cols = min(3, len(names)) or 1
    rows = -(-len(names) // cols) if names else 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    limits = sorted(
        {limit for rules in TARGETS.values() for limit, base in rules if base == "uniform"}
    )
    for ax, name in zip(axes.flat, names, strict=False):
        runs = results[name]
        base = [r.rollouts_to_target or cfg.max_rollouts for r in runs if r.scheduler == "uniform"]
        scale = float(np.median(base)) if base else 1.0
        labels = [n for n in cfg.schedulers if any(r.scheduler == n for r in runs)]
        values = [
            [(r.rollouts_to_target or cfg.max_rollouts) / scale for r in runs if r.scheduler == n]
            for n in labels
        ]
        ax.boxplot(values, tick_labels=labels)
        for limit in limits:
            ax.axhline(limit, color="grey", ls="--", lw=0.8)
        ax.set_title(name, fontsize=10)
        ax.set_ylim(bottom=0)
        ax.tick_params(axis="x", rotation=35, labelsize=7)
        ax.set_ylabel("rollouts / uniform's median", fontsize=8)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.suptitle(
        f"Rollouts to held-out success {cfg.target}, per structure "
        f"(dashed: targets {', '.join(f'{x}x' for x in limits)} uniform)"
    )
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def plot_bank(
    view: BankView, graph: DifficultyGraph, out_dir: str | Path, *, max_nodes: int = 300
) -> list[Path]:
    """graph.png (difficulty graph coloured by solve rate), expected_variance.png (histogram) and
    rounds.png (solve rate per round) in `out_dir`."""
    import networkx as nx

    from curricula.edges import compile_edges
    from curricula.posterior import estimate

    plt = _pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stats = view.stats
    est = estimate(stats, compile_edges(graph.graph, stats.index)).frame(stats.index)
    attempted = stats["attempts"] > 0
    paths = []

    # The graph: the most-attempted tasks and their neighbours, up to max_nodes.
    order = stats.sort_values("attempts", ascending=False).index.tolist()
    keep = [n for n in order if n in graph.graph][:max_nodes]
    sub = graph.graph.subgraph(keep)
    fig, ax = plt.subplots(figsize=(9, 8))
    if len(sub):
        pos = nx.spring_layout(sub.to_undirected(), seed=0, weight="weight")
        seen = [n for n in sub if attempted.get(n, False)]
        unseen = [n for n in sub if not attempted.get(n, False)]
        rates = [stats.at[n, "successes"] / stats.at[n, "attempts"] for n in seen]
        prereq = [(u, v) for u, v, d in sub.edges(data=True) if d.get("prerequisite", True)]
        similar = [(u, v) for u, v, d in sub.edges(data=True) if not d.get("prerequisite", True)]
        nx.draw_networkx_edges(sub, pos, edgelist=similar, ax=ax, alpha=0.15, arrows=False)
        nx.draw_networkx_edges(sub, pos, edgelist=prereq, ax=ax, alpha=0.6, arrowsize=8)
        nx.draw_networkx_nodes(
            sub, pos, nodelist=unseen, ax=ax, node_size=40, node_color="lightgrey"
        )
        nodes = nx.draw_networkx_nodes(
            sub, pos, nodelist=seen, ax=ax, node_size=40, node_color=rates, cmap="RdYlGn",
            vmin=0.0, vmax=1.0,
        )  # fmt: skip
        fig.colorbar(nodes, ax=ax, label="solve rate (grey: never attempted)")
    ax.set_title(f"Difficulty graph ({len(sub)} of {len(graph)} tasks; arrows: easier -> harder)")
    ax.axis("off")
    paths.append(_save(fig, out / "graph.png"))

    fig, ax = plt.subplots(figsize=(7, 4))
    bins = np.linspace(0.0, 0.25, 26)
    ax.hist(
        [est.loc[attempted, "expected_variance"], est.loc[~attempted, "expected_variance"]],
        bins=bins, stacked=True, label=["attempted", "never attempted (prior + neighbours)"],
    )  # fmt: skip
    ax.set_xlabel("expected reward variance E[p(1-p)]")
    ax.set_ylabel("tasks")
    ax.legend()
    ax.set_title("Expected reward variance under the current solver")
    paths.append(_save(fig, out / "expected_variance.png"))

    fig, ax = plt.subplots(figsize=(7, 4))
    plot_rounds(ax, view.rounds)
    paths.append(_save(fig, out / "rounds.png"))
    return paths


def plot_rounds(ax: Any, rounds: Any) -> None:
    """Solve rate per round on `ax`; the round axis has whole rounds only."""
    from matplotlib.ticker import MaxNLocator

    if len(rounds):
        ax.plot(rounds["round_id"], rounds["solve_rate"], marker="o")
        ax.set_ylim(0, 1)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    else:
        ax.text(0.5, 0.5, "no rounds with attempts yet", ha="center", va="center")
    ax.set_xlabel("round")
    ax.set_ylabel("solve rate of attempts")
    ax.set_title("Solve rate per round")


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path
