"""verl: one row per task with verl's columns (`prompt`, `reward_model.ground_truth`,
`extra_info`), and the card's command for verl's GRPO trainer sized to the export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selfplay import kinds
from selfplay.export import recipes
from selfplay.export.exporter import Exporter
from selfplay.export.select import Item
from selfplay.kinds.template import render
from task_bank.store import Bank

RECIPE = Path(__file__).with_name("verl.recipe.tmpl")


def _extra_info(index: int, item: Item) -> dict[str, Any]:
    return {
        "index": index,
        "split": item.split,
        "task_id": item.task.id,
        "kind": item.task.kind,
        "source": item.task.source,
        "difficulty": item.difficulty,
        "learnability": item.learnability,
        "attempts": item.attempts,
        "solve_rate": item.solve_rate,
    }


def _files(splits: list[str], suffix: str) -> str:
    """The files as one hydra override value, as bash passes it from the export directory."""
    paths = [f"$PWD/{s}{suffix}" for s in splits]
    return f'"{paths[0]}"' if len(paths) == 1 else '"[' + ",".join(paths) + ']"'


class VerlExporter(Exporter):
    name = "verl"
    description = "verl RL data: prompt, reward_model.ground_truth, extra_info"

    def row_task(self, row: dict[str, Any]) -> str:
        return row["extra_info"]["task_id"]

    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]:
        return [
            {
                "data_source": f"selfplay/{item.task.kind}",
                "prompt": kinds.chat(item.task),
                "ability": "code",
                "reward_model": {"style": "rule", "ground_truth": item.ground_truth},
                "extra_info": _extra_info(i, item),
            }
            for i, item in enumerate(items)
        ]

    def recipes(self, counts: dict[str, int], repo_id: str | None) -> list[str]:
        splits = recipes.train_splits(counts)
        rows = sum(counts[s] for s in splits)
        batch = recipes.train_batch_size(rows)
        steps = rows // batch
        verl = render(
            RECIPE,
            download=recipes.download(repo_id, self.name),
            train_files=_files(splits, self.suffix),
            val_files=_files(["test"] if "test" in counts else splits, self.suffix),
            batch=batch,
            micro_batch=min(4, batch),
            model=recipes.MODEL,
            samples=recipes.GRPO_SAMPLES,
            runs=recipes.RUNS,
            rows=rows,
            steps=f"{steps} step{'s' if steps != 1 else ''}",
            validation=""
            if "test" in counts
            else " The export has no test split, so it validates on the training files.",
        )
        # TRL's reward reads the ground truth from a column of its own.
        remap = 'lambda r: {"ground_truth": r["reward_model"]["ground_truth"]}'
        return [verl.message, recipes.grpo_recipe(counts, self.suffix, repo_id, remap)]
