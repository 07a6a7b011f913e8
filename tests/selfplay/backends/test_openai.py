"""The OpenAI backend against a real HTTP server on loopback (selfplay.backends.serve)."""

import json
import urllib.error
import urllib.request

import pytest
from selfplay_cli import run_cli

from selfplay.backends import BackendError, Prompt, Sampling, make_backend
from selfplay.backends.scripted import ScriptedBackend
from selfplay.backends.serve import ChatServer


def _echo(prompt, index):
    """Shows what reached the model: the last message, the prefill and the sample index."""
    return f"{prompt.messages[-1]['content']}|{prompt.prefill}|{index} END tail"


@pytest.fixture
def server():
    with ChatServer(ScriptedBackend(script=_echo), port=0, model_name="scripted") as running:
        yield running


def _client(server, **options):
    return make_backend("openai", "scripted", base_url=server.url, **options)


def test_n_completions_per_prompt_come_back_in_order(server):
    prompts = [Prompt.user(f"question {i}") for i in range(5)]
    results = _client(server).generate(prompts, n=2, sampling=Sampling(max_new_tokens=50))
    assert [[c.text for c in r] for r in results] == [
        [f"question {i}||0 END tail", f"question {i}||1 END tail"] for i in range(5)
    ]


def test_sampling_parameters_reach_the_server(server):
    sampling = Sampling(temperature=0.3, top_p=0.9, max_new_tokens=7, stop=("END",), seed=5)
    [[c]] = _client(server).generate([Prompt.user("q")], sampling=sampling)
    assert (c.text, c.finish_reason) == ("q||0 ", "stop")
    [(_, seen)] = server.backend.seen
    assert seen == sampling


def test_a_prefill_travels_as_a_continued_assistant_message(server):
    [[c]] = _client(server).generate([Prompt.user("q", prefill="def f(")])
    assert c.text.startswith("q|def f(|0")
    [(prompt, _)] = server.backend.seen
    assert prompt.messages == [{"role": "user", "content": "q"}] and prompt.prefill == "def f("


def test_token_counts_and_length_finishes_survive_the_round_trip(server):
    backend = _client(server)
    [[a, b]] = backend.generate([Prompt.user("one two")], n=2, sampling=Sampling(max_new_tokens=2))
    assert (a.text, a.finish_reason, b.finish_reason) == ("one two||0", "length", "length")
    assert a.tokens + b.tokens == 4 == backend.stats.tokens


def test_a_wrong_model_name_is_a_one_sentence_error(server):
    backend = make_backend("openai", "gpt-9", base_url=server.url)
    with pytest.raises(BackendError, match="HTTP 404.*'gpt-9' does not exist"):
        backend.generate([Prompt.user("q")])


def test_an_unreachable_server_says_so(server):
    url = server.url
    server.close()
    backend = make_backend("openai", "scripted", base_url=url, retries=0)
    with pytest.raises(BackendError, match="cannot reach the OpenAI-compatible server"):
        backend.generate([Prompt.user("q")])


def _post(server, body):
    request = urllib.request.Request(
        server.url + "/chat/completions", json.dumps(body).encode(), method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize(
    "body, field",
    [
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "user", "content": "q"}], "n": 0}, "n"),
        ({"messages": [{"role": "user", "content": "q"}], "temperature": -1}, "temperature"),
        ({"messages": [{"role": "user", "content": "q"}], "stream": True}, "stream"),
        ({"messages": [{"role": "user", "content": "q"}], "top_p": "high"}, "top_p"),
        ({"messages": [{"role": "user", "content": "q"}], "max_tokens": 0}, "max_new_tokens"),
        ({"messages": [{"role": "user", "content": "q"}], "stop": 3}, "stop"),
        ({"messages": ["q"]}, "messages"),
    ],
)
def test_the_server_answers_a_bad_request_with_400_naming_the_field(server, body, field):
    status, reply = _post(server, body)
    assert status == 400 and field in reply["error"]["message"]


def test_the_server_lists_its_model(server):
    with urllib.request.urlopen(server.url + "/models", timeout=10) as response:
        assert [m["id"] for m in json.loads(response.read())["data"]] == ["scripted"]


def test_serve_command_with_a_missing_model_exits_2_with_one_line(tmp_path):
    result = run_cli("serve", "--model", str(tmp_path / "x.gguf"), timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "does not exist" in result.stderr


@pytest.mark.slow
def test_a_real_model_served_over_http_answers_like_the_model_in_process():
    """SmolLM2 behind the server: greedy answers over HTTP equal the in-process ones.

    One request at a time, so that both sides decode each prompt in a batch of one
    (left padding in a shared batch may change the last bits of a bf16 forward pass).
    """
    prompts = [Prompt.user("Say hello."), Prompt.user("Count to three.", prefill="1,")]
    sampling = Sampling(temperature=0, max_new_tokens=8, stop=("\n\n",))
    local = make_backend("transformers", "smollm2-135m")
    with ChatServer(local, port=0, model_name="smol") as running:
        direct = [local.generate([p], sampling=sampling)[0] for p in prompts]
        client = make_backend("openai", "smol", base_url=running.url, concurrency=1)
        remote = client.generate(prompts, sampling=sampling)
    assert [[c.text for c in r] for r in remote] == [[c.text for c in r] for r in direct]
    assert [[c.tokens for c in r] for r in remote] == [[c.tokens for c in r] for r in direct]
    assert all(c.text for r in remote for c in r)


def test_several_servers_share_the_prompts_and_a_dead_one_is_passed_over():
    seen: dict[str, list[str]] = {"a": [], "b": []}

    def recorder(name):
        def answer(prompt, index):
            seen[name].append(prompt.messages[-1]["content"])
            return f"{name}:{prompt.messages[-1]['content']}"

        return answer

    with (
        ChatServer(ScriptedBackend(script=recorder("a")), port=0, model_name="m") as a,
        ChatServer(ScriptedBackend(script=recorder("b")), port=0, model_name="m") as b,
    ):
        backend = make_backend("openai", "m", base_url=f"{a.url},{b.url}", retries=0)
        prompts = [Prompt.user(f"q{i}") for i in range(6)]
        texts = [r[0].text for r in backend.generate(prompts)]
        # In order, and spread over both servers in turn.
        assert [t.split(":")[1] for t in texts] == [f"q{i}" for i in range(6)]
        assert sorted(seen["a"]) == ["q0", "q2", "q4"] and sorted(seen["b"]) == ["q1", "q3", "q5"]
        b.close()
        texts = [r[0].text for r in backend.generate(prompts)]
    assert texts == [f"a:q{i}" for i in range(6)]  # every prompt answered by the live one
    assert backend.failovers >= 1
