"""Importers: every shape lands as verified tasks, failures are counted by reason."""

from __future__ import annotations

import json

import pytest
from bank_samples import SUM_EVENS, codegen_row, write_jsonl

from selfplay.admission import import_source
from selfplay.admission.importers import SEEDS_PATH, SourceError, read_source
from selfplay.admission.schema import KINDS

MBPP = [
    {
        "task_id": 11,
        "text": "Write a function to remove the first and last occurrence of a character.",
        "code": "def remove_occ(s, ch):\n    s = s.replace(ch, '', 1)\n    return s[::-1].replace(ch, '', 1)[::-1]\n",
        "test_list": [
            "assert remove_occ('hello', 'l') == 'heo'",
            "assert remove_occ('abcda', 'a') == 'bcd'",
        ],
        "test_setup_code": "",
        "challenge_test_list": [],
    },
    {
        "task_id": 12,
        "text": "Write a function to find the square of a number.",
        "code": "def square(n):\n    return n * n\n",
        "test_list": ["assert square(3) == 10"],  # a broken test: the reference fails it
    },
]
KODCODE = [
    {
        "question_id": "Leetcode_1",
        "question": "Return the indices of the two numbers that add up to target.",
        "solution": "def two_sum(nums, target):\n    seen = {}\n    for i, n in enumerate(nums):\n        if target - n in seen:\n            return [seen[target - n], i]\n        seen[n] = i\n",
        "test": "from solution import two_sum\n\ndef test_basic():\n    assert two_sum([2, 7, 11, 15], 9) == [0, 1]\n\ndef test_later():\n    assert two_sum([3, 2, 4], 6) == [1, 2]\n",
    },
    {
        "question_id": "Leetcode_2",
        "question": "Reverse a string.",
        "solution": "def rev(s):\n    return s[::-1]\n",
        "test": "import pytest\nfrom solution import rev\n\n@pytest.mark.parametrize('s', ['ab'])\ndef test_rev(s):\n    assert rev(s) == s[::-1]\n",
    },
]
ACECODER = [
    {
        "id": "oss_1",
        "question": "Implement `clamp(x, lo, hi)`.",
        "test_cases": [
            "assert clamp(5, 0, 3) == 3",
            "assert clamp(-1, 0, 3) == 0",
            "assert clamp(2, 0, 3) == 2",
        ],
        "inferences": [
            {"completion": "```python\ndef clamp(x, lo, hi):\n    return x\n```", "pass_rate": 0.3},
            {
                "completion": "```python\ndef clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n```",
                "pass_rate": 1.0,
            },
        ],
    },
    {
        "id": "oss_2",
        "question": "Nothing passed.",
        "test_cases": ["assert g() == 1"],
        "inferences": [],
    },
]
STDIO = [
    {
        "id": 1,
        "question": "Read two integers and print their sum.",
        "inputs": ["1 2\n", "10 -3\n"],
        "outputs": ["3\n", "7\n"],
        "solution": "a, b = map(int, input().split())\nprint(a + b)\n",
    }
]


def test_mbpp_rows_are_verified_and_broken_ones_counted(tmp_path, admission):
    report = import_source(str(write_jsonl(tmp_path / "mbpp.jsonl", MBPP)), admission)
    assert report.admitted == 1 and report.rejected == {"reference_failed": 1}
    task = admission.bank.get("mbpp-11")
    assert task.entry_point == "remove_occ" and task.source == "mbpp"
    assert "remove_occ(s, ch)" in task.prompt
    assert task.examples == [
        {"input": "'hello', 'l'", "output": "'heo'"},
        {"input": "'abcda', 'a'", "output": "'bcd'"},
    ]
    assert admission.bank.rejection_counts() == {"reference_failed": 1}


def test_kodcode_pytest_modules_become_one_test_per_function(tmp_path, admission):
    report = import_source(str(write_jsonl(tmp_path / "kod.jsonl", KODCODE)), admission)
    assert report.admitted == 1 and report.rejected == {"tests_need_pytest": 1}
    task = admission.bank.get("kodcode-Leetcode_1")
    assert task.entry_point == "two_sum" and len(task.tests) == 2
    assert task.examples[0] == {"input": "[2, 7, 11, 15], 9", "output": "[0, 1]"}


def test_acecoder_takes_the_fully_passing_inference_as_reference(tmp_path, admission):
    report = import_source(str(write_jsonl(tmp_path / "ace.jsonl", ACECODER)), admission)
    assert report.admitted == 1 and report.rejected == {"no_reference": 1}
    assert "max(lo, min(x, hi))" in admission.bank.get("acecoder-oss_1").program


def test_stdio_rows_become_stdin_stdout_tests(tmp_path, admission):
    report = import_source(str(write_jsonl(tmp_path / "cf.jsonl", STDIO)), admission)
    assert report.admitted == 1
    task = admission.bank.get("stdio-1")
    assert task.entry_point is None and task.tests[1] == {"input": "10 -3\n", "output": "7\n"}


def test_rows_of_selfplay_verify_import_as_codegen_tasks(tmp_path, admission):
    # The entry point is the one function the tests call; the statement its docstring.
    row = {"id": "add", "program": 'def add(a, b):\n    """Return a plus b."""\n    return a + b\n',
           "tests": ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"]}  # fmt: skip
    # A row of the task format further down the same file keeps its own kind.
    other = {"id": "evens", "kind": "deduction", "prompt": "Predict the output.",
             "program": "def f(xs):\n    return [x for x in xs if x % 2 == 0]\n",
             "entry_point": "f", "tests": ["assert f([1, 2]) == [2]"],
             "examples": [{"input": "[3, 4, 6]"}]}  # fmt: skip
    report = import_source(str(write_jsonl(tmp_path / "v.jsonl", [row, other])), admission)
    assert report.admitted == 2, report
    task = admission.bank.get("add")
    assert (task.kind, task.entry_point, task.prompt) == ("codegen", "add", "Return a plus b.")
    assert admission.bank.get("evens").kind == "deduction"


@pytest.mark.parametrize(
    "row, words",
    [
        # no docstring and no prompt: the statement is missing
        (
            {"program": "def add(a, b):\n    return a + b\n", "tests": ["assert add(1, 1) == 2"]},
            ["'prompt'"],
        ),
        # the tests call two of the program's functions: which one is the task?
        (
            {
                "program": "def f(x):\n    return x\n\ndef g(x):\n    return x\n",
                "tests": ["assert f(1) == g(1)"],
            },
            ["'entry_point'", "'prompt'"],
        ),
        # a program alone: the row format's other field is named
        ({"program": "x = 1\n"}, ["lacks 'kind'"]),
    ],
    ids=["no-statement", "two-functions", "program-only"],
)
def test_a_row_short_of_a_task_names_every_missing_field(tmp_path, row, words):
    with pytest.raises(SourceError) as info:
        read_source(str(write_jsonl(tmp_path / "v.jsonl", [row])))
    message = str(info.value)
    assert all(w in message for w in words), message
    assert message.count("\n") == 0


@pytest.mark.slow
def test_row_format_in_parquet_and_in_a_saved_dataset(tmp_path, admission):
    import datasets
    import pandas as pd

    rows = [
        codegen_row("def inc(x):\n    return x + 1\n", "inc", ["assert inc(1) == 2"]),
        codegen_row(
            "def dec(x):\n    return x - 1\n", "dec", ["assert dec(1) == 0"], tags=["math"]
        ),
    ]
    encoded = [{k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows]
    pd.DataFrame(encoded).to_parquet(tmp_path / "rows.parquet")
    report = import_source(str(tmp_path / "rows.parquet"), admission)
    assert report.admitted == 2
    datasets.Dataset.from_list(encoded).save_to_disk(str(tmp_path / "ds"))
    report = import_source(str(tmp_path / "ds"), admission, source_name="rows")
    assert report.admitted == 0 and report.already_present == 2
    assert {t.source for t in admission.bank.tasks()} == {"rows"}


def test_examples_in_a_row_are_recomputed_and_lies_are_rejected(tmp_path, admission):
    prog = "def f(x):\n    return x * 2\n"
    rows = [
        {
            "kind": "deduction",
            "prompt": "?",
            "program": prog,
            "entry_point": "f",
            "tests": ["assert f(1) == 2"],
            "examples": [{"input": "4", "output": "8"}],
        },
        {
            "kind": "abduction",
            "prompt": "?",
            "program": prog,
            "entry_point": "f",
            "tests": ["assert f(1) == 2"],
            "examples": [{"input": "5", "output": "11"}],
        },
        {
            "kind": "induction",
            "prompt": "?",
            "program": prog,
            "entry_point": "f",
            "tests": ["assert f(1) == 2"],
            "examples": [{"input": "6"}, {"input": "7"}],
        },
    ]
    report = import_source(str(write_jsonl(tmp_path / "k.jsonl", rows)), admission)
    assert report.admitted == 2 and report.rejected == {"example_mismatch": 1}
    induction = next(admission.bank.tasks(kind="induction"))
    assert induction.examples == [{"input": "6", "output": "12"}, {"input": "7", "output": "14"}]
    assert induction.deterministic is True and induction.verified_at is not None


def test_nondeterministic_and_too_slow_references_are_rejected_by_reason(tmp_path, bank, verifier):
    from selfplay.admission import Admission, AdmissionConfig

    admission = Admission(bank, verifier, AdmissionConfig(timeout_s=1.0))
    rows = [
        codegen_row(
            "import os\ndef r(x):\n    return os.urandom(8)\n", "r", ["assert r(1) is not None"]
        ),
        codegen_row("def slow(x):\n    while True:\n        pass\n", "slow", ["assert slow(1)"]),
        codegen_row("x = 1 / 0\ndef boom(x):\n    return 1\n", "boom", ["assert boom(1) == 1"]),
    ]
    report = import_source(str(write_jsonl(tmp_path / "bad.jsonl", rows)), admission)
    assert report.admitted == 0
    assert report.rejected == {"nondeterministic": 1, "reference_timeout": 1, "reference_error": 1}
    assert bank.rejection_counts() == report.rejected


def test_reimporting_the_same_source_adds_nothing(tmp_path, admission):
    path = write_jsonl(tmp_path / "mbpp.jsonl", MBPP)
    import_source(str(path), admission)
    before = (admission.bank.count(), admission.bank.rejection_counts())
    report = import_source(str(path), admission)
    assert report.admitted == 0 and report.already_present == 1
    assert (admission.bank.count(), admission.bank.rejection_counts()) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"kind": "codegen"\n', "line 1: not valid JSON"),
        (
            json.dumps(codegen_row(SUM_EVENS, "sum_evens", ["assert True"])) + "\n\n[1, 2]\n",
            "line 3: row must be a JSON object, got list.",
        ),
        (
            json.dumps(codegen_row(SUM_EVENS, "sum_evens", ["assert True"]))
            + "\n"
            + json.dumps(codegen_row(SUM_EVENS, "sum_evens", []))
            + "\n",
            "line 2: field 'tests' is missing or not a non-empty list.",
        ),
    ],
    ids=["bad-json", "not-an-object", "empty-tests"],
)
def test_a_malformed_file_names_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(SourceError, match=message) as info:
        read_source(str(path))
    assert str(path) in str(info.value)


def test_unknown_sources_are_refused():
    with pytest.raises(SourceError, match="is neither a file"):
        read_source("no-such-thing")


@pytest.mark.slow
def test_humaneval_imports_all_164_problems_flagged_as_contaminated(admission):
    report = import_source("humaneval", admission)
    assert report.admitted == 164 and report.contaminated == 164 and not report.rejected
    task = admission.bank.get("HumanEval/0")
    assert task.tests[0].rstrip().endswith("check(has_close_elements)")
    assert task.examples and list(admission.bank.tasks()) == []


@pytest.mark.slow
def test_the_bundled_seeds_import_cleanly_and_cover_all_kinds(admission):
    assert SEEDS_PATH.exists()
    report = import_source("seeds", admission)
    assert report.admitted >= 60 and report.admitted == report.seen, report.to_dict()
    assert {t.kind for t in admission.bank.tasks(source="seeds")} == set(KINDS)


def test_object_results_are_not_kept_as_examples_and_do_not_look_nondeterministic(
    tmp_path, admission
):
    program = (
        "class Counter:\n    def __init__(self, start):\n        self.n = start\n"
        "    def bump(self):\n        self.n += 1\n        return self.n\n"
    )
    row = codegen_row(program, "Counter", ["assert Counter(3).bump() == 4", "assert Counter(0)"])
    report = import_source(str(write_jsonl(tmp_path / "cls.jsonl", [row])), admission)
    assert report.admitted == 1, report.to_dict()
    assert next(admission.bank.tasks()).examples == []
