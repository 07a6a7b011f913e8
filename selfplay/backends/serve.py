"""A small OpenAI-compatible server in front of any backend.

`POST /v1/chat/completions` (with n, temperature, top_p, max_tokens, stop, seed and vllm's
`continue_final_message` for a prefilled assistant turn), `GET /v1/models`, `GET /health`.
Requests that arrive together are gathered into one `Backend.generate` call, so concurrent
clients share a batch. No streaming, no tools, no logprobs.

    selfplay serve --model bundled --port 8000

It exists so that the OpenAI backend is tested against a real server, and so that one
loaded model can serve several processes on a machine without vllm.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from selfplay.backends.base import Backend, Completion, Prompt, Sampling
from selfplay.serving import GatheringServer, JsonHandler


class ChatHandler(JsonHandler):
    """The OpenAI routes; `self.app` is the `ChatServer`."""

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/health":
            self.send_json(200, {"status": "ok"})
        elif self.path.rstrip("/") == "/v1/models":
            model = {"id": self.app.model_name, "object": "model", "owned_by": "selfplay"}
            self.send_json(200, {"object": "list", "data": [model]})
        else:
            self.error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self.error(404, f"no route {self.path}")
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            prompt, n, sampling = parse_request(body)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            return self.error(400, str(exc))
        if body.get("model") not in (None, self.app.model_name):
            return self.error(404, f"the model {body['model']!r} does not exist here")
        try:
            completions = self.app.submit(prompt, n, sampling)
        except Exception as exc:  # the client gets the reason; the server keeps serving
            return self.error(500, str(exc) or type(exc).__name__)
        self.send_json(200, _response(self.app.model_name, completions))

    def error(self, code: int, message: str) -> None:
        kind = "invalid_request_error" if code < 500 else "server_error"
        self.send_json(code, {"error": {"message": message, "type": kind, "code": code}})


class ChatServer(GatheringServer):
    """Serves `backend` on `host:port` (port 0 picks a free one) from background threads."""

    handler = ChatHandler

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
        super().__init__(host=host, port=port, max_batch=max_batch, gather_s=gather_s)

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
