"""TRL: GRPO prompts, one row per task, with the `ground_truth` column `trl_reward` reads."""

from __future__ import annotations

from typing import Any

from selfplay import kinds
from selfplay.export import recipes
from selfplay.export.exporter import Exporter
from selfplay.export.select import Item
from task_bank.store import Bank


class TrlExporter(Exporter):
    name = "trl"
    description = "TRL GRPO prompts with the ground_truth column the reward reads"

    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]:
        return [
            {
                "prompt": kinds.chat(item.task),
                "ground_truth": item.ground_truth,
                "task_id": item.task.id,
                "kind": item.task.kind,
                "difficulty": item.difficulty,
                "learnability": item.learnability,
            }
            for item in items
        ]

    def recipes(self, counts: dict[str, int], repo_id: str | None) -> list[str]:
        return [recipes.VERL_ELSEWHERE, recipes.grpo_recipe(counts, self.suffix, repo_id)]
