"""`selfplay verify --ray` as a user runs it: a real subprocess, a real loopback Ray cluster."""

from __future__ import annotations

import functools
import importlib.util
import json
import socket
from pathlib import Path

import pytest
from selfplay_cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def humaneval_rows() -> list[dict]:
    """The 492 rows of `benchmarks/verify_humaneval.py`: canonical, empty and swapped."""
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks/verify_humaneval.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    triples = bench.make_rows(bench.load_problems())
    return [bench.to_verifier_row(i, p, c) for i, (p, c, _) in enumerate(triples)]


# The HumanEval comparison grades 493 rows twice: ten minutes before a call counts as hung.
selfplay = functools.partial(run_cli, timeout=600)


def verdicts(path: Path) -> list[dict]:
    out = [json.loads(line) for line in path.read_text().splitlines()]
    for v in out:
        del v["duration_s"]
    return out


@pytest.mark.slow
def test_ray_local_gives_the_local_verdicts_on_humaneval(tmp_path):
    rows = tmp_path / "humaneval.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in humaneval_rows()) + "{broken\n")
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    # The broken last line is an invalid row, the same on both paths: exit code 1 for it.
    res = selfplay("verify", str(rows), "-o", str(local), "--timeout", "5")
    assert res.returncode == 1 and "1 of 493 rows were invalid" in res.stderr, res.stderr
    res = selfplay("verify", str(rows), "-o", str(remote), "--timeout", "5", "--ray", "local")
    assert res.returncode == 1 and "1 of 493 rows were invalid" in res.stderr, res.stderr
    assert "493 rows" in res.stderr and "sent again" not in res.stderr
    expected = verdicts(local)
    assert len(expected) == 493 and verdicts(remote) == expected
    # Canonical solutions pass, emptied ones do not: the comparison is not vacuous.
    assert [v["passed"] for v in expected[0:6:3]] == [True, True]
    assert [v["passed"] for v in expected[1:6:3]] == [False, False]


def test_without_ray_the_option_names_the_install_command(tmp_path):
    rows = tmp_path / "one.jsonl"
    rows.write_text(json.dumps({"id": "a", "program": "x = 1\n", "tests": []}) + "\n")
    res = selfplay(
        "verify", str(rows), "-o", "-", "--ray", "local", before="sys.modules['ray'] = None"
    )
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2 and not res.stdout
    assert len(lines) == 1 and lines[0].startswith("selfplay verify: "), res.stderr
    assert "pip install 'selfplay[ray]'" in lines[0]


def test_an_address_nobody_listens_on_is_one_sentence(tmp_path):
    rows = tmp_path / "one.jsonl"
    rows.write_text(json.dumps({"id": "a", "program": "x = 1\n", "tests": []}) + "\n")
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{free.getsockname()[1]}"
    free.close()  # bound, never listened: nothing answers there
    res = selfplay("verify", str(rows), "-o", "-", "--ray", address)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"selfplay verify: cannot connect to the Ray cluster at {address}")


def test_the_summary_reports_rows_sent_again(monkeypatch):
    import io
    from collections import Counter

    from rich.console import Console

    import pipelines.console
    from pipelines.verify import _summary

    for retried, expected in ((4, "4 rows sent again after a Ray actor died"), (0, None)):
        out = io.StringIO()
        monkeypatch.setattr(pipelines.console, "stderr", Console(file=out, width=100))
        _summary(Counter(passed=3), 1.0, retried)
        assert "3 rows in" in out.getvalue()
        assert (expected in out.getvalue()) if expected else "sent again" not in out.getvalue()
