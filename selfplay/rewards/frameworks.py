"""The reward in each trainer's calling convention; all of them call `grade_responses`.

- verl (0.9: `reward.custom_reward_function.path=<selfplay/rewards/verl_reward.py>`): its
  reward loop calls the function once per response, concurrently. `compute_score_async`
  (`name=compute_score_async`) gathers the calls that arrive together into one verifier batch;
  `compute_score` is the plain per-response function; `compute_score_batch` takes whole lists
  (verl's older batch manager, or your own loop).
- TRL: `trl_reward(prompts, completions, **kwargs)` reads the `ground_truth` column;
  completions may be strings or message lists; a label that cannot be graded gives None (TRL's
  "not applicable"). `TrlReward(...)` is the same as a picklable callable with its own verifier
  settings. Reasons and hack signals go to TRL's `log_extra` and `log_metric`.
- OpenRLHF: `openrlhf_reward(queries, prompts, labels)`, loaded from the file that `selfplay
  export --format openrlhf` writes next to the data (`--reward.remote_url <file>`; OpenRLHF
  0.11 calls it as `reward_func(queries, prompts, labels)`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Iterable
from typing import Any

from selfplay.kinds.answers import strip_special_tokens
from selfplay.rewards.grade import Score, grade_responses
from selfplay.rewards.pool import shared_verifier


def _verl_result(score: Score) -> dict[str, Any]:
    # verl averages numeric extras into its metrics, so they stay numbers; `reason` and
    # `signals` are text (comma-separated signal names).
    return {
        "score": score.score,
        "acc": score.passed,
        "answered": float(score.answered),
        "gradable": float(score.gradable),
        "tests_passed": score.tests_passed,
        "tests_total": score.tests_total,
        "hack_signal": float(bool(score.signals)),
        "reason": score.reason,
        "signals": ",".join(score.signals),
    }


def compute_score(
    data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None, **_: Any
) -> dict[str, Any]:
    """verl's custom reward: a dict with `score` and diagnostics, for one response."""
    return _verl_result(grade_responses([solution_str], [ground_truth], shared_verifier())[0])


def compute_score_batch(
    data_sources: list[str],
    solution_strs: list[str],
    ground_truths: list[str],
    extra_infos: list[dict] | None = None,
    **_: Any,
) -> list[dict[str, Any]]:
    """Whole lists at once: one verifier batch."""
    scores = grade_responses(list(solution_strs), list(ground_truths), shared_verifier())
    return [_verl_result(s) for s in scores]


class _Batcher:
    """Gathers the responses that concurrent coroutines submit within a few milliseconds into
    one `grade_responses` call, run in a thread so the event loop keeps going."""

    def __init__(self, window_s: float = 0.005, max_batch: int = 512) -> None:
        self.window_s, self.max_batch = window_s, max_batch
        self.pending: list[tuple[str, Any, asyncio.Future]] = []
        self.timer: asyncio.TimerHandle | None = None

    async def score(self, response: str, label: Any) -> Score:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.pending.append((response, label, future))
        if len(self.pending) >= self.max_batch:
            self.flush(loop)
        elif self.timer is None:
            self.timer = loop.call_later(self.window_s, self.flush, loop)
        return await future

    def flush(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        batch, self.pending = self.pending, []
        if not batch:
            return
        work = loop.run_in_executor(
            None, grade_responses, [r for r, _, _ in batch], [g for _, g, _ in batch]
        )

        def deliver(done: asyncio.Future) -> None:
            for i, (_, _, future) in enumerate(batch):
                if future.done():
                    continue
                if done.exception() is not None:
                    future.set_exception(done.exception())
                else:
                    future.set_result(done.result()[i])

        work.add_done_callback(deliver)


_batchers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def compute_score_async(
    data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None, **_: Any
) -> dict[str, Any]:
    """verl's reward loop calls this once per response, concurrently: the calls that arrive
    together are graded as one verifier batch."""
    loop = asyncio.get_running_loop()
    batcher = _batchers.get(loop)
    if batcher is None:
        batcher = _batchers[loop] = _Batcher()
    return _verl_result(await batcher.score(solution_str, ground_truth))


def completion_text(completion: Any) -> str:
    """A TRL completion as text: a string, or the assistant messages of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content") or "")
    if isinstance(completion, list | tuple):
        parts = [
            str(m.get("content") or "")
            for m in completion
            if isinstance(m, dict) and m.get("role", "assistant") == "assistant"
        ]
        return "\n".join(parts)
    return ""


def trl_rewards(scores: list[Score], kwargs: dict[str, Any]) -> list[float | None]:
    """What a TRL reward function returns for `scores` (None where the label cannot be
    graded), after logging their reasons and hack signals through the `log_extra` and
    `log_metric` callbacks TRL's GRPOTrainer passes in `kwargs` (absent in older TRL)."""
    log_extra, log_metric = kwargs.get("log_extra"), kwargs.get("log_metric")
    if callable(log_extra):  # TRL's completions table
        log_extra("selfplay_reason", [s.reason for s in scores])
        log_extra("selfplay_signals", [",".join(s.signals) for s in scores])
    if callable(log_metric) and scores:
        log_metric("selfplay/hack_signal_rate", sum(bool(s.signals) for s in scores) / len(scores))
    return [s.score if s.gradable else None for s in scores]


class TrlReward:
    """A TRL GRPO reward function with its own verifier settings; pickles as its settings.

    `reward_funcs=[TrlReward(workers=8)]`. The verifier pool is created in whichever
    process calls it, on first use.
    """

    def __init__(self, workers: int | None = None, timeout_s: float | None = None) -> None:
        self.workers = workers
        self.timeout_s = timeout_s
        self.__name__ = "selfplay_reward"  # TRL names reward columns in its logs by this

    def __getstate__(self) -> dict[str, Any]:
        return {"workers": self.workers, "timeout_s": self.timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["workers"], state["timeout_s"])

    def __call__(
        self, prompts: list[Any], completions: list[Any], **kwargs: Any
    ) -> list[float | None]:
        labels = kwargs.get("ground_truth")
        if labels is None:
            raise ValueError(
                "the dataset has no 'ground_truth' column; export it with selfplay export --format trl"
            )
        texts = [completion_text(c) for c in completions]
        verifier = shared_verifier(self.workers, self.timeout_s)
        scores = grade_responses(texts, list(labels), verifier)
        return trl_rewards(scores, kwargs)


_default = TrlReward()


def trl_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
    """TRL's GRPO reward signature: 1.0 for a verified answer, 0.0 otherwise (a fraction with
    `reward: fraction` labels); None where the label cannot be graded."""
    return _default(prompts, completions, **kwargs)


def openrlhf_responses(
    queries: list[str], prompts: list[str], special_tokens: Iterable[str] | None = None
) -> list[str]:
    """What OpenRLHF's reward is asked to grade. A query is the prompt and the response
    decoded together with their special tokens, so the response is what follows the prompt,
    without the trailing end-of-turn tokens: the tokenizer's own (`special_tokens`, its
    `all_special_tokens`) where it is known, else those of the major chat templates
    (`strip_special_tokens`)."""
    return [
        strip_special_tokens(
            q[len(p) :] if isinstance(p, str) and q.startswith(p) else q, special_tokens
        )
        for q, p in zip(queries, prompts, strict=True)
    ]


def openrlhf_logs(scores: list[Score]) -> dict[str, list[float]]:
    """The per-response diagnostics OpenRLHF logs (`extra_logs`)."""
    return {
        "answered": [float(s.answered) for s in scores],
        "gradable": [float(s.gradable) for s in scores],
        "hack_signal": [float(bool(s.signals)) for s in scores],
    }


def openrlhf_reward(
    queries: list[str], prompts: list[str], labels: list[str], tokenizer: Any = None, **_: Any
) -> Any:
    """OpenRLHF's `reward_func` (see `openrlhf_responses` for what is graded). OpenRLHF passes
    no tokenizer; a caller that has one passes it, and its special tokens are stripped."""
    import torch

    special = getattr(tokenizer, "all_special_tokens", None) if tokenizer is not None else None
    responses = openrlhf_responses(queries, prompts, special)
    scores = grade_responses(responses, list(labels), shared_verifier())
    rewards = torch.tensor([s.score for s in scores], dtype=torch.float32)
    extra = {
        name: torch.tensor(values, dtype=torch.float32)
        for name, values in openrlhf_logs(scores).items()
    }
    return {"rewards": rewards, "scores": rewards.clone(), "extra_logs": extra}
