import pytest

from selfplay.admission import Admission, AdmissionConfig
from selfplay.admission.schema import parse_task
from selfplay.backends.base import Backend, Completion

QUOTES = '"""'


class Replay(Backend):
    """Replays canned text: `programs` for program prompts (prefill ends in `def f(`),
    `docstrings` for docstring prompts (prefill ends in the opening quotes), `inputs` for
    the input prompts (prefill ends in `f(`), in order, cycling."""

    name = "replay"

    def __init__(self, programs, inputs=("1)\nf(2)\nf(3)\nf(-4)\nf(10)\n",), docstrings=()):
        super().__init__("replay-model")
        self.programs, self.inputs = list(programs), list(inputs)
        self.docstrings = list(docstrings)
        self.n_programs = self.n_inputs = 0
        self.prompts = []

    def _generate(self, prompts, n, sampling):
        out = []
        for p in prompts:
            self.prompts.append(p)
            row = []
            for _ in range(n):
                if p.prefill.endswith("def f("):
                    text = self.programs[self.n_programs % len(self.programs)]
                    self.n_programs += 1
                elif p.prefill.endswith(QUOTES):
                    text = self.docstrings.pop(0) if self.docstrings else QUOTES
                else:
                    text = self.inputs[self.n_inputs % len(self.inputs)]
                    self.n_inputs += 1
                row.append(Completion(text, len(text.split()), "stop"))
            out.append(row)
        return out


REFERENCE = {
    "id": "ref-double",
    "kind": "deduction",
    "prompt": "Predict the value that `f` returns.",
    "program": "def f(x):\n    return 2 * x\n",
    "entry_point": "f",
    "tests": ["assert f(2) == 4"],
    "examples": [{"input": "3", "output": None}],
}


@pytest.fixture()
def admission(bank, verifier_3s_512mb):
    g = Admission(bank, verifier_3s_512mb, AdmissionConfig(timeout_s=3.0))
    report = g.admit([parse_task(REFERENCE)])
    assert report.admitted == 1
    return g


@pytest.fixture()
def replay():
    """The replaying backend class (a fixture: test modules cannot import conftest)."""
    return Replay


@pytest.fixture()
def reference(bank, admission):
    return bank.get("ref-double")
