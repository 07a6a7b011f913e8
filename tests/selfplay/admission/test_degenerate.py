"""The degenerate-response probe in admission: a codegen task whose tests an empty array,
None or an empty list satisfies is turned away (`weak_tests`, counted), one whose reference
honestly returns that value is kept and flagged, and tests that pin the answer pass."""

from __future__ import annotations

from selfplay.admission import Admission, AdmissionConfig
from selfplay.admission.degenerate import PROBES, program
from selfplay.admission.schema import parse_task


def _task(tid: str, program_: str, entry: str, tests: list[str]):
    return parse_task({"id": tid, "kind": "codegen", "prompt": f"Task {tid}.",
                       "program": program_, "entry_point": entry, "tests": tests}, source="t")  # fmt: skip


AREA = "import math\n\ndef area(r):\n    return math.pi * r * r\n"
# KodCode's float-tolerance shapes: each is true of an empty array.
TOLERANT = [
    "import numpy as np\nassert np.allclose(area(1.0), 3.14159, atol=1e-3)",
    "import numpy as np\nnp.testing.assert_allclose(area(2.0), 12.566, rtol=1e-3)",
    "import numpy as np\nassert np.all(np.abs(area(1.0) - 3.14159) < 1e-3)",
]


def test_weak_tests_are_turned_away_and_honest_ones_flagged(bank, verifier):
    weak = [_task(f"weak{i}", AREA, "area", [t]) for i, t in enumerate(TOLERANT)]
    weak.append(_task("notnone", "def g(x):\n    return x + 1\n", "g",
                      ["assert g(1) is not None or g(1) is None"]))  # fmt: skip
    # A test function nobody calls asserts nothing.
    weak.append(_task("uncalled", "def h(x):\n    return x * 3\n", "h",
                      ["def test_h():\n    assert h(2) == 6"]))  # fmt: skip
    pinned = _task(
        "pinned",
        AREA,
        "area",
        ["import math\nassert math.isclose(area(1.0), 3.14159, rel_tol=1e-4)"],
    )
    honest = _task("honest", "def evens(xs):\n    return [x for x in xs if x % 2 == 0]\n", "evens",
                   ["assert evens([1, 3]) == []", "assert evens([5]) == []"])  # fmt: skip
    # Expected 0: the `0` and `False` probes pass (False == 0), honestly both.
    zero = _task("zero", "def dec(x):\n    return x - 1\n", "dec", ["assert dec(1) == 0"])
    report = Admission(bank, verifier, AdmissionConfig(decontaminate=False)).admit(
        [*weak, pinned, honest, zero]
    )
    assert report.rejected == {"weak_tests": 5}, report.outcomes
    assert {t.id: t.metadata.get("degenerate_passes") for t in bank.tasks()} == {
        "pinned": None, "honest": ["empty_list"], "zero": ["zero", "false"]}  # fmt: skip
    details = dict(bank.conn.execute("SELECT item, detail FROM rejections").fetchall())
    assert "empty_array" in details["weak0"] and "none" in details["notnone"]


def test_every_probe_is_a_program_that_loads(verifier):
    rows = [{"id": n, "program": program(n, "f"), "tests": [], "calls": ["f(1)"]} for n in PROBES]
    verdicts = verifier.grade(rows)
    assert all(v.status == "passed" for v in verdicts), [(v.id, v.detail) for v in verdicts]


def test_the_probe_can_be_turned_off(bank, verifier):
    config = AdmissionConfig(decontaminate=False, probe_degenerate=False)
    report = Admission(bank, verifier, config).admit([_task("weak", AREA, "area", TOLERANT[:1])])
    assert report.admitted == 1


def test_the_card_counts_weak_tasks_and_the_label_carries_the_honest_flag(bank, verifier,
                                                                          tmp_path):  # fmt: skip
    import json

    from selfplay.export import export_bank
    from selfplay.export.select import ExportOptions

    honest = _task("honest", "def none_(x):\n    return []\n", "none_", ["assert none_(1) == []"])
    weak = _task("weak", AREA, "area", TOLERANT[:1])
    strong = _task("strong", "def dbl(x):\n    return 2 * x\n", "dbl", ["assert dbl(2) == 4"])
    Admission(bank, verifier, AdmissionConfig(decontaminate=False)).admit([honest, weak, strong])
    out = tmp_path / "export"
    export_bank(bank.path, "trl", out, ExportOptions(split="none"))
    card = (out / "README.md").read_text()
    assert "1 turned away as `weak_tests`; 1 in this export" in card
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "train.parquet").to_pylist()
    flags = {r["task_id"]: json.loads(r["ground_truth"]).get("degenerate_ok") for r in rows}
    assert flags == {"honest": True, "strong": None}
