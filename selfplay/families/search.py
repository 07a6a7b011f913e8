"""Searching and sorting steps: a solver runs `level` steps of a known algorithm by hand
(bubble-sort passes, selection steps, insertions, the k-th match of a scan, binary-search
probes on a list that grows with the level)."""

from __future__ import annotations

import random

from selfplay.families.base import ENTRY_POINT, Drawn, Family, distinct, register


def _bubble(level: int, r: random.Random) -> str:
    return (f"xs = list(xs)\n    for _ in range({level}):\n"
            "        for i in range(len(xs) - 1):\n"
            "            if xs[i] > xs[i + 1]:\n"
            "                xs[i], xs[i + 1] = xs[i + 1], xs[i]\n    return xs")  # fmt: skip


def _selection(level: int, r: random.Random) -> str:
    pick = r.choice(["min", "max"])
    return (f"xs = list(xs)\n    for i in range({level}):\n"
            f"        j = xs.index({pick}(xs[i:]), i)\n"
            "        xs[i], xs[j] = xs[j], xs[i]\n    return xs")  # fmt: skip


def _insertion(level: int, r: random.Random) -> str:
    return (f"out = []\n    for v in xs[:{level + 1}]:\n        i = 0\n"
            "        while i < len(out) and out[i] < v:\n            i += 1\n"
            "        out.insert(i, v)\n    return out")  # fmt: skip


def _kth_match(level: int, r: random.Random) -> str:
    m = r.randint(2, 3)
    return (f"count = 0\n    for i, v in enumerate(xs):\n        if v % {m} == {r.randint(0, m - 1)}:\n"
            f"            count += 1\n            if count == {level}:\n"
            "                return i\n    return -1")  # fmt: skip


def _binary(level: int, r: random.Random) -> str:
    return ("lo, hi, probes = 0, len(xs) - 1, 0\n    while lo <= hi:\n        probes += 1\n"
            "        mid = (lo + hi) // 2\n        if xs[mid] == t:\n            return mid, probes\n"
            "        if xs[mid] < t:\n            lo = mid + 1\n        else:\n"
            "            hi = mid - 1\n    return -1, probes")  # fmt: skip


SHAPES = {"bubble": _bubble, "selection": _selection, "insertion": _insertion,
          "kth_match": _kth_match, "binary": _binary}  # fmt: skip


@register
class Search(Family):
    name = "search"
    skill = "running sorting passes and searches by hand"
    knob = "passes, steps or matches to run (binary search: the list's length)"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        shape = rng.choice(sorted(SHAPES))
        body = SHAPES[shape](level, rng)
        if shape == "binary":
            size = 3 * level + 2

            def draw() -> str:
                xs = sorted(rng.sample(range(0, 4 * size), size))
                return f"{xs!r}, {rng.choice(xs) if rng.random() < 0.8 else -1}"

            return Drawn(f"def {ENTRY_POINT}(xs, t):\n    {body}\n", distinct(n_inputs, draw))
        size = max(6, level + 2)
        draw = lambda: repr([rng.randint(0, 20) for _ in range(size)])  # noqa: E731
        return Drawn(f"def {ENTRY_POINT}(xs):\n    {body}\n", distinct(n_inputs, draw))
