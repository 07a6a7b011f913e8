"""`selfplay export` as a user runs it: a real subprocess on a real bank file."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest
from selfplay_cli import run_cli


def selfplay(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    # Two reward workers suit a small CI machine; a test's env may change or remove (None) more.
    return run_cli("export", *args, env={"SELFPLAY_REWARD_WORKERS": "2", **(env or {})})


def one_sentence(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("selfplay export: ") and lines[0].endswith(".")
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.slow
def test_export_writes_data_and_card_and_reports_json(built_bank, tmp_path):
    import datasets

    out = tmp_path / "verl"
    res = selfplay(
        "--bank",
        str(built_bank),
        "--format",
        "verl",
        "--out",
        str(out),
        "--split",
        "difficulty",
        "--kind",
        "codegen",
        "--kind",
        "induction",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["tasks"] == 62 and set(report["rows"]) == {"easy", "medium", "hard"}
    assert report["excluded"] == {"contaminated": 1, "kind_filtered": 42}
    files = {s: str(out / f"{s}.parquet") for s in report["rows"]}
    data = datasets.load_dataset("parquet", data_files=files)
    assert {r["extra_info"]["kind"] for s in data for r in data[s]} == {"codegen", "induction"}
    assert (out / "README.md").read_text().startswith("---\n")


@pytest.mark.slow
def test_bad_input_gets_one_sentence_and_exit_2(built_bank, tmp_path):
    cases = [
        (("--bank", str(tmp_path / "absent.db"), "--format", "verl"), "there is no bank"),
        (("--bank", str(built_bank), "--format", "parquet"), "unknown format 'parquet'"),
        (("--bank", str(built_bank), "--format", "verll"), "'verl' is the closest"),
        (("--bank", str(built_bank), "--format", "verl", "--split", "weekly"), "--split"),
        (
            ("--bank", str(built_bank), "--format", "verl", "--min-solve-rate", "2"),
            "--min-solve-rate",
        ),
        (
            ("--bank", str(built_bank), "--format", "verl", "--source", "nowhere"),
            "no task in the bank matches",
        ),
        (("--bank", str(built_bank), "--format", "verl", "--reward", "half"), "--reward"),
    ]
    for args, words in cases:
        res = selfplay(*args, "--out", str(tmp_path / "out"))
        assert res.returncode == 2, (args, res.stderr)
        assert words in one_sentence(res.stderr)
    assert not (tmp_path / "absent.db").exists()  # a missing bank is not created


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_push_to_hub_without_a_token_fails_in_one_sentence_and_keeps_the_export(
    built_bank, tmp_path
):
    out = tmp_path / "trl"
    res = selfplay(
        "--bank",
        str(built_bank),
        "--format",
        "trl",
        "--out",
        str(out),
        "--push-to-hub",
        "someone/tasks",
        "--private",
        env={"HF_TOKEN": None, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": None},
    )
    assert res.returncode == 2
    assert "no Hugging Face token found" in one_sentence(res.stderr)
    assert "hf auth login" in res.stderr
    assert (out / "train.parquet").is_file() and (out / "README.md").is_file()


@pytest.mark.slow
def test_push_to_hub_without_network_fails_in_one_sentence_and_keeps_the_export(
    built_bank, tmp_path
):
    out = tmp_path / "sft"
    endpoint = f"http://127.0.0.1:{_closed_port()}"  # nothing listens: no network to reach
    res = selfplay(
        "--bank",
        str(built_bank),
        "--format",
        "sft",
        "--out",
        str(out),
        "--push-to-hub",
        "someone/tasks",
        env={
            "HF_TOKEN": "hf_not_a_real_token",
            "HF_HOME": str(tmp_path / "hf"),
            "HF_ENDPOINT": endpoint,
            "HF_HUB_OFFLINE": None,
        },
    )
    assert res.returncode == 2
    assert "could not push to the Hugging Face Hub" in one_sentence(res.stderr)
    assert (out / "train.parquet").is_file()


# A format registered in the process before the command is built, as a user's own module
# would register it: one row per task, one recipe.
REGISTER_LINES = """
from selfplay.export import Exporter, register

class Lines(Exporter):
    name = "lines"
    suffix = ".jsonl"
    description = "one line per task"

    def rows(self, items, bank):
        return [{"task_id": i.task.id, "ground_truth": i.ground_truth} for i in items]

    def recipes(self, counts, repo_id):
        return ["lines-trainer:\\n\\n```bash\\nlines-trainer train.jsonl\\n```"]

register(Lines)
"""


@pytest.mark.slow
def test_a_registered_format_is_listed_and_exported_by_the_command(built_bank, tmp_path):
    listed = run_cli("export", "--help", env={"COLUMNS": "200"}, before=REGISTER_LINES)
    assert listed.returncode == 0, listed.stderr
    assert "One of: verl, trl, openrlhf, sft, dpo, lines." in listed.stdout
    out = tmp_path / "lines"
    args = ("--bank", str(built_bank), "--format", "lines", "--out", str(out), "--split", "none")
    res = run_cli("export", *args, "--json", env={"SELFPLAY_REWARD_WORKERS": "2"},
                  before=REGISTER_LINES)  # fmt: skip
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["format"] == "lines" and report["files"] == ["README.md", "train.jsonl"]
    lines = (out / "train.jsonl").read_text().splitlines()
    assert len(lines) == report["rows"]["train"] == report["tasks"] == 104
    card = (out / "README.md").read_text()
    assert "`selfplay export --format lines`: one line per task." in card
    assert card.rstrip().endswith("lines-trainer:\n\n```bash\nlines-trainer train.jsonl\n```")
    # Without the registration the same command refuses the name in one sentence.
    assert "unknown format 'lines'" in one_sentence(selfplay(*args).stderr)
