"""`selfplay verify` as a user runs it: a real subprocess, real files, real sandbox."""

import json
import subprocess
import sys
from pathlib import Path

from selfplay_cli import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "verify.jsonl"


def test_bundled_examples_get_the_expected_verdicts(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    res = run_cli("verify", str(EXAMPLES), "-o", str(out))
    assert res.returncode == 0, res.stderr
    verdicts = {v["id"]: v for v in map(json.loads, out.read_text().splitlines())}
    assert {k: v["status"] for k, v in verdicts.items()} == {
        "add": "passed",
        "is-palindrome": "passed",
        "sum-stdin": "passed",
        "off-by-one": "failed",
        "always-equal-hack": "failed",
        "early-exit-hack": "error",
        "infinite-loop": "timeout",
        "memory-bomb": "memory",
    }
    assert set(verdicts["add"]) == {
        "id",
        "passed",
        "status",
        "tests_passed",
        "tests_total",
        "duration_s",
        "detail",
        "signals",
        "isolation",
    }
    assert {v["isolation"] for v in verdicts.values()} == {"sandbox"}
    assert verdicts["add"]["signals"] == []
    assert verdicts["always-equal-hack"]["signals"] == ["handle_compared"]
    assert verdicts["early-exit-hack"]["signals"] == ["early_exit"]
    assert "rows/s" in res.stderr and "passed" in res.stderr


def test_stdin_to_stdout_with_malformed_lines(tmp_path):
    lines = [
        json.dumps({"id": "ok", "program": "x = 1\n", "tests": ["assert x == 1"]}),
        "{not json",
        json.dumps({"id": "no-tests", "program": "x = 1\n"}),
        json.dumps([1, 2]),
    ]
    res = run_cli("verify", "-", "-o", "-", stdin="\n".join(lines) + "\n")
    # Every row has its verdict, and the exit code says that three were not rows at all.
    assert res.returncode == 1, res.stderr
    assert "3 of 4 rows were invalid" in res.stderr and "Traceback" not in res.stderr
    verdicts = [json.loads(line) for line in res.stdout.splitlines()]
    assert [v["status"] for v in verdicts] == ["passed", "invalid", "invalid", "invalid"]
    assert verdicts[1]["detail"].startswith("line 2:")
    assert "line 3" in verdicts[2]["detail"] and "'tests'" in verdicts[2]["detail"]


def test_unreadable_input_is_one_sentence_and_exit_2(tmp_path):
    res = run_cli("verify", str(tmp_path / "missing.jsonl"), "-o", "-")
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "cannot read" in res.stderr
    assert "Traceback" not in res.stderr


def test_unwritable_output_is_one_sentence_and_exit_2(tmp_path):
    res = run_cli("verify", str(EXAMPLES), "-o", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert res.returncode == 2 and "cannot write" in res.stderr and "Traceback" not in res.stderr


def _verify_without_bubblewrap(tmp_path, *options):
    env_path = tmp_path / "bin"
    env_path.mkdir(exist_ok=True)
    # Nothing of this environment but a PATH without bwrap on it.
    return run_cli(
        *options,
        "verify",
        str(EXAMPLES),
        "-o",
        "-",
        env={"PATH": str(env_path)},
        inherit_env=False,
        timeout=120,
    )


def test_verify_refuses_without_bubblewrap_by_default(tmp_path):
    res = _verify_without_bubblewrap(tmp_path)
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "not installed" in lines[0] and "--isolation none" in lines[0]


def test_verify_runs_unsandboxed_only_when_asked_and_says_so_in_every_verdict(tmp_path):
    res = _verify_without_bubblewrap(tmp_path, "--isolation", "none")
    assert res.returncode == 0, res.stderr
    verdicts = [json.loads(line) for line in res.stdout.splitlines()]
    assert verdicts and {v["isolation"] for v in verdicts} == {"none"}
    assert "WITHOUT a sandbox" in res.stderr


def test_verify_does_not_import_model_libraries():
    code = (
        "import sys, pipelines.cli, selfplay.verifier\n"
        "heavy = {'torch', 'transformers', 'datasets', 'faiss'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == "[]", res.stdout + res.stderr
