"""The built-in formats, one `Exporter` each (`selfplay.export.exporter`), registered in order.

RL formats (verl, trl, openrlhf) hold one row per task with its ground truth and its kind's
prompt (`selfplay.kinds.chat`, what the bank's solve rates were measured under). SFT holds
verified solutions (passing attempts and reference programs) as prompt/completion pairs, DPO
holds pairs of a passing and a failing attempt at the same task. Rows are built here and
written with pyarrow, so every file loads back with `datasets.load_dataset("parquet" | "json", ...)`.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from selfplay import kinds
from selfplay.export.exporter import Exporter, register
from selfplay.export.select import ExportOptions, Item
from selfplay.kinds.fences import as_response
from task_bank.store import Bank


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


def _attempts(bank: Bank, task_ids: list[str]) -> dict[str, list[tuple[str, str, bool]]]:
    """task id -> (solver, answer, passed) in the order they were made (empty answers left out)."""
    return {
        task_id: [a for a in made if a[1] and a[1].strip()]
        for task_id, made in bank.attempts_for(task_ids).items()
    }


class SftExporter(Exporter):
    name = "sft"
    description = (
        "prompt/completion pairs with verified solutions (passing attempts, references); "
        "TRL computes the loss on the completion only"
    )

    def __init__(self, references: bool = True) -> None:
        super().__init__()
        # Without references the rows are the solver's own passing attempts only (expert
        # iteration); they are left out before the dedup below, or an attempt that gives the
        # reference's very answer (most right answers to a value task) would go with them.
        self.references = references

    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]:
        attempts = _attempts(bank, [item.task.id for item in items])
        rows = []
        for item in items:
            prompt = kinds.chat(item.task)
            solutions = []
            if self.references:
                solutions.append(("reference", "reference", kinds.reference_answer(item.task)))
            solutions += [
                ("attempt", solver, as_response(answer))
                for solver, answer, passed in attempts.get(item.task.id, [])
                if passed
            ]
            seen: set[str] = set()
            for origin, solver, response in solutions:
                if response in seen:
                    continue
                seen.add(response)
                rows.append(
                    {
                        # The prompt/completion form, not one `messages` list: TRL's
                        # SFTTrainer then masks the prompt out of the loss by default.
                        "prompt": prompt,
                        "completion": [{"role": "assistant", "content": response}],
                        "task_id": item.task.id,
                        "kind": item.task.kind,
                        "origin": origin,
                        "solver": solver,
                    }
                )
        return rows


class DpoExporter(Exporter):
    name = "dpo"
    description = "preference pairs: a passing (chosen) and a failing (rejected) attempt"

    def __init__(self, max_pairs_per_task: int = 4) -> None:
        super().__init__()
        self.max_pairs = max_pairs_per_task

    @classmethod
    def from_options(cls, options: ExportOptions) -> DpoExporter:
        return cls(options.max_pairs_per_task)

    def no_rows(self) -> str:
        text = super().no_rows()
        if set(self.dropped) == {"no_attempts"}:
            text += (
                "; a pair needs a passing and a failing solver attempt at a task, and `selfplay "
                "run --bank BANK` records the solver's attempts"
            )
        return text

    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]:
        attempts = _attempts(bank, [item.task.id for item in items])
        rows = []
        for item in items:
            made = attempts.get(item.task.id, [])
            good = list(dict.fromkeys(as_response(a) for _, a, passed in made if passed))
            bad = list(dict.fromkeys(as_response(a) for _, a, passed in made if not passed))
            if not good or not bad:
                self.dropped["no_pair" if made else "no_attempts"] += 1
                continue
            # Cycle the shorter side so each distinct response appears at least once.
            n = min(self.max_pairs, max(len(good), len(bad)))
            pairs = islice(zip(good * n, bad * n, strict=False), n)
            for chosen, rejected in pairs:
                rows.append(
                    {
                        "prompt": kinds.chat(item.task),
                        "chosen": [{"role": "assistant", "content": chosen}],
                        "rejected": [{"role": "assistant", "content": rejected}],
                        "task_id": item.task.id,
                        "kind": item.task.kind,
                    }
                )
        return rows


# In this order the formats are listed (`--help`, the refusal of an unknown one).
for _exporter in (VerlExporter, TrlExporter, OpenRLHFExporter, SftExporter, DpoExporter):
    register(_exporter)
del _exporter
