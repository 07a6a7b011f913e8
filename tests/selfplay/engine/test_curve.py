"""The loop's learning curve: legends never cover data, counts have whole-number axes."""

from __future__ import annotations

import matplotlib.pyplot as plt

from selfplay.engine.curve import draw_learning_curve
from selfplay.engine.loop import IterationRow


def rows(admitted: int) -> list[IterationRow]:
    return [
        # Small sets: intervals that span most of 0 to 1, as a first loop's do.
        IterationRow(i, "m", round=i or None, admitted=admitted * bool(i), bank_tasks=100 + i,
                     held_out=h, held_out_interval=[max(0.0, h - 0.45), min(1.0, h + 0.45)],
                     humaneval=e, humaneval_interval=[e - 0.5, 1.0], train_loss=1.0)
        for i, (h, e) in enumerate([(0.5, 1.0), (0.55, 1.0), (0.6, 0.75)])
    ]  # fmt: skip


def test_the_pass_rate_legend_covers_no_point_or_interval():
    fig = draw_learning_curve(rows(3))
    fig.canvas.draw()
    ax = fig.axes[0]
    box = ax.get_legend().get_window_extent()
    for r in rows(3):
        for name in ("held_out", "humaneval"):
            low, high = getattr(r, f"{name}_interval")
            for y in (getattr(r, name), *(low + k * (high - low) / 20 for k in range(21))):
                x_px, y_px = ax.transData.transform((r.iteration, y))
                assert not box.contains(x_px, y_px), (name, r.iteration, y)
    plt.close(fig)


def test_a_round_that_admitted_nothing_has_a_whole_number_axis():
    fig = draw_learning_curve(rows(0))
    fig.canvas.draw()
    twin = next(a for a in fig.axes if a.get_ylabel() == "admitted this round")
    low, high = twin.get_ylim()
    assert low == 0 and high >= 1
    ticks = [t for t in twin.get_yticks() if low <= t <= high]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    plt.close(fig)
