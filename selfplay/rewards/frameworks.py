"""The reward in each trainer's calling convention; all of them call `grade_responses`.

- verl: `compute_score(data_source, solution_str, ground_truth, extra_info=None)` for the
  naive reward manager (`custom_reward_function.path=<selfplay/rewards/verl_reward.py>`),
  and `compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos)` for
  `reward_model.reward_manager=batch` (one verifier batch per training batch).
- TRL: `trl_reward(prompts, completions, **kwargs)` reads the `ground_truth` column;
  completions may be strings or message lists. `TrlReward(...)` is the same as a picklable
  callable with its own verifier settings.
- OpenRLHF: `openrlhf_reward(queries, prompts, labels)`, loaded from the file that
  `selfplay export --format openrlhf` writes next to the data.
"""

from __future__ import annotations

from typing import Any

from selfplay.rewards.grade import Score, grade_responses
from selfplay.rewards.pool import shared_verifier


def _verl_result(score: Score) -> dict[str, Any]:
    # verl averages numeric extras into its metrics, so they stay numbers; `reason` and
    # `signals` are text (comma-separated signal names).
    return {
        "score": score.score,
        "acc": score.score == 1.0,
        "answered": float(score.answered),
        "tests_passed": score.tests_passed,
        "tests_total": score.tests_total,
        "hack_signal": float(bool(score.signals)),
        "reason": score.reason,
        "signals": ",".join(score.signals),
    }


def compute_score(
    data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None
) -> dict[str, Any]:
    """verl's custom reward: a dict with `score` (1.0 or 0.0) and diagnostics."""
    return _verl_result(grade_responses([solution_str], [ground_truth], shared_verifier())[0])


def compute_score_batch(
    data_sources: list[str],
    solution_strs: list[str],
    ground_truths: list[str],
    extra_infos: list[dict] | None = None,
) -> list[dict[str, Any]]:
    """verl's batch reward manager: one verifier batch for the whole training batch."""
    scores = grade_responses(list(solution_strs), list(ground_truths), shared_verifier())
    return [_verl_result(s) for s in scores]


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

    def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
        labels = kwargs.get("ground_truth")
        if labels is None:
            raise ValueError(
                "the dataset has no 'ground_truth' column; export it with selfplay export --format trl"
            )
        texts = [completion_text(c) for c in completions]
        verifier = shared_verifier(self.workers, self.timeout_s)
        scores = grade_responses(texts, list(labels), verifier)
        log_extra, log_metric = kwargs.get("log_extra"), kwargs.get("log_metric")
        if callable(log_extra):  # TRL's completions table
            log_extra("selfplay_reason", [s.reason for s in scores])
            log_extra("selfplay_signals", [",".join(s.signals) for s in scores])
        if callable(log_metric) and scores:
            log_metric(
                "selfplay/hack_signal_rate", sum(bool(s.signals) for s in scores) / len(scores)
            )
        return [s.score for s in scores]


_default = TrlReward()


def trl_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    """TRL's GRPO reward signature: 1.0 for a verified answer, 0.0 otherwise."""
    return _default(prompts, completions, **kwargs)


def openrlhf_reward(queries: list[str], prompts: list[str], labels: list[str], **_: Any) -> Any:
    """OpenRLHF's `reward_func`: queries are prompt + response; labels are ground truths."""
    import torch

    responses = [
        q[len(p) :] if isinstance(p, str) and q.startswith(p) else q
        for q, p in zip(queries, prompts, strict=True)
    ]
    scores = grade_responses(responses, list(labels), shared_verifier())
    rewards = torch.tensor([s.score for s in scores], dtype=torch.float32)
    answered = torch.tensor([float(s.answered) for s in scores], dtype=torch.float32)
    hacked = torch.tensor([float(bool(s.signals)) for s in scores], dtype=torch.float32)
    extra = {"answered": answered, "hack_signal": hacked}
    return {"rewards": rewards, "scores": rewards.clone(), "extra_logs": extra}
