"""The one backend interface: prompts in, `n` sampled completions per prompt out.

Every backend (transformers, vllm, an OpenAI-compatible endpoint, a scripted replay)
implements `_generate`; the public `Backend.generate` validates the request, loads the
model on first use and keeps the token counts that the round summary turns into tokens/s.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

ROLES = ("system", "user", "assistant")
FinishReason = Literal["stop", "length"]


class BackendError(RuntimeError):
    """A backend cannot serve the request; the message is one sentence for the user."""


class BackendUnavailable(BackendError):
    """The backend's optional dependency is not installed; the message carries the pip command."""


class ModelNotFound(BackendError):
    """A model spec names nothing that can be loaded; the message says how to get it."""


@dataclass(slots=True)
class Prompt:
    """A chat conversation to continue.

    `prefill` is text the assistant turn starts with (for example "```python\\ndef f(");
    the model continues it, which is what makes a small model keep to a format. The
    completion text never repeats the prefill. End a prefill on a word, not on a
    space: tokenizers put the space in front of the next word.
    """

    messages: list[dict[str, str]]
    prefill: str = ""

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("a prompt needs at least one message")
        for message in self.messages:
            if message.get("role") not in ROLES or not isinstance(message.get("content"), str):
                raise ValueError(
                    f"each message needs a role in {ROLES} and a string content, got {message!r}"
                )

    @classmethod
    def user(cls, content: str, *, system: str | None = None, prefill: str = "") -> Prompt:
        """The common case: one user message, an optional system message and prefill."""
        messages = [{"role": "system", "content": system}] if system is not None else []
        messages.append({"role": "user", "content": content})
        return cls(messages=messages, prefill=prefill)


@dataclass(slots=True, frozen=True)
class Sampling:
    """How to sample. `temperature=0` means greedy (then all n samples are equal).

    Stop strings end a completion and are not part of its text (as in vllm and the
    OpenAI API). `seed` makes a call reproducible on the same backend and batch.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if isinstance(self.stop, str) or not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError(f"stop must be a sequence of non-empty strings, got {self.stop!r}")
        object.__setattr__(self, "stop", tuple(self.stop))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(slots=True)
class Completion:
    """One sampled continuation: its text, how many tokens it took, and why it ended.

    `token_ids` are the tokens the engine sampled, where it says (vLLM, transformers): an
    on-policy learner scores exactly those, stop string and end token included, instead of
    a re-tokenised text that the model may never have produced."""

    text: str
    tokens: int
    finish_reason: FinishReason
    token_ids: list[int] | None = None


@dataclass(slots=True)
class GenerationStats:
    """Running totals over every `generate` call of one backend."""

    calls: int = 0
    prompts: int = 0
    completions: int = 0
    tokens: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def first_line(exc: BaseException) -> str:
    """An exception's first line, for a one-sentence message (engines raise long ones)."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__).rstrip(".")


def engine_name(backend: Backend) -> str:
    """The engine that generates for `backend`: the one `auto` chose once loaded, the
    engine a Ray backend runs, else the backend's own name."""
    chosen = getattr(backend, "chosen", None)  # AutoBackend, once loaded
    if chosen:
        return chosen
    engine = getattr(backend, "engine", None)  # RayBackend: the engine its actors run
    return engine if isinstance(engine, str) else backend.name


def truncate_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """Cut `text` before the earliest stop string; say whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def render_chat(tokenizer: Any, prompt: Prompt) -> str:
    """The prompt as the model sees it: its chat template, the assistant turn opened, the prefill.

    A tokenizer without a chat template (a base model) gets the contents joined by blank lines.
    """
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(
            prompt.messages, tokenize=False, add_generation_prompt=True
        )
    else:
        text = "".join(m["content"] + "\n\n" for m in prompt.messages)
    return text + prompt.prefill


class Backend(ABC):
    """Generates `n` completions per prompt. Use as a context manager or call `close()`."""

    name: ClassVar[str]
    # A model asked for n greedy answers gives n equal ones, so they are computed once;
    # a replay backend says False to hand out what its script says for each sample.
    repeats_greedy: ClassVar[bool] = True

    def __init__(self, model: str) -> None:
        self.model = model
        self.stats = GenerationStats()
        self._loaded = False

    def load(self) -> None:
        """Load the model now (otherwise the first `generate` does). Idempotent."""
        if not self._loaded:
            self._load()
            self._loaded = True

    def close(self) -> None:
        """Free the model; a later `generate` loads it again."""
        if self._loaded:
            self._close()
            self._loaded = False

    def __enter__(self) -> Backend:
        self.load()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def generate(
        self, prompts: Sequence[Prompt], n: int = 1, sampling: Sampling | None = None
    ) -> list[list[Completion]]:
        """Return, for each prompt in order, a list of `n` completions."""
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        prompts = list(prompts)
        if not all(isinstance(p, Prompt) for p in prompts):
            raise TypeError("prompts must be selfplay.backends.Prompt objects")
        if not prompts:
            return []
        sampling = sampling or Sampling()
        self.load()
        samples = 1 if sampling.greedy and self.repeats_greedy else n
        start = time.perf_counter()
        results = self._generate(prompts, samples, sampling)
        elapsed = time.perf_counter() - start
        if len(results) != len(prompts) or any(len(r) != samples for r in results):
            raise BackendError(f"backend {self.name} returned the wrong number of completions")
        self.stats.calls += 1
        self.stats.prompts += len(prompts)
        self.stats.completions += len(prompts) * n
        self.stats.tokens += sum(c.tokens for r in results for c in r)  # generated, not repeated
        self.stats.seconds += elapsed
        if samples < n:
            results = [
                [Completion(c.text, c.tokens, c.finish_reason) for c in r * n] for r in results
            ]
        return results

    def update_weights(self, weights: Any) -> None:
        """Generate from now on with `weights`, an iterable of (name, tensor) in the model's
        own (Hugging Face) naming: an on-policy trainer hands over its updated policy after
        a step, without a new engine start. Loads the model first if needed; a backend that
        cannot take weights (a remote server, a replay) says so in one sentence."""
        self.load()
        self._update_weights(weights)

    def _update_weights(self, weights: Any) -> None:
        raise BackendError(
            f"the {self.name} backend cannot take new weights in place; train with the "
            "vllm or transformers backend"
        )

    def _load(self) -> None:  # noqa: B027 - backends without a model need no loading
        """Load weights or open connections."""

    def _close(self) -> None:  # noqa: B027
        """Release what `_load` took."""

    @abstractmethod
    def _generate(
        self, prompts: list[Prompt], n: int, sampling: Sampling
    ) -> list[list[Completion]]:
        """Generate for validated, non-empty input; the model is loaded."""
