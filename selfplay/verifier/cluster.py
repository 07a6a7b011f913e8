"""`RayVerifier`: the verifier spread over a Ray cluster, with the `Verifier` API.

Each Ray actor is a host process that owns an ordinary local `Verifier` (its own sandboxed
workers) on one node; the sandbox is the one described in `selfplay.verifier`, unchanged. Rows
reach an actor as arguments of a Ray call and verdicts come back as its result: nothing about a
row is put where a sandboxed process could see it (no environment variables, no files).

The driver parses rows (an invalid row is decided there, exactly as the local verifier decides
it), cuts the stream into chunks and keeps a bounded number of chunks in flight per actor
(`ray.wait`); verdicts are yielded in input order. Actors restart when they die (Ray's
`max_restarts`); a chunk whose actor died before answering is sent again, preferably to another
actor, and its rows are counted in `retried`. A verdict is only ever taken from a call that
returned, so each row gets exactly one verdict. A chunk whose actors die `max_attempts` times
gets "error" verdicts that say so, rather than looping forever.

Ray is optional: it is imported when a `RayVerifier` starts, and without it `RayUnavailable`
names the pip command (`selfplay.verifier.connect`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from selfplay.verifier.connect import RayUnavailable, connect, first_line, import_ray
from selfplay.verifier.records import InvalidRow, Row, Verdict, invalid, parse_row
from selfplay.verifier.sandbox import IsolationUnavailable, isolation_mode
from selfplay.verifier.verifier import Limits, Verifier

START_TIMEOUT_S = 300  # for every actor to start its sandboxes (Ray may first start a node)
SHARED_RETRIES = 5  # finding a shared actor that died with its creator (see _start_actors)


class _Grader:
    """The actor: a host process owning a local `Verifier` on its node."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.warnings: list[str] = []
        self.refused = self.failed = ""
        self.verifier = Verifier(**settings, warn=self.warnings.append)
        try:
            self.verifier.start()
        except IsolationUnavailable as e:
            self.refused = str(e)
        except Exception as e:  # reported by the driver as one sentence, not a dead actor
            self.failed = str(e) or type(e).__name__

    def describe(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "workers": self.verifier.n_workers,
            "isolation": self.verifier.isolation,
            "warnings": self.warnings,
            "refused": self.refused,
            "failed": self.failed,
        }

    def grade(self, rows: list[Row]) -> list[Verdict]:
        return self.verifier.grade(rows)


@dataclass(slots=True)
class _Chunk:
    rows: list[tuple[int, Row]]
    actor: int = -1
    attempts: int = 0


@dataclass(slots=True)
class _Actor:
    make: Callable[[], Any]  # creates the actor, or finds the shared one of that name
    node: str
    handle: Any = None
    workers: int = 0
    pid: int = 0
    load: int = 0  # chunks in flight, over every grade_iter call


class RayVerifier:
    """Grade rows on actors spread over a Ray cluster; the API of `Verifier`.

    `address`: "local" starts a loopback cluster; an address joins that cluster; None uses the
    cluster this process already belongs to (inside a Ray job) or RAY_ADDRESS. `actors`: how
    many (default: one per alive node, or with `cores_per_actor` one per that many of each
    node's CPUs), placed round-robin over the nodes (a soft preference: a restarted actor may
    land elsewhere). `workers`: sandboxed workers per actor (default: the node's CPUs shared
    among its actors). `shared`: the processes of one Ray job that ask for the same actors (same
    settings, same cluster) share them, found by name; they live as long as the process that
    created them (another process then creates them anew), and `close` leaves them running.
    Actors ask Ray for no CPUs, so they also fit a cluster whose CPUs a trainer has reserved;
    their sandboxes use the node's CPUs all the same.

    Verdicts equal the local verifier's (same parsing, same sandbox); they arrive in input
    order. `retried` counts rows sent again after an actor died. Thread-safe; a context
    manager; `close` kills the actors (not shared ones), and disconnects from Ray if `start`
    connected.
    """

    def __init__(
        self,
        address: str | None = None,
        actors: int | None = None,
        workers: int | None = None,
        timeout_s: float = 10.0,
        memory_mb: int = 1024,
        *,
        cores_per_actor: int | None = None,
        in_flight: int = 2,
        chunk_rows: int | None = None,
        max_attempts: int = 3,
        shared: bool = False,
        isolation: str | None = None,
        packages: tuple[str, ...] | None = None,
        warn=None,
        **limits: Any,
    ) -> None:
        self.address = address
        self.n_actors = actors
        self.workers = workers
        self.cores_per_actor = cores_per_actor
        self.shared = shared
        self.limits = Limits(timeout_s, memory_mb, **limits)
        self.settings = dict(
            timeout_s=timeout_s, memory_mb=memory_mb, isolation=isolation_mode(isolation),
            packages=packages, **limits,
        )  # fmt: skip
        self.in_flight, self.chunk_rows, self.max_attempts = in_flight, chunk_rows, max_attempts
        self._warn = warn or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self._actors: list[_Actor] = []
        self._lock = threading.Lock()
        self._connected = False
        self._closed = False
        self.retried = 0
        self.isolation: dict = {}

    # -- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> RayVerifier:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def n_workers(self) -> int:
        return sum(a.workers for a in self._actors)

    def actor_pids(self) -> list[int]:
        """The host process ids of the actors as they started (for tests and diagnostics)."""
        self.start()
        return [a.pid for a in self._actors]

    def start(self) -> None:
        """Connect and start the actors now (otherwise the first `grade` does)."""
        with self._lock:
            if self._actors:
                return
            if self._closed:
                raise RuntimeError("this RayVerifier is closed")
            self._connected = connect(self.address)
            try:
                self._start_actors()
            except BaseException:
                self._stop()
                raise

    def _start_actors(self) -> None:
        ray = import_ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) > 0]
        if not nodes:
            raise RayUnavailable("the Ray cluster has no alive node with CPUs")
        if self.cores_per_actor and not self.n_actors:
            placed = [
                n
                for n in nodes
                for _ in range(max(1, int(n["Resources"]["CPU"]) // self.cores_per_actor))
            ]
        else:
            count = self.n_actors or len(nodes)
            placed = [nodes[i % len(nodes)] for i in range(count)]
        remote = ray.remote(_Grader)
        for k, node in enumerate(placed):
            sharing = sum(1 for n in placed if n["NodeID"] == node["NodeID"])
            settings = dict(
                self.settings,
                workers=self.workers or max(1, int(node["Resources"]["CPU"]) // sharing),
            )
            options = dict(
                num_cpus=0,
                max_restarts=-1,  # a dead actor comes back; a chunk's retries are bounded
                max_concurrency=self.in_flight,  # chunks in flight run side by side
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=True),
            )
            if self.shared:
                # Named within this Ray job: every process of the job asking for the same
                # actors gets these (the first one creates them).
                key = json.dumps([settings, len(placed), k, node["NodeID"]], sort_keys=True)
                digest = hashlib.sha256(key.encode()).hexdigest()[:16]
                options.update(name=f"selfplay-verifier-{digest}", get_if_exists=True)
            actor = _Actor(
                lambda o=options, s=settings: remote.options(**o).remote(s), node["NodeID"]
            )
            actor.handle = actor.make()
            self._actors.append(actor)
        from ray.exceptions import GetTimeoutError, RayActorError

        for attempt in range(SHARED_RETRIES + 1):
            try:
                described = ray.get(
                    [a.handle.describe.remote() for a in self._actors], timeout=START_TIMEOUT_S
                )
                break
            except GetTimeoutError:
                raise RayUnavailable(
                    f"the verifier actors did not start within {START_TIMEOUT_S} s"
                ) from None
            except RayActorError as e:
                if not self.shared or attempt == SHARED_RETRIES:
                    raise RayUnavailable(
                        f"a verifier actor died while starting ({first_line(e)})"
                    ) from None
                # A shared actor whose creator just died can still be found by its name for a
                # moment, permanently dead: ask again once Ray has released the name.
                time.sleep(0.5 * (attempt + 1))
                for actor in self._actors:
                    actor.handle = actor.make()
        for actor, facts in zip(self._actors, described, strict=True):
            if facts["refused"]:
                raise IsolationUnavailable(facts["refused"])
            if facts["failed"]:
                raise RayUnavailable(
                    f"a verifier actor on node {actor.node[:12]} failed to start: {facts['failed']}"
                )
            actor.pid, actor.workers = facts["pid"], facts["workers"]
        self.isolation = described[0]["isolation"]
        for message in dict.fromkeys(m for facts in described for m in facts["warnings"]):
            self._warn(message)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()

    def _stop(self) -> None:
        if self._actors and not self.shared:  # shared actors serve other processes too
            ray = import_ray()
            for actor in self._actors:
                try:
                    ray.kill(actor.handle, no_restart=True)
                except Exception:  # already gone with its cluster
                    pass
        self._actors.clear()
        if self._connected:
            import_ray().shutdown()
            self._connected = False

    # -- grading ------------------------------------------------------------------------
    def grade(self, rows: Iterable[dict | Row | Verdict]) -> list[Verdict]:
        """Grade rows; verdicts come back in input order. A `Verdict` item passes through."""
        rows = list(rows)
        self.start()
        # Small batches (a trainer's step) are spread over every actor.
        chunk = max(1, math.ceil(len(rows) / (len(self._actors) * self.in_flight)))
        return list(self.grade_iter(rows, chunk_rows=min(chunk, self._chunk_rows())))

    def _chunk_rows(self) -> int:
        # Enough rows for every worker of the smallest actor twice over, and at least 16: a Ray
        # call costs the driver about as much CPU as 30 rows (benchmarks/ray_verify.py).
        return self.chunk_rows or max(16, 2 * min(a.workers for a in self._actors))

    def grade_iter(
        self, rows: Iterable[dict | Row], window: int | None = None, chunk_rows: int | None = None
    ) -> Iterator[Verdict]:
        """Grade a stream of rows lazily, keeping at most `window` rows in flight or waiting
        to be yielded (default: `in_flight` chunks per actor)."""
        self.start()
        chunk = chunk_rows or self._chunk_rows()
        window = max(window or self.in_flight * len(self._actors) * chunk, chunk)
        pending: dict[Any, _Chunk] = {}
        results: dict[int, Verdict] = {}
        it = iter(rows)
        try:
            yield from self._run(it, chunk, window, pending, results)
        finally:
            # A consumer that stops early leaves chunks in flight: they no longer count.
            with self._lock:
                for c in pending.values():
                    if c.actor < len(self._actors):
                        self._actors[c.actor].load -= 1

    def _run(self, it, chunk, window, pending, results) -> Iterator[Verdict]:
        ray = import_ray()
        sent = next_out = 0
        exhausted = False
        while True:
            while not exhausted and sent - next_out + chunk <= window:
                batch: list[tuple[int, Row]] = []
                while len(batch) < chunk:
                    try:
                        item = next(it)
                    except StopIteration:
                        exhausted = True
                        break
                    prepared = _prepare(item, sent)
                    if isinstance(prepared, Verdict):
                        results[sent] = prepared
                    else:
                        batch.append((sent, prepared))
                    sent += 1
                if batch:
                    self._send(_Chunk(batch), pending)
            while next_out in results:
                yield results.pop(next_out)
                next_out += 1
            if exhausted and next_out == sent:
                return
            if not pending:
                continue
            [ref], _ = ray.wait(list(pending), num_returns=1)
            self._receive(ref, pending, results)

    def _send(self, chunk: _Chunk, pending: dict[Any, _Chunk]) -> None:
        with self._lock:
            if not self._actors:
                raise RuntimeError("this RayVerifier is closed")
            others = [i for i in range(len(self._actors)) if i != chunk.actor] or [chunk.actor]
            index = min(others, key=lambda i: self._actors[i].load)
            actor = self._actors[index]
            actor.load += 1
        chunk.actor = index
        pending[actor.handle.grade.remote([row for _, row in chunk.rows])] = chunk

    def _receive(self, ref: Any, pending: dict[Any, _Chunk], results: dict[int, Verdict]) -> None:
        ray = import_ray()
        from ray.exceptions import ActorUnavailableError, RayActorError

        chunk = pending.pop(ref)
        with self._lock:
            if chunk.actor < len(self._actors):
                self._actors[chunk.actor].load -= 1
        try:
            verdicts = ray.get(ref)
        except (RayActorError, ActorUnavailableError) as e:
            # The actor died (or became unreachable) before answering: no verdict of this
            # chunk was taken, so sending it again cannot duplicate one.
            chunk.attempts += 1
            with self._lock:
                self.retried += len(chunk.rows)
                if self.shared and chunk.actor < len(self._actors):
                    # A shared actor does not restart when the process that created it has
                    # gone: find it again by name, or create it anew (then this process owns it).
                    actor = self._actors[chunk.actor]
                    actor.handle = actor.make()
            if chunk.attempts < self.max_attempts:
                self._send(chunk, pending)
                return
            detail = (
                f"verifier error: the Ray actors grading this row died {chunk.attempts} times"
                f" ({first_line(e)})"
            )
            verdicts = [
                Verdict(row.id, False, "error", 0, len(row.tests), 0.0, detail[:2000])
                for _, row in chunk.rows
            ]
        for (index, _), verdict in zip(chunk.rows, verdicts, strict=True):
            results[index] = verdict


def _prepare(item: Any, index: int) -> Row | Verdict:
    """What the local verifier does before a row reaches a worker, done on the driver."""
    if isinstance(item, Verdict | Row):
        return item
    try:
        return parse_row(item)
    except InvalidRow as e:
        row_id = item.get("id") if isinstance(item, dict) else None
        return invalid(row_id if isinstance(row_id, str) else f"#{index}", str(e))
