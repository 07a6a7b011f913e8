"""The card's "How to train on it": the pieces each format's recipes (`Exporter.recipes`) are
built from, sized to the export.

Every snippet is written for where the card is read. In the export directory it names the
files by relative paths (the Python snippets read them from the directory they run in, the
shell commands through `$PWD`); after `selfplay export --push-to-hub USER/REPO` it loads
`USER/REPO` from the Hub, and the shell commands first download the repository. The Python
snippets are complete programs: a one-step run that fits a CPU as printed (the model comes
from `$MODEL`, else the named Hub model), with the settings to change for a real run named
in a comment. `tests/selfplay/export/test_card_snippets.py` runs each one as printed.
"""

from __future__ import annotations

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


def python_load(counts: dict[str, int], suffix: str, repo_id: str | None) -> str:
    """The `load_dataset(...)` expression of the training splits, for where the card is read."""
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
        f"{where} Loading: `{python_load(counts, suffix, repo_id)}` (from datasets). "
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


def download(repo_id: str | None, fmt: str) -> str:
    """The shell lines that fetch a pushed export and enter it (none for a local one)."""
    if not repo_id:
        return ""
    local = f"selfplay-{fmt}"
    return f"hf download {repo_id} --repo-type dataset --local-dir {local}\ncd {local}\n"


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


def grpo_recipe(counts: dict[str, int], suffix: str, repo_id: str | None, remap: str = "") -> str:
    """TRL's GRPO on an RL export; `remap`: a function of a row that gives the `prompt` and
    `ground_truth` columns `trl_reward` reads, where the format names them otherwise."""
    columns = f"\ndata = data.map({remap})" if remap else ""
    return (
        "TRL (GRPO):\n\n"
        "```python\n" + _PY_HEAD + "from trl import GRPOConfig, GRPOTrainer\n\n"
        "from selfplay.rewards import trl_reward\n\n"
        f'model = model_for_trainers("{MODEL}")  # $MODEL, else this Hub model\n'
        f"data = {python_load(counts, suffix, repo_id)}{columns}\n"
        + _REAL_RUN
        + "args = GRPOConfig(\n"
        f"    {_DEMO_OUT.format(fmt='grpo')}\n"
        "    max_steps=1, per_device_train_batch_size=2, num_generations=2,\n"
        "    max_completion_length=32, logging_steps=1, bf16=torch.cuda.is_available(), report_to=[],\n)\n"
        "trainer = GRPOTrainer(model=model, reward_funcs=[trl_reward], args=args, "
        "train_dataset=data)\ntrainer.train()\n```"
    )


# Where an RL export other than verl's points a verl user.
VERL_ELSEWHERE = "verl: export the same bank with `selfplay export --format verl`."


def trl_trainer_recipe(
    fmt: str, trainer: str, counts: dict[str, int], repo_id: str | None, why: str = ""
) -> str:
    """TRL's `<trainer>Trainer` (SFT, DPO) on the `fmt` export's parquet files, as they are;
    `why`: a comment line on what the rows are."""
    return (
        f"TRL ({trainer}):\n\n"
        "```python\n" + _PY_HEAD + f"from trl import {trainer}Config, {trainer}Trainer\n\n"
        f'model = model_for_trainers("{MODEL}")  # $MODEL, else this Hub model\n'
        f"data = {python_load(counts, '.parquet', repo_id)}\n"
        + why
        + _REAL_RUN
        + f"args = {trainer}Config(\n"
        f"    {_DEMO_OUT.format(fmt=fmt)}\n"
        "    max_steps=1, per_device_train_batch_size=2,\n"
        "    bf16=torch.cuda.is_available(), report_to=[],\n)\n"
        f"{trainer}Trainer(model=model, train_dataset=data, args=args).train()\n```"
    )
