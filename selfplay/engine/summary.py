"""What a self-play round reports: `summarize` reads the round's journal steps and the bank
into a `RoundSummary` (the table `selfplay run` prints, and the health figures of
`selfplay.engine.health`), `write_metrics` appends its line to `<bank>.metrics.jsonl`, and
`proposer_rewards` lists the proposer's reward per task it wrote.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from selfplay.config import RunConfig
from selfplay.engine import health
from selfplay.engine.steps.propose import Propose
from selfplay.engine.steps.rewards import Rewards
from selfplay.engine.steps.solve import Solve
from selfplay.proposer.proposer import SOURCE
from task_bank.store import Bank


@dataclass(slots=True)
class RoundSummary:
    """One round in numbers: the summary table row and the JSONL metrics line."""

    round: int
    proposed: int = 0
    admitted: int = 0
    flagged: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    solved: int = 0
    solve_rate: float | None = None
    mean_learnability: float | None = None
    tokens: int = 0
    tokens_per_s: float = 0.0
    seconds: float = 0.0
    admitted_ids: list[str] = field(default_factory=list)
    bank_tasks: int = 0
    repaired: dict[str, int] = field(default_factory=dict)
    # Health (`selfplay.engine.health`): yield, frontier, diversity, duplicates.
    yield_rate: float | None = None
    frontier: int = 0
    frontier_yield: float | None = None
    shapes: int = 0
    diversity: float | None = None
    distance_within: float | None = None
    distance_to_bank: float | None = None
    near_duplicate_rate: float | None = None
    warnings: list[str] = field(default_factory=list)  # health figures falling

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def metrics_path(bank: Bank, config: RunConfig) -> Path:
    if config.metrics:
        return Path(config.metrics)
    return bank.path.with_name(bank.path.stem + ".metrics.jsonl")


def summarize(bank: Bank, config: RunConfig, round_id: int) -> RoundSummary:
    """The round's figures from its journal steps and the bank: what the table and the
    metrics line show."""
    s = RoundSummary(round=round_id)
    rejected: Counter = Counter()
    repaired: Counter = Counter()
    gen_seconds = 0.0
    for kind in config.kinds:
        step = bank.journal("round").get(round_id, Propose(kind).name) or {}
        s.proposed += step.get("proposed", 0)
        rejected.update(step.get("rejected", {}))
        repaired.update(step.get("repaired", {}))
        s.flagged += step.get("flagged", 0)
        s.tokens += step.get("tokens", 0)
        s.seconds += step.get("seconds", 0.0)
        gen_seconds += step.get("gen_seconds", 0.0)
    for chunk in bank.journal("round").steps(round_id, Solve.CHUNK).values():
        s.tokens += chunk["tokens"]
        s.seconds += chunk["seconds"]
        gen_seconds += chunk["gen_seconds"]
    s.admitted_ids = bank.new_task_ids(round_id, SOURCE)
    s.admitted = len(s.admitted_ids)
    s.rejected = dict(rejected.most_common())
    totals = bank.round_totals(round_id)
    attempts, solved = totals[0][1:] if totals else (0, 0)
    s.attempts, s.solved = attempts, solved
    s.solve_rate = round(solved / attempts, 4) if attempts else None
    rewards = (bank.journal("round").get(round_id, Rewards.name) or {}).get("proposer", {})
    if rewards:
        values = [r["learnability"] for r in rewards.values()]
        s.mean_learnability = round(sum(values) / len(values), 4)
    s.tokens_per_s = round(s.tokens / gen_seconds, 2) if gen_seconds > 0 else 0.0
    s.seconds = round(s.seconds, 2)
    s.bank_tasks = bank.count()
    s.repaired = dict(repaired)
    figures = health.measure(
        bank, s.admitted_ids, s.proposed, s.rejected, bank.round_pass_counts(round_id)
    )
    for name, value in figures.items():
        setattr(s, name, value)
    history = [
        r["summary"]
        for r in bank.rounds()
        if r["config"].get("selfplay") and r["summary"] and r["id"] < round_id
    ]
    s.warnings = [
        f"{name.replace('_', ' ')} fell two rounds running"
        for name in health.WATCHED
        if health.falling([*history, figures], name)
    ]
    return s


def write_metrics(bank: Bank, config: RunConfig, summary: RoundSummary) -> None:
    """Append the round's JSONL line, unless a resumed run already wrote it."""
    path = metrics_path(bank, config)
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if row.get("round") == summary.round and row.get("bank") == str(bank.path):
                return
    row = {"bank": str(bank.path), "time": time.time(), **summary.to_dict()}
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def proposer_rewards(bank: Bank, round_id: int | None = None) -> list[dict[str, Any]]:
    """The proposer's reward for each task it wrote, per finished `rewards` step, oldest first.

    A row is what training the proposer needs besides the prompt: the task (id, kind, the
    reference tasks it was shown, the model that wrote it), the round, the solver's attempts
    and pass rate, the learnability reward in the form the round used, and for codegen the
    discrimination of its own tests (`selfplay.strengthen.discrimination`).
    """
    rows = []
    for rid, step in bank.journal("round").everywhere(Rewards.name):
        if round_id is not None and rid != round_id:
            continue
        for task_id, r in step["proposer"].items():
            task = bank.get(task_id)
            rows.append(
                {
                    "task_id": task_id,
                    "round": rid,
                    "kind": task.kind if task else None,
                    "parent_ids": task.parent_ids if task else [],
                    "proposer": task.proposer if task else None,
                    "attempts": r["attempts"],
                    "successes": r["successes"],
                    "pass_rate": r["pass_rate"],
                    "learnability": r["learnability"],
                    "form": step["form"],
                    # codegen: the share of wrong mutants only its own tests catch
                    "test_discrimination": (step.get("test_discrimination") or {})
                    .get(task_id, {})
                    .get("score"),
                }
            )
    return sorted(rows, key=lambda r: (r["round"], r["task_id"]))
