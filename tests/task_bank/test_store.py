"""The SQLite store: schema versions, transactions, attempts, rounds and statistics."""

from __future__ import annotations

import sqlite3

import pytest
from bank_samples import add_tasks

from selfplay.admission.schema import parse_task
from task_bank.migrations import MIGRATIONS, SCHEMA_VERSION
from task_bank.store import Attempt, Bank, BankError, Rejection


def _task(n: int, kind: str = "codegen", **extra):
    return parse_task(
        {
            "kind": kind,
            "prompt": f"task {n}",
            "program": f"def f(x):\n    return x + {n}\n",
            "entry_point": "f",
            "tests": [f"assert f(0) == {n}"],
            "examples": [{"input": "1", "output": repr(1 + n)}],
            **extra,
        },
        source="unit",
    )


def test_a_new_bank_uses_wal_foreign_keys_and_the_latest_schema(tmp_path):
    with Bank(tmp_path / "b.db") as bank:
        assert bank.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert bank.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert bank.schema_version == SCHEMA_VERSION


def test_an_old_bank_is_migrated_and_its_counters_backfilled(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0] + "\nPRAGMA user_version = 1;")
    conn.execute(
        "INSERT INTO tasks (id, kind, prompt, program, tests, source, created_at, content_hash, "
        "ast_hash, dedup_key) VALUES ('t1', 'codegen', 'p', 'x = 1', '[]', 's', 0, 'c', 'a', 'k')"
    )
    conn.executemany(
        "INSERT INTO attempts (task_id, solver, answer, status, passed, step, created_at) "
        "VALUES ('t1', 'm', 'a', ?, ?, ?, 0)",
        [("passed", 1, 3), ("failed", 0, 5), ("passed", 1, 4)],
    )
    conn.commit()
    conn.close()
    with Bank(path) as bank:
        assert bank.schema_version == SCHEMA_VERSION
        stats = bank.solve_stats("m")
        assert stats.loc["t1"].to_dict() == {"attempts": 3, "successes": 2, "last_step": 5}


def test_a_bank_from_a_newer_selfplay_is_refused(tmp_path):
    path = tmp_path / "new.db"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(BankError, match="newer than this selfplay"):
        Bank(path)


def test_a_file_that_is_not_a_database_is_refused_in_one_sentence(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"definitely not sqlite" * 100)
    with pytest.raises(BankError, match="is not a usable task bank"):
        Bank(path)
    assert path.read_bytes() == b"definitely not sqlite" * 100


def test_reading_commands_do_not_create_a_bank(tmp_path):
    with pytest.raises(BankError, match="there is no bank"):
        Bank(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()


def test_tasks_round_trip_and_duplicates_are_not_inserted_twice(bank):
    keys = add_tasks(bank, [_task(1), _task(2)])
    assert all(k is not None for k in keys)
    assert bank.get(_task(1).id).to_row() == _task(1).to_row()
    assert add_tasks(bank, [_task(1)]) == [None]
    assert bank.count() == 2


def test_a_failed_write_leaves_nothing_behind(bank):
    add_tasks(bank, [_task(1)])
    with pytest.raises(sqlite3.IntegrityError):
        # the second task has no prompt, which breaks a NOT NULL constraint: the whole batch
        # rolls back
        bad = _task(3)
        bad.prompt = None
        add_tasks(bank, [_task(2), bad])
    assert bank.count() == 1


def test_attempts_update_per_task_per_solver_counters(bank):
    a, b = _task(1), _task(2)
    add_tasks(bank, [a, b])
    round_id = bank.start_round({"solver": "m1"})
    bank.add_attempts(
        [
            Attempt(a.id, "m1", "ans", "passed", True, 1.0, round_id, step=1),
            Attempt(a.id, "m1", "ans", "failed", False, 0.0, round_id, step=2),
            Attempt(a.id, "m2", "ans", "passed", True, 1.0, round_id, step=7),
        ]
    )
    bank.finish_round(round_id, {"admitted": 0})
    m1 = bank.solve_stats("m1")
    assert list(m1.columns) == ["attempts", "successes", "last_step"]
    assert m1.loc[a.id].to_dict() == {"attempts": 2, "successes": 1, "last_step": 2}
    assert m1.loc[b.id].to_dict() == {"attempts": 0, "successes": 0, "last_step": -1}
    both = bank.solve_stats()
    assert both.loc[a.id].to_dict() == {"attempts": 3, "successes": 2, "last_step": 7}
    assert str(both["attempts"].dtype) == "int64"
    assert bank.rounds()[0]["summary"] == {"admitted": 0}
    bank.add_attempts([Attempt(b.id, "m1", "ans", "failed", False, 0.0, round_id, step=3)])
    assert bank.attempted_tasks("m1") == [a.id, a.id, b.id]  # in the order they were made
    assert bank.attempted_tasks("m2") == [a.id] and bank.attempted_tasks("m3") == []


def test_an_attempt_on_an_unknown_task_is_refused_and_nothing_is_recorded(bank):
    add_tasks(bank, [_task(1)])
    with pytest.raises(BankError, match="not in the bank"):
        bank.add_attempts(
            [
                Attempt(_task(1).id, "m", "a", "passed", True),
                Attempt("nope", "m", "a", "passed", True),
            ]
        )
    assert bank.solve_stats().loc[_task(1).id, "attempts"] == 0


def test_contaminated_tasks_are_left_out_of_exports_unless_asked_for(bank):
    clean, dirty = _task(1), _task(2)
    dirty.contaminated = "HumanEval/0: same normalized program"
    add_tasks(bank, [clean, dirty])
    assert [t.id for t in bank.tasks()] == [clean.id]
    assert len(list(bank.tasks(include_contaminated=True))) == 2
    assert list(bank.solve_stats().index) == [clean.id]


def test_filters_by_kind_source_and_tag(bank):
    add_tasks(bank, [_task(1, tags=["math"]), _task(2, kind="deduction", tags=["strings"])])
    assert [t.kind for t in bank.tasks(kind="deduction")] == ["deduction"]
    assert [t.tags for t in bank.tasks(tag="math")] == [["math"]]
    assert list(bank.tasks(source="elsewhere")) == []


def test_recording_the_same_rejection_twice_counts_once(bank):
    r = Rejection("src", "item-1", "reference_failed", "assert failed")
    bank.add_rejections([r])
    bank.add_rejections([r, Rejection("src", "item-2", "reference_failed")])
    assert bank.rejection_counts() == {"reference_failed": 2}


def test_hack_signal_rates_per_solver_and_round(tmp_path):
    from task_bank.stats import summary

    with Bank(tmp_path / "b.db") as bank:
        a, b = _task(1), _task(2)
        add_tasks(bank, [a, b])
        r1, r2 = bank.start_round(), bank.start_round()
        attempts = [
            Attempt(a.id, "m1", "x", "failed", False, 0.0, r1, signals=["gc_scan", "frame_walk"]),
            Attempt(a.id, "m1", "x", "passed", True, 1.0, r1),
            Attempt(b.id, "m2", "x", "failed", False, 0.0, r2, signals=["seccomp_denied"]),
            Attempt(b.id, "m2", "x", "failed", False, 0.0, r2, signals=["seccomp_denied"]),
        ]
        bank.add_attempts(attempts)
        hacks = summary(bank)["hack_signals"]
    assert hacks["attempts_with_signals"] == 3 and hacks["rate"] == 0.75
    assert hacks["by_signal"] == {"seccomp_denied": 2, "gc_scan": 1, "frame_walk": 1}
    assert hacks["by_solver"]["m1"] == {"attempts": 2, "with_signals": 1, "rate": 0.5}
    assert hacks["by_round"][str(r2)] == {"attempts": 2, "with_signals": 2, "rate": 1.0}


def test_the_degenerate_answer_probe_has_its_own_figures(tmp_path):
    from task_bank.stats import summary
    from task_bank.tasks import Rejection

    with Bank(tmp_path / "b.db") as bank:
        honest = _task(1, metadata={"degenerate_passes": ["empty_list"]})
        plain, other = _task(2), _task(3, metadata={"degenerate_passes": []})
        add_tasks(bank, [honest, plain, other])
        bank.add_rejections([Rejection("mine", "weak-1", "weak_tests", "[] passes every test")])
        bank.add_attempts([
            Attempt(plain.id, "m", "x", "passed", True, signals=["degenerate_pass"]),
            Attempt(plain.id, "m", "x", "passed", True, signals=["gc_scan"]),
        ])  # fmt: skip
        data = summary(bank)
    assert data["degenerate"] == {"turned_away": 1, "kept_flagged": 1, "attempts": 1}


def test_steps_of_rounds_live_in_the_journal_and_old_meta_keys_migrate(tmp_path):
    path = tmp_path / "old.db"
    with Bank(path) as bank:
        r = bank.start_round()
        rounds = bank.journal("round")
        rounds.set(r, "solve.chunk.a", {"tokens": 3})
        rounds.set(r, "rewards", {"proposer": {}})
        assert rounds.steps(r, "solve.chunk.") == {"solve.chunk.a": {"tokens": 3}}
        assert rounds.everywhere("rewards") == [(r, {"proposer": {}})]
        assert rounds.get(r, "propose.codegen") is None
        assert bank.journal("loop").get(r, "rewards") is None  # scopes do not mix
        # A bank from before the table: its steps were meta keys; a task id may end in .rewards.
        bank.conn.execute("DROP TABLE steps")  # version 10's
        bank.conn.execute("PRAGMA user_version = 3")
        bank.conn.execute("DROP INDEX attempts_round")
        bank.conn.execute("DROP INDEX tasks_round")
        for table in ("models", "proposals"):  # and what version 5 added
            bank.conn.execute(f"DROP TABLE {table}")
        bank.conn.execute("DROP INDEX attempts_solver_time")
        bank.conn.execute("ALTER TABLE attempts DROP COLUMN isolation")  # version 7's
        bank.conn.execute("ALTER TABLE tasks DROP COLUMN strengthened")  # version 12's
        # version 9's (version 6 keeps a graph table that is already there)
        bank.conn.execute(
            "ALTER TABLE curriculum_nodes RENAME COLUMN expected_variance TO learnability"
        )
        bank.set_meta(f"selfplay.round.{r}.rewards", '{"proposer": {"t": 1}}')
        bank.set_meta(f"selfplay.round.{r}.solve.chunk.x.rewards", '{"tokens": 1}')
        bank.set_meta("selfplay.run", '{"start": 0}')
    with Bank(path) as bank:
        assert bank.schema_version == SCHEMA_VERSION
        rounds = bank.journal("round")
        assert rounds.get(r, "rewards") == {"proposer": {"t": 1}}
        assert rounds.everywhere("rewards") == [(r, {"proposer": {"t": 1}})]
        assert rounds.steps(r, "solve.chunk.") == {"solve.chunk.x.rewards": {"tokens": 1}}
        assert bank.meta(f"selfplay.round.{r}.rewards") is None and bank.meta("selfplay.run")


def test_the_two_step_tables_merge_into_the_journal(tmp_path):
    """Migration 10 moves the rows of round_steps and loop_steps into one journal."""
    path = tmp_path / "v9.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "\n".join(MIGRATIONS[:9]) + "\nPRAGMA user_version = 9;"
        "INSERT INTO rounds (id, started_at) VALUES (1, 0);"
        "INSERT INTO round_steps VALUES (1, 'rewards', '{\"proposer\": {}}', 1.0);"
        "INSERT INTO loop_steps VALUES (2, 'eval', '{\"pass\": 0.5}', 2.0);"
    )
    conn.close()
    with Bank(path) as bank:
        assert bank.journal("round").all() == {1: {"rewards": {"proposer": {}}}}
        assert bank.journal("loop").all() == {2: {"eval": {"pass": 0.5}}}
        tables = {r[0] for r in bank.conn.execute("SELECT name FROM sqlite_schema")}
        assert not tables & {"round_steps", "loop_steps"}
        with pytest.raises(ValueError, match="unknown journal scope"):
            bank.journal("iteration")


def test_each_attempt_records_whether_it_ran_in_the_sandbox(tmp_path):
    from task_bank.stats import summary

    with Bank(tmp_path / "b.db") as bank:
        a = _task(1)
        add_tasks(bank, [a])
        bank.add_attempts(
            [
                Attempt(a.id, "m1", "x", "passed", True, 1.0),
                Attempt(a.id, "m1", "x", "passed", True, 1.0, isolation="none"),
                Attempt(a.id, "m1", "x", "passed", True, 1.0, isolation="bogus"),
            ]
        )
        stored = [r[0] for r in bank.conn.execute("SELECT isolation FROM attempts ORDER BY id")]
        hacks = summary(bank)["hack_signals"]
    # What is not known to be the sandbox is stored as none.
    assert stored == ["sandbox", "none", "none"]
    assert hacks["attempts_unsandboxed"] == 2 and hacks["attempts_isolation_unrecorded"] == 0
