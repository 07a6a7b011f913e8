"""The import/export row format: untrusted rows become `selfplay.task.Task`s.

A row is untrusted input: `parse_task` turns a decoded JSON object into a `Task` or
raises `InvalidTask` with one sentence naming the problem. Example outputs in a row
are never trusted: admission recomputes them by running the reference program.

Row format (JSONL, or the same columns in Parquet / a saved Hugging Face dataset):
`{"id"?, "kind", "prompt", "program", "entry_point", "tests", "examples"?, "source"?,
"tags"?, "metadata"?}`. In Parquet and datasets, the list and dict columns may also
be JSON-encoded strings, since mixed-type lists do not fit a columnar schema.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from selfplay import kinds
from selfplay.task import InvalidTask, Task
from selfplay.verifier.records import InvalidRow, parse_tests

KINDS = kinds.NAMES
ROW_FIELDS = (
    "id",
    "kind",
    "prompt",
    "program",
    "entry_point",
    "tests",
    "examples",
    "source",
    "tags",
    "metadata",
)


def _decoded(obj: dict[str, Any], name: str) -> Any:
    """A list/dict column may arrive JSON-encoded (Parquet, datasets)."""
    value = obj.get(name)
    if isinstance(value, str) and name in ("tests", "examples", "tags", "metadata"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise InvalidTask(f"field '{name}' is a string that is not valid JSON") from None
    if hasattr(value, "tolist"):  # numpy arrays from Parquet
        return value.tolist()
    return value


def _string(obj: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = obj.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidTask(f"field '{name}' is missing or not a non-empty string")
    return value


def _tests(value: Any) -> list[str | dict[str, str]]:
    # The verifier's own parser, so the bank admits exactly what `selfplay verify` accepts.
    if isinstance(value, list) and not value:
        raise InvalidTask("field 'tests' is missing or not a non-empty list")
    try:
        tests = parse_tests(value)
    except InvalidRow as e:
        raise InvalidTask(str(e).replace("not a list", "not a non-empty list")) from None
    return [t if isinstance(t, str) else {"input": t.input, "output": t.output} for t in tests]


def _examples(value: Any) -> list[dict[str, str | None]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidTask("field 'examples' must be a list")
    examples: list[dict[str, str | None]] = []
    for i, e in enumerate(value):
        if not isinstance(e, dict) or not isinstance(e.get("input"), str):
            raise InvalidTask(f"example {i} must be an object with a string 'input'")
        output = e.get("output")
        if output is not None and not isinstance(output, str):
            raise InvalidTask(f"example {i} has an 'output' that is not a string")
        try:
            ast.literal_eval(f"({e['input']},)")
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise InvalidTask(
                f"example {i} input {e['input']!r} is not a Python literal of arguments"
            ) from None
        examples.append({"input": e["input"], "output": output})
    return examples


def _entry_point(obj: dict[str, Any], kind: str, tests: list[str | dict[str, str]]) -> str | None:
    entry = obj.get("entry_point")
    if entry is None and kind == "codegen" and all(isinstance(t, dict) for t in tests):
        return None  # a stdin/stdout program has no function to call
    if not isinstance(entry, str) or not entry.isidentifier():
        raise InvalidTask("field 'entry_point' is missing or not a Python identifier")
    return entry


def parse_task(obj: Any, *, source: str = "unknown") -> Task:
    """Validate one decoded row; `source` is used when the row names none."""
    if not isinstance(obj, dict):
        raise InvalidTask(f"row must be a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(ROW_FIELDS))
    if unknown:
        raise InvalidTask(
            f"unknown field '{unknown[0]}' (allowed: {', '.join(ROW_FIELDS)}; put extras in 'metadata')"
        )
    kind = obj.get("kind")
    if kind not in KINDS:
        raise InvalidTask(f"field 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    prompt = _string(obj, "prompt")
    program = _string(obj, "program")
    try:
        ast.parse(program)
    except SyntaxError as e:
        raise InvalidTask(
            f"field 'program' is not valid Python ({e.msg}, line {e.lineno})"
        ) from None
    except ValueError:
        raise InvalidTask("field 'program' is not valid Python (it contains a NUL byte)") from None
    tests = _tests(_decoded(obj, "tests"))
    entry_point = _entry_point(obj, kind, tests)
    examples = _examples(_decoded(obj, "examples"))
    if examples and entry_point is None:
        raise InvalidTask("field 'examples' needs an 'entry_point' to call")
    tags = _decoded(obj, "tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidTask("field 'tags' must be a list of strings")
    metadata = _decoded(obj, "metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidTask("field 'metadata' must be an object")
    row_source = _string(obj, "source", required=False) or source
    task = Task(
        id="",
        kind=kind,
        prompt=prompt,
        program=program,
        entry_point=entry_point,
        tests=tests,
        examples=examples,
        source=row_source,
        tags=list(dict.fromkeys(tags)),
        metadata=metadata,
    )
    row_id = obj.get("id")
    if row_id is None:
        task.id = f"{row_source}-{task.content_hash()[:16]}"
    elif isinstance(row_id, str | int) and not isinstance(row_id, bool) and str(row_id).strip():
        task.id = str(row_id)
    else:
        raise InvalidTask("field 'id' must be a non-empty string when given")
    return task
