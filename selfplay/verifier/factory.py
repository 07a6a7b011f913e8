"""`make_verifier`: the one place that chooses between grading here (`Verifier`) and on a
Ray cluster (`RayVerifier`), so that every caller (the run's engine, the reward pool, the
CLI's verify, serve-rewards and eval) passes the same settings the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from selfplay.verifier.readable import default_packages


def configured_verifier(settings: Any) -> Any:
    """The verifier a config's `verifier:` section (`selfplay.config.VerifierConfig`) names:
    a run's, a loop's, training's alike."""
    s = settings
    return make_verifier(s.workers, s.timeout_s, s.memory_mb, ray=s.ray, packages=s.packages)


def make_verifier(
    workers: int | None = None,
    timeout_s: float = 10.0,
    memory_mb: int = 1024,
    *,
    ray: str | None = None,
    packages: Iterable[str] | None = None,
    **options: Any,
) -> Any:
    """A verifier with these settings: on the Ray cluster `ray` names ('local', an address,
    'auto'; '' is the cluster this process is connected to), or in this process (None).
    `packages`: what programs may import beyond the standard library (None:
    $SELFPLAY_PACKAGES, else numpy, pandas and pytest)."""
    packages = default_packages() if packages is None else tuple(packages)
    if ray is not None:
        from selfplay.verifier.cluster import RayVerifier

        actors = options.pop("actors", None)
        return RayVerifier(
            ray or None, actors, workers, timeout_s, memory_mb, packages=packages, **options
        )
    from selfplay.verifier.verifier import Verifier

    return Verifier(workers, timeout_s, memory_mb, packages=packages, **options)
