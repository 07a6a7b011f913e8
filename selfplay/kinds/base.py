"""What a task kind is: its prompt, its answer, its ground truth and its grading, in one place.

A kind is one module (`codegen.py`, `deduction.py`, ...) holding one `Kind` subclass, with its
two prompt templates beside it: `<name>.solve.tmpl` (what the solver and a trainer are shown) and
`<name>.propose.tmpl` (what the proposer is asked to write). Nothing else in selfplay branches on
the kind's name, and no prompt of a kind lives anywhere else. The solver, the proposer, the
exports, the rewards and `selfplay eval` all ask the kind: the prompt a trainer is shown is the
prompt the bank's solve rates were measured under, and an attempt in the bank is graded by the
very function the exported reward calls (`selfplay.rewards.grade_responses`), so a label and a
reward agree by construction.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from selfplay.kinds.template import SUFFIX, Rendered, render
from selfplay.task import Task
from selfplay.verifier.records import Verdict

# A kind's templates, each a file `<name>.<role>.tmpl` beside the kind's module.
ROLES = ("solve", "propose")

# Reasons a response scores below 1, besides a verifier status (failed, error, timeout, memory).
PASSED = "passed"
NO_ANSWER = "no_answer"
NOT_LITERAL = "not_literal"
WRONG_ANSWER = "wrong_answer"
BAD_GROUND_TRUTH = "bad_ground_truth"
# Passed weak tests with nothing but None, empty values, NaN or empty arrays.
DEGENERATE = "degenerate_answer"


@dataclass(slots=True)
class Score:
    """A response's reward and why: `reason` is "passed" or why it scored less.

    `gradable` is False when the label itself could not be read (TRL gets None for it).
    `signals` are the reward-hacking attempts the sandbox observed (never change the score).
    """

    score: float
    reason: str
    answered: bool
    tests_passed: int = 0
    tests_total: int = 0
    detail: str = ""
    signals: list[str] = field(default_factory=list)
    gradable: bool = True
    # "none" where the response's code ran without a sandbox (explicitly asked for).
    isolation: str = "sandbox"

    @property
    def passed(self) -> bool:
        return self.reason == PASSED

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fail(reason: str, detail: str = "", answered: bool = True) -> Score:
    return Score(0.0, reason, answered, detail=detail)


def examples_with_outputs(task: Task) -> list[dict]:
    return [e for e in (task.examples or []) if e.get("output") is not None]


class Kind:
    """One task kind. Subclasses set the class attributes and implement the hooks."""

    name: str = ""
    # Examples a task of this kind needs once verified (deduction and abduction show one,
    # induction shows some and grades on all), and distinct calls a proposal must come with:
    # at least two, since with one input no check can tell a program that computes something
    # from one that returns a constant.
    min_examples: int = 0
    proposal_inputs: int = 2
    # Ground-truth fields a label of this kind must carry.
    required: tuple[str, ...] = ()
    # "code" (a program) or "value" (a short literal): how long an answer may run.
    answer: str = "code"
    # Tokens an answer of this kind needs, with room to spare: what GRPO gives a completion
    # when the config does not say (a literal fits in a few dozen, a program needs hundreds).
    answer_tokens: int = 384
    # The statement of a task the proposer wrote (codegen writes its own, from the docstring).
    proposed_statement: str = ""
    # Proposals: whether the program's docstring must state the task (it becomes the
    # statement), and whether every input giving the same output disqualifies it (a task
    # whose program returns one value whatever it is given teaches nothing: the answer of
    # deduction is guessable, any input answers abduction, induction's examples show no rule).
    needs_docstring: bool = False
    varied_outputs: bool = True

    # -- its prompts --------------------------------------------------------------------
    def template_path(self, role: str) -> Path:
        """The file of the kind's `role` template ("solve" or "propose"): beside its module."""
        if role not in ROLES:
            raise ValueError(f"a kind's template is one of {', '.join(ROLES)}, not {role!r}")
        module = Path(sys.modules[type(self).__module__].__file__ or "")
        return module.with_name(f"{self.name}.{role}{SUFFIX}")

    def render(self, role: str, **values: object) -> Rendered:
        """The kind's `role` template with `values` substituted (all must be given)."""
        return render(self.template_path(role), **values)

    # -- what the solver and the trainer see ---------------------------------------------
    def fields(self, task: Task) -> dict[str, str]:
        """The solve template's placeholders for `task`."""
        raise NotImplementedError

    def prompt(self, task: Task) -> str:
        """The user message: the kind's solve template filled in for `task`."""
        values = {"prompt": task.prompt.strip(), **self.fields(task)}
        return self.render("solve", **values).message.strip() + "\n"

    def chat(self, task: Task) -> list[dict[str, str]]:
        """The prompt as a chat message list (what verl, TRL and OpenRLHF template)."""
        return [{"role": "user", "content": self.prompt(task)}]

    def reference_answer(self, task: Task) -> str:
        """The reference solution written as a response should be (what SFT trains on)."""
        raise NotImplementedError

    # -- the label ----------------------------------------------------------------------
    def ground_truth(self, task: Task) -> dict[str, Any]:
        """What grading needs, as ground-truth fields (ValueError when the task lacks it)."""
        raise NotImplementedError

    # -- grading ------------------------------------------------------------------------
    def plan(self, response: str, gt: dict[str, Any], row_id: str) -> Score | dict[str, Any]:
        """A final score, or the verifier row whose verdict decides it."""
        raise NotImplementedError

    def decide(self, gt: dict[str, Any], verdict: Verdict) -> Score:
        """The score of a response from the verdict on its row."""
        raise NotImplementedError

    # -- the bank -----------------------------------------------------------------------
    def shown(self, task: Task) -> str | None:
        """What the task shows besides its program (part of its identity in the bank)."""
        return None

    def check(self, task: Task) -> tuple[str, str] | None:
        """A verified task's kind-specific problem, as (reason, detail), or None."""
        if len(examples_with_outputs(task)) < self.min_examples:
            return "too_few_examples", f"{self.name} needs {self.min_examples}"
        return None

    def statement(
        self, program: str, entry_point: str, examples: Sequence[tuple[str, str]] = ()
    ) -> str:
        """The statement of a task the proposer wrote with this program; `examples` are its
        verified (arguments, output) pairs, in the order admission kept them."""
        return self.proposed_statement

    def describe(self, task: Task, shown: list[dict], block: str) -> str:
        """A bank task as the proposer shows it for reference."""
        ep = task.entry_point
        example = f"\n{ep}({shown[0]['input']}) returns {shown[0]['output']}" if shown else ""
        return block + example
