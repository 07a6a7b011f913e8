"""The SFT export trains on the answer only: TRL 1.16's SFTTrainer, on the exported rows with
its defaults, gives every prompt token the label -100 and keeps every answer token."""

from __future__ import annotations

import pytest

from selfplay.export import ExportOptions, export_bank


@pytest.mark.slow
def test_trls_sft_trainer_masks_every_prompt_token_of_the_export(built_bank, tmp_path):
    pytest.importorskip("trl", reason="needs the train extra: pip install 'selfplay[train]'")
    import datasets
    from trl import SFTConfig, SFTTrainer

    from selfplay.backends.models import local_model_dir

    out = tmp_path / "sft"
    export_bank(built_bank, "sft", out, ExportOptions(split="none"))
    files = {"train": str(out / "train.parquet")}
    data = datasets.load_dataset("parquet", data_files=files)["train"].select(range(6))
    args = SFTConfig(output_dir=str(tmp_path / "run"), max_steps=1, bf16=False, report_to=[])
    trainer = SFTTrainer(model=local_model_dir("smollm2-135m"), train_dataset=data, args=args)
    # TRL's own tokenisation (at construction) and its own collator, as its training loop runs.
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(len(data))])
    tokenizer = trainer.processing_class
    for i, row in enumerate(data):
        prompt = tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=False
        )
        prompt_tokens = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        real = batch["attention_mask"][i] == 1
        labels, ids = batch["labels"][i][real], batch["input_ids"][i][real]
        assert int((labels == -100).sum()) == prompt_tokens > 0
        assert (labels[:prompt_tokens] == -100).all()
        assert (labels[prompt_tokens:] == ids[prompt_tokens:]).all()  # the answer is learnt
