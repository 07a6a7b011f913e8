"""`selfplay serve`: any backend behind a small OpenAI-compatible HTTP server.

The server (`selfplay.backends.serve.ChatServer`) gathers requests that arrive together into
one `generate` call; `selfplay run --backend openai` and any OpenAI client can use it.
"""

from __future__ import annotations

import threading
from typing import Annotated

import typer

from pipelines.common import failure


def serve(
    model: Annotated[
        str, typer.Option(help="Model: 'bundled', a .gguf file, a model directory or a Hub id.")
    ] = "bundled",
    backend: Annotated[
        str,
        typer.Option(
            help="Backend serving it: auto (vllm where it runs, else transformers), "
            "transformers, vllm, openai or scripted."
        ),
    ] = "auto",
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[
        int, typer.Option(help="Port to listen on (0 picks a free one).", min=0, max=65535)
    ] = 8000,
    name: Annotated[
        str | None, typer.Option(help="Model name clients send (default: --model).")
    ] = None,
) -> None:
    """Serve a model over an OpenAI-compatible HTTP API until interrupted."""
    from selfplay.backends import BackendError, make_backend
    from selfplay.backends.serve import ChatServer

    try:
        engine = make_backend(backend, model)
        server = ChatServer(engine, host=host, port=port, model_name=name)
    except BackendError as e:
        raise failure("serve", e) from None
    except OSError as e:  # the port is taken, or the address is not this machine's
        raise failure("serve", f"cannot listen on {host}:{port} ({e.strerror or e}).") from None
    try:
        with server:
            typer.echo(f"serving {server.model_name} at {server.url}")
            threading.Event().wait()
    except BackendError as e:
        raise failure("serve", e) from None
    except KeyboardInterrupt:
        pass
