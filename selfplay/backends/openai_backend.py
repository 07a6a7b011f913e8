"""Any OpenAI-compatible chat endpoint (`vllm serve`, SGLang, TGI, `selfplay.backends.serve`).

One `POST {base_url}/chat/completions` per prompt with `n`, `temperature`, `top_p`,
`max_tokens`, `stop` and `seed`; requests run concurrently so the server can batch them.
The standard library's HTTP client is enough for this, so the backend needs no extra.

A prefill is sent as a final assistant message with vllm's `continue_final_message`
extension (also understood by `selfplay.backends.serve`); servers without it reject the
request or ignore the flag.

`base_url` may name several servers (a list, or URLs separated by commas): prompts are
spread over them in turn, each server with `concurrency` requests in flight, and a prompt
whose server cannot be reached goes to the next one (counted in `failovers`). This is how
generation uses several GPU nodes without Ray: one `vllm serve` per node.

The API reports tokens per request (`usage.completion_tokens`), not per choice: with n > 1
the count is shared among the choices in proportion to their text length.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from selfplay.backends.base import Backend, BackendError, Completion, Prompt, Sampling

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DOWN_FOR_S = 30.0


class OpenAIBackend(Backend):
    """Talks to a chat-completions server. `model` is the name the server serves."""

    name = "openai"

    def __init__(
        self,
        model: str = "default",
        *,
        base_url: str | list[str] | None = None,
        api_key: str | None = None,
        timeout_s: float = 600.0,
        concurrency: int = 8,
        retries: int = 2,
    ) -> None:
        super().__init__(model)
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        urls = base_url.split(",") if isinstance(base_url, str) else list(base_url)
        self.base_urls = [u.strip().rstrip("/") for u in urls if u.strip()]
        if not self.base_urls:
            raise ValueError("base_url names no server")
        self.base_url = self.base_urls[0]
        self.failovers = 0
        self._down: dict[str, float] = {}  # server -> until when it counts as down
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY")
        self.timeout_s, self.concurrency, self.retries = timeout_s, max(1, concurrency), retries

    def _generate(
        self, prompts: list[Prompt], n: int, sampling: Sampling
    ) -> list[list[Completion]]:
        workers = min(self.concurrency * len(self.base_urls), len(prompts))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda ip: self._chat(*ip, n, sampling), enumerate(prompts)))

    def _chat(self, index: int, prompt: Prompt, n: int, sampling: Sampling) -> list[Completion]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(prompt.messages),
            "n": n,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_new_tokens,
        }
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if prompt.prefill:
            body["messages"].append({"role": "assistant", "content": prompt.prefill})
            body |= {"continue_final_message": True, "add_generation_prompt": False}
        reply = self._post_any(index, "/chat/completions", body)
        try:
            choices = sorted(reply["choices"], key=lambda c: c.get("index", 0))
            texts = [c["message"]["content"] or "" for c in choices]
            reasons = [c.get("finish_reason") for c in choices]
            used = int((reply.get("usage") or {}).get("completion_tokens") or 0)
        except (KeyError, TypeError, ValueError) as exc:
            raise BackendError(
                f"{self.base_url} answered with a malformed chat completion ({exc!r})"
            ) from exc
        if len(texts) != n:
            raise BackendError(f"{self.base_url} returned {len(texts)} choices for n={n}")
        return [
            Completion(text, tokens, "length" if reason == "length" else "stop")
            for text, tokens, reason in zip(texts, _share(used, texts), reasons, strict=True)
        ]

    def _post_any(self, index: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to prompt `index`'s server; if it cannot be reached, to the next ones."""
        urls = self.base_urls
        order = [urls[(index + k) % len(urls)] for k in range(len(urls))]
        # A server found down is tried last for a while, so its prompts stop paying retries.
        now = time.monotonic()
        order.sort(key=lambda url: self._down.get(url, 0.0) > now)
        for k, url in enumerate(order):
            try:
                return self._post(path, body, url)
            except _Unreachable as exc:
                if k == len(order) - 1:
                    raise BackendError(str(exc)) from exc
                self._down[url] = time.monotonic() + DOWN_FOR_S
                self.failovers += 1  # a lost update under threads only undercounts
        raise AssertionError("unreachable")

    def _post(self, path: str, body: dict[str, Any], base_url: str | None = None) -> dict[str, Any]:
        base_url = base_url or self.base_url
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(base_url + path, data, headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode(errors="replace")[:300]
                if exc.code < 500 or attempt == self.retries:
                    raise BackendError(
                        f"{base_url}{path} answered HTTP {exc.code}: {detail}"
                    ) from exc
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if attempt == self.retries:
                    reason = getattr(exc, "reason", exc)
                    raise _Unreachable(
                        f"cannot reach the OpenAI-compatible server at {base_url} "
                        f"({reason}); start one (for example `vllm serve MODEL`) or pass "
                        f"base_url"
                    ) from exc
            except json.JSONDecodeError as exc:
                raise BackendError(f"{base_url}{path} answered with invalid JSON") from exc
            time.sleep(0.5 * 2**attempt)  # a restarting or overloaded server gets a moment
        raise AssertionError("unreachable")


class _Unreachable(BackendError):
    """The server did not answer at all (as opposed to answering with an error)."""


def _share(total: int, texts: list[str]) -> list[int]:
    """Split a token total over texts in proportion to their length, keeping the sum."""
    if len(texts) == 1:
        return [total]
    weights = [len(t) for t in texts]
    whole = sum(weights) or len(texts)
    weights = weights if sum(weights) else [1] * len(texts)
    shares = [total * w // whole for w in weights]
    shares[max(range(len(texts)), key=weights.__getitem__)] += total - sum(shares)
    return shares
