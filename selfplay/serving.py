"""`GatheringServer`: an HTTP server whose concurrent requests are handled as batches.

Both of selfplay's servers (`selfplay serve`, the OpenAI-compatible model server, and
`selfplay serve-rewards`) answer many clients that each send a little work, while the work
is cheapest in batches (a model's forward pass, a verifier batch). Request threads call
`handle(item, size)` and wait; one batch thread takes the first queued item, waits
`gather_s` so that requests sent together arrive together, adds what is queued up to
`max_batch` (counted in `size`), and hands the batch to `process`, which returns one result
per item: a value, or an exception that goes back to that item's client alone.

`JsonHandler` is what the two servers' request handlers share: one subclass per server
names its routes, and reaches the server it answers for as `self.app`.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _HTTPServer(ThreadingHTTPServer):
    # Clients connect all at once (rollout workers, a proposer's samples): the default
    # backlog of 5 drops connections.
    request_queue_size = 1024
    daemon_threads = True
    app: Any = None  # the GatheringServer whose requests this serves


class JsonHandler(BaseHTTPRequestHandler):
    """A request handler that speaks JSON: keep-alive HTTP/1.1, no log line per request, and
    `send_json`; subclasses add `do_GET`/`do_POST` and the shape of their `error` replies."""

    protocol_version = "HTTP/1.1"

    @property
    def app(self) -> Any:
        """The `GatheringServer` this request came to."""
        return self.server.app

    def log_message(self, format: str, *args: Any) -> None:  # quiet: clients send thousands
        pass

    def error(self, code: int, message: str) -> None:
        raise NotImplementedError

    def send_json(self, code: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class GatheringServer:
    """Serves `handler` on `host:port` (port 0 picks a free one) from background threads.
    Subclasses set `handler` and implement `process(items) -> list[result | Exception]`."""

    handler: type[JsonHandler]

    def __init__(self, *, host: str, port: int, max_batch: int, gather_s: float) -> None:
        self.max_batch, self.gather_s = max_batch, gather_s
        self._queue: queue.Queue[tuple[Any, int, Future] | None] = queue.Queue()
        self.httpd = _HTTPServer((host, port), self.handler)
        self.httpd.app = self
        self._threads: list[threading.Thread] = []

    @property
    def address(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Any:
        serve = lambda: self.httpd.serve_forever(poll_interval=0.05)  # noqa: E731 - quick close()
        for target in (self._batch_loop, serve):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def close(self) -> None:
        if not self._threads:
            return
        self.httpd.shutdown()
        self.httpd.server_close()
        self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout=60)
        self._threads.clear()

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def handle(self, item: Any, size: int = 1) -> Any:
        """Queue one request's work and wait for its result (from request threads)."""
        future: Future[Any] = Future()
        self._queue.put((item, size, future))
        return future.result()

    def process(self, items: list[Any]) -> list[Any]:
        raise NotImplementedError

    def _batch_loop(self) -> None:
        while (first := self._queue.get()) is not None:
            time.sleep(self.gather_s)  # let requests sent together arrive together
            batch, size = [first], first[1]
            while size < self.max_batch:
                try:
                    queued = self._queue.get_nowait()
                except queue.Empty:
                    break
                if queued is None:
                    self._queue.put(None)  # close() asked to stop: finish this batch first
                    break
                batch.append(queued)
                size += queued[1]
            try:
                results = self.process([item for item, _, _ in batch])
            except Exception as exc:  # the error goes back to each waiting client
                results = [exc] * len(batch)
            for (_, _, future), result in zip(batch, results, strict=True):
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)
