"""Every format written from a real bank loads back with `datasets` and grades as labelled."""

from __future__ import annotations

import importlib.util
import json

import pytest
from bank_builder import CODEGEN, DEDUCTION, INDUCTION

from selfplay.export import ExportError, ExportOptions, export_bank
from selfplay.rewards import GroundTruth, compute_score_batch, grade_responses, trl_reward


def load(out, fmt: str):
    import datasets

    suffix = "jsonl" if fmt == "openrlhf" else "parquet"
    builder = "json" if fmt == "openrlhf" else "parquet"
    files = {p.stem: str(p) for p in sorted(out.glob(f"*.{suffix}"))}
    return datasets.load_dataset(builder, data_files=files)


@pytest.fixture(scope="module")
def exports(built_bank, tmp_path_factory):
    root = tmp_path_factory.mktemp("exports")
    reports = {
        fmt: export_bank(built_bank, fmt, root / fmt, ExportOptions(test_fraction=0.2, seed=3))
        for fmt in ("verl", "trl", "openrlhf", "sft", "dpo")
    }
    return root, reports


def test_verl_rows_have_verls_columns_and_a_json_ground_truth(exports):
    root, reports = exports
    data = load(root / "verl", "verl")
    assert set(data) == {"train", "test"}
    assert reports["verl"].rows == {"train": 83, "test": 21}  # 104 kept, 1 contaminated out
    row = data["train"][0]
    assert set(row) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert row["prompt"][0]["role"] == "user" and row["data_source"].startswith("selfplay/")
    assert row["reward_model"]["style"] == "rule"
    gt = GroundTruth.parse(row["reward_model"]["ground_truth"])
    info = row["extra_info"]
    assert gt.kind == info["kind"] and info["split"] == "train" and info["index"] == 0
    assert 0.0 <= info["difficulty"] <= 1.0 and 0.0 < info["learnability"] <= 0.25
    assert [r["extra_info"]["index"] for r in data["test"]] == list(range(21))


def test_verl_reward_on_exported_rows_scores_reference_answers_one_and_junk_zero(
    exports, built_bank
):
    from task_bank.store import Bank

    root, _ = exports
    rows = list(load(root / "verl", "verl")["test"])
    with Bank(built_bank, create=False) as bank:
        tasks = [bank.get(r["extra_info"]["task_id"]) for r in rows]
    from selfplay.kinds import reference_answer

    labels = [r["reward_model"]["ground_truth"] for r in rows]
    good = compute_score_batch(
        [r["data_source"] for r in rows], [reference_answer(t) for t in tasks], labels, None
    )
    junk = compute_score_batch(
        [r["data_source"] for r in rows], ["```python\n0\n```"] * len(rows), labels, None
    )
    assert [g["score"] for g in good] == [1.0] * len(rows)
    assert sum(j["score"] for j in junk) == 0.0


def test_trl_dataset_feeds_the_trl_reward_directly(exports, built_bank):
    root, _ = exports
    data = load(root / "trl", "trl")["train"]
    assert {"prompt", "ground_truth", "task_id", "kind"} <= set(data.column_names)
    batch = data.select(range(8))
    columns = {k: batch[k] for k in batch.column_names if k != "prompt"}
    scores = trl_reward(batch["prompt"], [[{"role": "assistant", "content": "no"}]] * 8, **columns)
    assert scores == [0.0] * 8


def test_a_fraction_export_gives_partial_credit_through_its_labels_alone(built_bank, tmp_path):
    from task_bank.store import Bank

    report = export_bank(
        built_bank,
        "trl",
        tmp_path,
        ExportOptions(split="none", kinds=["codegen"], reward="fraction"),
    )
    data = load(tmp_path, "trl")["train"]
    assert report.rows == {"train": len(data)}
    assert {json.loads(gt).get("reward") for gt in data["ground_truth"]} == {"fraction"}
    row = next(r for r in data if len(json.loads(r["ground_truth"])["tests"]) >= 3)
    with Bank(built_bank, create=False) as bank:
        task = bank.get(row["task_id"])
    # The reference program, broken for every input but the first test's: the reward is the
    # share of tests it still passes, with no option given to the reward function.
    wrapper = (
        f"{task.program}\n\n_real = {task.entry_point}\n_calls = []\n"
        f"def {task.entry_point}(*a, **k):\n"
        "    _calls.append(1)\n"
        "    return _real(*a, **k) if len(_calls) == 1 else object()\n"
    )
    score = grade_responses([f"```python\n{wrapper}```"], [row["ground_truth"]])[0]
    assert 0.0 < score.score < 1.0 and score.tests_passed >= 1, score
    assert score.score == score.tests_passed / score.tests_total
    assert "partial (`reward: fraction`" in (tmp_path / "README.md").read_text()


def test_openrlhf_jsonl_and_its_reward_file(exports):
    root, reports = exports
    out = root / "openrlhf"
    data = load(out, "openrlhf")
    assert {"input", "label", "datasource"} <= set(data["train"].column_names)
    assert {r["datasource"] for r in data["train"]} == {
        f"selfplay/{r['kind']}" for r in data["train"]
    }
    assert "reward_func.py" in reports["openrlhf"].files
    spec = importlib.util.spec_from_file_location("reward_func", out / "reward_func.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ded = next(r for r in data["train"] if r["kind"] == "deduction")
    expected = json.loads(ded["label"])["expected"]
    prompt = ded["input"][0]["content"]
    got = module.reward_func(
        [prompt + f"```python\n{expected}\n```", prompt + "?"], [prompt, prompt], [ded["label"]] * 2
    )
    assert got["rewards"].tolist() == [1.0, 0.0]


def test_sft_holds_only_solutions_that_pass_the_reward(exports, verifier):
    root, _ = exports
    data = load(root / "sft", "sft")
    rows = [r for split in data.values() for r in split]
    by_task: dict[str, list] = {}
    for r in rows:
        by_task.setdefault(r["task_id"], []).append(r)
    assert len(by_task) == 104
    # Two passing attempts, one of them the reference verbatim: kept once, as the reference.
    origins = {r["origin"]: r["completion"][0]["content"] for r in by_task[CODEGEN]}
    assert sorted(origins) == ["attempt", "reference"] and len(by_task[CODEGEN]) == 2
    assert "out = list()" in origins["attempt"] and origins["attempt"].startswith("```python")
    assert [r["origin"] for r in by_task[INDUCTION]] == ["reference"]  # its attempt failed
    # The prompt of each row is the verl prompt; check the answers with the real reward.
    labels = _labels(root / "verl")
    responses = [r["completion"][0]["content"] for r in rows]
    scores = grade_responses(responses, [labels[r["task_id"]] for r in rows], verifier)
    assert [s.score for s in scores] == [1.0] * len(rows)
    assert all(r["prompt"][0]["role"] == "user" for r in rows)
    assert all([m["role"] for m in r["completion"]] == ["assistant"] for r in rows)


def test_dpo_pairs_a_passing_and_a_failing_attempt(exports, verifier):
    root, reports = exports
    rows = [r for split in load(root / "dpo", "dpo").values() for r in split]
    assert sorted({r["task_id"] for r in rows}) == [CODEGEN, DEDUCTION]
    assert sum(r["task_id"] == CODEGEN for r in rows) == 2  # 2 distinct good, 2 distinct bad
    labels = _labels(root / "verl")
    chosen = grade_responses(
        [r["chosen"][0]["content"] for r in rows], [labels[r["task_id"]] for r in rows], verifier
    )
    rejected = grade_responses(
        [r["rejected"][0]["content"] for r in rows], [labels[r["task_id"]] for r in rows], verifier
    )
    assert [s.score for s in chosen] == [1.0] * len(rows)
    assert [s.score for s in rejected] == [0.0] * len(rows)
    assert reports["dpo"].excluded["dpo_no_pair"] == 1  # the induction task: failures only


def _labels(verl_dir) -> dict[str, str]:
    data = load(verl_dir, "verl")
    return {
        r["extra_info"]["task_id"]: r["reward_model"]["ground_truth"]
        for split in data.values()
        for r in split
    }


def test_a_second_export_to_the_same_directory_replaces_the_first(built_bank, tmp_path):
    out = tmp_path / "again"
    export_bank(built_bank, "verl", out, ExportOptions(split="difficulty"))
    report = export_bank(built_bank, "verl", out, ExportOptions(split="none"))
    assert report.files == ["README.md", "train.parquet"]


def test_a_directory_holding_other_files_is_refused(built_bank, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="not empty"):
        export_bank(built_bank, "verl", tmp_path, ExportOptions())
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_another_formats_export_is_replaced_only_when_asked(built_bank, tmp_path):
    out = tmp_path / "one"
    export_bank(built_bank, "trl", out, ExportOptions(split="none"))
    with pytest.raises(ExportError, match="holds a trl export; pass --force"):
        export_bank(built_bank, "sft", out, ExportOptions(split="none"))
    assert "--format trl" in (out / "README.md").read_text()  # nothing was replaced
    (out / "grpo-out").mkdir()  # what a trainer left there stays
    report = export_bank(built_bank, "sft", out, ExportOptions(split="none"), force=True)
    assert "--format sft" in (out / "README.md").read_text() and report.files
    assert (out / "grpo-out").is_dir()


def test_other_files_need_force_and_stay(built_bank, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="pass --force to export into it"):
        export_bank(built_bank, "verl", tmp_path, ExportOptions())
    export_bank(built_bank, "verl", tmp_path, ExportOptions(split="none"), force=True)
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "README.md").is_file()
