"""Training data out of a bank, built by the exporters so training sees what exports ship.

- solver, grpo: the `trl` export's rows (chat prompt, ground truth, task id): one per task;
- solver, sft: the `sft` export's verified solutions (reference programs and passing attempts)
  as prompt / completion pairs, so the loss falls on the answer only (expert iteration);
- solver, dpo: the `dpo` export's pairs of a passing and a failing attempt at one task;
- proposer, sft: rejection-sampling fine-tuning on the proposer's own admitted programs that
  the solver solved sometimes, each repeated by its learnability reward (`proposer_sft_rows`);
- proposer, dpo: pairs of the proposer's own programs written for the same prompt, the better
  one chosen. Better means, in order: admitted and learnable (the solver's pass rate strictly
  between 0 and 1, or the round moved the solver with `proposer_reward: solver_gain`), then
  admitted, then rejected by a check.

The curriculum's filter on the bank (kinds, sources, pass-rate bounds) is the export's
selection; tasks held out for evaluation are never trained on.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from itertools import islice
from typing import Any

from selfplay.config import TrainConfig
from selfplay.export.formats import DpoExporter, SftExporter, TrlExporter
from selfplay.export.select import ExportOptions, Item, select
from task_bank.store import Bank


class TrainDataError(ValueError):
    """Nothing to train on; the message is one sentence saying why and what to do."""


def solver_items(bank: Bank, config: TrainConfig, exclude: set[str] = frozenset()) -> list[Item]:
    """The bank's tasks that the config's data filter keeps, minus `exclude` (held out)."""
    d = config.data
    options = ExportOptions(
        split="none",
        kinds=list(d.kinds),
        sources=list(d.sources),
        min_solve_rate=d.min_pass_rate,
        max_solve_rate=d.max_pass_rate,
        reward=config.grpo.reward,
    )
    wanted = set(d.tasks)
    if d.held_out_fraction:
        # The split `selfplay eval bank` evaluates on by default is never trained on.
        split = ExportOptions(split="random", test_fraction=d.held_out_fraction,
                              seed=d.held_out_seed, split_by=d.held_out_by)  # fmt: skip
        exclude = set(exclude) | {i.task.id for i in select(bank, split).items if i.split == "test"}
    items = [
        item
        for item in select(bank, options).items
        if item.task.id not in exclude and (not wanted or item.task.id in wanted)
    ]
    if not items:
        raise TrainDataError(
            "no task in the bank passes the training data filter (kinds, sources, task ids, "
            "pass-rate bounds, held-out tasks); widen the filter or grow the bank with selfplay run"
        )
    return items


def grpo_rows(bank: Bank, items: list[Item]) -> list[dict[str, Any]]:
    return TrlExporter().rows(items, bank)


def sft_rows(bank: Bank, items: list[Item], references: bool = True) -> list[dict[str, Any]]:
    rows = [
        {
            "prompt": row["prompt"],
            "completion": row["completion"],
            "task_id": row["task_id"],
            "origin": row["origin"],
        }
        for row in SftExporter(references=references).rows(items, bank)
    ]
    if not rows:
        raise TrainDataError(
            "the selected tasks have no verified solution to train on (references are off "
            "and no attempt passed); set data.references: true or run the solver first"
        )
    return rows


def dpo_rows(bank: Bank, items: list[Item], max_pairs: int) -> list[dict[str, Any]]:
    rows = DpoExporter(max_pairs_per_task=max_pairs).rows(items, bank)
    if not rows:
        raise TrainDataError(
            "no selected task has both a passing and a failing attempt, so there is no "
            "preference pair; run more solver attempts (selfplay run) or use --method sft"
        )
    return [{k: r[k] for k in ("prompt", "chosen", "rejected", "task_id")} for r in rows]


def _learnability(bank: Bank) -> dict[str, float]:
    """task id -> the proposer's learnability reward, from every finished round."""
    out: dict[str, float] = {}
    for _, step in bank.journal("round").everywhere("rewards"):
        for task_id, reward in step.get("proposer", {}).items():
            out[task_id] = float(reward["learnability"])
    return out


# An admitted program with reward r is trained on ceil(r * SFT_REPEATS) times: Absolute
# Zero's reward 1 - p favours the tasks the solver solved least often, short of never.
SFT_REPEATS = 3


def proposer_sft_rows(bank: Bank) -> list[dict[str, Any]]:
    """The proposer's prompt and the program it was admitted with, for every proposal whose
    task the solver solved sometimes (reward > 0), repeated by the reward. The completion
    is the admitted program in its fence, mended docstring or trim included: what is
    learned is the program that passed, not the text that needed mending."""
    learn = _learnability(bank)
    rows = []
    for p in bank.proposals():
        if p.outcome != "admitted" or p.task_id is None:
            continue
        reward = p.reward if p.reward is not None else learn.get(p.task_id, 0.0)
        task = bank.get(p.task_id)
        if reward <= 0 or task is None:
            continue
        completion = [{"role": "assistant", "content": f"```python\n{task.program}```"}]
        row = {"prompt": p.prompt, "completion": completion, "task_id": p.task_id}
        rows += [row] * math.ceil(reward * SFT_REPEATS)
    if not rows:
        raise TrainDataError(
            "no admitted proposal in the bank was solved sometimes but not always, so there "
            "is nothing to reinforce; run more self-play rounds (selfplay run) first"
        )
    return rows


def proposer_rows(
    bank: Bank,
    max_pairs: int,
    reward: str = "learnability",
    gains: dict[int, float] | None = None,
) -> list[dict[str, Any]]:
    """DPO pairs of proposals to the same prompt (see the module docstring).

    `gains` maps a round id to the solver's gain on the probe set after training on that
    round's tasks (`proposer_reward: solver_gain`); rounds without a gain count as none.
    """
    learn = _learnability(bank)
    gains = gains or {}

    def level(p: Any) -> int:
        if p.outcome != "admitted":
            return 0
        if reward == "solver_gain":
            return 2 if gains.get(p.round_id, 0.0) > 0 else 1
        return 2 if learn.get(p.task_id, 0.0) > 0 else 1

    groups: dict[tuple, list[Any]] = defaultdict(list)
    for p in bank.proposals():
        groups[(p.round_id, p.kind, json.dumps(p.prompt))].append(p)
    rows = []
    for group in groups.values():
        ranked = sorted(group, key=level, reverse=True)
        pairs = [
            (a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :] if level(a) > level(b)
        ]
        for chosen, rejected in islice(pairs, max_pairs):
            rows.append(
                {
                    "prompt": chosen.prompt,
                    "chosen": [{"role": "assistant", "content": chosen.completion}],
                    "rejected": [{"role": "assistant", "content": rejected.completion}],
                    "task_id": chosen.task_id or "",
                }
            )
    if not rows:
        raise TrainDataError(
            "the bank holds no proposer prompt with a better and a worse proposal to pair; "
            "run more self-play rounds (selfplay run) first"
        )
    return rows
