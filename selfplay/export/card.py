"""The dataset card (`README.md`): YAML front matter the Hub reads, and a body that says
what is in the data, how it was made and checked, and how to train on it."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from selfplay.export import licenses, recipes
from selfplay.export.exporter import Exporter
from selfplay.export.select import BANDS, Selection

SIZE_EDGES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"))
HIST_BINS = 5

# Trainer versions whose own code runs these instructions in selfplay's test suite.
TESTED = "verl 0.9.1, TRL 1.16 and OpenRLHF 0.11.2"


def _degenerate(items: list[Any], rejected: dict[str, int]) -> str:
    """What the degenerate-response probe did: codegen tasks turned away because an empty
    array, None or NaN passed their tests, and exported tasks whose reference honestly
    returns such a value (their labels say so, so that answer keeps its reward)."""
    honest = sum(bool((i.task.metadata or {}).get("degenerate_passes")) for i in items)
    return (
        "\n\nTasks whose tests a degenerate answer (None, an empty value, NaN, an empty array) "
        f"passed: {rejected.get('weak_tests', 0)} turned away as `weak_tests`; {honest} in "
        "this export where the reference itself returns that value (flagged in the label)."
    )


def _strengthened(items: list[Any]) -> str:
    """Per source: tasks whose tests `selfplay bank strengthen` added to, the tests added and
    the mutation score of the task's own tests and of all of them (mutants of the reference
    that some test fails, over those that change its output on some input)."""
    rows: dict[str, list[int]] = {}
    for item in items:
        record = item.task.strengthened
        if item.task.kind != "codegen":
            continue
        row = rows.setdefault(item.task.source, [0, 0, 0, 0, 0, 0])
        row[0] += 1
        if record:
            p = record.get("provenance", {})
            row[1] += 1
            row[2] += len(record.get("tests", []))
            row[3] += p.get("mutants", 0)
            row[4] += p.get("killed_before", 0)
            row[5] += p.get("killed_after", 0)
    if not any(r[1] for r in rows.values()):
        return ""

    def score(killed: int, mutants: int) -> str:
        return f"{killed / mutants:.2f}" if mutants else "-"

    table = _table(
        ("source", "codegen tasks", "strengthened", "tests added", "score before", "after"),
        [(src, r[0], r[1], r[2], score(r[4], r[3]), score(r[5], r[3]))
         for src, r in sorted(rows.items())],
    )  # fmt: skip
    return (
        "\n\nTests added to codegen tasks after admission (`selfplay bank strengthen`), kept "
        "only where they fail a mutant of the reference or a degenerate answer the task's own "
        "tests let through; the labels grade on both (`strengthened` counts the added ones, "
        "at the end of `tests`). Mutation score: the share of wrong mutants some test "
        f"fails.\n\n{table}"
    )


def _provenance(bank_summary: dict[str, Any]) -> str:
    rounds = bank_summary.get("rounds", {})
    attempts = bank_summary.get("attempts", {})
    solvers = ", ".join(sorted(attempts.get("by_solver", {}))) or "none"
    text = (
        f"The bank holds {_count(rounds.get('finished', 0), 'finished self-play round')} and "
        f"{attempts.get('total', 0)} solver attempts ({attempts.get('successes', 0)} passing; "
        f"solvers: {solvers})."
    )
    models = bank_summary.get("models") or []
    if models:
        rows = [(m["id"], m["role"], m["method"], m["from"], m["steps"], m["status"])
                for m in models]  # fmt: skip
        text += (
            " Models trained on the bank (a solver named above by one of these ids is that "
            "checkpoint):\n\n"
            + _table(("model", "role", "method", "trained from", "steps", "status"), rows)
        )
    return text


# How the tasks of a source came to be; any other source was imported from a file or a set.
ORIGINS = {
    "selfplay": "written by a proposer model in self-play rounds, seeded from reference tasks",
    "procedural": "drawn by selfplay's procedural generators (hand-written task families)",
    "seeds": "the seed set bundled with selfplay",
    "humaneval": "HumanEval (imported; flagged as a benchmark)",
}


def _origins(by_source: Counter) -> str:
    """Where this export's tasks came from, by source: never a proposer that did not write
    any of them."""
    lines = [f"- `{source}` ({_count(n, 'task')}): "
             + ORIGINS.get(source, "imported from a file or public set under this name")
             for source, n in by_source.most_common()]  # fmt: skip
    return "Sources of the tasks:\n\n" + "\n".join(lines) + "\n\n"


def _columns(files: Path, suffix: str, counts: dict[str, int]) -> str:
    """Each column with its type and the first row's value (cut short), read back from the
    file written, so the list is what a loader sees."""
    split = next((s for s in ("train", "test") if counts.get(s)), None) or next(iter(counts), None)
    if split is None:
        return "No rows."
    path = files / f"{split}{suffix}"
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        first = next(pq.ParquetFile(path).iter_batches(batch_size=1))  # not the whole file
        row = first.to_pylist()[0]
        types = {f.name: str(f.type) for f in first.schema}
    else:
        with open(path, encoding="utf-8") as f:
            row = json.loads(f.readline())
        types = {k: type(v).__name__ for k, v in row.items()}

    def cell(value: Any) -> str:
        text = json.dumps(value, default=str)
        text = text if len(text) <= 70 else text[:67] + "..."
        return "`" + text.replace("|", "\\|").replace("`", "'") + "`"

    return (f"The first row of `{path.name}`, column by column:\n\n"
            + _table(("column", "type", "first row"),
                     [(k, f"`{types[k]}`", cell(v)) for k, v in row.items()]))  # fmt: skip


def _plain(value: Any) -> str:
    """An option's value as a reader writes it: `a: x, b: y`, `x, y`, or the value."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list | tuple | set):
        return ", ".join(map(str, value))
    return str(value)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _hack_signals(hacks: dict[str, Any]) -> str:
    """What the verifier saw solver attempts try (signals explain verdicts, never change them)."""
    if not hacks.get("rate") and not hacks.get("by_signal"):
        return "The verifier observed no reward-hacking attempts in the bank's solver attempts."
    rows = [(name, n) for name, n in hacks.get("by_signal", {}).items()]
    solvers = [
        (name, g["attempts"], g["with_signals"], f"{g['rate']:.1%}")
        for name, g in hacks.get("by_solver", {}).items()
    ]
    return (
        f"{hacks.get('attempts_with_signals', 0)} solver attempts ({hacks['rate']:.1%}) showed "
        "at least one reward-hacking signal: something no ordinary program does, observed by "
        "the sandbox (frame walks, gc scans, /proc memory, refused system calls, program "
        "objects compared with test data...). Signals explain verdicts and never change them.\n\n"
        + _table(("signal", "attempts"), rows)
        + "\n\n"
        + _table(("solver", "attempts", "with signals", "rate"), solvers)
    )


def _unsandboxed(hacks: dict[str, Any]) -> str:
    """A warning, first, where solver attempts ran without the sandbox (`--isolation none`)."""
    n = hacks.get("attempts_unsandboxed") or 0
    old = hacks.get("attempts_isolation_unrecorded") or 0
    text = ""
    if n:
        text += (
            f"**Warning: {_count(n, 'solver attempt')} of this bank ran WITHOUT a sandbox** "
            "(`--isolation none`): their code could reach the machine, so their verdicts, and "
            "the pass rates computed from them, may have been gamed.\n\n"
        )
    if old:
        text += (
            f"{_count(old, 'solver attempt')} predate the bank's record of isolation: "
            "whether they ran in the sandbox is not known.\n\n"
        )
    return text


def size_category(n: int) -> str:
    return next((label for edge, label in SIZE_EDGES if n < edge), "100K<n<1M")


def dataset_info(fmt: str, counts: dict[str, int], suffix: str, files: Path) -> dict[str, Any]:
    """The card's `dataset_info`: each split's rows and file bytes. `datasets` keys its cache
    of a directory or repository on this block (with `configs`), so a re-export with other
    rows is read anew instead of from the cache of the first."""
    sizes = {s: (files / f"{s}{suffix}").stat().st_size for s in sorted(counts)}
    return {
        "config_name": fmt,
        "splits": [{"name": s, "num_bytes": sizes[s], "num_examples": counts[s]} for s in sizes],
        "download_size": sum(sizes.values()),
        "dataset_size": sum(sizes.values()),
    }


def fingerprint(counts: dict[str, int], suffix: str, files: Path) -> str:
    """sha256 of the data files, in split order (the first 16 hex digits)."""
    digest = hashlib.sha256()
    for split in sorted(counts):
        digest.update(split.encode() + b"\0" + (files / f"{split}{suffix}").read_bytes())
    return digest.hexdigest()[:16]


def front_matter(
    fmt: str, counts: dict[str, int], suffix: str, per_source: dict[str, str], files: Path
) -> dict[str, Any]:
    return {
        **licenses.front_matter(per_source),
        "task_categories": ["text-generation"],
        "language": ["en"],
        "tags": ["code", "synthetic", "reinforcement-learning", "selfplay", fmt],
        "size_categories": [size_category(sum(counts.values()))],
        "pretty_name": f"selfplay verified programming tasks ({fmt})",
        "dataset_info": dataset_info(fmt, counts, suffix, files),
        "configs": [
            {
                "config_name": fmt,
                "data_files": [{"split": s, "path": f"{s}{suffix}"} for s in sorted(counts)],
                "default": True,
                # A builder setting `datasets` hashes into its cache key: the content itself.
                "description": f"selfplay export {fingerprint(counts, suffix, files)}",
            }
        ],
    }


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _histogram(values: list[float]) -> str:
    bins = [0] * HIST_BINS
    for v in values:
        bins[min(int(v * HIST_BINS), HIST_BINS - 1)] += 1
    peak = max(bins) or 1
    rows = [
        (
            f"[{i / HIST_BINS:.1f}, {(i + 1) / HIST_BINS:.1f}{']' if i == HIST_BINS - 1 else ')'}",
            n,
            "#" * round(20 * n / peak),
        )
        for i, n in enumerate(bins)
    ]
    return _table(("difficulty", "tasks", ""), rows)


def render(
    exporter: Exporter,
    selection: Selection,
    counts: dict[str, int],
    bank_summary: dict[str, Any],
    options: dict[str, Any],
    files: Path,
    repo_id: str | None = None,
) -> str:
    """The whole README.md for the data files `exporter` wrote in `files`; `selection` holds
    the tasks that have rows. Its snippets read the files where the card is read: relative
    paths, or the Hub repository `repo_id` the export is pushed to."""
    import yaml

    fmt, suffix, dropped = exporter.name, exporter.suffix, exporter.dropped
    items = selection.items
    by_kind = Counter(i.task.kind for i in items)
    by_source = Counter(i.task.source for i in items)
    per_source = licenses.licenses(by_source, options)
    meta = front_matter(fmt, counts, suffix, per_source, files)
    bands = Counter(i.band for i in items)
    rejected = bank_summary.get("rejected", {})
    excluded = dict(selection.excluded) | {f"{fmt}: {k}": v for k, v in dropped.items()}
    parts = [
        "---\n" + yaml.safe_dump(meta, sort_keys=False).rstrip() + "\n---",
        f"# {meta['pretty_name']}",
        f"Verified Python programming tasks exported by `selfplay export --format {fmt}`: "
        f"{exporter.description}. {len(items)} tasks, {sum(counts.values())} rows. Every task's "
        "reference program ran in a sandbox, passed its own tests twice with identical "
        "outputs, and every example output was computed by execution.",
        "## Contents",
        _table(
            ("split", "file", "rows"), [(s, f"{s}{suffix}", n) for s, n in sorted(counts.items())]
        ),
        "## Counts by kind and source",
        _table(("kind", "tasks"), sorted(by_kind.items()))
        + "\n\n"
        + _table(("source", "tasks"), by_source.most_common()),
        "## Licenses",
        licenses.section(per_source, by_source, _table),
        "## Difficulty",
        "Difficulty is 1 minus the posterior mean solve rate of the bank's solvers "
        "(Beta(1, 1) prior); a task never attempted that declares a level 1-5 takes "
        "(level - 1) / 4. Bands: "
        + ", ".join(f"{name} < {edge:.2f}" for name, edge in BANDS[:-1])
        + ", hard otherwise.\n\n"
        + _histogram([i.difficulty for i in items])
        + "\n\n"
        + _table(("band", "tasks"), [(name, bands.get(name, 0)) for name, _ in BANDS]),
        "## Deduplication and decontamination",
        "Candidates turned away on their way into the bank, by reason (the proposer's "
        "checks on its programs and inputs, exact duplicates by normalized AST, near "
        "duplicates confirmed by behaviour, failed verification):\n\n"
        + (_table(("reason", "candidates"), list(rejected.items())) if rejected else "none")
        + f"\n\nTasks flagged as overlapping HumanEval in the bank: "
        f"{bank_summary.get('contaminated', 0)}"
        + (
            " (kept: --include-contaminated)."
            if options.get("include_contaminated")
            else " (left out)."
        )
        + _degenerate(items, rejected)
        + _strengthened(items)
        + "\n\nLeft out of this export:\n\n"
        + (_table(("reason", "tasks"), sorted(excluded.items())) if excluded else "nothing"),
        "## Columns",
        _columns(files, suffix, counts),
        "## How it was generated",
        _origins(by_source)
        + "The selfplay verifier (bubblewrap sandbox, per-row namespaces, resource limits) "
        "admitted only tasks whose reference program runs, is deterministic and passes its "
        "tests; a SQLite task bank deduplicated and decontaminated them and recorded solver "
        "attempts. "
        + _provenance(bank_summary)
        + "\n\nExport options:\n\n"
        + "\n".join(
            f"- `{k}`: {_plain(v)}" for k, v in options.items() if v not in (None, [], {}, False)
        ),  # fmt: skip
        "## Reward-hacking signals",
        _unsandboxed(bank_summary.get("hack_signals") or {})
        + _hack_signals(bank_summary.get("hack_signals") or {}),
        "## Reward",
        "The ground truth of each task is a JSON string (`selfplay.ground_truth/1`). "
        "`selfplay.rewards` grades a response with the same verifier and the same function "
        "that graded the bank's solver attempts, on the same prompt: the last fenced code "
        "block for codegen and induction (induction is graded on shown and held-out "
        "examples), a Python value for deduction (the output) and abduction (a call whose "
        "arguments run through the program). No answer scores 0 with a reason. "
        + (
            "Rewards are partial (`reward: fraction` in each label): the share of tests or "
            "examples a codegen or induction answer passes; deduction and abduction stay 0 or 1."
            if options.get("reward") == "fraction"
            else "Rewards are binary: 1 for a verified answer, else 0."
        ),
        "## How to train on it",
        recipes.loading(counts, suffix, repo_id)
        + f" These instructions are run, with each trainer's own code, by selfplay's test "
        f"suite for {TESTED}.",
        *exporter.recipes(counts, repo_id),
    ]
    return "\n\n".join(parts) + "\n"
