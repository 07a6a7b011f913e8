"""DPO: preference pairs of a passing (chosen) and a failing (rejected) attempt at one task,
at most `max_pairs_per_task` a task."""

from __future__ import annotations

from itertools import islice
from typing import Any

from selfplay.export import recipes
from selfplay.export.formats.attempts import Attempt, AttemptExporter, answer_row
from selfplay.export.select import ExportOptions, Item
from selfplay.kinds.fences import as_response


class DpoExporter(AttemptExporter):
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

    def task_rows(self, item: Item, made: list[Attempt]) -> list[dict[str, Any]]:
        good = list(dict.fromkeys(as_response(a) for _, a, passed in made if passed))
        bad = list(dict.fromkeys(as_response(a) for _, a, passed in made if not passed))
        if not good or not bad:
            self.dropped["no_pair" if made else "no_attempts"] += 1
            return []
        # Cycle the shorter side so each distinct response appears at least once.
        n = min(self.max_pairs, max(len(good), len(bad)))
        pairs = islice(zip(good * n, bad * n, strict=False), n)
        return [answer_row(item, {"chosen": c, "rejected": r}) for c, r in pairs]

    def recipes(self, counts: dict[str, int], repo_id: str | None) -> list[str]:
        return [recipes.trl_trainer_recipe(self.name, "DPO", counts, repo_id)]
