"""The file OpenRLHF loads as its reward: `--reward.remote_url <this file> --data.label_key label`.

`selfplay export --format openrlhf` copies it next to the data. OpenRLHF 0.11 calls
`reward_func(queries, prompts, labels)` with each query decoded with its special tokens; the
trailing end-of-turn tokens of the major chat templates are stripped before grading. It grades
with the same code and verifier as the verl and TRL rewards (selfplay must be installed where
it runs).
"""

from selfplay.rewards.frameworks import openrlhf_reward


def reward_func(queries, prompts, labels, **kwargs):
    return openrlhf_reward(queries, prompts, labels, **kwargs)
