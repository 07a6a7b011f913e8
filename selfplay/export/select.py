"""Which tasks an export holds, in which split, with what difficulty: read from a bank.

Every task left out is counted by reason, so the dataset card can say what was dropped.
Difficulty is 1 minus the posterior mean solve rate (Beta(1, 1) prior, all solvers'
attempts), so it exists for tasks never attempted; a task without attempts that declares
`metadata.difficulty` (1 to 5) takes (level - 1) / 4 instead of the uninformed 0.5.
An item's `learnability` is the posterior E[p(1 - p)] (`curricula.posterior`'s
`expected_variance`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from selfplay.admission.normalize import ast_hash
from selfplay.rewards.ground_truth import GroundTruth, InvalidGroundTruth
from selfplay.task import Task
from task_bank.store import Bank

BANDS = (("easy", 1 / 3), ("medium", 2 / 3), ("hard", 1.0))


class ExportOptions(BaseModel):
    """What goes into an export; unknown fields are an error naming the field."""

    model_config = ConfigDict(extra="forbid")

    split: Literal["none", "random", "difficulty"] = Field(
        "random",
        description="how tasks are split: none (one train split), random (train/test) or "
        "difficulty (bands)",
    )
    test_fraction: float = Field(
        0.1, ge=0.0, lt=1.0, description="share of tasks in the test split (random split)"
    )
    seed: int = Field(0, description="seed of the random split")
    split_by: Literal["program", "family"] = Field(
        "program",
        description="what the random split keeps on one side: each normalised program, or "
        "each procedural family whole (tasks without a family: by program)",
    )
    kinds: list[str] = Field(default_factory=list, description="keep only these task kinds")
    sources: list[str] = Field(default_factory=list, description="keep only these sources")
    min_solve_rate: float | None = Field(
        None, ge=0.0, le=1.0, description="keep tasks solved at least this often"
    )
    max_solve_rate: float | None = Field(
        None, ge=0.0, le=1.0, description="keep tasks solved at most this often"
    )
    include_contaminated: bool = Field(
        False, description="keep tasks flagged as benchmark look-alikes"
    )
    max_pairs_per_task: int = Field(4, ge=1, description="at most this many dpo pairs per task")
    reward: Literal["binary", "fraction"] = Field(
        "binary",
        description="binary: 1 for a verified answer, else 0; fraction: the share of tests or "
        "examples passed (codegen, induction), recorded in each label",
    )
    license: str = Field(
        "apache-2.0",
        description="license of the tasks whose source has none of its own (generated tasks, "
        "your imports); HumanEval's tasks are MIT and the bundled seeds Apache-2.0",
    )
    source_licenses: dict[str, str] = Field(
        default_factory=dict, description="license of a source's tasks, over the known ones"
    )

    @field_validator("license")
    @classmethod
    def _hub_license(cls, value: str) -> str:
        from selfplay.export.licenses import unknown_license

        problem = unknown_license(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("source_licenses")
    @classmethod
    def _hub_licenses(cls, value: dict[str, str]) -> dict[str, str]:
        from selfplay.export.licenses import unknown_license

        for lic in value.values():
            problem = unknown_license(lic)
            if problem:
                raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _rates_ordered(self) -> ExportOptions:
        lo, hi = self.min_solve_rate, self.max_solve_rate
        if lo is not None and hi is not None and lo > hi:
            raise ValueError("min_solve_rate is above max_solve_rate")
        return self


@dataclass(slots=True)
class Item:
    """One exported task with its label and its numbers at export time."""

    task: Task
    split: str
    ground_truth: str
    attempts: int
    successes: int
    difficulty: float
    learnability: float

    @property
    def solve_rate(self) -> float | None:
        return self.successes / self.attempts if self.attempts else None

    @property
    def band(self) -> str:
        return band(self.difficulty)


@dataclass(slots=True)
class Selection:
    items: list[Item] = field(default_factory=list)
    excluded: Counter = field(default_factory=Counter)

    def splits(self) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = {}
        for item in self.items:
            out.setdefault(item.split, []).append(item)
        return out


def band(difficulty: float) -> str:
    return next(name for name, edge in BANDS if difficulty < edge or edge == 1.0)


def _declared_level(task: Task) -> float | None:
    level = (task.metadata or {}).get("difficulty")
    if isinstance(level, int | float) and not isinstance(level, bool) and 1 <= level <= 5:
        return (float(level) - 1.0) / 4.0
    return None


def _keep(task: Task, attempts: int, successes: int, opts: ExportOptions) -> str | None:
    """None to keep the task, else the reason it is left out."""
    if task.contaminated and not opts.include_contaminated:
        return "contaminated"
    if opts.kinds and task.kind not in opts.kinds:
        return "kind_filtered"
    if opts.sources and task.source not in opts.sources:
        return "source_filtered"
    if opts.min_solve_rate is not None or opts.max_solve_rate is not None:
        if not attempts:
            return "solve_rate_unknown"
        rate = successes / attempts
        lo = opts.min_solve_rate if opts.min_solve_rate is not None else 0.0
        hi = opts.max_solve_rate if opts.max_solve_rate is not None else 1.0
        if not lo <= rate <= hi:
            return "solve_rate_filtered"
    return None


def select(bank: Bank, opts: ExportOptions) -> Selection:
    """The tasks of `bank` (a `task_bank.store.Bank`) that the options keep, split."""

    from curricula.posterior import estimate

    stats = bank.solve_stats(include_contaminated=True)
    est = estimate(stats)
    mean, learn = est.mean, est.expected_variance
    row = {task_id: i for i, task_id in enumerate(stats.index)}
    attempts = stats["attempts"].to_numpy()
    successes = stats["successes"].to_numpy()
    selection = Selection()
    for task in bank.tasks(include_contaminated=True):
        i = row[task.id]
        n, k = int(attempts[i]), int(successes[i])
        reason = _keep(task, n, k, opts)
        if reason is None:
            try:
                label = GroundTruth.from_task(task, reward=opts.reward).to_json()
            except InvalidGroundTruth:
                reason = "no_ground_truth"
        if reason is not None:
            selection.excluded[reason] += 1
            continue
        declared = _declared_level(task)
        difficulty = declared if (n == 0 and declared is not None) else 1.0 - float(mean[i])
        selection.items.append(
            Item(task, "train", label, n, k, round(difficulty, 6), round(float(learn[i]), 6))
        )
    if opts.split == "difficulty":
        for item in selection.items:
            item.split = item.band
    elif opts.split == "random" and len(selection.items) > 1 and opts.test_fraction > 0:
        _split_by_program(selection.items, opts.test_fraction, opts.seed, opts.split_by)
    return selection


def _split_by_program(items: list[Item], fraction: float, seed: int, by: str = "program") -> None:
    """About `fraction` of the items to "test", whole programs at a time: the tasks whose
    programs are one after normalisation (`ast_hash`: names, docstrings and layout aside)
    share a side. A test task whose program is in train under another input is a memory
    exercise, not a held-out task: the split is what `eval bank` measures and what
    training's held-out exclusion leaves out. With `by="family"` a procedural family is one
    group (what a family never trained on measures), and a program in two families joins
    both groups into one side."""
    import numpy as np

    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keyed = []
    for item in items:
        program = ast_hash(item.task.program)
        family = (item.task.metadata or {}).get("family") if by == "family" else None
        if family:  # the family and each of its programs are one group
            parent[root(program)] = root(f"family:{family}")
        keyed.append((program, item))
    groups: dict[str, list[Item]] = {}
    for program, item in keyed:
        groups.setdefault(root(program), []).append(item)
    keys = list(groups)
    wanted = max(1, round(fraction * len(items)))
    taken = 0
    for position in np.random.default_rng(seed).permutation(len(keys)):
        if taken >= wanted:
            break
        group = groups[keys[int(position)]]
        if taken + len(group) >= len(items):
            continue  # the train split keeps at least one program
        for item in group:
            item.split = "test"
        taken += len(group)
