"""Generation on a Ray cluster: model engines as actors behind one `generate`.

    make_backend("ray", "Qwen/Qwen2.5-Coder-7B-Instruct", engine="vllm", engines=8)

starts `engines` Ray actors, each owning one backend of kind `engine` (vLLM on its own GPUs,
or transformers, openai or scripted) loaded once, and splits the prompts of every
`generate` call over them in contiguous shares, so each engine batches its share;
completions come back in prompt order, as from any backend. The process that calls
`generate` (the one holding the bank) only sends prompts and receives text, so it stays the
bank's single writer.

- `engines`: default one per `gpus_per_engine` GPUs of the cluster for vLLM, else one.
- `gpus_per_engine` (vLLM): GPUs per actor, passed to vLLM as `tensor_parallel_size`, so a
  model too big for one GPU runs as tensor-parallel groups.
- Faults: an actor that dies mid-call (its process, its node) has its share sent to another
  live actor, and Ray restarts the dead one (`max_restarts`); the prompts sent again are
  counted in `retried`. A share whose actors die `max_attempts` times raises `BackendError`.
- `address`: the cluster (`"local"` starts one on loopback; None joins the cluster this
  process belongs to, as inside a trainer, or RAY_ADDRESS).
"""

from __future__ import annotations

import os
from typing import Any

from selfplay.backends.base import Backend, BackendError, Completion, Prompt, Sampling


class _Engine:
    """The actor: one loaded backend."""

    def __init__(self, engine: str, model: str, options: dict[str, Any]) -> None:
        from selfplay.backends import make_backend

        self.backend = make_backend(engine, model, **options)
        self.backend.load()

    def pid(self) -> int:
        return os.getpid()

    def generate(self, prompts: list[Prompt], n: int, sampling: Sampling) -> list[list[Completion]]:
        return self.backend.generate(prompts, n, sampling)


class RayBackend(Backend):
    name = "ray"
    repeats_greedy = False  # each engine decides, as it would alone

    def __init__(
        self,
        model: str | None = None,
        *,
        engine: str = "vllm",
        engines: int | None = None,
        address: str | None = None,
        gpus_per_engine: int = 1,
        cpus_per_engine: float = 1.0,
        max_attempts: int = 3,
        engine_options: dict[str, Any] | None = None,
    ) -> None:
        from selfplay.backends import BACKENDS, DEFAULT_MODEL

        super().__init__(model or DEFAULT_MODEL)
        if engine not in BACKENDS or engine == "ray":
            raise ValueError(f"unknown engine {engine!r}; choose one of: "
                             + ", ".join(b for b in BACKENDS if b != "ray"))  # fmt: skip
        if engines is not None and engines < 1:
            raise ValueError("engines must be at least 1")
        self.engine, self.engines, self.address = engine, engines, address
        self.gpus = gpus_per_engine if engine == "vllm" else 0
        self.cpus, self.max_attempts = cpus_per_engine, max(1, max_attempts)
        self.engine_options = dict(engine_options or {})
        if engine == "vllm" and gpus_per_engine > 1:
            self.engine_options.setdefault("tensor_parallel_size", gpus_per_engine)
        self.retried = 0
        self._actors: list[Any] = []
        self._connected = False

    def _load(self) -> None:
        from selfplay.verifier.connect import RayUnavailable, connect, import_ray

        try:
            self._connected = connect(self.address)
        except RayUnavailable as e:
            raise BackendError(str(e)) from None
        ray = import_ray()
        count = self.engines
        if count is None:
            gpus = int(ray.cluster_resources().get("GPU", 0))
            count = max(1, gpus // self.gpus) if self.gpus else 1
        actor = ray.remote(_Engine).options(
            num_cpus=self.cpus, num_gpus=self.gpus, max_restarts=2, max_task_retries=0
        )
        self._actors = [actor.remote(self.engine, self.model, self.engine_options)
                        for _ in range(count)]  # fmt: skip
        try:
            ray.get([a.pid.remote() for a in self._actors])  # loaded, or why not
        except Exception as e:
            self._close()
            raise BackendError(
                f"a {self.engine} engine on Ray failed to start: {_cause(e)}"
            ) from None

    def _close(self) -> None:
        from selfplay.verifier.connect import import_ray

        ray = import_ray()
        if ray.is_initialized():  # else the session ended, and its actors with it
            for a in self._actors:
                ray.kill(a)
        self._actors = []
        if self._connected:
            ray.shutdown()
            self._connected = False

    def _generate(
        self, prompts: list[Prompt], n: int, sampling: Sampling
    ) -> list[list[Completion]]:
        import ray
        from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

        lost = (RayActorError, ActorDiedError, ActorUnavailableError)
        k = len(self._actors)
        bounds = [len(prompts) * i // k for i in range(k + 1)]
        shares = [(bounds[i], bounds[i + 1]) for i in range(k) if bounds[i] < bounds[i + 1]]
        results: dict[int, list[list[Completion]]] = {}
        pending: dict[Any, tuple[int, int, int]] = {}  # ref -> (share, actor, attempt)

        def send(share: int, actor: int, attempt: int) -> None:
            lo, hi = shares[share]
            ref = self._actors[actor].generate.remote(prompts[lo:hi], n, sampling)
            pending[ref] = (share, actor, attempt)

        for i in range(len(shares)):
            send(i, i % k, 1)
        while pending:
            [ref], _ = ray.wait(list(pending), num_returns=1)
            share, actor, attempt = pending.pop(ref)
            try:
                results[share] = ray.get(ref)
            except lost as e:
                if attempt >= self.max_attempts:
                    raise BackendError(
                        f"generation on Ray lost its engine {attempt} times: {_cause(e)}"
                    ) from None
                lo, hi = shares[share]
                self.retried += hi - lo
                send(share, (actor + 1) % k, attempt + 1)  # another engine takes it
            except Exception as e:  # the engine itself failed (a bad prompt, the model)
                raise BackendError(_cause(e)) from None
        return [row for i in range(len(shares)) for row in results[i]]


def _cause(e: BaseException) -> str:
    """The engine's own one-sentence error, without Ray's wrapping and traceback."""
    cause = getattr(e, "cause", None) or e
    text = str(cause).strip().splitlines()
    return text[0] if text else type(cause).__name__
