"""Each trainer's calling convention, exercised as the trainer calls it."""

from __future__ import annotations

import importlib.util
import multiprocessing
import pickle
from pathlib import Path

import pytest

import selfplay.rewards as rewards
from selfplay.rewards import GroundTruth, TrlReward, compute_score, compute_score_batch, trl_reward

REWARDS_DIR = Path(rewards.__file__).parent


def fence(body: str) -> str:
    return f"```python\n{body.rstrip()}\n```"


@pytest.fixture(scope="module")
def codegen(by_kind):
    task = by_kind["codegen"]
    return task, GroundTruth.from_task(task).to_json()


def _load(path: Path, name: str):
    """Load a reward file the way verl and OpenRLHF do: by path, not by package."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_verl_compute_score_called_by_keyword(codegen):
    task, label = codegen
    fn = _load(REWARDS_DIR / "verl_reward.py", "custom_module").compute_score
    good = fn(
        data_source="selfplay/codegen",
        solution_str=fence(task.program),
        ground_truth=label,
        extra_info={"index": 0},
    )
    bad = fn(
        data_source="selfplay/codegen",
        solution_str=fence("def x(): pass"),
        ground_truth=label,
        extra_info=None,
    )
    empty = compute_score("selfplay/codegen", "no code here", label)
    assert good["score"] == 1.0 and good["acc"] and good["tests_passed"] == len(task.tests)
    assert bad["score"] == 0.0 and bad["reason"] == "failed"
    assert (empty["score"], empty["reason"], empty["answered"]) == (0.0, "no_answer", 0.0)


def test_verl_batch_compute_score(by_kind):
    tasks = [by_kind[k] for k in ("codegen", "deduction")]
    labels = [GroundTruth.from_task(t).to_json() for t in tasks]
    out = compute_score_batch(
        data_sources=["selfplay/codegen", "selfplay/deduction"] * 2,
        solution_strs=[
            fence(tasks[0].program),
            fence(tasks[1].examples[0]["output"]),
            fence("def nope(): pass"),
            fence("'surely wrong'"),
        ],
        ground_truths=labels * 2,
        extra_infos=[{}] * 4,
    )
    assert [r["score"] for r in out] == [1.0, 1.0, 0.0, 0.0]


def test_trl_reward_with_standard_and_conversational_completions(by_kind):
    tasks = [by_kind[k] for k in ("codegen", "induction", "abduction")]
    labels = [GroundTruth.from_task(t).to_json() for t in tasks]
    good = [fence(tasks[0].program), fence(tasks[1].program), fence(tasks[2].examples[0]["input"])]
    bad = [fence("def nope(): pass"), "I give up", fence("'?' * 3")]
    prompts = ["p"] * 6
    standard = trl_reward(prompts, good + bad, ground_truth=labels * 2, task_id=["x"] * 6)
    conversational = trl_reward(
        [[{"role": "user", "content": "p"}]] * 6,
        [[{"role": "assistant", "content": c}] for c in good + bad],
        ground_truth=labels * 2,
        trainer_state=None,
    )
    assert standard == conversational == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]


def test_trl_reward_names_the_missing_column():
    with pytest.raises(ValueError, match="ground_truth"):
        trl_reward(["p"], ["c"], answer=["x"])


def test_reward_functions_pickle_and_work_after_unpickling(codegen):
    task, label = codegen
    fn = pickle.loads(pickle.dumps(trl_reward))
    assert fn is trl_reward
    reward = TrlReward(workers=1, timeout_s=5.0)
    reward([], [], ground_truth=[])  # no rows: no pool is needed
    copy = pickle.loads(pickle.dumps(reward))
    assert (copy.workers, copy.timeout_s, copy.__name__) == (1, 5.0, "selfplay_reward")
    assert copy(["p"], [fence(task.program)], ground_truth=[label]) == [1.0]


def _score_in_child(args):
    completion, label = args
    return trl_reward(["p"], [completion], ground_truth=[label])[0]


@pytest.mark.slow
def test_a_forked_worker_starts_its_own_pool(codegen):
    task, label = codegen
    assert trl_reward(["p"], [fence(task.program)], ground_truth=[label]) == [1.0]  # parent pool
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map(_score_in_child, [(fence(task.program), label), ("none", label)])
    assert got == [1.0, 0.0]
    assert trl_reward(["p"], [fence(task.program)], ground_truth=[label]) == [1.0]  # still fine


def test_openrlhf_reward_file_strips_the_prompt_from_queries(codegen):
    task, label = codegen
    module = _load(REWARDS_DIR / "openrlhf_reward.py", "reward_func_module")
    prompt = "<|user|>solve it<|assistant|>"
    out = module.reward_func(
        queries=[prompt + fence(task.program), prompt + "no idea"],
        prompts=[prompt, prompt],
        labels=[label, label],
    )
    assert out["rewards"].tolist() == [1.0, 0.0]
    assert out["scores"].tolist() == [1.0, 0.0]
    assert out["extra_logs"]["answered"].tolist() == [1.0, 0.0]


# The end of a turn in the major chat templates: ChatML (Qwen), GPT-2 style, Llama 3,
# DeepSeek (fullwidth bars), Gemma, Llama 2 and Mistral, Phi-3, and a pad after an end.
END_TOKENS = [
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "<end_of_turn>",
    "<eos>",
    "</s>",
    "<|end|>",
    "<|im_end|><|endoftext|><pad><pad>",
]


@pytest.mark.parametrize("end", END_TOKENS)
def test_openrlhf_scores_a_right_answer_followed_by_any_chat_templates_end_token(codegen, end):
    pytest.importorskip("openrlhf", reason="pip install --no-deps openrlhf==0.11.2")
    import asyncio

    from openrlhf.utils.agent import SingleTurnAgentExecutor

    task, label = codegen
    # OpenRLHF loads the file from --reward.remote_url and calls it as its executor does: one
    # query (prompt and response decoded with special tokens), its prompt and its label.
    executor = SingleTurnAgentExecutor(str(REWARDS_DIR / "openrlhf_reward.py"))
    prompt = "<|im_start|>user\nsolve it<|im_end|>\n<|im_start|>assistant\n"
    [right] = asyncio.run(
        executor._fetch_rewards_via_func([prompt + fence(task.program) + end], [prompt], [label])
    )
    [wrong] = asyncio.run(
        executor._fetch_rewards_via_func([prompt + fence("x = 0") + end], [prompt], [label])
    )
    assert right["rewards"].tolist() == [1.0] and wrong["rewards"].tolist() == [0.0]


def test_openrlhf_reward_strips_the_special_tokens_of_a_tokenizer_it_is_given(codegen):
    from types import SimpleNamespace

    from selfplay.rewards import openrlhf_reward

    task, label = codegen
    tokenizer = SimpleNamespace(all_special_tokens=["[DONE]"])  # a token no template uses
    query = "q" + fence(task.program) + "[DONE]"
    assert openrlhf_reward([query], ["q"], [label])["rewards"].tolist() == [0.0]
    assert openrlhf_reward([query], ["q"], [label], tokenizer=tokenizer)["rewards"].tolist() == [
        1.0
    ]


def test_trl_reward_logs_reasons_and_hack_signals_through_trls_callbacks(codegen):
    task, label = codegen
    hack = fence(task.program + "\nimport gc\ngc.get_objects()\n")
    extra, metrics = {}, {}
    scores = trl_reward(
        ["p", "p"],
        [fence(task.program), hack],
        ground_truth=[label, label],
        log_extra=lambda column, values: extra.setdefault(column, []).extend(values),
        log_metric=lambda name, value: metrics.setdefault(name, []).append(value),
    )
    assert scores == [1.0, 1.0]  # a signal never changes a reward
    assert extra == {"selfplay_reason": ["passed", "passed"], "selfplay_signals": ["", "gc_scan"]}
    assert metrics == {"selfplay/hack_signal_rate": [0.5]}


def test_verl_results_carry_hack_signals_as_extra_keys(codegen):
    task, label = codegen
    hack = fence(f"import os\ndef {task.entry_point}(*a):\n    os._exit(0)\n")
    (result,) = compute_score_batch(["selfplay/codegen"], [hack], [label], None)
    assert result["score"] == 0.0 and result["hack_signal"] == 1.0
    assert "early_exit" in result["signals"].split(",")
