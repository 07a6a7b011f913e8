"""`--role proposer --method grpo`: the proposer learns on-policy from the learnability of
what it writes.

One step, as Absolute Zero trains its proposer and with R-Zero's repetition penalty:
1. each kind gets `groups_per_kind` prompts, each showing `references` bank tasks drawn
   without replacement (`grounding`: any task, or only tasks the proposer did not write);
2. the current policy writes `group_size` programs a prompt, and the inputs of each, through
   the project's own engine (vLLM's CPU build where it runs: `generation_backend`);
3. admission judges them, its whole chain (a duplicate of the bank or of an earlier
   proposal is a rejection), and writes the admitted tasks to the bank;
4. the solver (the starting model, frozen, unless `solver_model` names another) attempts
   each admitted task `solver_samples` times; on a shared engine it swaps to the start's
   weights for this and back after the update;
5. each proposal's reward (`selfplay.proposer.reward`): -1 rejected, 1 - acc at the
   frontier, -0.5 outside it, minus its share of the batch with the same program shape;
6. one group-relative policy-gradient step on both generations of every proposal
   (`selfplay.training.policy`), then the engine takes the new weights in place.

Each step is a round of the bank (`config: {"proposer_rl": ...}`): its proposals (with the
learnability reward of the admitted, as a self-play round stores it), tasks and attempts
are the bank's like any round's. Its figures (mean reward, frontier share, rejections,
duplicates, diversity, KL to the start, seconds per phase) go to the progress line, to
`<out>/metrics.jsonl` one line a step, and to the model's record. A checkpoint every
`save_steps` keeps the adapter and the optimizer; the same command continues from it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from selfplay.admission.normalize import program_shape
from selfplay.training.context import TrainContext, Trained
from selfplay.training.data import TrainDataError

if TYPE_CHECKING:
    from task_bank.store import Bank

METRICS = "metrics.jsonl"
DUPLICATES = ("duplicate", "near_duplicate")
SOURCE = "selfplay"  # the proposer's own tasks (`selfplay.proposer.proposer.SOURCE`)


class References:
    """Reference tasks per kind, drawn without replacement: a shuffled pass over the kind's
    pool, reshuffled (with the tasks added since) when it runs out."""

    def __init__(self, bank: Bank, grounding: str, seed: int,
                 exclude: set[str] = frozenset()) -> None:  # fmt: skip
        self.bank = bank
        self.grounding = grounding
        self.exclude = exclude  # held-out tasks are never shown
        self.rng = np.random.default_rng(seed)
        self.queue: dict[str, list[str]] = {}

    def pool(self, kind: str) -> list[str]:
        tasks = self.bank.tasks(kind=kind)
        return [t.id for t in tasks if t.id not in self.exclude
                and (self.grounding == "bank" or t.source != SOURCE)]  # fmt: skip

    def draw(self, kind: str, k: int) -> list[Any]:
        drawn: list[str] = []
        while len(drawn) < k:
            queue = self.queue.get(kind) or []
            if not queue:
                pool = [i for i in self.pool(kind) if i not in drawn]
                if not pool:
                    break
                queue = [pool[i] for i in self.rng.permutation(len(pool))]
            drawn.append(queue.pop())
            self.queue[kind] = queue
        return [t for t in map(self.bank.get, drawn) if t is not None]


@dataclass(slots=True)
class ProposerRLJob:
    """The proposer's RL run: its steps, then the policy saved as the model directory."""

    policy: Any = None
    log: list[dict[str, Any]] = field(default_factory=list)

    def run(self, ctx: TrainContext) -> Trained:
        from selfplay.backends import make_backend
        from selfplay.backends.models import local_model_dir, model_label, resolve_model
        from selfplay.training.policy import Policy

        config, s = ctx.config, ctx.config.proposer_grpo
        ctx.progress("load", 0, 1, note="the policy and the engine")
        self.policy = Policy(
            ctx.base,
            peft_config=ctx.peft,
            learning_rate=config.learning_rate,
            dtype=ctx.common["model_init_kwargs"]["dtype"],
            seed=config.seed,
            micro_batch=s.micro_batch,
            compute_dtype=_compute_dtype(ctx),
        )
        start = 0
        if ctx.checkpoint is not None:
            start = int(self.policy.load_checkpoint(ctx.checkpoint)["global_step"])
        self.log = _kept_metrics(ctx.out / METRICS, start)
        backend = make_backend(config.generation_backend, ctx.base)
        solver_spec = s.solver_model or config.model
        shared = local_model_dir(resolve_model(solver_spec)) == ctx.base
        solver_backend = backend if shared else make_backend(config.generation_backend, solver_spec)
        step = Step(ctx, backend, solver_backend, model_label(solver_spec), shared)
        try:
            if start:  # a resumed run: the engine generates from the checkpoint's policy
                backend.update_weights(self.policy.weights())
            ctx.progress("load", 1, 1)
            for number in range(start + 1, config.max_steps + 1):
                record = step.run(number, self.policy)
                self.log.append(record)
                with (ctx.out / METRICS).open("a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")
                ctx.progress("train", number, config.max_steps, note=_said(record))
                if number % config.save_steps == 0 and number < config.max_steps:
                    self.policy.save_checkpoint(
                        ctx.out / "checkpoints" / f"checkpoint-{number}", {"step": number}
                    )
        finally:
            step.close()
            backend.close()
            if solver_backend is not backend:
                solver_backend.close()
        rewards = [r["reward"] for r in self.log]
        return Trained(
            steps=len(self.log),
            rows=sum(r["proposals"] for r in self.log),
            data={
                "proposer_rl": {
                    "steps": len(self.log),
                    "reward_first": rewards[0] if rewards else None,
                    "reward_last": rewards[-1] if rewards else None,
                    "frontier": sum(r["frontier"] for r in self.log),
                    "proposals": sum(r["proposals"] for r in self.log),
                }
            },
            log=self.log,
        )

    def save(self, out: Path) -> None:
        self.policy.save(out)


class Step:
    """One RL step's pieces, made once for the run: admission, references, the solver."""

    def __init__(self, ctx: TrainContext, backend: Any, solver_backend: Any, solver_name: str,
                 shared: bool) -> None:  # fmt: skip
        from selfplay.admission import Admission, AdmissionConfig
        from selfplay.config import ProposerConfig

        config, s = ctx.config, ctx.config.proposer_grpo
        self.ctx, self.s = ctx, s
        self.backend, self.solver_backend = backend, solver_backend
        self.solver_name, self.shared = solver_name, shared
        self.verifier = ctx.verifier()
        self.proposer_config = ProposerConfig(
            proposals_per_kind=s.group_size, references=s.references, temperature=s.temperature
        )
        p = self.proposer_config
        self.admission = Admission(
            ctx.bank,
            self.verifier,
            AdmissionConfig(timeout_s=config.verifier.timeout_s,
                            max_program_chars=p.max_program_chars,
                            max_output_chars=p.max_output_chars,
                            proposal_examples=p.inputs_per_task),
        )  # fmt: skip
        self.references = References(ctx.bank, s.grounding, config.seed, ctx.exclude)

    def close(self) -> None:
        self.verifier.close()

    def seed(self, number: int, name: str) -> int:
        from selfplay.seeds import step_seed

        return step_seed(self.ctx.config.seed, "proposer_rl", number, name)

    def run(self, number: int, policy: Any) -> dict[str, Any]:
        from selfplay.config import SolverConfig
        from selfplay.proposer.proposer import Proposer
        from selfplay.proposer.reward import group_advantages, score_proposals
        from selfplay.solver.learnability import learnability
        from selfplay.solver.solver import Solver

        ctx, s, bank = self.ctx, self.s, self.ctx.bank
        seconds: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            seconds[name] = round(now - clock, 2)
            clock = now

        def progress(phase: str, done: int, total: int) -> None:
            ctx.progress(phase, done, total, note=f"step {number}/{ctx.config.max_steps}")

        round_id = bank.start_round({"proposer_rl": ctx.model_id, "step": number})
        groups = [(kind, self.references.draw(kind, s.references))
                  for kind in s.kinds for _ in range(s.groups_per_kind)]  # fmt: skip
        proposer = Proposer(self.backend, self.admission, self.proposer_config,
                            seed=self.seed(number, "propose"), progress=progress)  # fmt: skip
        drafts = proposer.write_groups(groups, round_id)
        lap("generate")
        reports = [proposer.judge(d) for d in drafts]
        for report in reports:
            bank.add_proposals(report.proposals)
        lap("admit")
        admitted = [set(r.admitted_ids) for r in reports]
        tasks = [t for ids in admitted for t in map(bank.get, sorted(ids)) if t is not None]
        counts: dict[str, tuple[int, int]] = {}
        if tasks:
            if self.shared and policy.steps > 0:  # the solver is the start: swap it in
                self.backend.update_weights(policy.weights(adapter=False))
            solver = Solver(self.solver_backend, self.verifier,
                            SolverConfig(samples=s.solver_samples, temperature=1.0),
                            name=self.solver_name, seed=self.seed(number, "solve"),
                            progress=progress)  # fmt: skip
            solved = solver.attempt(tasks, round_id=round_id, step=round_id)
            bank.add_attempts(solved.attempts)
            counts = {r.task_id: (r.attempts, r.successes) for r in solved.results}
        lap("solve")
        # Every proposal of the batch, in draft order, with its group (its prompt).
        flat = [(g, cand, prop) for g, (d, r) in enumerate(zip(drafts, reports, strict=True))
                for cand, prop in zip(d.candidates, r.proposals, strict=True)]  # fmt: skip
        kept = [prop.task_id in admitted[g] for g, _, prop in flat]
        scores = score_proposals(
            kept,
            [
                counts.get(prop.task_id) if k else None
                for (_, _, prop), k in zip(flat, kept, strict=True)
            ],
            [cand.program for _, cand, _ in flat],
            s.repetition_penalty,
        )
        bank.set_proposal_rewards(
            round_id, {t: learnability(c[1], c[0], "absolute_zero") for t, c in counts.items()}
        )
        advantages = group_advantages([x.reward for x in scores], [g for g, _, _ in flat])
        samples = []
        index = 0
        for d in drafts:
            for i, turn in enumerate(d.turns):
                a = advantages[index]
                samples.append(policy.sample(turn.prompt, turn.completion, a))
                if i in d.input_turns:
                    inputs = d.input_turns[i]
                    samples.append(policy.sample(inputs.prompt, inputs.completion, a))
                index += 1
        progress("update", 0, 1)
        trained = policy.update(samples)
        progress("update", 1, 1)
        lap("update")
        self.backend.update_weights(policy.weights())  # the next step generates from it
        lap("sync")
        record = _record(number, round_id, flat, reports, scores, trained, seconds)
        bank.finish_round(round_id, record)
        return record


def _record(number: int, round_id: int, flat: list, reports: list, scores: list,
            trained: dict[str, Any], seconds: dict[str, float]) -> dict[str, Any]:  # fmt: skip
    """One step's figures: the reward, the frontier, what admission turned away, diversity."""
    rewards = np.array([x.reward for x in scores], dtype=float)
    n = len(rewards)
    rejected: Counter = Counter()
    for r in reports:
        rejected.update(r.rejected)
    admitted = [cand.program for (_, cand, _), x in zip(flat, scores, strict=True) if x.admitted]
    frontier = sum(x.frontier for x in scores)
    half = 1.96 * rewards.std(ddof=1) / np.sqrt(n) if n > 1 else 0.0
    return {
        "step": number,
        "round": round_id,
        "proposals": n,
        "admitted": len(admitted),
        "frontier": frontier,
        "frontier_share": round(frontier / n, 4) if n else 0.0,
        "reward": round(float(rewards.mean()), 4) if n else 0.0,
        "reward_interval": [
            round(float(rewards.mean() - half), 4),
            round(float(rewards.mean() + half), 4),
        ]
        if n
        else None,  # fmt: skip
        "penalty_mean": round(float(np.mean([x.penalty for x in scores])), 4) if n else 0.0,
        "rejected": dict(rejected.most_common()),
        "flagged": sum(r.flagged for r in reports),  # benchmark look-alikes, scored as rejected
        "duplicates": sum(rejected.get(k, 0) for k in DUPLICATES),
        "diversity": round(len({program_shape(p) for p in admitted}) / len(admitted), 4)
        if admitted
        else None,
        **trained,
        "seconds": seconds,
    }


def _compute_dtype(ctx: TrainContext) -> Any:
    """bf16 autocast on a CPU with native bf16 (AVX512-BF16, AMX) when the weights train in
    float32; elsewhere (AVX2, or weights already in bf16) the weights' own dtype."""
    import torch

    from selfplay.backends.auto import isa

    weights = ctx.common["model_init_kwargs"]["dtype"]
    if ctx.cuda or weights != torch.float32 or not isa().startswith("AVX512-BF16"):
        return None
    return torch.bfloat16


def _said(record: dict[str, Any]) -> str:
    return (f"reward {record['reward']:+.3f}, frontier {record['frontier']}/"
            f"{record['proposals']}, admitted {record['admitted']}, KL {record['kl']:.4f}")  # fmt: skip


def _kept_metrics(path: Path, upto: int) -> list[dict[str, Any]]:
    """The metric lines of the steps a resumed run keeps; the file is cut to them."""
    rows = []
    if path.exists():
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            if row["step"] <= upto:
                rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def build(ctx: TrainContext) -> ProposerRLJob:
    """Refuses a bank with no reference task for a kind, before anything loads."""
    s = ctx.config.proposer_grpo
    refs = References(ctx.bank, s.grounding, ctx.config.seed, ctx.exclude)
    empty = [kind for kind in s.kinds if not refs.pool(kind)]
    if empty:
        where = "tasks" if s.grounding == "bank" else "tasks the proposer did not write"
        raise TrainDataError(
            f"the bank has no {where} of kind {', '.join(empty)} to show the proposer; "
            "import some (selfplay bank import seeds) or run a round first"
        )
    return ProposerRLJob()
