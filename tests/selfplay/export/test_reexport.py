"""A re-export into the same directory is what the loaders read next, not the cached first.

`datasets` keys its cache of a directory on the card's `configs` and `dataset_info`; the
card's `dataset_info` (rows and bytes of each split) and the content fingerprint in its
config change with the files, so a second export with other rows is read anew, through
`datasets.load_dataset(DIR)` and through OpenRLHF's `--data.prompt_dataset DIR` loader.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from selfplay.export import ExportOptions, export_bank

FIRST = ExportOptions(split="none", kinds=["deduction"])
SECOND = ExportOptions(split="none")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A datasets cache of this test's own, so nothing cached on the machine answers."""
    import datasets.config

    path = tmp_path / "hf-cache"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(path))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", path)
    return path


def _kinds(dataset) -> set[str]:
    if "extra_info" in dataset.column_names:
        return {r["kind"] for r in dataset["extra_info"]}
    return set(dataset["kind"])


@pytest.mark.parametrize("fmt", ["verl", "openrlhf"])
def test_datasets_reads_a_reexport_into_the_same_directory_anew(built_bank, tmp_path, cache, fmt):
    import datasets

    out = tmp_path / fmt
    first = export_bank(built_bank, fmt, out, FIRST)
    assert len(datasets.load_dataset(str(out))["train"]) == first.rows["train"]
    second = export_bank(built_bank, fmt, out, SECOND)
    assert second.rows["train"] > first.rows["train"]
    again = datasets.load_dataset(str(out))["train"]
    assert len(again) == second.rows["train"]
    assert _kinds(again) > {"deduction"}


def test_datasets_reads_new_labels_of_the_same_tasks_anew(built_bank, tmp_path, cache):
    # The same rows in number, other content: binary labels, then fractional ones.
    import datasets

    out = tmp_path / "trl"
    export_bank(built_bank, "trl", out, ExportOptions(split="none", kinds=["codegen"]))
    before = datasets.load_dataset(str(out))["train"]["ground_truth"]
    export_bank(
        built_bank, "trl", out, ExportOptions(split="none", kinds=["codegen"], reward="fraction")
    )
    after = datasets.load_dataset(str(out))["train"]["ground_truth"]
    assert len(after) == len(before)
    assert all('"reward": "fraction"' in label for label in after)


def test_openrlhfs_prompt_dataset_loader_reads_a_reexport_anew(built_bank, tmp_path, cache):
    pytest.importorskip("openrlhf", reason="pip install --no-deps openrlhf==0.11.2")
    from openrlhf.datasets.utils import blending_datasets

    # What OpenRLHF's PPO trainer hands blending_datasets for `--data.prompt_dataset DIR`:
    # its strategy is read for printing, rank and the ModelScope flag only.
    strategy = SimpleNamespace(
        print=lambda *a: None, is_rank_0=lambda: True, args=SimpleNamespace(use_ms=False)
    )
    out = tmp_path / "openrlhf"
    first = export_bank(built_bank, "openrlhf", out, FIRST)
    loaded = blending_datasets(str(out), None, strategy, 42, dataset_split="train")
    assert len(loaded) == first.rows["train"]
    second = export_bank(built_bank, "openrlhf", out, SECOND)
    loaded = blending_datasets(str(out), None, strategy, 42, dataset_split="train")
    assert len(loaded) == second.rows["train"]
    assert {r.split("/")[1] for r in loaded["datasource"]} > {"deduction"}
