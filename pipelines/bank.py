"""`selfplay bank`: import tasks into the task bank and inspect it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pipelines.common import BankOption, failure, group, plural

app = group("bank", "Import tasks into the task bank (SQLite) and inspect it.")


def _fail(message: str | Exception) -> typer.Exit:
    return failure("bank", message)


def _open(path: Path | None, *, create: bool = False):
    from task_bank.store import Bank, BankError

    try:
        return Bank(path, create=create)
    except BankError as e:
        raise _fail(f"{e}.") from None


@app.command(name="import")
def import_(
    source: Annotated[
        str,
        typer.Argument(
            help="humaneval, seeds, a .jsonl/.parquet file or a saved dataset directory."
        ),
    ],
    bank: BankOption = None,
    shape: Annotated[
        str | None,
        typer.Option(
            help="Record shape: rows, verify, mbpp, kodcode, acecoder, stdio (default: detect)."
        ),
    ] = None,
    source_name: Annotated[
        str | None, typer.Option("--source-name", help="Source recorded on the tasks.")
    ] = None,
    workers: Annotated[int, typer.Option(help="Sandboxed verifier workers.", min=1)] = 2,
    timeout: Annotated[
        float, typer.Option(help="Verifier limit per row, seconds.", min=0.1)
    ] = 10.0,
    batch_size: Annotated[int, typer.Option(help="Tasks per transaction.", min=1)] = 64,
    limit: Annotated[
        int | None, typer.Option(help="Import at most this many tasks.", min=0)
    ] = None,
    near_dup_threshold: Annotated[
        float, typer.Option(help="Cosine similarity that triggers the behaviour check.")
    ] = 0.85,
    strengthen: Annotated[
        bool,
        typer.Option(
            "--strengthen",
            help="Add tests to codegen tasks until the reference's mutants and degenerate "
            "answers fail (as `selfplay bank strengthen`), before the degenerate-answer probe.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Verify, deduplicate and decontaminate tasks from SOURCE, then add them to the bank."""
    from pydantic import ValidationError

    from selfplay.admission import AdmissionConfig
    from selfplay.admission.importers import SourceError, read_source

    try:
        config = AdmissionConfig(near_dup_threshold=near_dup_threshold, timeout_s=timeout)
    except ValidationError as e:
        raise _fail(f"invalid option {e.errors()[0]['loc'][0]}: {e.errors()[0]['msg']}.") from None
    try:
        candidates = read_source(source, source_name=source_name, shape=shape)
    except SourceError as e:
        raise _fail(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise _fail(f"cannot read {source} ({e}).") from None
    if not candidates.tasks and not candidates.rejections:
        typer.echo(
            f"selfplay bank: warning: {source} holds no records; nothing was imported.", err=True
        )
    _admit_into(
        bank,
        workers,
        timeout,
        config,
        as_json,
        lambda admission: _admit(admission, candidates, batch_size, limit),
        extend_tests=_strengthen_one() if strengthen else None,
    )


@app.command()
def generate(
    bank: BankOption = None,
    family: Annotated[
        list[str] | None,
        typer.Option(
            "--family",
            help="Procedural family (repeat or comma-separate; default: all of them): "
            "arith, bits, counting, lists, nested, recursion, search, strings.",
        ),
    ] = None,
    kind: Annotated[str, typer.Option(help="Task kind: deduction, abduction or induction.")] = (
        "deduction"
    ),
    levels: Annotated[
        str,
        typer.Option(
            "--levels",
            "--depths",
            help="Difficulty levels, as a range 1-5 or a list 1,3,5 (the family's knob: "
            "statements, recursive calls, sorting passes).",
        ),
    ] = "1-5",
    per_level: Annotated[
        int,
        typer.Option(
            "--per-level",
            "--per-depth",
            help="Programs per level, the families taking turns.",
            min=1,
        ),
    ] = 50,
    seed: Annotated[int, typer.Option(help="Generator seed; the same seed draws the same.")] = 0,
    workers: Annotated[int, typer.Option(help="Sandboxed verifier workers.", min=1)] = 2,
    timeout: Annotated[
        float, typer.Option(help="Verifier limit per row, seconds.", min=0.1)
    ] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Draw procedural tasks of chosen families and levels (no model) and admit them like any
    proposal."""
    from selfplay import families, kinds, procedural
    from selfplay.admission import AdmissionConfig

    chosen = [n.strip() for f in (family or []) for n in f.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in families.FAMILIES]
    if unknown:
        raise _fail(f"unknown family '{unknown[0]}'; known: {', '.join(families.FAMILIES)}.")
    levels_ = _levels(levels)
    if kind not in kinds.NAMES or kinds.get(kind).needs_docstring:
        raise _fail(f"kind '{kind}' cannot be generated; use deduction, abduction or induction.")
    candidates = procedural.candidates(kind, levels_, per_level, families=chosen or None, seed=seed)
    _admit_into(
        bank,
        workers,
        timeout,
        AdmissionConfig(timeout_s=timeout),
        as_json,
        lambda admission: _admit_batches(admission, candidates),
    )


def _strengthen_one():
    from selfplay.strengthen.bank import strengthen_one

    return strengthen_one


def _admit_into(bank, workers: int, timeout: float, config, as_json: bool, admit,
                extend_tests=None) -> None:  # fmt: skip
    """Open the bank and a verifier, run `admit(admission)`, print its report; a bank or
    sandbox problem is one sentence."""
    from selfplay.admission import Admission
    from selfplay.verifier import IsolationUnavailable
    from selfplay.verifier.factory import make_verifier
    from task_bank.store import BankError

    store = _open(bank, create=True)
    try:
        with make_verifier(workers, timeout) as verifier:
            report = admit(Admission(store, verifier, config, extend_tests=extend_tests))
    except (BankError, IsolationUnavailable) as e:
        raise _fail(f"{e}.") from None
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        _print_report(report, store.path)


def _admit_batches(admission, candidates):
    from pipelines.progress import Progress
    from selfplay.admission import admit_batches

    with Progress() as bar:
        return admit_batches(
            candidates, admission, progress=lambda done, total: bar.update("admitting", done, total)
        )


def _levels(text: str) -> list[int]:
    """'1-5' or '1,3,5' -> the levels; a bad spec is one sentence."""
    try:
        if "-" in text:
            lo, hi = (int(p) for p in text.split("-", 1))
            levels = list(range(lo, hi + 1))
        else:
            levels = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1 or max(levels) > 50:
        raise _fail(f"--levels '{text}' is not a range like 1-5 or a list like 1,3,5 of 1 to 50.")
    return levels


def _admit(admission, candidates, batch_size: int, limit: int | None):
    from pipelines.progress import Progress
    from selfplay.admission import admit_candidates

    with Progress() as bar:
        return admit_candidates(
            candidates,
            admission,
            batch_size=batch_size,
            limit=limit,
            progress=lambda done, total: bar.update("admitting", done, total),
        )


def _print_report(report, path: Path) -> None:
    from rich.table import Table

    from pipelines.console import stdout

    table = Table(title=f"import into {path}")
    table.add_column("outcome")
    table.add_column("tasks", justify="right")
    table.add_row("seen", str(report.seen))
    table.add_row("admitted", str(report.admitted))
    table.add_row("  of which contaminated (flagged)", str(report.contaminated))
    table.add_row("already present", str(report.already_present))
    for reason, n in report.rejected.most_common():
        table.add_row(f"rejected: {reason}", str(n))
    stdout.print(table)


@app.command()
def stats(
    bank: BankOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Counts of tasks by kind and source, rejections by reason, attempts and solve rates."""
    from task_bank.stats import summary

    with _open(bank) as store:
        data = summary(store)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    from rich.table import Table

    from pipelines.console import stdout

    table = Table(title=f"{data['path']}: {plural(data['tasks'], 'task')}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for section in ("by_kind", "by_source", "rejected"):
        for name, n in data[section].items():
            table.add_row(f"{section.replace('_', ' ')}: {name}", str(n))
    table.add_row("contaminated (flagged)", str(data["contaminated"]))
    table.add_row("attempts", str(data["attempts"]["total"]))
    table.add_row("successes", str(data["attempts"]["successes"]))
    rate = data["solve_rate"]
    table.add_row("attempted tasks", str(rate["attempted_tasks"]))
    table.add_row("mean solve rate", "-" if rate["mean"] is None else f"{rate['mean']:.3f}")
    for bucket, n in rate["histogram"].items():
        table.add_row(f"solve rate {bucket}", str(n))
    table.add_row("rounds (finished)", f"{data['rounds']['total']} ({data['rounds']['finished']})")
    weak = data["degenerate"]
    table.add_row("degenerate answers: tasks turned away", str(weak["turned_away"]))
    table.add_row("degenerate answers: tasks kept, flagged", str(weak["kept_flagged"]))
    table.add_row("degenerate answers: attempts scored 0", str(weak["attempts"]))
    hacks = data["hack_signals"]
    if hacks["rate"] is not None:
        table.add_row(
            "attempts with hack signals", f"{hacks['attempts_with_signals']} ({hacks['rate']:.1%})"
        )
        for name, n in hacks["by_signal"].items():
            table.add_row(f"hack signal: {name}", str(n))
        for group in ("by_solver", "by_round"):
            label = group.removeprefix("by_")
            for key, g in hacks[group].items():
                table.add_row(
                    f"hack signals, {label} {key}", f"{g['with_signals']}/{g['attempts']}"
                )
    stdout.print(table)


@app.command()
def show(
    task_id: Annotated[str, typer.Argument(help="Task id.")],
    bank: BankOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The task as a JSON row.")] = False,
) -> None:
    """One task: prompt, program, tests, examples, provenance and per-solver results."""
    with _open(bank) as store:
        task = store.get(task_id)
        if task is None:
            raise _fail(f"there is no task '{task_id}' in {store.path}.")
        solvers = store.solver_stats(task_id)
    if as_json:
        row = task.to_row() | {
            "contaminated": task.contaminated,
            "verified_at": task.verified_at,
            "deterministic": task.deterministic,
            "strengthened": task.strengthened,
            "solvers": {
                s: {"attempts": a, "successes": k, "last_step": t} for s, a, k, t in solvers
            },
        }
        typer.echo(json.dumps(row, indent=2))
        return
    from rich.markup import escape
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.text import Text

    from pipelines.console import stdout

    facts = {
        "kind": task.kind,
        "source": task.source,
        "tags": ", ".join(task.tags) or "-",
        "entry point": task.entry_point or "(stdin/stdout)",
        "deterministic": str(task.deterministic),
    }
    stdout.print(Panel(Text(_reflow(task.prompt)), title=escape(task.id)))
    # One fact a line: run together they wrapped after a label on a narrow terminal (and a
    # panel's subtitle is cut).
    for label, value in facts.items():
        stdout.print(Text(f"{label + ':':<15}{value}"))
    # Long program lines wrap instead of being cut at the terminal's edge.
    stdout.print(Syntax(task.program, "python", line_numbers=True, word_wrap=True))
    added = len(task.all_tests) - len(task.tests)
    for i, test in enumerate(task.all_tests):
        body = test if isinstance(test, str) else json.dumps(test)
        title = f"test {i}" + (" (added by bank strengthen)" if i >= len(task.tests) else "")
        stdout.print(Panel(Text(body[:2000]), title=title))
    if added:
        p = task.strengthened.get("provenance", {})
        stdout.print(Text(f"strengthened: {added} test(s) added; mutation score "
                          f"{p.get('killed_before', 0)}/{p.get('mutants', 0)} before, "
                          f"{p.get('killed_after', 0)}/{p.get('mutants', 0)} after"))  # fmt: skip
    for e in task.examples:
        stdout.print(Text(f"example: {task.entry_point}({e['input']}) -> {e['output']}"))
    if task.contaminated:
        stdout.print(Text(f"contaminated: {task.contaminated}", style="red"))
    for s, a, k, t in solvers:
        stdout.print(Text(f"solver {s}: {k}/{a} solved, last step {t}"))


def _reflow(prompt: str) -> str:
    """Join the lines of each prose paragraph, so it wraps at the terminal's width instead of
    at the source's; a paragraph with code (indented lines, `>>>`, list items) stays as is."""
    paragraphs = []
    for para in prompt.strip("\n").split("\n\n"):
        lines = para.split("\n")
        code = any(line.startswith((" ", "\t", ">>>", "- ", "* ")) for line in lines)
        paragraphs.append(para if code else " ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


@app.command()
def rewards(
    bank: BankOption = None,
    round_: Annotated[
        int | None, typer.Option("--round", help="Only this self-play round.", min=1)
    ] = None,
) -> None:
    """The proposer's reward per self-play task (learnability from the solver's pass rate),
    as JSON lines on stdout: data to train the proposer on."""
    from selfplay.engine import proposer_rewards

    with _open(bank) as store:
        rows = proposer_rewards(store, round_)
    for row in rows:
        typer.echo(json.dumps(row))


@app.command(name="list")
def list_(
    bank: BankOption = None,
    kind: Annotated[str | None, typer.Option(help="Only this kind.")] = None,
    source: Annotated[str | None, typer.Option(help="Only this source.")] = None,
    tag: Annotated[str | None, typer.Option(help="Only tasks with this tag.")] = None,
    solver: Annotated[str | None, typer.Option(help="Count only this solver's attempts.")] = None,
    min_solve_rate: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    max_solve_rate: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    contaminated: Annotated[
        bool, typer.Option(help="Include tasks flagged as benchmark look-alikes.")
    ] = True,
    limit: Annotated[int, typer.Option(min=1)] = 50,
    sort: Annotated[
        str, typer.Option(help="oldest, newest, hardest, easiest (by solve rate) or attempts.")
    ] = "oldest",
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines on stdout.")] = False,
) -> None:
    """Tasks matching filters, with attempts and solve rate."""
    from selfplay.admission.schema import KINDS
    from task_bank.stats import SORTS, count_matching, listing

    if kind is not None and kind not in KINDS:
        raise _fail(f"--kind must be one of {', '.join(KINDS)}, got '{kind}'.")
    if sort not in SORTS:
        raise _fail(f"--sort must be one of {', '.join(SORTS)}, got '{sort}'.")
    filters = dict(
        kind=kind,
        source=source,
        tag=tag,
        solver=solver,
        min_rate=min_solve_rate,
        max_rate=max_solve_rate,
        include_contaminated=contaminated,
    )
    with _open(bank) as store:
        rows = listing(store, sort=sort, limit=limit, **filters)
        total = count_matching(store, **filters) if len(rows) == limit else len(rows)
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row))
        return
    from rich.markup import escape
    from rich.table import Table

    from pipelines.console import stdout

    # Fits 80 columns: ids stay on one line to be copied into `bank show` (unless longer than
    # 36 characters), source and tags wrap between words, the flag column only when some task
    # is flagged.
    if not rows:
        stdout.print("no tasks match these filters.")
        return
    more = f"{len(rows)} of {total} tasks ({sort} first; --limit shows more)"
    table = Table(title=more if total > len(rows) else plural(total, "task"), pad_edge=False)
    longest = max(len(r["id"]) for r in rows)
    if longest <= 36:
        table.add_column("id", no_wrap=True, min_width=longest)
    else:
        table.add_column("id", overflow="fold", ratio=3)
    table.add_column("kind", no_wrap=True)
    table.add_column("tries", justify="right", no_wrap=True)
    table.add_column("rate", justify="right", no_wrap=True)
    table.add_column("source", ratio=1)
    # A tag is cut mid-word at no width: the column is at least its longest tag's (up to 20).
    tags = [len(t) for r in rows for t in r["tags"]]
    table.add_column("tags", ratio=1, min_width=min(20, max(tags, default=4)))
    flagged = any(r["contaminated"] for r in rows)
    if flagged:
        table.add_column("contam.", no_wrap=True)
    for r in rows:
        rate = "-" if r["solve_rate"] is None else f"{r['solve_rate']:.2f}"
        cells = [
            escape(r["id"]),
            r["kind"],
            str(r["attempts"]),
            rate,
            escape(r["source"]),
            escape(", ".join(r["tags"])),
        ]
        table.add_row(*cells, *(["yes" if r["contaminated"] else ""] if flagged else []))
    stdout.print(table)
