"""Which tasks an export keeps and where they go: filters, contamination, splits, options."""

from __future__ import annotations

import pytest
from bank_builder import CODEGEN, DEDUCTION, INDUCTION
from pydantic import ValidationError

from selfplay.export.select import ExportOptions, select
from task_bank.store import Bank


@pytest.fixture
def built(built_bank):
    """built_bank, open (selection only reads it)."""
    with Bank(built_bank, create=False) as b:
        yield b


def ids(selection) -> set[str]:
    return {i.task.id for i in selection.items}


def test_contaminated_tasks_are_left_out_by_default_and_counted(built):
    default = select(built, ExportOptions())
    assert len(default.items) == 104 and default.excluded == {"contaminated": 1}
    assert all(i.task.source == "seeds" for i in default.items)
    kept = select(built, ExportOptions(include_contaminated=True))
    assert len(kept.items) == 105 and "HumanEval/0" in ids(kept)


def test_kind_and_source_filters(built):
    only = select(built, ExportOptions(kinds=["deduction", "abduction"]))
    assert {i.task.kind for i in only.items} == {"deduction", "abduction"}
    assert only.excluded["kind_filtered"] == 104 - len(only.items)
    none = select(built, ExportOptions(sources=["humaneval"]))
    assert none.items == [] and none.excluded == {"contaminated": 1, "source_filtered": 104}


def test_solve_rate_filter_leaves_out_tasks_never_attempted(built):
    # codegen: 2 of 4 attempts passed; deduction 1 of 2; induction 0 of 1.
    low = select(built, ExportOptions(max_solve_rate=0.3))
    assert ids(low) == {INDUCTION}
    assert low.excluded == {"contaminated": 1, "solve_rate_unknown": 101, "solve_rate_filtered": 2}
    assert ids(select(built, ExportOptions(min_solve_rate=0.5))) == {CODEGEN, DEDUCTION}


def test_random_split_is_reproducible_with_its_seed(built):
    def test_ids(seed: int) -> set[str]:
        sel = select(built, ExportOptions(test_fraction=0.25, seed=seed))
        return {i.task.id for i in sel.items if i.split == "test"}

    assert len(test_ids(1)) == 26
    assert test_ids(1) == test_ids(1)
    assert test_ids(1) != test_ids(2)


def test_difficulty_split_by_band_uses_solve_rates_and_declared_levels(built):
    sel = select(built, ExportOptions(split="difficulty"))
    by_id = {i.task.id: i for i in sel.items}
    assert {i.split for i in sel.items} == {"easy", "medium", "hard"}
    assert all(i.split == i.band for i in sel.items)
    # Induction: 0 of 1 solved -> posterior mean 1/3 -> difficulty 2/3: hard.
    assert by_id[INDUCTION].difficulty == pytest.approx(2 / 3, abs=1e-6)
    assert by_id[INDUCTION].split == "hard"
    # A task never attempted with metadata.difficulty 2 -> 0.25: easy.
    unattempted = next(
        i for i in sel.items if i.attempts == 0 and i.task.metadata["difficulty"] == 2
    )
    assert (unattempted.difficulty, unattempted.split) == (0.25, "easy")
    assert by_id[DEDUCTION].learnability == pytest.approx(2 * 2 / (4 * 5), abs=1e-6)  # Beta(2, 2)


def test_split_none_puts_everything_in_train(built):
    assert {i.split for i in select(built, ExportOptions(split="none")).items} == {"train"}


def test_options_reject_unknown_fields_and_contradictions():
    with pytest.raises(ValidationError, match="kind_filter"):
        ExportOptions(kind_filter=["codegen"])
    with pytest.raises(ValidationError, match="min_solve_rate is above"):
        ExportOptions(min_solve_rate=0.8, max_solve_rate=0.2)
    with pytest.raises(ValidationError, match="split"):
        ExportOptions(split="by_length")


def test_tasks_of_one_program_share_a_side_of_the_random_split(tmp_path):
    from selfplay.admission.normalize import ast_hash
    from selfplay.admission.schema import parse_task

    # 12 programs, each under 3 inputs and 3 spellings (names and a docstring aside, one
    # program): a test task whose program is in train under another input is not held out.
    spellings = [
        "def f(x):\n    return x * {k} + {k}\n",
        "def f(y):\n    return y * {k} + {k}\n",
        'def f(n):\n    """Scale and shift."""\n    return n * {k} + {k}\n',
    ]
    tasks = [
        parse_task(
            {
                "id": f"t{k}-{x}",
                "kind": "deduction",
                "prompt": "Predict the value that `f` returns.",
                "program": spelling.format(k=k),
                "entry_point": "f",
                "tests": [f"assert f({x}) == {x * k + k}"],
                "examples": [{"input": str(x), "output": str(x * k + k)}],
            }
        )
        for k in range(2, 14)
        for x, spelling in enumerate(spellings)
    ]
    with Bank(tmp_path / "bank.db") as bank:
        hashes = [ast_hash(t.program) for t in tasks]
        assert len(set(hashes)) == 12
        bank.add_tasks(tasks, ast_hashes=hashes, dedup_keys=[t.id for t in tasks])
        for seed in range(6):
            items = select(bank, ExportOptions(test_fraction=0.3, seed=seed)).items
            sides: dict[str, set[str]] = {}
            for item in items:
                sides.setdefault(ast_hash(item.task.program), set()).add(item.split)
            assert len(items) == 36 and all(len(s) == 1 for s in sides.values()), sides
            test = sum(i.split == "test" for i in items)
            assert test % 3 == 0 and 9 <= test <= 12  # about 30%, whole programs


def test_split_by_family_holds_whole_families_out_and_their_programs_with_them(tmp_path):
    from selfplay.admission.normalize import ast_hash
    from selfplay.admission.schema import parse_task

    def task(tid: str, program: str, family: str | None) -> object:
        return parse_task({
            "id": tid, "kind": "deduction", "prompt": "Predict the value that `f` returns.",
            "program": program, "entry_point": "f", "tests": ["assert f(1) == f(1)"],
            "examples": [{"input": "1", "output": "0"}],
            "metadata": {"family": family} if family else {},
        })  # fmt: skip

    # 6 families of 5 programs, and one unfamilied task whose program is family f0's: it
    # must go where f0 goes, or f0's program would be trained on under another task.
    tasks = [task(f"f{j}-{k}", f"def f(x):\n    return x * {k} + {j}\n", f"f{j}")
             for j in range(6) for k in range(5)]  # fmt: skip
    tasks.append(task("loose", "def f(y):\n    return y * 0 + 0\n", None))
    with Bank(tmp_path / "bank.db") as bank:
        hashes = [ast_hash(t.program) for t in tasks]
        bank.add_tasks(tasks, ast_hashes=hashes, dedup_keys=[t.id for t in tasks])
        held = set()
        for seed in range(5):
            items = select(bank, ExportOptions(test_fraction=0.3, seed=seed,
                                               split_by="family")).items  # fmt: skip
            side = {i.task.id: i.split for i in items}
            for j in range(6):
                assert len({side[f"f{j}-{k}"] for k in range(5)}) == 1  # a family is whole
            assert side["loose"] == side["f0-0"]
            test = {i.task.metadata.get("family") for i in items if i.split == "test"} - {None}
            assert 1 <= len(test) <= 2  # about 30% of six families
            held |= test
        assert len(held) > 2  # the seed decides which
        with pytest.raises(ValidationError):
            ExportOptions(split_by="kind")
