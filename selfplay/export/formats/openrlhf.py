"""OpenRLHF: JSON lines of prompts (`input`) and labels, with the reward file OpenRLHF loads
(`reward_func.py`, from `selfplay.rewards.openrlhf_reward`) and the card's command for its
PPO trainer with GRPO's group-normalised advantage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selfplay import kinds
from selfplay.export import recipes
from selfplay.export.exporter import REWARD_FILE, Exporter
from selfplay.export.select import Item
from selfplay.kinds.template import render
from task_bank.store import Bank

RECIPE = Path(__file__).with_name("openrlhf.recipe.tmpl")


class OpenRLHFExporter(Exporter):
    name = "openrlhf"
    suffix = ".jsonl"
    description = "OpenRLHF prompts (input) and labels, with reward_func.py"
    reward_module = "selfplay.rewards.openrlhf_reward"

    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]:
        return [
            {
                "input": kinds.chat(item.task),
                "label": item.ground_truth,
                # OpenRLHF's PromptDataset groups its eval metrics by this key.
                "datasource": f"selfplay/{item.task.kind}",
                "task_id": item.task.id,
                "kind": item.task.kind,
            }
            for item in items
        ]

    def recipes(self, counts: dict[str, int], repo_id: str | None) -> list[str]:
        splits = recipes.train_splits(counts)
        openrlhf = render(
            RECIPE,
            download=recipes.download(repo_id, self.name),
            # OpenRLHF's blending_datasets reads a comma-separated list of files.
            data='"' + ",".join(f"$PWD/{s}{self.suffix}" for s in splits) + '"',
            evaluation=f' --eval.dataset "$PWD/test{self.suffix}"' if "test" in counts else "",
            model=recipes.MODEL,
            samples=recipes.GRPO_SAMPLES,
            runs=recipes.RUNS,
            reward_file=REWARD_FILE,
        )
        # TRL's reward reads the prompt and the ground truth from columns named so.
        remap = 'lambda r: {"prompt": r["input"], "ground_truth": r["label"]}'
        return [
            openrlhf.message,
            recipes.VERL_ELSEWHERE,
            recipes.grpo_recipe(counts, self.suffix, repo_id, remap),
        ]
