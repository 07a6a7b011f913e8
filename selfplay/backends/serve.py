"""A small OpenAI-compatible server in front of any backend.

`POST /v1/chat/completions` (with n, temperature, top_p, max_tokens, stop, seed and vllm's
`continue_final_message` for a prefilled assistant turn), `GET /v1/models`, `GET /health`.
Requests that arrive together are gathered into one `Backend.generate` call, so concurrent
clients share a batch. No streaming, no tools, no logprobs.

    python -m selfplay.backends.serve --model bundled --port 8000

It exists so that the OpenAI backend is tested against a real server, and so that one
loaded model can serve several processes on a machine without vllm.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from selfplay.backends.base import Backend, BackendError, Completion, Prompt, Sampling
from selfplay.serving import GatheringServer


class ChatServer(GatheringServer):
    """Serves `backend` on `host:port` (port 0 picks a free one) from background threads."""

    def __init__(
        self,
        backend: Backend,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        model_name: str | None = None,
        max_batch: int = 16,
        gather_s: float = 0.05,
    ) -> None:
        self.backend, self.model_name = backend, model_name or backend.model
        super().__init__(_handler_for(self), host=host, port=port, max_batch=max_batch,
                         gather_s=gather_s)  # fmt: skip

    @property
    def url(self) -> str:
        return f"{self.address}/v1"

    def start(self) -> ChatServer:
        self.backend.load()
        return super().start()

    def submit(self, prompt: Prompt, n: int, sampling: Sampling) -> list[Completion]:
        """Queue one request and wait for its completions (called from request threads)."""
        return self.handle((prompt, n, sampling))

    def process(self, items: list[tuple[Prompt, int, Sampling]]) -> list[Any]:
        # One generate call per (n, sampling): a group that fails fails its own clients only.
        groups: dict[tuple[int, Sampling], list[int]] = {}
        for index, (_, n, sampling) in enumerate(items):
            groups.setdefault((n, sampling), []).append(index)
        results: list[Any] = [None] * len(items)
        for (n, sampling), indices in groups.items():
            try:
                out = self.backend.generate([items[i][0] for i in indices], n, sampling)
            except Exception as exc:
                out = [exc] * len(indices)
            for i, completions in zip(indices, out, strict=True):
                results[i] = completions
        return results


def parse_request(body: Any) -> tuple[Prompt, int, Sampling]:
    """A chat-completions request body as our types; ValueError names the bad field."""
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object")
    if body.get("stream"):
        raise ValueError("stream: streaming is not supported by this server")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: must be a non-empty list")
    if not all(isinstance(m, dict) for m in messages):
        raise ValueError("messages: each message must be an object with a role and a content")
    messages = [dict(m) for m in messages]
    prefill = ""
    if body.get("continue_final_message") and messages[-1].get("role") == "assistant":
        prefill = messages.pop()["content"]
    n = 1 if body.get("n") is None else body["n"]
    if not isinstance(n, int) or not 1 <= n <= 128:
        raise ValueError(f"n: must be an integer from 1 to 128, got {n!r}")
    stop = body.get("stop") or ()
    stop = (stop,) if isinstance(stop, str) else stop
    if not isinstance(stop, list | tuple):
        raise ValueError(f"stop: must be a string or a list of strings, got {stop!r}")
    seed = body.get("seed")
    if seed is not None and not isinstance(seed, int):
        raise ValueError(f"seed: must be an integer, got {seed!r}")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    sampling = Sampling(
        temperature=_number(body, "temperature", 1.0),
        top_p=_number(body, "top_p", 1.0),
        max_new_tokens=int(_number(body, "max_tokens", 256, max_tokens)),
        stop=tuple(stop),
        seed=seed,
    )
    return Prompt(messages=messages, prefill=prefill), n, sampling


def _number(body: dict[str, Any], key: str, default: float, value: Any = None) -> float:
    value = body.get(key) if value is None else value
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key}: must be a number, got {value!r}")
    return value


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/health":
                self._send(200, {"status": "ok"})
            elif self.path.rstrip("/") == "/v1/models":
                model = {"id": server.model_name, "object": "model", "owned_by": "selfplay"}
                self._send(200, {"object": "list", "data": [model]})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._error(404, f"no route {self.path}")
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                prompt, n, sampling = parse_request(body)
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                return self._error(400, str(exc))
            if body.get("model") not in (None, server.model_name):
                return self._error(404, f"the model {body['model']!r} does not exist here")
            try:
                completions = server.submit(prompt, n, sampling)
            except Exception as exc:  # the client gets the reason; the server keeps serving
                return self._error(500, str(exc) or type(exc).__name__)
            self._send(200, _response(server.model_name, completions))

        def _error(self, code: int, message: str) -> None:
            kind = "invalid_request_error" if code < 500 else "server_error"
            self._send(code, {"error": {"message": message, "type": kind, "code": code}})

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _response(model: str, completions: list[Completion]) -> dict[str, Any]:
    tokens = sum(c.tokens for c in completions)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": c.text},
                "finish_reason": c.finish_reason,
            }
            for i, c in enumerate(completions)
        ],
        "usage": {"completion_tokens": tokens, "total_tokens": tokens},
    }


def main(argv: list[str] | None = None) -> int:
    from selfplay.backends import make_backend

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="bundled", help="model spec (default: bundled)")
    parser.add_argument("--backend", default="transformers", help="backend serving the model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--name", default=None, help="model name clients send (default: --model)")
    args = parser.parse_args(argv)
    try:
        backend = make_backend(args.backend, args.model)
        with ChatServer(backend, host=args.host, port=args.port, model_name=args.name) as server:
            print(f"serving {server.model_name} at {server.url}", flush=True)
            threading.Event().wait()
    except (BackendError, OSError) as exc:  # OSError: the port is taken or not ours
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
