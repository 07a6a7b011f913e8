"""`step_seed`: the one place a round's or a loop's steps get their random seeds.

Seeds were sums (`seed + 1000 * round + 100 * try + wave`), and sums collide: the sixth try
of a round's first proposing wave got `seed + 1000 * round + 500`, which was that round's
solver seed, and round r's eleventh try was round r+1's first. A seed is now a hash of
everything that names the step: the configured seed, the scope (`round`, `loop`), the round
or iteration, the step's name and its try and wave. Two different steps share a seed only if
64-bit BLAKE2 hashes of different tuples collide.
"""

from __future__ import annotations

import hashlib


def step_seed(seed: int, scope: str, id_: int, step: str, *parts: int) -> int:
    """A seed in [0, 2**63) for one step: a function of all of its arguments, nothing else."""
    key = "\x1f".join(map(str, (seed, scope, id_, step, *parts))).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") >> 1
