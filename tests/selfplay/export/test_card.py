"""The dataset card: YAML front matter the Hub reads and the sections a reader needs."""

from __future__ import annotations

import re

import pytest
import yaml

from selfplay.export import ExportOptions, export_bank
from selfplay.export.card import size_category

SECTIONS = (
    "## Contents",
    "## Counts by kind and source",
    "## Difficulty",
    "## Deduplication and decontamination",
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
def test_front_matter_describes_the_files_written(bank_path, tmp_path, fmt):
    report = export_bank(bank_path, fmt, tmp_path / fmt, ExportOptions())
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


def test_body_reports_counts_histogram_and_what_was_dropped(bank_path, tmp_path):
    export_bank(bank_path, "trl", tmp_path, ExportOptions(license="mit"))
    meta, body = split_card((tmp_path / "README.md").read_text())
    assert meta["license"] == "mit"
    assert "| codegen | 45 |" in body and "| deduction | 25 |" in body
    assert "| seeds | 104 |" in body
    hist = re.findall(r"^\| \[\d\.\d, \d\.\d[\)\]] \| (\d+) \|", body, re.MULTILINE)
    assert len(hist) == 5 and sum(map(int, hist)) == 104
    assert "| duplicate | 1 |" in body and "| reference_failed | 1 |" in body
    assert "| contaminated | 1 |" in body
    assert "1 finished self-play rounds and 7 solver attempts (3 passing; " in body
    assert "solvers: solver-a, solver-b" in body
    assert "GRPOTrainer" in body and "trl_reward" in body and "verl" in body
    assert "1 solver attempts (14.3%) showed at least one reward-hacking signal" in body
    assert "| gc_scan | 1 |" in body and "| solver-a | 5 | 1 | 20.0% |" in body


def test_size_categories_follow_the_hub_buckets():
    assert [size_category(n) for n in (5, 1000, 20_000, 500_000)] == [
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "100K<n<1M",
    ]
