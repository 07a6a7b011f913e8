"""SFT: verified solutions (reference programs and passing attempts) as prompt/completion
pairs, so TRL's SFTTrainer computes the loss on the completion only."""

from __future__ import annotations

from typing import Any

from selfplay import kinds
from selfplay.export import recipes
from selfplay.export.formats.attempts import Attempt, AttemptExporter, answer_row
from selfplay.export.select import Item
from selfplay.kinds.fences import as_response


class SftExporter(AttemptExporter):
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

    def task_rows(self, item: Item, made: list[Attempt]) -> list[dict[str, Any]]:
        solutions = []
        if self.references:
            solutions.append(("reference", "reference", kinds.reference_answer(item.task)))
        solutions += [
            ("attempt", solver, as_response(answer)) for solver, answer, passed in made if passed
        ]
        rows = []
        seen: set[str] = set()
        for origin, solver, response in solutions:
            if response not in seen:
                seen.add(response)
                rows.append(
                    answer_row(item, {"completion": response}, origin=origin, solver=solver)
                )
        return rows

    def recipes(self, counts: dict[str, int], repo_id: str | None) -> list[str]:
        why = "# Rows are prompt/completion pairs: TRL computes the loss on the completion only.\n"
        return [recipes.trl_trainer_recipe(self.name, "SFT", counts, repo_id, why)]
