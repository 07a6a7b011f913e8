"""The exports inside the trainers' own code, with the dataset card's instructions as written.

- verl 0.9.1: the card's command-line overrides composed into verl's own `ppo_trainer` config
  by hydra, verl's `RLHFDataset` reading the export, and verl's `load_reward_manager` scoring a
  `DataProto` of right and wrong responses through its per-response reward loop;
- OpenRLHF 0.11.2: the card's flags parsed by OpenRLHF's own argument parser, its
  `preprocess_data` building the prompt and label from the export, and its
  `SingleTurnAgentExecutor` loading the exported reward file and scoring what a (replayed)
  engine generated, decoded with special tokens as OpenRLHF decodes it;
- TRL 1.16: the card's GRPO snippet run as printed (one step) on a tiny model.
Each trainer gives reference answers 1 and wrong answers 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from selfplay.export import ExportOptions, export_bank
from selfplay.export.recipes import MODEL
from selfplay.kinds import reference_answer
from task_bank.store import Bank

WRONG = "```python\nNone\n```"
# verl and OpenRLHF are installed without their dependencies, as the README's test command does.
_VERL = "verl is not installed: pip install --no-deps verl==0.9.1"
_OPENRLHF = "OpenRLHF is not installed: pip install --no-deps openrlhf==0.11.2"


def shell_words(block: str, cwd: Path) -> list[str]:
    """The arguments of the block's trainer command, as bash expands them in `cwd` (the
    export directory, where the card says to run it): `$PWD`, quotes and `$(python -c ...)`."""
    line = next(ln for ln in block.replace("\\\n", " ").splitlines() if ln.startswith("python -m"))
    words = line.split(None, 3)[3]  # after `python -m <module>`
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", f"printf '%s\\n' {words}"], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return [w for w in done.stdout.splitlines() if w != "..."]


def verl_config(overrides: list[str]):
    """verl's own `ppo_trainer` config composed by hydra with these overrides."""
    import verl
    from hydra import compose, initialize_config_dir

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def card_block(out: Path, language: str, after: str) -> str:
    """The first `language` code block of the card that follows the text `after`."""
    text = (out / "README.md").read_text(encoding="utf-8")
    start = text.index(after)
    return re.search(rf"```{language}\n(.*?)```", text[start:], re.DOTALL).group(1)


@pytest.fixture(scope="module")
def tokenizer():
    pytest.importorskip(
        "transformers", reason="needs the transformers extra: pip install 'selfplay[transformers]'"
    )
    from transformers import AutoTokenizer

    from selfplay.backends.models import local_model_dir

    return AutoTokenizer.from_pretrained(local_model_dir("smollm2-135m"))


def answers(bank_path: Path, task_ids: list[str]) -> list[tuple[str, str]]:
    """(right, wrong) responses for each task: its reference answer, and an answer to none."""
    with Bank(bank_path) as bank:
        return [(reference_answer(bank.get(t)), WRONG) for t in task_ids]


@pytest.mark.slow
def test_verl_scores_the_export_with_the_cards_configuration(built_bank, tmp_path, tokenizer):
    pytest.importorskip("verl", reason=_VERL)
    import torch
    from verl import DataProto
    from verl.trainer.ppo.reward import load_reward_manager
    from verl.utils.dataset.rl_dataset import RLHFDataset

    out = tmp_path / "verl"
    export_bank(built_bank, "verl", out, ExportOptions(split="none"))
    cfg = verl_config(shell_words(card_block(out, "bash", "verl (GRPO)"), out))
    assert cfg.reward.custom_reward_function.name == "compute_score_async"

    from omegaconf import open_dict

    data_config = cfg.data
    with open_dict(data_config):
        data_config.cache_dir = str(tmp_path / "cache")
    dataset = RLHFDataset(data_files=cfg.data.train_files, tokenizer=tokenizer, config=data_config)
    picked = [dataset[i] for i in range(0, len(dataset), max(1, len(dataset) // 12))][:12]
    ids = [row["extra_info"]["task_id"] for row in picked]
    manager = load_reward_manager(cfg, tokenizer)

    def data_item(row, response: str) -> DataProto:
        # verl's agent loop renders the dataset's raw_prompt with the chat template.
        text = tokenizer.apply_chat_template(
            row["raw_prompt"], add_generation_prompt=True, tokenize=False
        )
        prompt = torch.tensor([tokenizer(text)["input_ids"]])
        resp = torch.tensor([tokenizer(response)["input_ids"] + [tokenizer.eos_token_id]])
        mask = torch.ones(1, prompt.shape[1] + resp.shape[1], dtype=torch.long)
        return DataProto.from_dict(
            tensors={"prompts": prompt, "responses": resp, "attention_mask": mask},
            non_tensors={key: [row[key]] for key in ("data_source", "reward_model", "extra_info")},
        )

    async def score_all():
        items = [
            data_item(row, response)
            for row, pair in zip(picked, answers(built_bank, ids), strict=True)
            for response in pair
        ]
        return await asyncio.gather(*(manager.run_single(item) for item in items))

    # The manager keeps the event loop it was built in, as verl's reward worker runs it.
    results = manager.loop.run_until_complete(score_all())
    scores = [r["reward_score"] for r in results]
    assert scores == [1.0, 0.0] * len(picked), [r["reward_extra_info"] for r in results]
    assert {row["data_source"].split("/")[1] for row in picked} > {"codegen"}


@pytest.mark.slow
@pytest.mark.parametrize("split", ["random", "difficulty"])
def test_verls_validate_config_accepts_the_cards_command_as_printed(built_bank, tmp_path, split):
    pytest.importorskip("verl", reason=_VERL)
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    out = tmp_path / "verl"
    report = export_bank(built_bank, "verl", out, ExportOptions(split=split))
    overrides = shell_words(card_block(out, "bash", "verl (GRPO)"), out)
    # As printed (one GPU), and on a node of eight with the one flag the card says to set.
    for extra in ([], ["trainer.n_gpus_per_node=8"]):
        cfg = verl_config(overrides + extra)
        # What verl's main_ppo runs before it starts Ray; it raises on a bad config.
        validate_config(cfg, use_reference_policy=need_reference_policy(cfg),
                        use_critic=need_critic(cfg))  # fmt: skip
    rows = sum(n for s, n in report.rows.items() if s != "test")
    files = cfg.data.train_files
    assert [Path(f).name for f in ([files] if isinstance(files, str) else files)] == [
        f"{s}.parquet" for s in (["train"] if split == "random" else ["easy", "medium", "hard"])
    ]
    assert rows // cfg.data.train_batch_size >= 4  # steps an epoch
    assert cfg.algorithm.adv_estimator == "grpo" and cfg.actor_rollout_ref.rollout.n >= 4
    assert Path(cfg.reward.custom_reward_function.path).is_file()
    # It writes outside the export, and trains $MODEL where it is set.
    assert not Path(cfg.trainer.default_local_dir).resolve().is_relative_to(out.resolve())
    assert cfg.actor_rollout_ref.model.path == os.environ.get("MODEL", MODEL)


def _openrlhf_args(flags: list[str]) -> SimpleNamespace:
    """The arguments OpenRLHF's `train_ppo_ray` hands to its `train`, for these flags.

    The file's `__main__` block runs as written (its parser, hierarchize and every check);
    only `train` is replaced, by a function that keeps what it is given. The module itself
    is found, not imported: it imports vLLM at the top, which a CPU machine lacks.
    """
    import argparse
    import datetime
    import importlib.util

    spec = importlib.util.find_spec("openrlhf.cli.train_ppo_ray")
    source = Path(spec.origin).read_text(encoding="utf-8")
    body = textwrap.dedent(source.split('if __name__ == "__main__":', 1)[1])
    given: list = []
    namespace = {"argparse": argparse, "os": os, "datetime": datetime.datetime}
    namespace["train"] = given.append
    argv = sys.argv
    sys.argv = ["train_ppo_ray", *flags]
    try:
        exec(compile(body, spec.origin, "exec"), namespace)
    finally:
        sys.argv = argv
    return given[0]


@pytest.mark.slow
def test_openrlhf_scores_the_export_as_its_single_turn_executor_calls_the_file(
    built_bank, tmp_path, tokenizer
):
    pytest.importorskip("openrlhf", reason=_OPENRLHF)
    from openrlhf.datasets.prompts_dataset import preprocess_data
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    out = tmp_path / "openrlhf"
    export_bank(built_bank, "openrlhf", out, ExportOptions(split="none"))
    args = _openrlhf_args(shell_words(card_block(out, "bash", "OpenRLHF"), out))
    assert args.data.apply_chat_template is True
    # As printed, whole: the model, GRPO's advantage, and outputs outside the export.
    assert args.actor.model_name_or_path == os.environ.get("MODEL", MODEL)
    assert args.algo.advantage.estimator == "group_norm" and args.rollout.n_samples_per_prompt > 1
    for path in (args.ckpt.path, args.ckpt.output_dir):
        assert not Path(path).resolve().is_relative_to(out.resolve()), path
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    rows = rows[:: max(1, len(rows) // 12)][:12]
    # As OpenRLHF's vLLM engine builds it from the parsed arguments.
    executor = SingleTurnAgentExecutor(args.reward.remote_url)

    class Engine:
        """Replays a response as vLLM would return it: token ids ending in end of turn."""

        def __init__(self, text: str):
            ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            self.out = SimpleNamespace(token_ids=ids, finish_reason="stop", logprobs=None)

        async def generate(self, prompt_token_ids, params, multi_modal_data=None):
            return SimpleNamespace(outputs=[self.out])

    async def score(row, response: str) -> float:
        prompt, label = preprocess_data(
            row,
            args.data.input_template,
            args.data.input_key,
            args.data.label_key,
            tokenizer.apply_chat_template,
        )
        params = SimpleNamespace(max_tokens=512, logprobs=None)
        result = await executor.execute(prompt, label, params, 4096, tokenizer, Engine(response))
        return float(result["reward"][0])

    ids = [row["task_id"] for row in rows]
    pairs = answers(built_bank, ids)
    scores = [
        asyncio.run(score(row, response))
        for row, pair in zip(rows, pairs, strict=True)
        for response in pair
    ]
    assert scores == [1.0, 0.0] * len(rows)


@pytest.mark.slow
def test_trl_grpo_trains_on_the_export_with_the_cards_snippet(built_bank, tmp_path, monkeypatch):
    pytest.importorskip("trl", reason="needs the train extra: pip install 'selfplay[train]'")
    from selfplay.backends.models import local_model_dir

    out = tmp_path / "trl"
    export_bank(built_bank, "trl", out, ExportOptions(split="none", kinds=["deduction"]))
    snippet = card_block(out, "python", "TRL (GRPO)")
    # The card's snippet as printed, in the export directory, with the tiny bundled model
    # named by MODEL as the card says.
    monkeypatch.chdir(out)
    monkeypatch.setenv("MODEL", local_model_dir("smollm2-135m"))
    assert "trl_reward" in snippet and "trainer.train()" in snippet
    namespace: dict = {}
    exec(snippet, namespace)
    trainer = namespace["trainer"]
    assert trainer.state.global_step == 1
    logged = {k for entry in trainer.state.log_history for k in entry}
    assert {"rewards/trl_reward/mean", "selfplay/hack_signal_rate"} <= logged, logged
    # One step of a tiny model answers nothing right; TRL's own reward step, given each row's
    # reference answer and a wrong one as the assistant's turn, must tell them apart.
    rows = [trainer.train_dataset[i] for i in range(0, len(trainer.train_dataset), 4)][:6]
    pairs = answers(built_bank, [row["task_id"] for row in rows])
    inputs = [row for row in rows for _ in range(2)]
    completions = [[{"role": "assistant", "content": text}] for pair in pairs for text in pair]
    rewards = trainer._calculate_rewards(
        inputs, [row["prompt"] for row in inputs], completions, [[0]] * len(completions)
    )
    assert rewards[:, 0].tolist() == [1.0, 0.0] * len(rows)
