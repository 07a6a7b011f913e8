"""The scripted backend: canned completions replayed deterministically, behaving like a model."""

import json

import pytest

from selfplay.backends import BackendError, ModelNotFound, Prompt, Sampling, make_backend
from selfplay.backends.scripted import ScriptedBackend


def test_replays_texts_in_order_and_wraps_around():
    backend = ScriptedBackend(script=["one", "two", "three"])
    [first, second] = backend.generate([Prompt.user("a"), Prompt.user("b")], n=2)
    assert [c.text for c in first] == ["one", "two"]
    assert [c.text for c in second] == ["three", "one"]


def test_a_callable_script_sees_the_prompt_and_the_sample_index():
    backend = ScriptedBackend(script=lambda p, i: f"{p.messages[-1]['content']}-{i}{p.prefill}")
    [[a, b]] = backend.generate([Prompt.user("q", prefill="!")], n=2)
    assert (a.text, b.text) == ("q-0!", "q-1!")


def test_stop_strings_cut_the_text_and_finish_with_stop():
    backend = ScriptedBackend(script=["def f():\n    return 1\n```\ntrailing prose"])
    [[c]] = backend.generate([Prompt.user("x")], sampling=Sampling(stop=("```",)))
    assert c.text == "def f():\n    return 1\n"
    assert c.finish_reason == "stop"


def test_max_new_tokens_truncates_and_finishes_with_length():
    backend = ScriptedBackend(script=["a b c d e f"])
    [[c]] = backend.generate([Prompt.user("x")], sampling=Sampling(max_new_tokens=3))
    assert (c.text, c.tokens, c.finish_reason) == ("a b c", 3, "length")


def test_records_what_it_was_asked_and_counts_tokens():
    backend = ScriptedBackend(script=["w1 w2", "w3"])
    sampling = Sampling(temperature=0.5, seed=7)
    prompts = [Prompt.user("p1"), Prompt.user("p2")]
    backend.generate(prompts, n=1, sampling=sampling)
    assert backend.seen == [(prompts[0], sampling), (prompts[1], sampling)]
    assert (backend.stats.calls, backend.stats.completions, backend.stats.tokens) == (1, 2, 3)


def test_generate_validates_its_arguments():
    backend = ScriptedBackend(script=["x"])
    assert backend.generate([], n=3) == []
    with pytest.raises(ValueError, match="n must be"):
        backend.generate([Prompt.user("x")], n=0)
    with pytest.raises(TypeError):
        backend.generate(["a bare string"], n=1)


def test_a_script_returning_a_non_string_is_a_backend_error():
    backend = ScriptedBackend(script=lambda p, i: None)
    with pytest.raises(BackendError, match="NoneType"):
        backend.generate([Prompt.user("x")])


def test_model_spec_is_a_json_array_file(tmp_path):
    path = tmp_path / "canned.json"
    path.write_text(json.dumps(["first", "second"]))
    backend = make_backend("scripted", str(path))
    assert [c.text for c in backend.generate([Prompt.user("x")], n=2)[0]] == ["first", "second"]


def test_model_spec_is_a_json_lines_file(tmp_path):
    path = tmp_path / "canned.jsonl"
    path.write_text('{"text": "alpha"}\n\n{"text": "beta"}\n')
    backend = make_backend("scripted", str(path))
    assert [c.text for c in backend.generate([Prompt.user("x")], n=2)[0]] == ["alpha", "beta"]


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"text": "ok"}\n{"txt": "typo"}\n', "line 2"),
        ('{"text": "ok"}\nnot json\n', "line 2"),
        ("[1, 2]", "array of strings"),
        ("[]", "no completions"),
    ],
)
def test_a_bad_script_file_names_the_problem(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(BackendError, match=message):
        make_backend("scripted", str(path))


def test_a_missing_script_file_is_model_not_found(tmp_path):
    with pytest.raises(ModelNotFound, match="file of completions"):
        make_backend("scripted", str(tmp_path / "absent.jsonl"))


def test_every_sample_follows_the_script_even_when_greedy():
    backend = ScriptedBackend(script=["first", "second"])
    [[a, b]] = backend.generate([Prompt.user("x")], n=2, sampling=Sampling(temperature=0))
    assert (a.text, b.text) == ("first", "second")
