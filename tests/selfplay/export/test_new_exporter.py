"""A format defined outside selfplay is one module: an `Exporter` subclass passed to
`register`. Registered here, it exports a real bank through `export_bank` (what `selfplay
export` calls), its rows, reward file and card included, with no other edit."""

from __future__ import annotations

import importlib.util
import json
import re
from typing import Any

import pytest
import yaml

from selfplay import kinds
from selfplay.export import (
    FORMATS,
    Exporter,
    ExportError,
    ExportOptions,
    export_bank,
    recipes,
    register,
    unregister,
)
from selfplay.export.select import Item
from task_bank.store import Bank


class ChatRlExporter(Exporter):
    """Chat-format RL data for a trainer that reads `messages` and a ground truth, takes the
    reward mode as a column and loads its reward from a file next to the data."""

    name = "chat_rl"
    suffix = ".jsonl"
    description = "chat messages with the ground truth and the reward mode"
    reward_module = "selfplay.rewards.verl_reward"

    def __init__(self, reward: str = "binary") -> None:
        super().__init__()
        self.reward = reward

    @classmethod
    def from_options(cls, options: ExportOptions) -> ChatRlExporter:
        return cls(reward=options.reward)

    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]:
        return [
            {
                "messages": kinds.chat(item.task),
                "ground_truth": item.ground_truth,
                "reward": self.reward,
                "task_id": item.task.id,
            }
            for item in items
        ]

    def recipes(self, counts: dict[str, int], repo_id: str | None) -> list[str]:
        files = ",".join(f"{s}{self.suffix}" for s in recipes.train_splits(counts))
        return [
            "chat-rl-trainer (GRPO):\n\n```bash\n"
            + recipes.download(repo_id, self.name)
            + f"chat-rl-trainer --data {files} --reward reward_func.py "
            f"--group {recipes.GRPO_SAMPLES}\n```"
        ]


@pytest.fixture
def chat_rl():
    register(ChatRlExporter)
    yield ChatRlExporter.name
    unregister(ChatRlExporter.name)


def read_rows(path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def card_parts(out) -> tuple[dict, str]:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", (out / "README.md").read_text(), re.DOTALL)
    assert match, "the card starts with YAML front matter"
    return yaml.safe_load(match.group(1)), match.group(2)


def test_a_registered_format_exports_a_real_bank_with_its_rows_and_options(
    built_bank, tmp_path, chat_rl
):
    out = tmp_path / chat_rl
    options = ExportOptions(split="none", kinds=["deduction"], reward="fraction")
    report = export_bank(built_bank, chat_rl, out, options)
    assert report.format == chat_rl and report.files == [
        "README.md",
        "reward_func.py",
        "train.jsonl",
    ]
    rows = read_rows(out / "train.jsonl")
    assert report.rows == {"train": len(rows)} and report.tasks == len(rows) == 25
    with Bank(built_bank, create=False) as bank:
        for row in rows:
            task = bank.get(row["task_id"])
            assert task.kind == "deduction" and row["messages"] == kinds.chat(task)
    # The option reached the exporter through from_options.
    assert {row["reward"] for row in rows} == {"fraction"}
    assert {json.loads(row["ground_truth"])["kind"] for row in rows} == {"deduction"}


def test_its_reward_file_is_the_named_module_and_grades_the_rows(built_bank, tmp_path, chat_rl):
    out = tmp_path / chat_rl
    export_bank(built_bank, chat_rl, out, ExportOptions(split="none", kinds=["deduction"]))
    spec = importlib.util.find_spec(ChatRlExporter.reward_module)
    assert (out / "reward_func.py").read_bytes() == open(spec.origin, "rb").read()
    shipped = importlib.util.spec_from_file_location("reward_func", out / "reward_func.py")
    module = importlib.util.module_from_spec(shipped)
    shipped.loader.exec_module(module)
    row = read_rows(out / "train.jsonl")[0]
    expected = json.loads(row["ground_truth"])["expected"]
    right = module.compute_score("chat_rl", f"```python\n{expected}\n```", row["ground_truth"])
    wrong = module.compute_score("chat_rl", "```python\nNone\n```", row["ground_truth"])
    assert (right["score"], wrong["score"]) == (1.0, 0.0)


def test_the_card_describes_the_format_and_carries_its_recipes(built_bank, tmp_path, chat_rl):
    out = tmp_path / chat_rl
    report = export_bank(built_bank, chat_rl, out, ExportOptions(kinds=["deduction"]))
    meta, body = card_parts(out)
    assert meta["configs"][0]["config_name"] == chat_rl and chat_rl in meta["tags"]
    assert [f["path"] for f in meta["configs"][0]["data_files"]] == [
        f"{s}.jsonl" for s in sorted(report.rows)
    ]
    assert f"`selfplay export --format {chat_rl}`: {ChatRlExporter.description}." in body
    assert "| messages | `list` |" in body  # the columns, read back from the file written
    how = body.split("## How to train on it\n\n")[1]
    recipe = "chat-rl-trainer (GRPO):\n\n```bash\nchat-rl-trainer --data train.jsonl "
    assert recipe + "--reward reward_func.py --group 8\n```" in how
    assert how.rstrip().endswith("```")  # the format's recipes end the card


def test_a_pushed_exports_recipe_downloads_the_repository_first(built_bank, tmp_path, chat_rl):
    out = tmp_path / chat_rl
    export_bank(built_bank, chat_rl, out, ExportOptions(split="none"), repo_id="someone/tasks")
    how = card_parts(out)[1].split("## How to train on it")[1]
    assert 'load_dataset("someone/tasks", split="train")' in how
    assert (
        "hf download someone/tasks --repo-type dataset --local-dir selfplay-chat_rl\n"
        "cd selfplay-chat_rl\nchat-rl-trainer --data train.jsonl" in how
    )


def test_a_second_export_of_the_format_replaces_the_first(built_bank, tmp_path, chat_rl):
    out = tmp_path / chat_rl
    export_bank(built_bank, chat_rl, out, ExportOptions(split="difficulty"))
    report = export_bank(built_bank, chat_rl, out, ExportOptions(split="none"))
    assert sorted(p.name for p in out.iterdir()) == report.files
    assert report.files == ["README.md", "reward_func.py", "train.jsonl"]


def test_a_format_is_known_while_registered_only(built_bank, tmp_path):
    register(ChatRlExporter)
    try:
        assert "chat_rl" in FORMATS
        with pytest.raises(ExportError, match="known: verl, trl, openrlhf, sft, dpo, chat_rl"):
            export_bank(built_bank, "chat-rl", tmp_path / "out", ExportOptions())
    finally:
        unregister("chat_rl")
    assert "chat_rl" not in FORMATS
    with pytest.raises(ExportError, match="unknown format 'chat_rl'"):
        export_bank(built_bank, "chat_rl", tmp_path / "out", ExportOptions())


class _NoRecipes(Exporter):
    name = "no_recipes"

    def rows(self, items, bank):
        return []


class _Dashed(ChatRlExporter):
    name = "chat-rl"  # a re-export reads the format back from the card as one word


class _Csv(ChatRlExporter):
    name = "csv_rows"
    suffix = ".csv"


class _NoRewardModule(ChatRlExporter):
    name = "lost_reward"
    reward_module = "selfplay.rewards.not_a_module"


@pytest.mark.parametrize(
    "exporter, words",
    [
        (_NoRecipes, "does not implement recipes"),
        (_Dashed, "lower-case letters, digits and _"),
        (_Csv, "writes '.csv'"),
        (_NoRewardModule, "no module 'selfplay.rewards.not_a_module'"),
    ],
)
def test_register_refuses_a_format_it_could_not_export(exporter, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        register(exporter)
    assert exporter.name not in FORMATS


def test_register_refuses_a_name_taken(chat_rl):
    class Another(ChatRlExporter):
        pass

    with pytest.raises(ValueError, match="a format named 'chat_rl' is already registered"):
        register(Another)
    with pytest.raises(ValueError, match="'verl' is already registered"):
        register(type("Verl", (ChatRlExporter,), {"name": "verl"}))
