"""The curriculum figures' axes say what they mean."""

from __future__ import annotations

import matplotlib
import pandas as pd

from curricula.plots import plot_rounds

matplotlib.use("Agg")


def test_the_round_axis_shows_whole_rounds_only():
    import matplotlib.pyplot as plt

    for ids in ([1, 2], [3], list(range(1, 8))):
        rounds = pd.DataFrame({"round_id": ids, "solve_rate": [0.5] * len(ids)})
        fig, ax = plt.subplots()
        plot_rounds(ax, rounds)
        fig.canvas.draw()
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks), (ids, ticks)
        plt.close(fig)
