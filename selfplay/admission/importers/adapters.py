"""Adapters from common public dataset shapes to the task row format.

Each adapter turns one record into a row dict (see `selfplay.admission.schema`). A record of
the right shape that still cannot become a task (no reference program, tests that need
pytest fixtures) raises `Unsupported`, which is counted as a rejection; a record of
the wrong shape raises `InvalidTask`, which makes the whole file malformed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from selfplay.admission.schema import InvalidTask


class Unsupported(ValueError):
    """A well-formed record that cannot become a task; `reason` is the counter name."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def _require(record: dict[str, Any], *fields: str) -> None:
    for name in fields:
        if name not in record:
            raise InvalidTask(f"field '{name}' is missing")


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidTask(f"field '{name}' is missing or not a non-empty string")
    return value


def _string_list(record: dict[str, Any], name: str) -> list[str]:
    value = record.get(name)
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidTask(f"field '{name}' must be a list of strings")
    return value


def _defined(program: str) -> list[str]:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        raise InvalidTask("the reference program is not valid Python") from None
    return [
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]


def _called(snippets: list[str]) -> list[str]:
    names: dict[str, None] = {}
    for s in snippets:
        try:
            tree = ast.parse(s)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                names.setdefault(node.func.id, None)
    return list(names)


def _entry_point(program: str, tests: list[str], preferred: list[str] = ()) -> str:
    defined = _defined(program)
    for name in [*preferred, *_called(tests)]:
        if name in defined:
            return name
    if defined:
        return defined[0]
    raise Unsupported("no_entry_point", "the reference program defines no function")


def _signature(program: str, name: str) -> str:
    for node in ast.parse(program).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return f"{name}({ast.unparse(node.args)})"
    return name


def _code_block(text: str) -> str:
    match = re.search(r"```(?:python|py)?\n(.*?)```", text, re.DOTALL)
    return match.group(1) if match else text


def mbpp(record: dict[str, Any]) -> dict[str, Any]:
    _require(record, "text", "code", "test_list")
    code, tests = _text(record, "code"), _string_list(record, "test_list")
    # The tests' own imports (MBPP lists them apart): a test must not rely on the program's.
    imports = record.get("test_imports")
    imports = imports.tolist() if hasattr(imports, "tolist") else imports
    imports = (
        "\n".join(i for i in imports if isinstance(i, str)) if isinstance(imports, list) else ""
    )
    setup = "\n".join(part for part in (imports, record.get("test_setup_code") or "") if part)
    entry = _entry_point(code, tests)
    row: dict[str, Any] = {
        "kind": "codegen",
        "prompt": f"{_text(record, 'text')}\n\nWrite a Python function `{_signature(code, entry)}`.",
        "program": code,
        "entry_point": entry,
        "tests": [f"{setup}\n{t}" if setup.strip() else t for t in tests],
    }
    if record.get("task_id") is not None:
        row["id"] = f"mbpp-{record['task_id']}"
    return row


def _pytest_cases(test_module: str) -> list[str]:
    """One self-contained snippet per zero-argument test function or test method. The module
    is kept as written: the verifier's test process serves the program as the module
    `solution`, so `from solution import f` and `import solution` work."""
    module = test_module
    try:
        tree = ast.parse(module)
    except (SyntaxError, ValueError):
        raise InvalidTask("field 'test' is not valid Python") from None
    calls = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            if node.args.args or node.decorator_list:
                raise Unsupported("tests_need_pytest", f"{node.name} takes fixtures or parameters")
            calls.append(f"{node.name}()")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    if len(item.args.args) != 1 or item.decorator_list:
                        raise Unsupported("tests_need_pytest", f"{item.name} takes fixtures")
                    calls.append(f"{node.name}().{item.name}()")
    if not calls:
        raise Unsupported("no_tests", "the test module defines no test functions")
    return [f"{module}\n\n{call}\n" for call in calls]


def kodcode(record: dict[str, Any]) -> dict[str, Any]:
    _require(record, "question", "solution", "test")
    solution = _text(record, "solution")
    test = _text(record, "test")
    imported = re.findall(r"from\s+solution\s+import\s+\(?([\w\s,]+)\)?", test)
    preferred = [n.strip() for group in imported for n in group.split(",") if n.strip()]
    tests = _pytest_cases(test)
    row: dict[str, Any] = {
        "kind": "codegen",
        "prompt": _text(record, "question"),
        "program": solution,
        "entry_point": _entry_point(solution, tests, preferred),
        "tests": tests,
    }
    ident = record.get("question_id") or record.get("id")
    if ident is not None:
        row["id"] = f"kodcode-{ident}"
    return row


def _reference(record: dict[str, Any]) -> str | None:
    for name in ("program", "solution", "reference", "code"):
        if isinstance(record.get(name), str) and record[name].strip():
            return _code_block(record[name])
    solutions = record.get("solutions")
    if hasattr(solutions, "tolist"):
        solutions = solutions.tolist()
    if isinstance(solutions, list) and solutions and isinstance(solutions[0], str):
        return _code_block(solutions[0])
    inferences = record.get("inferences")
    if hasattr(inferences, "tolist"):
        inferences = inferences.tolist()
    for inf in inferences if isinstance(inferences, list) else []:
        if isinstance(inf, dict) and inf.get("pass_rate") == 1.0 and inf.get("completion"):
            return _code_block(inf["completion"])
    return None


def acecoder(record: dict[str, Any]) -> dict[str, Any]:
    _require(record, "question", "test_cases")
    tests = _string_list(record, "test_cases")
    program = _reference(record)
    if program is None:
        raise Unsupported("no_reference", "the record has no reference program that passed")
    row: dict[str, Any] = {
        "kind": "codegen",
        "prompt": _text(record, "question"),
        "program": program,
        "entry_point": _entry_point(program, tests),
        "tests": tests,
    }
    if record.get("id") is not None:
        row["id"] = f"acecoder-{record['id']}"
    return row


def stdio(record: dict[str, Any]) -> dict[str, Any]:
    _require(record, "question", "inputs", "outputs")
    inputs, outputs = _string_list(record, "inputs"), _string_list(record, "outputs")
    if len(inputs) != len(outputs) or not inputs:
        raise InvalidTask("fields 'inputs' and 'outputs' must be non-empty lists of equal length")
    program = _reference(record)
    if program is None:
        raise Unsupported("no_reference", "the record has no reference program")
    row: dict[str, Any] = {
        "kind": "codegen",
        "prompt": _text(record, "question"),
        "program": program,
        "entry_point": None,
        "tests": [{"input": i, "output": o} for i, o in zip(inputs, outputs, strict=True)],
    }
    if record.get("id") is not None:
        row["id"] = f"stdio-{record['id']}"
    return row


def native(record: dict[str, Any]) -> dict[str, Any]:
    return record


def verify_row(record: dict[str, Any]) -> dict[str, Any]:
    """A row of `selfplay verify` (id, program, tests) as a codegen task, where that is
    unambiguous: the entry point is the row's, else the one function the tests call that the
    program defines; the statement is the row's `prompt`, else that function's docstring."""
    if "kind" in record:  # a row of the task format in the same file: taken as it is
        return record
    program, tests = _text(record, "program"), _string_list(record, "tests")
    missing = []
    entry = record.get("entry_point")
    if entry is None:
        called = [n for n in _called(tests) if n in _defined(program)]
        if len(called) == 1:
            entry = called[0]
        else:
            missing.append("'entry_point' (the tests call "
                           f"{len(called) or 'none'} of the program's functions)")  # fmt: skip
    prompt = record.get("prompt")
    if not prompt and entry is not None:
        for node in ast.parse(program).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry:
                prompt = ast.get_docstring(node)
    if not prompt:
        missing.append("'prompt' (or a docstring on the function that states the task)")
    if missing:
        raise InvalidTask(
            "a row of `selfplay verify` (program and tests) becomes a codegen task once it has "
            + " and ".join(missing)
            + "; or give its 'kind' and the fields of the row format"
        )
    row: dict[str, Any] = {"kind": "codegen", "prompt": prompt, "program": program,
                           "entry_point": entry, "tests": tests}  # fmt: skip
    if record.get("id") is not None:
        row["id"] = str(record["id"])
    return row


# Shape name -> (keys that identify it, adapter). Checked in order; `rows` first.
SHAPES: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "rows": (("program", "kind"), native),
    "verify": (("program", "tests"), verify_row),
    "mbpp": (("text", "code", "test_list"), mbpp),
    "kodcode": (("question", "solution", "test"), kodcode),
    "acecoder": (("question", "test_cases"), acecoder),
    "stdio": (("question", "inputs", "outputs"), stdio),
}


def detect_shape(record: Any) -> str:
    if isinstance(record, dict):
        for name, (keys, _) in SHAPES.items():
            if all(k in record for k in keys):
                return name
        # The shape it comes closest to, and what that one still needs.
        name, (keys, _) = max(SHAPES.items(), key=lambda kv: sum(k in record for k in kv[1][0]))
        lacking = [k for k in keys if k not in record]
        if len(lacking) < len(keys):
            raise InvalidTask(
                f"record matches no known shape; as {SHAPE_NAMES[name]} it lacks "
                + ", ".join(f"'{k}'" for k in lacking)
            )
    raise InvalidTask(
        "record matches no known shape (row format, verify rows, MBPP, KodCode, AceCoder or stdio)"
    )


SHAPE_NAMES = {"rows": "a row of the task format", "verify": "a row of `selfplay verify`",
               "mbpp": "an MBPP record", "kodcode": "a KodCode record",
               "acecoder": "an AceCoder record", "stdio": "a stdin/stdout record"}  # fmt: skip
