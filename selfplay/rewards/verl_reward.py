"""The file verl loads: `reward.custom_reward_function.path=<this file>` (verl 0.9).

`reward.custom_reward_function.name=compute_score_async`: verl's reward loop calls it once per
response, concurrently, and the calls that arrive together are graded as one verifier batch.
`name=compute_score` is the same reward per response, without the batching.
"""

from selfplay.rewards.frameworks import compute_score, compute_score_async, compute_score_batch

__all__ = ["compute_score", "compute_score_async", "compute_score_batch"]
