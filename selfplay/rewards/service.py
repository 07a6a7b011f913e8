"""Rewards over HTTP: `selfplay serve-rewards`, for trainers that call a reward URL.

- `POST /get_reward`: OpenRLHF's remote reward protocol (`--reward.remote_url
  http://HOST:PORT/get_reward`). OpenRLHF 0.11 posts `{"query": [...], "prompts": [...],
  "labels": [...]}` (`SingleTurnAgentExecutor._fetch_rewards_via_http` in
  openrlhf/utils/agent.py) and reads `rewards`, `scores` and `extra_logs` from the JSON it gets
  back; the responses are graded exactly as the OpenRLHF reward file grades them
  (`openrlhf_responses`, `grade_responses`), so the scores are the file's.
- `POST /grade`: `{"responses": [...], "ground_truths": [...]}` (labels as exported, JSON
  strings or objects) for any trainer; answers `{"scores": [Score.to_dict(), ...]}`.
- `GET /health`.

Requests that arrive together are gathered into one `grade_responses` call, so many clients
sending one response each still fill the verifier (local, or `RayVerifier` over a cluster).
With a token, every request must carry it, as `Authorization: Bearer TOKEN` or as `?token=`
in the URL (OpenRLHF posts to the URL as given and sends no headers of its own). A malformed
request gets a 4xx status and `{"error": "<one sentence>"}`; a grading failure gets 500.
"""

from __future__ import annotations

import hmac
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from selfplay.rewards.frameworks import openrlhf_logs, openrlhf_responses
from selfplay.rewards.grade import Score, grade_responses
from selfplay.serving import GatheringServer, JsonHandler

MAX_BODY = 256 * 1024 * 1024  # bytes; a request beyond it is refused before it is read


class BadRequest(ValueError):
    """A request the server cannot grade; the message is one sentence."""


def _strings(body: dict[str, Any], key: str) -> list[str]:
    value = body.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"'{key}' must be a list of strings")
    return value


def _labels(body: dict[str, Any], key: str) -> list[Any]:
    # A label that cannot be read is not a malformed request: it scores 0 with gradable False,
    # as it does in the reward file.
    value = body.get(key)
    if not isinstance(value, list):
        raise BadRequest(f"'{key}' must be a list of ground-truth labels")
    return value


def _same_length(body: dict[str, Any], *lists: tuple[str, list]) -> None:
    if len({len(v) for _, v in lists}) > 1:
        counts = ", ".join(f"{len(v)} {name}" for name, v in lists)
        raise BadRequest(f"the lists must have one item per response, got {counts}")


def parse_openrlhf(body: Any) -> tuple[list[str], list[Any]]:
    """OpenRLHF's request as (responses, labels); BadRequest names the problem."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    queries, prompts, labels = (
        _strings(body, "query"),
        _strings(body, "prompts"),
        _labels(body, "labels"),
    )
    _same_length(body, ("queries", queries), ("prompts", prompts), ("labels", labels))
    return openrlhf_responses(queries, prompts), labels


def parse_grade(body: Any) -> tuple[list[str], list[Any]]:
    """A `/grade` request as (responses, labels); BadRequest names the problem."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    responses, labels = _strings(body, "responses"), _labels(body, "ground_truths")
    _same_length(body, ("responses", responses), ("ground truths", labels))
    return responses, labels


ROUTES = {"/get_reward": parse_openrlhf, "/grade": parse_grade}


class RewardHandler(JsonHandler):
    """The reward routes; `self.app` is the `RewardServer`."""

    def _authorised(self) -> bool:
        token = self.app.token
        if token is None:
            return True
        given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        query = parse_qs(urlsplit(self.path).query).get("token", [""])[0]
        ok = any(hmac.compare_digest(t.encode(), token.encode()) for t in (given, query))
        if not ok:
            self.error(401, "this server needs its token, as 'Authorization: Bearer' or ?token=")
        return ok

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path != "/health":
            return self.error(404, f"no route {path or '/'}; POST /get_reward or /grade")
        if self._authorised():
            self.send_json(200, {"status": "ok", "verifier": type(self.app.verifier).__name__})

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        parse = ROUTES.get(path)
        if parse is None:
            self._drain()
            return self.error(404, f"no route {path or '/'}; POST /get_reward or /grade")
        if not self._authorised():
            return self._drain()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return self.error(400, "the Content-Length header is not a number")
        if length > MAX_BODY:
            self.close_connection = True
            return self.error(413, f"the request body is over {MAX_BODY} bytes")
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, UnicodeDecodeError):
            return self.error(400, "the request body is not valid JSON")
        try:
            responses, labels = parse(body)
        except BadRequest as exc:
            return self.error(400, str(exc))
        try:
            scores = self.app.score(responses, labels)
        except Exception as exc:  # the client gets the reason; the server keeps serving
            return self.error(500, f"grading failed: {str(exc) or type(exc).__name__}")
        if path == "/grade":
            return self.send_json(200, {"scores": [s.to_dict() for s in scores]})
        rewards = [s.score for s in scores]
        self.send_json(
            200, {"rewards": rewards, "scores": rewards, "extra_logs": openrlhf_logs(scores)}
        )

    def _drain(self) -> None:
        # Read the body of a refused request, so the connection can carry the next one.
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = MAX_BODY + 1
        if length > MAX_BODY:
            self.close_connection = True
        else:
            self.rfile.read(length)

    def error(self, code: int, message: str) -> None:
        self.send_json(code, {"error": message.rstrip(".") + "."})


class RewardServer(GatheringServer):
    """Serves rewards graded by `verifier` on `host:port` (port 0 picks a free one) from
    background threads. Batches hold at most `max_batch` responses (a larger request is one
    batch of its own); the server waits `gather_s` after the first request of a batch."""

    handler = RewardHandler

    def __init__(
        self,
        verifier: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 8100,
        token: str | None = None,
        max_batch: int = 1024,
        gather_s: float = 0.01,
    ) -> None:
        if token is not None and not token.strip():
            raise ValueError("the token is empty")  # it would let every request through
        self.verifier, self.token = verifier, token
        self.batches = 0  # grade_responses calls so far (how well requests were gathered)
        super().__init__(host=host, port=port, max_batch=max_batch, gather_s=gather_s)

    @property
    def url(self) -> str:
        return self.address

    def score(self, responses: list[str], labels: list[Any]) -> list[Score]:
        """Queue one request's responses and wait for their scores (from request threads)."""
        if not responses:
            return []
        return self.handle((responses, labels), size=len(responses))

    def process(self, items: list[tuple[list[str], list[Any]]]) -> list[list[Score]]:
        responses = [r for rs, _ in items for r in rs]
        labels = [g for _, gs in items for g in gs]
        scores = grade_responses(responses, labels, self.verifier)
        self.batches += 1
        out, start = [], 0
        for rs, _ in items:
            out.append(scores[start : start + len(rs)])
            start += len(rs)
        return out
