"""The solver: n sampled attempts per task, graded by the exported rewards' own function."""

from selfplay.solver.learnability import LEARNABILITY_FORMS, learnability
from selfplay.solver.solver import Solver, SolveReport, TaskResult, solver_prompt

__all__ = [
    "LEARNABILITY_FORMS",
    "SolveReport",
    "Solver",
    "TaskResult",
    "learnability",
    "solver_prompt",
]
