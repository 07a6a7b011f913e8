"""Rewards for RL trainers, graded by the same verifier that admitted the tasks.

`compute_score_async` / `compute_score` (verl), `trl_reward` / `TrlReward` (TRL GRPO) and the
OpenRLHF reward file all call `grade_responses`, the one grading path of selfplay (the solver's
attempts go through it too): each task kind extracts and judges its answer
(`selfplay.kinds`), and execution is batched through one process-wide verifier
(`selfplay.rewards.pool`).
"""

from selfplay.rewards.frameworks import (
    TrlReward,
    completion_text,
    compute_score,
    compute_score_async,
    compute_score_batch,
    openrlhf_reward,
    trl_reward,
)
from selfplay.rewards.grade import Score, grade_responses
from selfplay.rewards.ground_truth import GroundTruth, InvalidGroundTruth

__all__ = [
    "GroundTruth",
    "InvalidGroundTruth",
    "Score",
    "TrlReward",
    "completion_text",
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "grade_responses",
    "openrlhf_reward",
    "trl_reward",
]
