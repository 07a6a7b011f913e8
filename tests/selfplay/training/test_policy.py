"""`Policy`, the on-policy learner behind the proposer's RL, on SmolLM2-135M: what it scores
is what the model gives the sampled tokens, a step moves the model the way the advantages
say, and the weights it hands an engine are the model's own."""

from __future__ import annotations

import pytest

for _module in ("torch", "peft"):
    pytest.importorskip(_module, reason="needs the train extra: pip install 'selfplay[train]'")

import torch  # noqa: E402
from peft import LoraConfig  # noqa: E402

from selfplay.backends.base import Completion, Prompt  # noqa: E402
from selfplay.training.policy import Policy, Sample  # noqa: E402

LORA = LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM")


def make_policy(model: str, lr: float = 1e-3) -> Policy:
    return Policy(model, peft_config=LORA, learning_rate=lr, seed=0, micro_batch=3)


def plain_logprobs(policy: Policy, s: Sample) -> torch.Tensor:
    """The completion's token log-probabilities from one full forward pass."""
    causal = policy.model.get_base_model()
    ids = torch.tensor([s.prompt_ids + s.completion_ids])
    with torch.no_grad():
        logits = causal(input_ids=ids).logits[0, len(s.prompt_ids) - 1 : -1].float()
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(s.completion_ids)[:, None])[:, 0]


def group(policy: Policy, advantages: list[float]) -> list[Sample]:
    prompt = Prompt.user("Write a function f that doubles a number.", prefill="```python\ndef f(")
    texts = ["x):\n    return 2 * x\n```", "n):\n    return n + n\n```", "a):\n    return a\n```"]
    return [policy.sample(prompt, Completion(t, 0, "stop"), a)
            for t, a in zip(texts * 3, advantages, strict=False)]  # fmt: skip


@pytest.fixture(scope="module")
def policy(tiny_model):
    return make_policy(tiny_model)


def test_a_shared_prompt_scores_as_each_sequence_read_whole(policy):
    # Seven completions of one prompt: more than a micro-batch, so the prompt is shared in
    # parts, and of different lengths, so the padding is exercised.
    samples = group(policy, [1.0] * 7)
    other = policy.sample(Prompt.user("Say hi."), Completion("hi there", 0, "stop"), 1.0)
    samples.insert(2, other)
    with torch.no_grad():
        shared = policy._logprobs(policy.model, samples)
    for s, lp in zip(samples, shared, strict=True):
        assert lp.shape == (len(s.completion_ids),)
        assert torch.allclose(lp, plain_logprobs(policy, s), atol=1e-4)


def test_a_completion_without_token_ids_is_tokenised_from_its_text(policy):
    prompt = Prompt.user("hi")
    given = policy.sample(prompt, Completion("abc", 1, "stop", token_ids=[5, 6]), 0.5)
    assert given.completion_ids == [5, 6] and given.advantage == 0.5
    made = policy.sample(prompt, Completion("abc", 1, "stop"), 0.5)
    assert made.completion_ids == policy.tokenizer.encode("abc", add_special_tokens=False)
    assert made.prompt_ids == given.prompt_ids


def test_a_step_raises_what_was_rewarded_and_lowers_what_was_not(tiny_model):
    policy = make_policy(tiny_model, lr=1e-4)
    samples = group(policy, [1.0, 0.0, -1.0])
    before = [plain_logprobs(policy, s).sum() for s in samples]
    record = policy.update(samples)
    assert record["kl"] == 0.0  # measured before the step: the policy was still the start
    after = [plain_logprobs(policy, s).sum() for s in samples]
    assert after[0] > before[0] and after[2] < before[2]
    assert record["sequences"] == 2 and record["tokens"] > 0 and record["grad_norm"] > 0
    assert policy.update(samples)["kl"] > 0  # measured on the batch, against the start


def test_nothing_to_learn_takes_no_step(tiny_model):
    policy = make_policy(tiny_model)
    start = [w.clone() for w in policy.params]
    record = policy.update(group(policy, [0.0, 0.0, 0.0]))
    assert record["sequences"] == 0 and policy.steps == 0
    assert all(torch.equal(a, b) for a, b in zip(start, policy.params, strict=True))


def test_weights_are_the_checkpoints_names_merged_or_not(tiny_model):
    from transformers import AutoModelForCausalLM

    policy = make_policy(tiny_model, lr=1e-2)
    hf = dict(
        AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32).named_parameters()
    )
    start = dict(policy.weights())
    assert set(start) == set(hf)
    assert all(torch.equal(start[n], hf[n]) for n in hf)
    policy.update(group(policy, [1.0, -1.0, 0.0]))
    merged, base = dict(policy.weights()), dict(policy.weights(adapter=False))
    name = next(n for n in hf if "q_proj" in n)
    assert not torch.allclose(merged[name], hf[name])  # the adapter is folded in
    assert torch.allclose(base[name], hf[name], atol=1e-6)  # and taken out again after
    # The merged weights are the model the policy scores with.
    model = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32)
    model.load_state_dict(merged, strict=False)
    s = group(policy, [1.0])[0]
    ids = torch.tensor([s.prompt_ids + s.completion_ids])
    with torch.no_grad():
        theirs = model(input_ids=ids).logits[0, -1]
        ours = policy.model(input_ids=ids).logits[0, -1]
    assert torch.allclose(theirs, ours, atol=1e-3)


def test_a_checkpoint_continues_the_same_policy(tiny_model, tmp_path):
    policy = make_policy(tiny_model, lr=1e-2)
    policy.update(group(policy, [1.0, -1.0, 0.0]))
    policy.save_checkpoint(tmp_path / "checkpoint-1", {"step": 1})
    again = make_policy(tiny_model, lr=1e-2)
    state = again.load_checkpoint(tmp_path / "checkpoint-1")
    assert state["step"] == 1 and again.steps == 1
    assert all(torch.equal(a, b) for a, b in zip(policy.params, again.params, strict=True))
    # The optimizer's moments came back too: the next step is the same step.
    samples = group(policy, [1.0, -1.0, 0.0])
    policy.update(samples)
    again.update(samples)
    assert all(
        torch.allclose(a, b, atol=1e-6) for a, b in zip(policy.params, again.params, strict=True)
    )
