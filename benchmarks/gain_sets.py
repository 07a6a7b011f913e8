"""The task sets of `selfplay_gain.py`: a training pool and four held-out sets, none of whose
programs (after normalisation) is a pool program under any input.

- `in_family`: procedural tasks of the training families, drawn with their own seed;
- `other_families`: procedural tasks of families the pool never has;
- `proposals`: self-play proposals (tasks the model wrote in `selfplay run` rounds), half of
  the normalised programs held out, the other half in the pool;
- the pool: procedural tasks of the training families, the other half of the proposals and
  (`--pool-seeds`) the bundled seed tasks, codegen among them.

Everything is admitted by the real chain (procedural) or copied from the banks the rounds
made (proposals, already admitted there). `--seed` draws other tasks for every set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

HELD_SEED, OTHER_SEED = 10_000, 20_000


@dataclass
class Sets:
    pool: list[Any] = field(default_factory=list)  # Task
    held: dict[str, list[Any]] = field(default_factory=dict)  # set name -> Items
    counts: dict[str, Any] = field(default_factory=dict)


def _draw(admission, bank, families: list[str], levels: list[int], total: int,
          seed: int) -> list[Any]:  # fmt: skip
    """`total` admitted deduction tasks of `families`, no two with one normalised program,
    spread over the levels: equal shares, a level with too few distinct programs (level 1 of
    a family has few) passing its shortfall to the next."""
    from selfplay import procedural
    from selfplay.admission.normalize import ast_hash

    out, programs = [], set()
    for n, level in enumerate(levels):
        want = -(-(total - len(out)) // (len(levels) - n))
        admission.admit(procedural.candidates("deduction", [level], 2 * want + 8, seed=seed,
                                              families=families))  # fmt: skip
        kept = 0
        for t in bank.tasks(source="procedural"):
            meta = t.metadata
            if meta.get("seed") != seed or meta.get("level") != level or kept >= want:
                continue
            h = ast_hash(t.program)
            if h not in programs:
                out.append(t)
                programs.add(h)
                kept += 1
    return out


def _proposals(bank, paths: list[str]) -> list[Any]:
    """Every admitted, uncontaminated self-play proposal of the banks, one per kind and
    normalised program, copied into `bank`."""
    from selfplay.admission.normalize import ast_hash
    from task_bank.store import Bank

    seen, tasks = set(), []
    for path in paths:
        with Bank(path, create=False) as other:
            for t in other.tasks(source="selfplay"):
                key = (t.kind, ast_hash(t.program))
                if t.contaminated or key in seen or not t.examples:
                    continue
                seen.add(key)
                # The rounds and parents it names are the other bank's.
                tasks.append(replace(t, round_id=None, parent_ids=[]))
    hashes = [ast_hash(t.program) for t in tasks]
    keys = [f"gain:{t.kind}:{h}" for t, h in zip(tasks, hashes, strict=True)]
    bank.add_tasks(tasks, ast_hashes=hashes, dedup_keys=keys)
    return tasks


def _seeds(bank, verifier, held_programs: set[str]) -> list[Any]:
    """The bundled seed tasks (every kind, codegen among them: practice at writing programs
    beside the output prediction of the families), decontaminated against HumanEval, none
    sharing a held-out program."""
    from selfplay.admission import Admission, import_source
    from selfplay.admission.normalize import ast_hash

    import_source("seeds", Admission(bank, verifier))
    return [t for t in bank.tasks(source="seeds")
            if not t.contaminated and ast_hash(t.program) not in held_programs]  # fmt: skip


def build(bank, verifier, args) -> Sets:
    from selfplay.admission import Admission, AdmissionConfig
    from selfplay.admission.normalize import ast_hash
    from selfplay.export.select import ExportOptions, select

    levels = [int(x) for x in args.levels.split(",")]
    train_fams, other_fams = args.train_families.split(","), args.other_families.split(",")
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    in_family = _draw(admission, bank, train_fams, levels, args.in_family,
                      HELD_SEED + args.seed)  # fmt: skip
    other_levels = [int(x) for x in args.other_levels.split(",")]
    other = _draw(admission, bank, other_fams, other_levels, args.other_families_n,
                  OTHER_SEED + args.seed)  # fmt: skip
    held_programs = {ast_hash(t.program) for t in [*in_family, *other]}
    pool_draw = _draw(admission, bank, train_fams, levels, 2 * args.pool_procedural,
                      args.seed)  # fmt: skip
    pool = [t for t in pool_draw if ast_hash(t.program) not in held_programs]
    pool = pool[: args.pool_procedural]
    sets = Sets()
    proposals_held: list[Any] = []
    if args.proposal_banks:
        proposals = _proposals(bank, args.proposal_banks.split(","))
        groups: dict[str, list[Any]] = {}
        for t in proposals:
            h = ast_hash(t.program)
            if h not in held_programs:
                groups.setdefault(h, []).append(t)
        order = sorted(groups)
        random.Random(args.seed).shuffle(order)
        half = len(order) // 2
        for h in order[:half]:
            if len(proposals_held) < args.proposals:
                proposals_held += groups[h]
        # The other half trains; a program of the held half never does, even if the held
        # set was full before its turn.
        pool += [t for h in order[half:] for t in groups[h]][: args.pool_proposals]
    if args.pool_seeds:
        pool += _seeds(bank, verifier, held_programs)[: args.pool_seeds]
    items = {i.task.id: i for i in select(bank, ExportOptions(split="none",
                                                              include_contaminated=True)).items}  # fmt: skip
    sets.held = {
        "in_family": [items[t.id] for t in in_family if t.id in items],
        "other_families": [items[t.id] for t in other if t.id in items],
        "proposals": [items[t.id] for t in proposals_held if t.id in items],
    }
    sets.pool = pool
    pool_programs = {ast_hash(t.program) for t in pool}
    for name, held in sets.held.items():
        overlap = {ast_hash(i.task.program) for i in held} & pool_programs
        assert not overlap, f"{name}: {len(overlap)} held-out programs are pool programs"
    sets.counts = {
        "pool": len(pool),
        "pool_by_source": {s: sum(t.source == s for t in pool)
                           for s in ("procedural", "selfplay", "seeds")},  # fmt: skip
        **{name: len(held) for name, held in sets.held.items()},
        "proposals_by_kind": {k: sum(i.task.kind == k for i in sets.held["proposals"])
                              for k in ("deduction", "abduction", "induction", "codegen")},
    }  # fmt: skip
    return sets
