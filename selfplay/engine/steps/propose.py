"""`Propose`: a round's proposing step for one task kind, with the probe before it.

The programs and inputs of every kind are written in the same generation calls (a batch
engine's step costs about the same for 3 sequences as for 48), in waves until the proposing
budget is spent (one wave when the config fixes the count). So the first `Propose` step of a
round to run writes the waves for every kind whose step is not committed yet; each wave's
reports are committed (checkpoint `propose.waves`) before the next starts, so a kill loses one
wave at most, and each kind's step then reports its own share. Before the first wave, a
solver new to a kind attempts a few of its tasks (the probe).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from selfplay.backends.base import engine_name
from selfplay.proposer.proposer import Proposer

if TYPE_CHECKING:
    from selfplay.config import RunConfig
    from selfplay.engine.runner import Context

# Checkpoints in the round's journal; their names are the keys of banks already written.
PROBE = "probe"
WAVES = "propose.waves"
TRIES = "propose.tries"
# Tasks of each never-attempted kind the solver tries before the first proposals (`probe`):
# one batch on vLLM, a small one where every sequence costs.
PROBE_VLLM = 4
PROBE_DEFAULT = 1


@dataclass(slots=True)
class Propose:
    """Propose tasks of one kind: their programs, inputs, admission and report."""

    kind: str
    name: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.name = f"propose.{self.kind}"

    def run(self, ctx: Context) -> dict[str, Any]:
        state = ctx.done(WAVES)
        if not _finished(state, ctx.owner.config):
            pending = [s for s in ctx.steps if isinstance(s, Propose) and ctx.done(s.name) is None]
            if ctx.done(PROBE) is None:
                probe(ctx, [s.kind for s in pending])
            state = _waves(ctx, pending)
        return state["reports"][self.kind] | {"waves": state["waves"]}


def probe(ctx: Context, kinds: list[str]) -> None:
    """Attempt a few bank tasks of each kind this solver has never attempted, before
    proposing: the references are meant to be tasks it solves sometimes, and with no attempt
    at all the scheduler could only guess (a fresh bank's first round)."""
    import numpy as np

    engine = ctx.owner
    size = engine.config.proposer.probe_tasks
    if size is None:
        engine.backend.load()  # `auto` knows its engine once loaded; the probe loads it anyway
        size = PROBE_VLLM if engine_name(engine.backend) == "vllm" else PROBE_DEFAULT
    rng = np.random.default_rng(ctx.seed(f"{PROBE}.pick"))
    picked: list[str] = []
    for kind in kinds:
        stats = engine.stats(ctx.id, kind)
        if size and len(stats) and int(stats["attempts"].sum()) == 0:
            ids = list(stats.index)
            picked += [ids[i] for i in rng.choice(len(ids), min(size, len(ids)), replace=False)]
    tasks = [t for t in (engine.bank.get(i) for i in picked) if t is not None]
    if not tasks:
        return  # nothing to probe: nothing to record (a resumed round looks again)
    report = engine.solver(ctx.seed(PROBE)).attempt(tasks, round_id=ctx.id, step=ctx.id)
    engine.bank.add_attempts(report.attempts)
    ctx.commit(PROBE, {"tasks": [t.id for t in tasks], "statuses": dict(report.statuses)})


def _finished(state: dict[str, Any] | None, config: RunConfig) -> bool:
    """Whether the waves are done: a fixed count takes one, a budget as many as start
    before it is spent."""
    if not state or not state["waves"]:
        return False
    fixed = config.proposer.proposals_per_kind is not None
    return fixed or state["seconds"] + state["last"] > config.proposer.budget_s


def _waves(ctx: Context, steps: list[Propose]) -> dict[str, Any]:
    state = ctx.done(WAVES) or {"waves": 0, "seconds": 0.0}
    reports: dict[str, dict[str, Any]] = state.setdefault("reports", {})
    # A wave redone after a kill samples afresh: with the killed try's seed it would
    # propose the same tasks again, which admission would count as duplicates.
    tries = (ctx.done(TRIES) or {}).get("tries", 0)
    ctx.commit(TRIES, {"tries": tries + 1})
    while not _finished(state, ctx.owner.config):
        started = time.perf_counter()
        _wave(ctx, steps, state["waves"], tries, reports)
        state["last"] = time.perf_counter() - started
        state["waves"] += 1
        state["seconds"] += state["last"]
        ctx.commit(WAVES, state)
    return state


def _wave(
    ctx: Context, steps: list[Propose], wave: int, tries: int, reports: dict[str, Any]
) -> None:
    engine = ctx.owner
    c = engine.config
    requests = {}
    for step in steps:
        stats = engine.stats(ctx.id, step.kind)
        seed = ctx.seed(f"{step.name}.pick", wave)
        picked = engine.pick(stats, c.proposer.references, seed, engine.references)
        requests[step.kind] = [t for t in (engine.bank.get(i) for i in picked) if t is not None]
    proposer = Proposer(engine.backend, engine.admission, c.proposer,
                        seed=ctx.seed("propose", tries, wave), progress=ctx.progress)  # fmt: skip
    gen0 = engine.backend.stats.seconds
    # Proposal items count on across waves, and a redone try's start past the killed one's.
    first = {s.kind: 100_000 * tries + reports.get(s.kind, {}).get("proposed", 0) for s in steps}
    drafts = proposer.write(requests, ctx.id, first=first)
    gen_seconds = engine.backend.stats.seconds - gen0
    total = sum(len(d.candidates) for d in drafts.values()) or 1
    for kind, draft in drafts.items():
        judged = proposer.judge(draft)
        engine.bank.add_proposals(judged.proposals)
        report = judged.to_dict()
        report["gen_seconds"] = gen_seconds * len(draft.candidates) / total
        reports[kind] = _add_reports(reports.get(kind), report)


def admitted_so_far(ctx: Context) -> dict[str, int]:
    """Proposals admitted per kind in the round so far, from its journal (a resumed round
    says what it keeps)."""
    reports = dict((ctx.done(WAVES) or {}).get("reports", {}))
    for step in ctx.steps:
        if isinstance(step, Propose) and (report := ctx.done(step.name)) is not None:
            reports[step.kind] = report
    return {kind: len(r["admitted_ids"]) for kind, r in reports.items() if r.get("admitted_ids")}


def _add_reports(before: dict[str, Any] | None, wave: dict[str, Any]) -> dict[str, Any]:
    """One kind's step report over the waves so far."""
    if before is None:
        return wave
    rejected = Counter(before["rejected"]) + Counter(wave["rejected"])
    return {
        "kind": wave["kind"],
        "proposed": before["proposed"] + wave["proposed"],
        "admitted_ids": before["admitted_ids"] + wave["admitted_ids"],
        "flagged": before["flagged"] + wave["flagged"],
        "rejected": dict(rejected.most_common()),
        "repaired": dict(Counter(before["repaired"]) + Counter(wave["repaired"])),
        "tokens": before["tokens"] + wave["tokens"],
        "seconds": round(before["seconds"] + wave["seconds"], 3),
        "gen_seconds": before["gen_seconds"] + wave["gen_seconds"],
    }
