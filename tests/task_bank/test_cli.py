"""`selfplay bank` from the command line: import, stats, show, list and bad input."""

from __future__ import annotations

import json

import pytest
from bank_samples import SUM_EVENS, SUM_ODDS, codegen_row, write_jsonl
from selfplay_cli import run_cli
from typer.testing import CliRunner

from pipelines.cli import app
from task_bank.store import Attempt, Bank

runner = CliRunner()
ROWS = [
    codegen_row(SUM_EVENS, "sum_evens", ["assert sum_evens([1, 2, 4]) == 6"], tags=["lists"]),
    codegen_row(SUM_ODDS, "sum_odds", ["assert sum_odds([1, 2, 3]) == 4"], tags=["lists", "math"]),
    {
        "kind": "deduction",
        "prompt": "Predict the output.",
        "program": "def f(s):\n    return s[::-1]\n",
        "entry_point": "f",
        "tests": ["assert f('ab') == 'ba'"],
        "examples": [{"input": "'abc'"}],
    },
    codegen_row("def g(x):\n    return x +\n", "g", ["assert g(1) == 2"]),
]


@pytest.mark.slow
def test_import_then_stats_json_show_and_list(tmp_path):
    good = write_jsonl(tmp_path / "mine.jsonl", ROWS[:3])
    bank_path = tmp_path / "b.db"
    result = run_cli("bank", "import", str(good), env={"SELFPLAY_BANK": str(bank_path)})
    assert result.returncode == 0, result.stderr
    assert "admitted" in result.stdout
    with Bank(bank_path) as bank:
        ids = [t.id for t in bank.tasks()]
        bank.add_attempts(
            [
                Attempt(ids[0], "m", "x", "passed", True, step=1),
                Attempt(ids[0], "m", "x", "failed", False, step=2),
                Attempt(ids[1], "m", "x", "failed", False, step=2),
            ]
        )

    stats = runner.invoke(app, ["bank", "stats", "--bank", str(bank_path), "--json"])
    assert stats.exit_code == 0
    data = json.loads(stats.stdout)
    assert data["tasks"] == 3
    assert data["by_kind"] == {"codegen": 2, "deduction": 1}
    assert data["by_source"] == {"mine": 3}
    assert data["rejected"] == {}
    assert data["attempts"]["total"] == 3 and data["attempts"]["successes"] == 1
    assert data["solve_rate"]["attempted_tasks"] == 2 and data["solve_rate"]["mean"] == 0.25

    shown = runner.invoke(app, ["bank", "show", ids[2], "--bank", str(bank_path), "--json"])
    assert json.loads(shown.stdout)["examples"] == [{"input": "'abc'", "output": "'cba'"}]
    table = runner.invoke(app, ["bank", "show", ids[0], "--bank", str(bank_path)])
    assert table.exit_code == 0 and "sum_evens" in table.stdout

    listed = runner.invoke(
        app,
        [
            "bank",
            "list",
            "--bank",
            str(bank_path),
            "--json",
            "--tag",
            "lists",
            "--min-solve-rate",
            "0.1",
        ],
    )
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [ids[0]]
    listed = runner.invoke(
        app, ["bank", "list", "--bank", str(bank_path), "--json", "--kind", "deduction"]
    )
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [ids[2]]
    listed = runner.invoke(
        app, ["bank", "list", "--bank", str(bank_path), "--json", "--max-solve-rate", "0.0"]
    )
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [ids[1]]
    assert runner.invoke(app, ["bank", "list", "--bank", str(bank_path)]).exit_code == 0
    assert runner.invoke(app, ["bank", "stats", "--bank", str(bank_path)]).exit_code == 0


@pytest.mark.slow
def test_a_malformed_file_exits_2_with_one_sentence_and_leaves_the_bank_alone(tmp_path):
    bank_path = tmp_path / "b.db"
    good = write_jsonl(tmp_path / "good.jsonl", ROWS[:1])
    assert run_cli("bank", "import", str(good), "--bank", str(bank_path)).returncode == 0
    before = bank_path.read_bytes()
    bad = write_jsonl(tmp_path / "bad.jsonl", ROWS)  # row 4 is not valid Python
    result = run_cli("bank", "import", str(bad), "--bank", str(bank_path))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"selfplay bank: {bad} line 4: field 'program' is not valid Python "
        "(invalid syntax, line 2)."
    )
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert bank_path.read_bytes() == before
    with Bank(bank_path) as bank:
        assert bank.count() == 1 and bank.rejection_counts() == {}


def test_bad_arguments_exit_2_without_creating_a_bank(tmp_path):
    bank_path = tmp_path / "b.db"
    for args, message in [
        (["bank", "import", "nowhere.jsonl"], "is neither a file"),
        (["bank", "stats"], "there is no bank"),
        (["bank", "show", "x"], "there is no bank"),
    ]:
        result = runner.invoke(app, [*args, "--bank", str(bank_path)])
        assert result.exit_code == 2 and message in result.stderr
    assert not bank_path.exists()
    Bank(bank_path).close()
    result = runner.invoke(app, ["bank", "show", "nope", "--bank", str(bank_path)])
    assert result.exit_code == 2 and "there is no task 'nope'" in result.stderr
    result = runner.invoke(app, ["bank", "list", "--kind", "poem", "--bank", str(bank_path)])
    assert result.exit_code == 2 and "--kind must be one of" in result.stderr


def test_version():
    res = run_cli("--version")
    assert res.returncode == 0 and res.stdout.startswith("selfplay ")
    from importlib.metadata import version

    assert res.stdout.split()[1] == version("selfplay")


def test_list_sorts_and_fits_80_columns(tmp_path):
    bank = tmp_path / "b.db"
    assert run_cli("bank", "import", "seeds", "--bank", str(bank)).returncode == 0

    def ids(order: str) -> list[str]:
        res = run_cli(
            "bank", "list", "--bank", str(bank), "--sort", order, "--limit", "500", "--json"
        )
        return [json.loads(line)["id"] for line in res.stdout.splitlines()]

    oldest = ids("oldest")
    assert len(oldest) == 104 and ids("newest") == oldest[::-1]
    table = run_cli("bank", "list", "--bank", str(bank), "--limit", "5", env={"COLUMNS": "80"})
    assert table.returncode == 0 and "seed-" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
    bad = run_cli("bank", "list", "--bank", str(bank), "--sort", "sideways")
    assert bad.returncode == 2 and bad.stderr.strip().startswith("selfplay bank: --sort must be")


def test_importing_an_empty_file_warns_and_imports_nothing(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    res = run_cli("bank", "import", str(empty), "--bank", str(tmp_path / "b.db"), "--json")
    assert res.returncode == 0
    assert "holds no records; nothing was imported" in res.stderr
    assert json.loads(res.stdout)["admitted"] == 0


def test_progress_without_a_terminal_is_plain_lines(tmp_path):
    res = run_cli("bank", "import", "seeds", "--bank", str(tmp_path / "b.db"))
    assert res.returncode == 0
    lines = [line for line in res.stderr.splitlines() if line.startswith("admitting: ")]
    assert lines and lines[-1].startswith("admitting: 104/104")


def test_rejections_shows_reasons_and_details_by_round_and_reason(tmp_path):
    from task_bank.tasks import Rejection

    bank_path = tmp_path / "b.db"
    with Bank(bank_path) as bank:
        bank.add_rejections([
            Rejection("selfplay", "selfplay-r1-deduction-6", "input_raises",
                      "<call 0>: TypeError: 'int' object is not iterable\n  line 1: f(98)"),
            Rejection("selfplay", "selfplay-r1-deduction-7", "constant_output",
                      "every input gives None"),
            Rejection("selfplay", "selfplay-r10-codegen-1", "undefined_name", "uses Account"),
        ])  # fmt: skip
    args = ["bank", "rejections", "--bank", str(bank_path)]
    result = runner.invoke(app, [*args, "--round", "1"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "2 rejections: " in result.stdout and "r10" not in result.stdout
    assert all(w in result.stdout for w in ("TypeError:", "iterable", "f(98)", "gives None"))
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    result = runner.invoke(app, [*args, "--reason", "undefined_name", "--json"])
    (row,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (row["item"], row["detail"]) == ("selfplay-r10-codegen-1", "uses Account")
    result = runner.invoke(app, [*args, "--round", "1", "--reason", "undefined_name"])
    assert result.exit_code == 2
    assert "the reasons there are: constant_output, input_raises" in result.stderr
    result = runner.invoke(app, [*args, "--round", "3"])
    assert result.exit_code == 0 and "no candidate was turned away in round 3" in result.stdout
