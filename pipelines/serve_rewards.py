"""`selfplay serve-rewards`: the rewards over HTTP (`selfplay.rewards.service.RewardServer`),
graded on this machine or on a Ray cluster, until interrupted."""

from __future__ import annotations

import ipaddress
import threading
from typing import Annotated

import typer

from pipelines.common import (
    ActorsOption,
    CoresPerActorOption,
    GradeOnRayOption,
    IsolationOption,
    choose_isolation,
    failure,
)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_rewards(
    ray: GradeOnRayOption = None,
    isolation: IsolationOption = None,
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[
        int, typer.Option(help="Port to listen on (0 picks a free one).", min=0, max=65535)
    ] = 8100,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="SELFPLAY_REWARD_TOKEN",
            help="Token every request must carry (Authorization: Bearer, or ?token= in the URL); "
            "required beyond loopback. Better given as $SELFPLAY_REWARD_TOKEN.",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Wall-clock limit per row, seconds.", min=0.01)
    ] = 10.0,
    memory_mb: Annotated[int, typer.Option(help="Memory limit per row, MiB.", min=16)] = 1024,
    workers: Annotated[
        int,
        typer.Option(
            help="Sandboxed workers (with --ray: per actor; 0, the default: CPU count).",
            min=0,
            show_default=False,
        ),
    ] = 0,
    actors: ActorsOption = 0,
    cores_per_actor: CoresPerActorOption = 0,
) -> None:
    """Serve rewards over HTTP: OpenRLHF's remote reward protocol at /get_reward, and /grade."""
    from selfplay.rewards.service import RewardServer
    from selfplay.verifier import IsolationUnavailable
    from selfplay.verifier.connect import RayUnavailable
    from selfplay.verifier.factory import make_verifier

    choose_isolation(isolation, "serve-rewards")
    if not _loopback(host) and not token:
        raise failure(
            "serve-rewards",
            f"listening on {host} needs a token (--token or $SELFPLAY_REWARD_TOKEN).",
        )
    if token is not None and not token.strip():
        raise failure("serve-rewards", "the token is empty.")
    verifier = make_verifier(
        workers or None, timeout, memory_mb, ray=ray,
        **({"actors": actors or None, "cores_per_actor": cores_per_actor or None} if ray else {}),
    )  # fmt: skip
    try:
        with verifier:
            verifier.start()  # fail here, not on the first request
            try:
                server = RewardServer(verifier, host=host, port=port, token=token)
            except OSError as e:  # the port is taken, or the address is not this machine's
                raise failure(
                    "serve-rewards", f"cannot listen on {host}:{port} ({e.strerror or e})."
                ) from None
            with server:
                typer.echo(
                    f"serving rewards at {server.url} "
                    f"(OpenRLHF: --reward.remote_url {server.url}/get_reward)",
                )
                threading.Event().wait()
    except (IsolationUnavailable, RayUnavailable) as e:
        raise failure("serve-rewards", e) from None
    except KeyboardInterrupt:
        pass
