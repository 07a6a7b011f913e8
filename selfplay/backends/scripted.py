"""A backend that replays canned completions: deterministic and instant, for tests.

The script is either a list of texts, handed out in order and wrapping around, or a
function `(prompt, sample_index) -> text`. As a model spec (`--backend scripted --model
FILE`), a file holds the list: a JSON array of strings, or JSON Lines of `{"text": ...}`.

Stop strings and `max_new_tokens` apply as in a real backend (a token here is a
whitespace-separated word), so code that relies on them can be tested with it. Unlike a
model, it hands out a script entry per sample even when sampling is greedy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from selfplay.backends.base import (
    Backend,
    BackendError,
    Completion,
    ModelNotFound,
    Prompt,
    Sampling,
    truncate_at_stop,
)

Script = Sequence[str] | Callable[[Prompt, int], str]
_WORD = re.compile(r"\S+")


class ScriptedBackend(Backend):
    """Replays `script`; `seen` records every (prompt, sampling) it was asked for."""

    name = "scripted"
    repeats_greedy = False  # the script decides every sample, greedy or not

    def __init__(self, model: str = "scripted", *, script: Script | None = None) -> None:
        super().__init__(model)
        if script is None:
            script = load_script(model)
        if not callable(script):
            script = list(script)
            if not script or not all(isinstance(t, str) for t in script):
                raise ValueError("a scripted backend needs a non-empty list of completion texts")
        self.script = script
        self.seen: list[tuple[Prompt, Sampling]] = []
        self._next = 0

    def _generate(
        self, prompts: list[Prompt], n: int, sampling: Sampling
    ) -> list[list[Completion]]:
        results = []
        for prompt in prompts:
            self.seen.append((prompt, sampling))
            results.append([self._complete(self._text(prompt, i), sampling) for i in range(n)])
        return results

    def _text(self, prompt: Prompt, index: int) -> str:
        if callable(self.script):
            text = self.script(prompt, index)
            if not isinstance(text, str):
                raise BackendError(f"the script returned {type(text).__name__}, not a string")
            return text
        text = self.script[self._next % len(self.script)]
        self._next += 1
        return text

    def _complete(self, text: str, sampling: Sampling) -> Completion:
        text, stopped = truncate_at_stop(text, sampling.stop)
        words = list(_WORD.finditer(text))
        if len(words) > sampling.max_new_tokens:
            cut = words[sampling.max_new_tokens - 1].end()
            return Completion(text[:cut], sampling.max_new_tokens, "length")
        return Completion(text, len(words) + (1 if stopped else 0), "stop")


def load_script(path: str) -> list[str]:
    """Completion texts from a JSON array of strings or JSON Lines of {"text": ...}."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ModelNotFound(
            f"the scripted backend needs a file of completions as its model, and {path!r} is "
            f"not a file (a JSON array of strings, or JSON Lines of objects with a 'text' key)"
        )
    raw = file.read_text(encoding="utf-8")
    if raw.lstrip().startswith("["):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise BackendError(f"{path} line {exc.lineno}: not valid JSON ({exc.msg})") from exc
        if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
            raise BackendError(f"{path}: expected a JSON array of strings")
    else:
        data = _json_lines(raw, path)
    if not data:
        raise BackendError(f"{path}: holds no completions")
    return data


def _json_lines(raw: str, path: str) -> list[str]:
    texts = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BackendError(f"{path} line {number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise BackendError(f'{path} line {number}: expected an object with a string "text"')
        texts.append(row["text"])
    return texts
