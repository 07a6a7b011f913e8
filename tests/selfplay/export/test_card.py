"""The dataset card: YAML front matter the Hub reads and the sections a reader needs."""

from __future__ import annotations

import re

import pytest
import yaml

from selfplay.export import ExportOptions, export_bank
from selfplay.export.card import size_category
from selfplay.export.licenses import card_problems

SECTIONS = (
    "## Contents",
    "## Counts by kind and source",
    "## Difficulty",
    "## Deduplication and decontamination",
    "## Columns",
    "## How it was generated",
    "## Reward-hacking signals",
    "## Reward",
    "## How to train on it",
)


def split_card(text: str) -> tuple[dict, str]:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.DOTALL)
    assert match, "the card must start with YAML front matter"
    return yaml.safe_load(match.group(1)), match.group(2)


@pytest.mark.parametrize("fmt", ["verl", "openrlhf", "dpo"])
def test_front_matter_describes_the_files_written(built_bank, tmp_path, fmt):
    report = export_bank(built_bank, fmt, tmp_path / fmt, ExportOptions())
    meta, body = split_card((tmp_path / fmt / "README.md").read_text())
    assert meta["license"] == "apache-2.0"
    assert meta["task_categories"] == ["text-generation"]
    assert "synthetic" in meta["tags"] and fmt in meta["tags"]
    assert meta["size_categories"] == ["n<1K"]
    [config] = meta["configs"]
    assert config["config_name"] == fmt
    paths = {f["split"]: f["path"] for f in config["data_files"]}
    assert paths.keys() == report.rows.keys()
    assert all((tmp_path / fmt / p).is_file() for p in paths.values())
    for section in SECTIONS:
        assert section in body


def test_body_reports_counts_histogram_and_what_was_dropped(built_bank, tmp_path):
    export_bank(built_bank, "trl", tmp_path, ExportOptions(source_licenses={"seeds": "mit"}))
    meta, body = split_card((tmp_path / "README.md").read_text())
    assert meta["license"] == "mit" and "Every task is under mit." in body
    assert "| codegen | 45 |" in body and "| deduction | 25 |" in body
    assert "| seeds | 104 |" in body
    hist = re.findall(r"^\| \[\d\.\d, \d\.\d[\)\]] \| (\d+) \|", body, re.MULTILINE)
    assert len(hist) == 5 and sum(map(int, hist)) == 104
    assert "| duplicate | 1 |" in body and "| reference_failed | 1 |" in body
    assert "| contaminated | 1 |" in body
    assert "1 finished self-play round and 7 solver attempts (3 passing; " in body
    assert "solvers: solver-a, solver-b" in body
    assert "GRPOTrainer" in body and "trl_reward" in body and "verl" in body
    assert "1 solver attempts (14.3%) showed at least one reward-hacking signal" in body
    assert "| gc_scan | 1 |" in body and "| solver-a | 5 | 1 | 20.0% |" in body
    # Where the tasks came from, as the bank says: no proposer wrote any of these.
    assert "- `seeds` (104 tasks): the seed set bundled with selfplay" in body
    assert "proposer model" not in body
    # The options a list, not a Python dict.
    assert "- `split`: " in body and "{'" not in body
    # Every column of the file written, with its type and the first row's value.
    import pyarrow.parquet as pq

    columns = pq.read_schema(tmp_path / "train.parquet").names
    listed = re.findall(r"^\| (\w+) \| `[^`]+` \| `", body.split("## Columns")[1], re.MULTILINE)
    assert listed == columns and "prompt" in columns


def test_size_categories_follow_the_hub_buckets():
    assert [size_category(n) for n in (5, 1000, 20_000, 500_000)] == [
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "100K<n<1M",
    ]


def test_a_mixed_export_lists_each_sources_license(built_bank, tmp_path):
    # HumanEval's tasks are MIT, the bundled seeds Apache-2.0: the card must not claim one.
    export_bank(built_bank, "verl", tmp_path, ExportOptions(include_contaminated=True))
    text = (tmp_path / "README.md").read_text()
    meta, body = split_card(text)
    assert meta["license"] == "other" and meta["license_name"] == "mixed-apache-2.0-mit"
    assert meta["license_link"] == "LICENSE"
    license_text = (tmp_path / "LICENSE").read_text()
    assert "- humaneval (1 task): mit" in license_text
    assert "- seeds (104 tasks): apache-2.0" in license_text
    assert "| humaneval | 1 | mit |" in body and "| seeds | 104 | apache-2.0 |" in body
    assert card_problems(text) == []
    # A single-license export into the same directory takes the stale LICENSE away.
    export_bank(built_bank, "verl", tmp_path, ExportOptions())
    assert not (tmp_path / "LICENSE").exists()


@pytest.mark.parametrize("fmt", ["verl", "trl", "openrlhf", "sft", "dpo"])
def test_every_card_passes_the_hubs_yaml_rules(built_bank, tmp_path, fmt):
    export_bank(built_bank, fmt, tmp_path, ExportOptions(split="difficulty"))
    assert card_problems((tmp_path / "README.md").read_text()) == []


def test_the_card_check_refuses_what_the_hub_refuses():
    good = "---\nlicense: mit\ntask_categories: [text-generation]\nsize_categories: [n<1K]\n"
    good += "configs: [{config_name: a, data_files: a.parquet}]\n---\nbody\n"
    assert card_problems(good) == []
    assert card_problems(good.replace("license: mit", "license: 'mixed: a mit'")) == [
        "license 'mixed: a mit' is not a Hub license identifier"
    ]
    other = good.replace("license: mit", "license: other\nlicense_name: 'Mixed: x'")
    assert card_problems(other) == [
        "license_name 'Mixed: x' is not a lower-case slug",
        "license: other needs a license_link",
    ]


def test_an_unknown_license_is_refused_in_one_sentence():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="not a license identifier the Hugging Face Hub"):
        ExportOptions(license="Apache 2")
    with pytest.raises(ValidationError, match="not a license identifier the Hugging Face Hub"):
        ExportOptions(source_licenses={"mine": "proprietary"})


def test_local_snippets_name_files_relative_to_the_export(built_bank, tmp_path):
    out = tmp_path / "rl"
    export_bank(built_bank, "openrlhf", out, ExportOptions())
    body = (out / "README.md").read_text()
    assert str(tmp_path) not in body  # the card is right wherever the directory goes
    assert 'data_files={"train": "train.jsonl"}' in body
    assert '--reward.remote_url "$PWD/reward_func.py"' in body
    assert '--eval.dataset "$PWD/test.jsonl"' in body
    assert "--data.input_key input --data.label_key label --data.apply_chat_template" in body
    assert "$DIR" not in body and "verl 0.9.1, TRL 1.16 and OpenRLHF 0.11.2" in body


@pytest.mark.parametrize("fmt", ["verl", "sft"])
def test_a_card_for_the_hub_loads_the_repository(built_bank, tmp_path, fmt):
    out = tmp_path / fmt
    export_bank(built_bank, fmt, out, ExportOptions(), repo_id="someone/tasks")
    body = (out / "README.md").read_text()
    assert str(tmp_path) not in body
    assert 'load_dataset("someone/tasks", split="train")' in body
    assert "data_files" not in body.split("## How to train on it")[1]
    if fmt == "verl":
        assert "hf download someone/tasks --repo-type dataset --local-dir selfplay-verl" in body


def test_a_dpo_card_counts_the_tasks_that_have_pairs(built_bank, tmp_path):
    report = export_bank(built_bank, "dpo", tmp_path, ExportOptions(split="none"))
    meta, body = split_card((tmp_path / "README.md").read_text())
    assert report.tasks == 2  # the codegen and deduction tasks with a pair, of 104 selected
    assert "2 tasks, 3 rows." in body
    assert "| seeds | 2 |" in body and "| seeds | 2 | apache-2.0 |" in body
    assert meta["dataset_info"]["splits"] == [
        {
            "name": "train",
            "num_bytes": (tmp_path / "train.parquet").stat().st_size,
            "num_examples": 3,
        }
    ]


def test_a_dpo_export_without_attempts_says_how_to_record_them(bank_file, tmp_path):
    import sqlite3

    from selfplay.export import ExportError

    with sqlite3.connect(bank_file) as conn:
        conn.execute("DELETE FROM attempts")
    with pytest.raises(ExportError, match=r"`selfplay run --bank BANK` records the solver"):
        export_bank(bank_file, "dpo", tmp_path / "dpo", ExportOptions())


def test_a_failed_export_writes_nothing_and_keeps_an_earlier_one(built_bank, tmp_path):
    from selfplay.export import ExportError
    from task_bank.store import Bank

    empty = tmp_path / "empty.db"
    Bank(empty).close()  # a bank without attempts has no DPO pairs
    with pytest.raises(ExportError):
        export_bank(empty, "dpo", tmp_path / "dpo", ExportOptions())
    assert not (tmp_path / "dpo").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["empty.db"]  # no staging left behind
    out = tmp_path / "verl"
    export_bank(built_bank, "verl", out, ExportOptions())
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(ExportError):
        export_bank(built_bank, "verl", out, ExportOptions(kinds=["codegen"], min_solve_rate=1.0))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_the_card_names_the_models_trained_on_the_bank(built_bank, tmp_path):
    import shutil

    from task_bank.store import Bank
    from task_bank.training import ModelRecord

    copy = tmp_path / "bank.db"
    shutil.copy(built_bank, copy)
    export_bank(copy, "trl", tmp_path / "a", ExportOptions())
    _, before = split_card((tmp_path / "a" / "README.md").read_text())
    assert "Models trained on the bank" not in before
    with Bank(copy) as bank:
        bank.add_model(ModelRecord(id="iter-1-solver-sft-0123abcd", base="bundled", method="sft",
                                   role="solver", path=str(tmp_path / "m")))  # fmt: skip
        bank.finish_model("iter-1-solver-sft-0123abcd", 16)
    export_bank(copy, "trl", tmp_path / "b", ExportOptions())
    _, body = split_card((tmp_path / "b" / "README.md").read_text())
    assert "| iter-1-solver-sft-0123abcd | solver | sft | bundled | 16 | done |" in body


def test_a_bank_graded_without_the_sandbox_says_so_in_its_card(built_bank, tmp_path):
    import shutil
    import sqlite3

    copy = tmp_path / "unsandboxed.db"
    shutil.copy(built_bank, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute(
            "UPDATE attempts SET isolation = 'none' WHERE id = (SELECT MIN(id) FROM attempts)"
        )
    bodies = []
    for name, path in (("sandboxed", built_bank), ("unsandboxed", copy)):
        export_bank(path, "trl", tmp_path / name, ExportOptions())
        bodies.append(split_card((tmp_path / name / "README.md").read_text())[1])
    assert "WITHOUT a sandbox" not in bodies[0]
    assert "**Warning: 1 solver attempt of this bank ran WITHOUT a sandbox**" in bodies[1]
