"""The shared records: prompts, sampling parameters, stop-string truncation, prompt rendering."""

import pytest

from selfplay.backends import Backend, Completion, Prompt, Sampling
from selfplay.backends.base import render_chat, truncate_at_stop


def test_prompt_user_builds_system_and_user_messages():
    prompt = Prompt.user("solve it", system="be brief", prefill="```python\n")
    assert prompt.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "solve it"},
    ]
    assert prompt.prefill == "```python\n"


@pytest.mark.parametrize(
    "messages",
    [[], [{"role": "robot", "content": "x"}], [{"role": "user", "content": ["parts"]}]],
)
def test_prompt_rejects_malformed_messages(messages):
    with pytest.raises(ValueError):
        Prompt(messages=messages)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"temperature": -0.1}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"stop": "```"}, "stop"),
        ({"stop": ("",)}, "stop"),
    ],
)
def test_sampling_rejects_bad_values_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Sampling(**kwargs)


def test_sampling_is_hashable_and_greedy_at_zero_temperature():
    a = Sampling(temperature=0, stop=["```"])
    assert a.greedy and a.stop == ("```",)
    assert hash(a) == hash(Sampling(temperature=0, stop=("```",)))
    assert not Sampling(temperature=0.7).greedy


def test_truncate_at_stop_cuts_at_the_earliest_stop_string():
    assert truncate_at_stop("a\n```\nb END c", ("END", "```")) == ("a\n", True)
    assert truncate_at_stop("no stop here", ("END",)) == ("no stop here", False)
    assert truncate_at_stop("anything", ()) == ("anything", False)


class _Templated:
    chat_template = "x"

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        assert tokenize is False and add_generation_prompt is True
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"


class _Plain:
    chat_template = None


def test_render_chat_opens_the_assistant_turn_and_appends_the_prefill():
    prompt = Prompt.user("hi", prefill="def f(")
    assert render_chat(_Templated(), prompt) == "<user>hi<assistant>def f("


def test_render_chat_without_a_template_joins_the_contents():
    prompt = Prompt.user("hi", system="sys", prefill="x =")
    assert render_chat(_Plain(), prompt) == "sys\n\nhi\n\nx ="


def test_completion_is_a_plain_record():
    c = Completion("text", 3, "stop")
    assert (c.text, c.tokens, c.finish_reason) == ("text", 3, "stop")


class _Counting(Backend):
    """A minimal model: answer k to the k-th sample it is asked for."""

    name = "counting"

    def __init__(self):
        super().__init__("counting")
        self.asked = 0

    def _generate(self, prompts, n, sampling):
        out = []
        for _ in prompts:
            out.append([Completion(f"answer {self.asked + i}", 2, "stop") for i in range(n)])
            self.asked += n
        return out


def test_greedy_answers_are_computed_once_and_repeated_n_times():
    backend = _Counting()
    [[a, b, c]] = backend.generate([Prompt.user("x")], n=3, sampling=Sampling(temperature=0))
    assert a.text == b.text == c.text == "answer 0" and a is not b
    assert backend.asked == 1
    assert (backend.stats.completions, backend.stats.tokens) == (3, 2)  # tokens generated once


def test_sampled_answers_are_n_separate_generations():
    backend = _Counting()
    [[a, b]] = backend.generate([Prompt.user("x")], n=2, sampling=Sampling(temperature=0.7))
    assert (a.text, b.text) == ("answer 0", "answer 1")
    assert backend.stats.tokens == 4
