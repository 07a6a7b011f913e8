import pytest
from bank_samples import io_task

from selfplay.backends.base import Backend, Completion


class Answers(Backend):
    """Replays, for each prompt, the completions listed for the task it asks about; a reply
    `(text, "length")` is one its token budget ended."""

    name = "answers"

    def __init__(self, by_marker):
        super().__init__("answers-model")
        self.by_marker = by_marker

    def _generate(self, prompts, n, sampling):
        out = []
        for p in prompts:
            text = p.messages[-1]["content"]
            marker = next(m for m in self.by_marker if m in text)
            replies = self.by_marker[marker]
            picked = [replies[j % len(replies)] for j in range(n)]
            out.append([Completion(r[0], 5, r[1]) if isinstance(r, tuple) else Completion(r, 5, "stop")
                        for r in picked])  # fmt: skip
        return out


@pytest.fixture()
def answers():
    return Answers


@pytest.fixture()
def make_task():
    return io_task
