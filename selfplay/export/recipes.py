"""The card's "How to train on it": a loading line and one recipe per trainer, sized to the export.

Every snippet is written for where the card is read. In the export directory it names the
files by relative paths (the Python snippets read them from the directory they run in, the
shell commands through `$PWD`); after `selfplay export --push-to-hub USER/REPO` it loads
`USER/REPO` from the Hub, and the shell commands first download the repository. The Python
snippets are complete programs: a one-step run that fits a CPU as printed (the model comes
from `$MODEL`, else the named Hub model), with the settings to change for a real run named
in a comment. `tests/selfplay/export/test_card_snippets.py` runs each one as printed.
"""

from __future__ import annotations

from typing import Any

MODEL = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
BANDS = ("easy", "medium", "hard")
GRPO_SAMPLES = 8  # responses per prompt: GRPO's advantage compares a prompt's responses
MAX_TRAIN_BATCH = 256
STEPS_PER_EPOCH = 4  # at least this many optimiser steps an epoch, where the rows allow


def train_splits(counts: dict[str, int]) -> list[str]:
    """The splits a trainer trains on: `train`, else every split (a difficulty export's bands
    in order of difficulty)."""
    if "train" in counts:
        return ["train"]
    return [s for s in BANDS if s in counts] + sorted(s for s in counts if s not in BANDS)


def train_batch_size(rows: int) -> int:
    """Prompts per step: the largest power of two that gives STEPS_PER_EPOCH steps an epoch
    (verl drops an incomplete last batch, so a batch larger than the data gives no step)."""
    size = 1
    while size * 2 <= min(MAX_TRAIN_BATCH, max(1, rows // STEPS_PER_EPOCH)):
        size *= 2
    return size


def _python_load(counts: dict[str, int], suffix: str, repo_id: str | None) -> str:
    splits = train_splits(counts)
    if repo_id:
        return f'load_dataset("{repo_id}", split="{"+".join(splits)}")'
    builder = "json" if suffix == ".jsonl" else "parquet"
    files = [f"{s}{suffix}" for s in splits]
    named = repr(files[0]) if len(files) == 1 else repr(files)
    return f'load_dataset("{builder}", data_files={{"train": {named}}})["train"]'.replace("'", '"')


def loading(counts: dict[str, int], suffix: str, repo_id: str | None) -> str:
    where = (
        f"The data is on the Hub as `{repo_id}`."
        if repo_id
        else "Run these in the export directory (the one holding this README.md)."
    )
    return (
        f"{where} Loading: `{_python_load(counts, suffix, repo_id)}` (from datasets). "
        "Each Python snippet below runs as printed: one short step on a CPU, with the model "
        f"named by the `MODEL` environment variable (any model selfplay takes: a directory, "
        f"a Hub id, or `bundled`, selfplay's own model, offline; else `{MODEL}` from the "
        "Hub); a model that cannot be had ends the snippet with one sentence naming it. "
        "The verl and OpenRLHF commands take `MODEL` as a directory or Hub id (for the "
        "bundled model: `export MODEL=$(selfplay models path bundled)`) and write their "
        f"checkpoints under `~/{RUNS}/`, outside the export; they need a GPU."
    )


# Where the trainers' commands write their checkpoints and models: under the home directory,
# never inside the export (a full checkpoint of even a small model is gigabytes).
RUNS = "selfplay-runs"


def _download(repo_id: str | None, fmt: str) -> str:
    if not repo_id:
        return ""
    local = f"selfplay-{fmt}"
    return f"hf download {repo_id} --repo-type dataset --local-dir {local}\ncd {local}\n"


def _files(splits: list[str], suffix: str) -> str:
    paths = [f"$PWD/{s}{suffix}" for s in splits]
    return f'"{paths[0]}"' if len(paths) == 1 else '"[' + ",".join(paths) + ']"'


def verl_command(counts: dict[str, int], repo_id: str | None) -> tuple[str, str]:
    """(the command, what it is sized to) for verl's GRPO on this export."""
    splits = train_splits(counts)
    rows = sum(counts[s] for s in splits)
    batch = train_batch_size(rows)
    val = ["test"] if "test" in counts else splits
    command = (
        "```bash\n" + _download(repo_id, "verl") + "python -m verl.trainer.main_ppo "
        "algorithm.adv_estimator=grpo \\\n"
        f"  data.train_files={_files(splits, '.parquet')} "
        f"data.val_files={_files(val, '.parquet')} \\\n"
        f"  data.train_batch_size={batch} data.max_prompt_length=1024 "
        "data.max_response_length=1024 \\\n"
        f"  actor_rollout_ref.model.path=${{MODEL:-{MODEL}}} \\\n"
        f"  actor_rollout_ref.rollout.n={GRPO_SAMPLES} \\\n"
        f"  actor_rollout_ref.actor.ppo_mini_batch_size={batch} \\\n"
        f"  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={min(4, batch)} \\\n"
        "  actor_rollout_ref.actor.use_kl_loss=True \\\n"
        "  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\\n"
        "  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \\\n"
        "  trainer.n_gpus_per_node=1 trainer.nnodes=1 \\\n"
        f"  trainer.default_local_dir=$HOME/{RUNS}/verl \\\n"
        "  reward.custom_reward_function.path=$(python -c "
        '"import selfplay.rewards.verl_reward as m; print(m.__file__)") \\\n'
        "  reward.custom_reward_function.name=compute_score_async\n```"
    )
    steps = rows // batch
    sized = (
        f"Sized to this export: {rows} training rows in batches of {batch} prompts "
        f"({steps} step{'s' if steps != 1 else ''} an epoch), {GRPO_SAMPLES} responses a "
        "prompt (GRPO compares the responses to one prompt, so it needs several), on one GPU. "
        "With more GPUs, set `trainer.n_gpus_per_node`: the batch times `rollout.n` must "
        f"divide by the GPU count. Checkpoints go to `~/{RUNS}/verl`."
        + (
            ""
            if "test" in counts
            else " The export has no test split, so it validates on the training files."
        )
    )
    return command, sized


def openrlhf_command(counts: dict[str, int], repo_id: str | None) -> str:
    splits = train_splits(counts)
    # OpenRLHF's blending_datasets reads a comma-separated list of files.
    data = '"' + ",".join(f"$PWD/{s}.jsonl" for s in splits) + '"'
    evaluation = ' --eval.dataset "$PWD/test.jsonl"' if "test" in counts else ""
    return (
        "```bash\n" + _download(repo_id, "openrlhf") + "python -m openrlhf.cli.train_ppo_ray "
        f"--data.prompt_dataset {data}{evaluation} \\\n"
        "  --data.input_key input --data.label_key label --data.apply_chat_template \\\n"
        f'  --actor.model_name_or_path "${{MODEL:-{MODEL}}}" \\\n'
        f"  --algo.advantage.estimator group_norm --rollout.n_samples_per_prompt {GRPO_SAMPLES} \\\n"
        "  --actor.num_gpus_per_node 1 --ref.num_gpus_per_node 1 \\\n"
        f'  --ckpt.path "$HOME/{RUNS}/openrlhf/ckpt" --ckpt.output_dir "$HOME/{RUNS}/openrlhf" \\\n'
        '  --reward.remote_url "$PWD/reward_func.py"\n```'
    )


_PY_HEAD = (
    "import tempfile\n\nimport torch\nfrom datasets import load_dataset\n\n"
    "from selfplay.backends.models import model_for_trainers\n"
)
# What turns the one-step check into a run; named in each snippet's comment.
_REAL_RUN = (
    "# A one-step check that fits a CPU and saves nothing (a temporary output_dir); for a real\n"
    "# run drop max_steps, raise the sizes and set output_dir and save_strategy. It trains every\n"
    "# weight: with AdamW in float32 that is 16 bytes a parameter (about 8 GB for a 0.5B model);\n"
    "# LoRA (peft_config=peft.LoraConfig(target_modules='all-linear')) needs a fraction of it.\n"
)
# Where a one-step check writes: outside the export, and nothing saved (a full checkpoint of
# even a small model is gigabytes).
_DEMO_OUT = 'output_dir=tempfile.mkdtemp(prefix="selfplay-{fmt}-"), save_strategy="no",'


def grpo_snippet(fmt: str, counts: dict[str, int], suffix: str, repo_id: str | None) -> str:
    columns = {
        "verl": '\ndata = data.map(lambda r: {"ground_truth": r["reward_model"]["ground_truth"]})',
        "trl": "",
        "openrlhf": '\ndata = data.map(lambda r: {"prompt": r["input"], "ground_truth": r["label"]})',
    }[fmt]
    return (
        "```python\n" + _PY_HEAD + "from trl import GRPOConfig, GRPOTrainer\n\n"
        "from selfplay.rewards import trl_reward\n\n"
        f'model = model_for_trainers("{MODEL}")  # $MODEL, else this Hub model\n'
        f"data = {_python_load(counts, suffix, repo_id)}{columns}\n"
        + _REAL_RUN
        + "args = GRPOConfig(\n"
        f"    {_DEMO_OUT.format(fmt='grpo')}\n"
        "    max_steps=1, per_device_train_batch_size=2, num_generations=2,\n"
        "    max_completion_length=32, logging_steps=1, bf16=torch.cuda.is_available(), report_to=[],\n)\n"
        "trainer = GRPOTrainer(model=model, reward_funcs=[trl_reward], args=args, "
        "train_dataset=data)\ntrainer.train()\n```"
    )


def preference_snippet(fmt: str, counts: dict[str, int], repo_id: str | None) -> str:
    name = "SFT" if fmt == "sft" else "DPO"
    why = (
        "# Rows are prompt/completion pairs: TRL computes the loss on the completion only.\n"
        if fmt == "sft"
        else ""
    )
    return (
        "```python\n" + _PY_HEAD + f"from trl import {name}Config, {name}Trainer\n\n"
        f'model = model_for_trainers("{MODEL}")  # $MODEL, else this Hub model\n'
        f"data = {_python_load(counts, '.parquet', repo_id)}\n"
        + why
        + _REAL_RUN
        + f"args = {name}Config(\n"
        f"    {_DEMO_OUT.format(fmt=fmt)}\n"
        "    max_steps=1, per_device_train_batch_size=2,\n"
        "    bf16=torch.cuda.is_available(), report_to=[],\n)\n"
        f"{name}Trainer(model=model, train_dataset=data, args=args).train()\n```"
    )


def how_to_train(fmt: str, counts: dict[str, int], suffix: str, repo_id: str | None) -> list[str]:
    """The recipes for `fmt`, each a short paragraph and a fenced block."""
    if fmt in ("sft", "dpo"):
        return [f"TRL ({fmt.upper()}):\n\n" + preference_snippet(fmt, counts, repo_id)]
    parts: list[Any] = []
    if fmt == "openrlhf":
        parts.append(
            "OpenRLHF (reward_func.py is next to the data; GRPO's group-normalised advantage, "
            f"checkpoints and the trained model under `~/{RUNS}/openrlhf`):\n\n"
            + openrlhf_command(counts, repo_id)
        )
    if fmt == "verl":
        command, sized = verl_command(counts, repo_id)
        parts.append("verl (GRPO):\n\n" + command + "\n\n" + sized)
    else:
        parts.append("verl: export the same bank with `selfplay export --format verl`.")
    parts.append("TRL (GRPO):\n\n" + grpo_snippet(fmt, counts, suffix, repo_id))
    return parts
