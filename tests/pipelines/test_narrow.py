"""At 80 columns nothing a reader needs is cut: ids, tags, skill and scheduler names whole,
program lines wrapped, every loop column shown, and a listing says when it shows only some."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from rich.console import Console
from selfplay_cli import run_cli
from terminal import run_on_terminal

from pipelines.loop import table
from selfplay.admission import Admission, AdmissionConfig
from selfplay.admission.schema import parse_task
from selfplay.verifier import Verifier
from task_bank.store import Bank

LONG = "return sum(xs) + len([x for x in xs if 0 < x < 1000 and x % 2 == 0 and x not in (17, 19)])"


def test_the_loop_table_shows_every_column_at_80():
    rows = [
        SimpleNamespace(
            iteration=i,
            model=f"/b.models/iter-{i}-solver" if i else "bundled",
            admitted=12,
            bank_tasks=300,
            train_steps=32,
            train_reward=None,
            train_loss=0.53,
            held_out=0.167,
            held_out_interval=[0.13, 0.21],
            humaneval=0.8,
            humaneval_interval=[0.58, 0.92],
            hack_signal_rate=0.0,
            proposer="8 steps" if i else "-",
        )  # fmt: skip
        for i in range(2)
    ]
    console = Console(width=80, record=True, force_terminal=False)
    console.print(table(rows))
    text = console.export_text()
    for whole in ("iter-1-solver", "8 steps", "32 steps", "L 0.53", "0.13-0.21", "0.58-0.92",
                  "HumanEval", "hacks", "proposer"):  # fmt: skip
        assert whole in text, text
    assert "…" not in text and max(map(len, text.splitlines())) <= 80


@pytest.fixture(scope="module")
def seeds_bank(tmp_path_factory):
    bank = tmp_path_factory.mktemp("narrow") / "b.db"
    res = run_cli("bank", "import", "seeds", "--bank", str(bank), timeout=300)
    assert res.returncode == 0, res.stderr
    row = {
        "kind": "codegen", "prompt": "Count and sum.", "entry_point": "f",
        "program": f"def f(xs):\n    {LONG}\n", "tests": ["assert f([2, 4]) == 8"],
    }  # fmt: skip
    with Bank(bank) as store, Verifier(workers=1) as v:
        assert Admission(store, v, AdmissionConfig()).admit([parse_task(row)]).admitted == 1
    return bank


def test_bank_list_keeps_ids_and_tags_whole_and_says_it_shows_some(seeds_bank):
    listed = run_cli("bank", "list", "--bank", str(seeds_bank), "--limit", "12", "--json")
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    with Bank(seeds_bank) as store:
        total = store.count()
    code, screen = run_on_terminal("bank", "list", "--bank", str(seeds_bank), "--limit", "12")
    text = "\n".join(screen)
    assert code == 0, text
    assert f"12 of {total} tasks" in text
    cells = " ".join(text.replace("│", " ").split())
    for row in rows:
        assert row["id"] in cells
        for tag in row["tags"]:
            assert tag in cells, (tag, text)  # wrapped between words, never inside one
    assert "…" not in text and max(map(len, screen)) <= 80


def test_bank_show_wraps_a_long_program_line(seeds_bank):
    with Bank(seeds_bank) as store:
        (task,) = [t for t in store.tasks(kind="codegen") if t.prompt == "Count and sum."]
    code, screen = run_on_terminal("bank", "show", task.id, "--bank", str(seeds_bank))
    text = "\n".join(screen)
    assert code == 0, text
    shown = "".join(line.strip() for line in text.splitlines())
    assert LONG.replace(" ", "") in shown.replace(" ", ""), text
    # One fact a line, label and value together.
    assert re.search(r"^deterministic: +True *$", text, re.M), text
    assert re.search(r"^kind: +codegen *$", text, re.M), text


def test_bank_show_reflows_prose_and_keeps_code_lines():
    from pipelines.bank import _reflow

    prompt = "Return the sum\nof the list.\n\nFor example:\n>>> f([1, 2])\n3\n"
    assert _reflow(prompt) == "Return the sum of the list.\n\nFor example:\n>>> f([1, 2])\n3"


def test_curriculum_show_keeps_skill_names_and_ids_whole(seeds_bank):
    code, screen = run_on_terminal("curriculum", "show", "--bank", str(seeds_bank), lines=200)
    text = "\n".join(screen)
    assert code == 0, text
    assert "dynamic-programming" in text and "seed-bit-tricks-01" in text, text
    assert "…" not in text and max(map(len, screen)) <= 80
