"""Schema migrations, applied in order; `PRAGMA user_version` is the schema version.

Each migration runs in its own transaction together with the version bump, so a
bank is always at exactly one version. Append new migrations; never edit old ones.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: tasks, vectors, rounds, attempts, rejections.
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE rounds (
        id INTEGER PRIMARY KEY,
        started_at REAL NOT NULL,
        finished_at REAL,
        config TEXT NOT NULL DEFAULT '{}',
        summary TEXT
    );
    CREATE TABLE tasks (
        key INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('codegen', 'deduction', 'abduction', 'induction')),
        prompt TEXT NOT NULL,
        program TEXT NOT NULL,
        entry_point TEXT,
        tests TEXT NOT NULL,
        examples TEXT NOT NULL DEFAULT '[]',
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        source TEXT NOT NULL,
        parent_ids TEXT NOT NULL DEFAULT '[]',
        proposer TEXT,
        round_id INTEGER REFERENCES rounds(id),
        created_at REAL NOT NULL,
        verified_at REAL,
        deterministic INTEGER,
        content_hash TEXT NOT NULL,
        ast_hash TEXT NOT NULL,
        dedup_key TEXT NOT NULL UNIQUE,
        contaminated TEXT
    );
    CREATE INDEX tasks_kind ON tasks(kind);
    CREATE INDEX tasks_source ON tasks(source);
    CREATE INDEX tasks_ast_hash ON tasks(ast_hash);
    CREATE TABLE vectors (
        task_key INTEGER PRIMARY KEY REFERENCES tasks(key) ON DELETE CASCADE,
        vector BLOB NOT NULL
    );
    CREATE TABLE attempts (
        id INTEGER PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        solver TEXT NOT NULL,
        answer TEXT NOT NULL,
        status TEXT NOT NULL,
        passed INTEGER NOT NULL,
        reward REAL,
        round_id INTEGER REFERENCES rounds(id),
        step INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    );
    CREATE INDEX attempts_task ON attempts(task_id, solver);
    CREATE TABLE rejections (
        source TEXT NOT NULL,
        item TEXT NOT NULL,
        reason TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        PRIMARY KEY (source, item, reason)
    );
    """,
    # 2: per-task, per-solver counters kept in step with attempts, so the curriculum
    # reads one small row per task instead of scanning every attempt.
    """
    CREATE TABLE task_stats (
        task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        solver TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        successes INTEGER NOT NULL,
        last_step INTEGER NOT NULL,
        PRIMARY KEY (task_id, solver)
    ) WITHOUT ROWID;
    INSERT INTO task_stats
        SELECT task_id, solver, COUNT(*), SUM(passed), MAX(step) FROM attempts
        GROUP BY task_id, solver;
    CREATE INDEX rejections_reason ON rejections(reason);
    CREATE INDEX tasks_ids ON tasks(contaminated, id);
    """,
    # 3: the reward-hacking signals the verifier observed in each attempt (a JSON list).
    """
    ALTER TABLE attempts ADD COLUMN signals TEXT NOT NULL DEFAULT '[]';
    """,
    # 4: a round's committed steps in a table of their own, instead of JSON under
    # `selfplay.round.<id>.<step>` meta keys (found with LIKE, which also matched task ids).
    """
    CREATE TABLE round_steps (
        round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
        step TEXT NOT NULL,
        report TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (round_id, step)
    ) WITHOUT ROWID;
    INSERT OR IGNORE INTO round_steps
        SELECT CAST(substr(rest, 1, instr(rest, '.') - 1) AS INTEGER),
               substr(rest, instr(rest, '.') + 1), value, 0
        FROM (SELECT substr(key, 16) AS rest, value FROM meta WHERE key LIKE 'selfplay.round.%')
        WHERE instr(rest, '.') > 1
          AND CAST(substr(rest, 1, instr(rest, '.') - 1) AS INTEGER) IN (SELECT id FROM rounds);
    DELETE FROM meta WHERE key LIKE 'selfplay.round.%';
    CREATE INDEX attempts_round ON attempts(round_id, task_id);
    CREATE INDEX tasks_round ON tasks(round_id, source);
    """,
    # 5: trained models and what made them; every proposal the proposer wrote (its prompt,
    # its text and what became of it), which trains the proposer role; the steps of
    # `selfplay loop` iterations.
    """
    CREATE TABLE models (
        id TEXT PRIMARY KEY,
        parent TEXT,
        base TEXT NOT NULL,
        method TEXT NOT NULL,
        role TEXT NOT NULL,
        path TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}',
        steps INTEGER NOT NULL DEFAULT 0,
        config TEXT NOT NULL DEFAULT '{}',
        evaluation TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'training',
        created_at REAL NOT NULL,
        finished_at REAL
    );
    CREATE TABLE proposals (
        id INTEGER PRIMARY KEY,
        round_id INTEGER REFERENCES rounds(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        item INTEGER NOT NULL,
        prompt TEXT NOT NULL,
        completion TEXT NOT NULL,
        outcome TEXT NOT NULL,
        task_id TEXT,
        proposer TEXT,
        created_at REAL NOT NULL,
        UNIQUE (round_id, kind, item)
    );
    CREATE TABLE loop_steps (
        iteration INTEGER NOT NULL,
        step TEXT NOT NULL,
        report TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (iteration, step)
    ) WITHOUT ROWID;
    CREATE INDEX attempts_solver_time ON attempts(solver, created_at);
    """,
    # 6: the curriculum's difficulty graph (curricula.graph_store), saved beside the tasks.
    # Banks from before this migration may already hold the tables, written by curricula.
    """
    CREATE TABLE IF NOT EXISTS curriculum_nodes (
        task_id TEXT PRIMARY KEY,
        kind TEXT,
        skill TEXT,
        attempts INTEGER,
        successes INTEGER,
        pass_rate REAL,
        learnability REAL
    );
    CREATE TABLE IF NOT EXISTS curriculum_edges (
        src TEXT NOT NULL,
        dst TEXT NOT NULL,
        relation TEXT NOT NULL,
        prerequisite INTEGER NOT NULL,
        weight REAL,
        similarity REAL,
        PRIMARY KEY (src, dst)
    );
    """,
    # 7: how each attempt's code ran: in the sandbox, or without one ("none", only where that
    # was explicitly asked for), so that a bank graded unsandboxed is never taken for one
    # graded in the sandbox. Attempts from before were not recorded either way.
    """
    ALTER TABLE attempts ADD COLUMN isolation TEXT NOT NULL DEFAULT 'unrecorded';
    """,
    # 8: a task's kind is any registered kind (`selfplay.kinds.register_dir`), checked when a
    # row is parsed, so the table's CHECK listing the four built-in ones goes. SQLite cannot
    # drop a constraint, and rebuilding `tasks` would cascade into every table referencing it;
    # its documented way to remove a CHECK is to edit the table's SQL in the schema (the
    # stored rows do not change). RESET reloads the schema in this connection.
    """
    PRAGMA writable_schema = ON;
    UPDATE sqlite_schema
    SET sql = replace(sql, ' CHECK (kind IN (''codegen'', ''deduction'', ''abduction'', ''induction''))', '')
    WHERE type = 'table' AND name = 'tasks';
    PRAGMA writable_schema = RESET;
    """,
    # 9: the difficulty graph's per-task E[p(1-p)] under the posterior is its expected reward
    # variance (`curricula.posterior`), not the proposer's learnability reward.
    """
    ALTER TABLE curriculum_nodes RENAME COLUMN learnability TO expected_variance;
    """,
    # 10: one step journal (`task_bank.journal`) for self-play rounds and loop iterations,
    # instead of a table for each with the same columns and the same code around it.
    """
    CREATE TABLE steps (
        scope TEXT NOT NULL,
        id INTEGER NOT NULL,
        step TEXT NOT NULL,
        report TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (scope, id, step)
    ) WITHOUT ROWID;
    INSERT INTO steps SELECT 'round', round_id, step, report, created_at FROM round_steps;
    INSERT INTO steps SELECT 'loop', iteration, step, report, created_at FROM loop_steps;
    DROP TABLE round_steps;
    DROP TABLE loop_steps;
    """,
    # 11: each proposal's reward (the learnability of the task it became, measured by the
    # round's attempts), so the proposer's training data carry it.
    """
    ALTER TABLE proposals ADD COLUMN reward REAL;
    """,
    # 12: tests added to a task after it was admitted (`selfplay bank strengthen`), beside
    # the ones it came with, which stay as they were: {"tests": [...], "provenance": {...}};
    # and how much a codegen proposal's own tests catch that synthesised inputs would not
    # (`selfplay.strengthen.discrimination`), the proposer's test-writing reward.
    """
    ALTER TABLE tasks ADD COLUMN strengthened TEXT;
    ALTER TABLE proposals ADD COLUMN discrimination REAL;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
