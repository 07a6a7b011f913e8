"""`selfplay eval` as a user runs it: a subprocess, a scripted model file, the real verifier."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from selfplay_cli import run_cli

selfplay = functools.partial(run_cli, "eval")


@pytest.mark.slow
def test_humaneval_reports_pass_at_k_and_saves_completions(tmp_path):
    from selfplay.evaluate import humaneval_problems

    # Sample i of every problem replays line i: problem 1's canonical body, then a stub.
    body = humaneval_problems(limit=1)[0]["canonical_solution"]
    script = tmp_path / "model.json"
    script.write_text(json.dumps([body + "```", "    return None\n```"]))
    out = tmp_path / "completions.jsonl"
    res = selfplay(
        "humaneval",
        "--backend",
        "scripted",
        "--model",
        str(script),
        "--limit",
        "2",
        "--samples",
        "2",
        "--out",
        str(out),
        "--json",
    )
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["problems"] == 2 and result["samples"] == 2
    assert result["pass_at_k"] == {"pass@1": 0.25, "pass@2": 0.5}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task_id"], r["passed"]) for r in rows] == [
        ("HumanEval/0", True),
        ("HumanEval/0", False),
        ("HumanEval/1", False),
        ("HumanEval/1", False),
    ]


@pytest.mark.slow
def test_bad_input_gets_one_sentence_and_exit_2(tmp_path):
    cases = [
        (("humaneval", "--backend", "nonesuch"), "unknown backend"),
        (("humaneval", "--backend", "scripted", "--model", str(tmp_path / "absent.json")), ""),
        (("bank", "--bank", str(tmp_path / "absent.db")), "there is no bank"),
        (("humaneval", "--quantize", "int4"), "quantize must be one of"),
        (("humaneval", "--backend", "openai", "--quantize", "fp16"), "transformers backend only"),
    ]
    for args, words in cases:
        res = selfplay(*args, "--out", str(tmp_path / "o.jsonl"))
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert res.returncode == 2, res.stderr
        assert len(lines) == 1 and lines[0].startswith("selfplay eval: "), res.stderr
        assert words in lines[0]
    assert not Path(tmp_path / "absent.db").exists()


@pytest.mark.slow
def test_an_earlier_runs_completions_are_kept_unless_forced(tmp_path):
    from selfplay.evaluate import humaneval_problems

    body = humaneval_problems(limit=1)[0]["canonical_solution"]
    script = tmp_path / "model.json"
    script.write_text(json.dumps([body + "```"]))
    out = tmp_path / "completions.jsonl"
    out.write_text("earlier\n")
    args = ("humaneval", "--backend", "scripted", "--model", str(script), "--limit", "1",
            "--out", str(out))  # fmt: skip
    res = selfplay(*args)
    assert res.returncode == 2 and "pass --force" in res.stderr, res.stderr
    assert out.read_text() == "earlier\n"
    res = selfplay(*args, "--force")
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text().splitlines()[0])["passed"] is True
