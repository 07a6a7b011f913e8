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


def test_the_bank_panel_counts_in_whole_numbers_and_its_inset_covers_nothing():
    data = rows(1)
    for r, (fy, dv) in zip(data, [(0.0, 0.0), (0.0, 0.5), (0.25, 0.0)], strict=True):
        r.frontier_yield, r.diversity = fy, dv  # points at 0: where its legend sat
    fig = draw_learning_curve(data)
    fig.canvas.draw()
    bank = next(a for a in fig.axes if a.get_ylabel() == "tasks in bank")
    (inset,) = bank.child_axes
    renderer = fig.canvas.get_renderer()
    for axis in (bank.yaxis, inset.xaxis):
        lo, hi = axis.get_view_interval()
        ticks = [t for t in axis.get_majorticklocs() if lo <= t <= hi]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks
    # The inset and its legend clear the bank's line and the panel's own tick labels.
    inset_box = inset.get_window_extent(renderer)
    legend_box = inset.get_legend().get_window_extent(renderer)
    for r in data:
        x_px, y_px = bank.transData.transform((r.iteration, r.bank_tasks))
        assert not inset_box.contains(x_px, y_px) and not legend_box.contains(x_px, y_px)
    labels = [t.get_window_extent(renderer) for t in bank.get_yticklabels() if t.get_text()]
    assert all(box.x1 < inset_box.x0 for box in labels)
    for line in inset.get_lines():
        for x, y in zip(*line.get_data(), strict=True):
            assert not legend_box.contains(*inset.transData.transform((x, y)))
    plt.close(fig)
