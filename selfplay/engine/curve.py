"""The loop's learning curve: one PNG, four panels, x axis in whole iterations.

Held-out and HumanEval pass@1 with their 95% intervals; the training signal (mean GRPO
reward, or mean loss for SFT/DPO, and the proposer's mean RL reward where it trains by RL); the bank's size and the tasks each round admitted, with the
round's frontier yield and diversity in an inset; the share of the iteration's attempts and
rollouts with a reward-hacking signal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot_learning_curve(rows: list[Any], path: str | Path) -> Path:
    """The figure of `rows`, saved as a PNG at `path`."""
    import matplotlib.pyplot as plt

    fig = draw_learning_curve(rows)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_learning_curve(rows: list[Any]) -> Any:
    """The matplotlib figure (its four panels in `fig.axes`, in reading order)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    x = [r.iteration for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    ax = axes[0, 0]
    for name, label in (("held_out", "held-out split"), ("humaneval", "HumanEval")):
        points = [(r.iteration, getattr(r, name), getattr(r, f"{name}_interval")) for r in rows]
        points = [p for p in points if p[1] is not None]
        if points:
            xs, ys, cis = zip(*points, strict=True)
            low = [y - (ci[0] if ci else y) for y, ci in zip(ys, cis, strict=True)]
            high = [(ci[1] if ci else y) - y for y, ci in zip(ys, cis, strict=True)]
            ax.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=label)
    # The legend gets a band of its own above 1.0, where no pass rate or interval can reach.
    ax.set_ylim(0, 1.28)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_title("pass@1 (95% interval)")
    ax.legend(loc="upper center", ncol=2, fontsize=8)

    ax = axes[0, 1]
    rewards = [(r.iteration, r.train_reward) for r in rows if r.train_reward is not None]
    losses = [(r.iteration, r.train_loss) for r in rows if r.train_loss is not None]
    if rewards:
        ax.plot(*zip(*rewards, strict=True), marker="o", label="mean GRPO reward")
    if losses:
        ax.plot(*zip(*losses, strict=True), marker="s", label="mean training loss")
    proposer = [(r.iteration, r.proposer_reward) for r in rows
                if getattr(r, "proposer_reward", None) is not None]  # fmt: skip
    if proposer:
        ax.plot(*zip(*proposer, strict=True), marker="^", label="mean proposer RL reward")
    ax.set_title("training")
    if rewards or losses or proposer:
        ax.legend(loc="best")

    ax = axes[1, 0]
    bank = [r.bank_tasks for r in rows]
    ax.plot(x, bank, marker="o", label="tasks in bank")
    ax.set_ylabel("tasks in bank")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    twin = ax.twinx()
    twin.bar(x, [r.admitted for r in rows], alpha=0.3, color="tab:green", label="admitted")
    twin.set_ylabel("admitted this round")
    twin.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("bank")
    # The round's health on the same axes' scale of 0 to 1 would hide the bank's growth: it
    # goes in an inset in the panel's upper half, its legend above it and its ticks on its
    # right (on its left they ran into the panel's own), while the bank's line and bars keep
    # to the lower 40% (whole numbers, and a round that admitted none stays 0 to 1).
    health = [(r.iteration, r.frontier_yield, r.diversity) for r in rows if r.round is not None]
    top = max([1] + [r.admitted for r in rows])
    if health:
        low, high = min(bank), max(bank)
        span = max(high - low, 1)
        ax.set_ylim(low - 0.05 * span, high + 1.5 * span)
        twin.set_ylim(0, top * 2.5)
        inset = ax.inset_axes([0.12, 0.56, 0.5, 0.24])
        its = [h[0] for h in health]
        inset.plot(its, [h[1] or 0 for h in health], marker=".", label="frontier yield")
        inset.plot(its, [h[2] or 0 for h in health], marker=".", label="diversity")
        inset.set_ylim(-0.05, 1.05)
        inset.set_yticks([0, 0.5, 1])
        inset.yaxis.tick_right()
        inset.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
        inset.tick_params(labelsize=6)
        inset.legend(fontsize=6, loc="lower left", bbox_to_anchor=(0, 1.02), ncol=2,
                     borderaxespad=0, frameon=False)  # fmt: skip
    else:
        twin.set_ylim(0, top * 1.1)

    ax = axes[1, 1]
    hacks = [(r.iteration, r.hack_signal_rate) for r in rows if r.hack_signal_rate is not None]
    if hacks:
        ax.plot(*zip(*hacks, strict=True), marker="o", color="tab:red")
    ax.set_ylim(bottom=0)
    ax.set_title("attempts with a reward-hacking signal")

    for ax in axes.flat:
        ax.set_xlabel("iteration")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    fig.tight_layout()
    return fig
