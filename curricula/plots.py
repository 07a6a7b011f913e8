"""Figures (matplotlib, Agg backend: files only, no display needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from curricula.simulate import RunResult, SimConfig


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
    ax_box.boxplot(values, tick_labels=names, vert=True)
    ax_box.set_ylabel(f"rollouts to reach {cfg.target} (budget {cfg.max_rollouts:,})")
    ax_box.set_title(f"Rollouts to target over {len(values[0]) if values else 0} seeds")
    ax_box.tick_params(axis="x", rotation=20)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
