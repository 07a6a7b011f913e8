"""Scoring only the labelled positions on a CPU.

TRL's fused LM head, which the TRL trainers selfplay runs use for their loss, projects the
hidden states through the vocabulary in tiles and keeps each labelled token's
log-probability. On a Triton device it projects only the positions whose label counts;
anywhere else it projects every position, so that accelerators which compile per shape
(Neuron) do not compile again for every batch. A CPU runs eagerly and pays nothing for a new
shape, and there the projection is a large share of a step: 136M of the bundled model's 494M
weights are its LM head, and most positions of selfplay's rows are the prompt, which is never
labelled. `labelled_positions_only()` has TRL take its compact path on a CPU too: the same
loss and gradients (tests/selfplay/training/test_lm_head.py), an SFT step of the bundled
model 1.5x to 2.2x faster (docs/training.md#speed-of-a-training-step-on-a-cpu).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def labelled_positions_only() -> Iterator[bool]:
    """While open, TRL's fused LM head on a CPU projects only the labelled positions. Yields
    whether it could: with a TRL whose fused head decides otherwise, it leaves TRL alone."""
    try:
        from trl.trainer import utils
    except ImportError:
        yield False
        return
    original = getattr(utils, "_use_triton", None)
    if original is None or not hasattr(utils, "add_fused_lm_head"):
        yield False
        return
    # Read only by the fused head's choice of path (the kernels keep their own reference, so
    # the tiles themselves still run in torch on a CPU).
    utils._use_triton = lambda device: device.type == "cpu" or original(device)
    try:
        yield True
    finally:
        utils._use_triton = original
