"""The file verl loads: `custom_reward_function.path=<this file>`.

`custom_reward_function.name=compute_score` with the default (naive) reward manager, or
`name=compute_score_batch` with `reward_model.reward_manager=batch`.
"""

from selfplay.rewards.frameworks import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
