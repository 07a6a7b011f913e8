"""GRPO's completion budget comes from the kinds of the tasks it trains on."""

from types import SimpleNamespace

from selfplay.config import TrainConfig
from selfplay.training.warmup import completion_budget


def _items(*kinds):
    return [SimpleNamespace(task=SimpleNamespace(kind=k)) for k in kinds]


def test_values_get_a_short_budget_programs_a_long_one_and_the_config_wins():
    auto = TrainConfig(method="grpo")
    assert completion_budget(auto, _items("deduction", "abduction")) == 48
    assert completion_budget(auto, _items("deduction", "codegen")) == 384
    assert completion_budget(auto, _items("induction")) == 384
    fixed = TrainConfig(method="grpo", grpo={"max_completion_length": 20})
    assert completion_budget(fixed, _items("codegen")) == 20
