"""The solver: n sampled attempts per task, graded by the verifier, with rewards."""

from selfplay.solver.extract import Answer, extract, grading_row, shown_examples
from selfplay.solver.rewards import LEARNABILITY_FORMS, learnability, solver_reward
from selfplay.solver.solver import Solver, SolverConfig, SolveReport, TaskResult, solver_prompt

__all__ = [
    "LEARNABILITY_FORMS",
    "Answer",
    "SolveReport",
    "Solver",
    "SolverConfig",
    "TaskResult",
    "extract",
    "grading_row",
    "learnability",
    "shown_examples",
    "solver_prompt",
    "solver_reward",
]
