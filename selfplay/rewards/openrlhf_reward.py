"""The file OpenRLHF loads as its reward: `--remote_rm_url <this file> --label_key label`.

`selfplay export --format openrlhf` copies it next to the data. It grades with the same
code and verifier as the verl and TRL rewards (selfplay must be installed where it runs).
"""

from selfplay.rewards.frameworks import openrlhf_reward


def reward_func(queries, prompts, labels, **kwargs):
    return openrlhf_reward(queries, prompts, labels, **kwargs)
