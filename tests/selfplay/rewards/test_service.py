"""The reward service on loopback: OpenRLHF's own client, the batch endpoint, tokens, bad
requests, many concurrent clients, and the Ray verifier behind it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import selfplay.rewards as rewards
from selfplay.kinds import reference_answer
from selfplay.rewards import GroundTruth
from selfplay.rewards.service import RewardServer

PROMPT = "<|im_start|>user\nSolve it.<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def cases(seed_tasks):
    """(response, label, expected score): a right and a wrong answer to tasks of every kind."""
    out = []
    for task in seed_tasks[::9]:
        label = GroundTruth.from_task(task).to_json()
        out.append((reference_answer(task), label, 1.0))
        out.append(("```python\nraise SystemExit(0)\n```", label, 0.0))
    return out


@pytest.fixture
def server(verifier):
    with RewardServer(verifier, port=0) as s:
        yield s


def post(url: str, body, headers: dict | None = None) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def openrlhf_request(cases) -> dict:
    return {
        "query": [PROMPT + r + "<|im_end|>" for r, _, _ in cases],
        "prompts": [PROMPT] * len(cases),
        "labels": [g for _, g, _ in cases],
    }


def test_openrlhfs_own_client_gets_the_reward_files_scores(server, cases):
    agent = pytest.importorskip("openrlhf.utils.agent")
    request = openrlhf_request(cases)
    executor = agent.SingleTurnAgentExecutor(server.url + "/get_reward")
    [answer] = asyncio.run(
        executor._fetch_rewards_via_http(request["query"], request["prompts"], request["labels"])
    )
    path = Path(rewards.__file__).parent / "openrlhf_reward.py"
    spec = importlib.util.spec_from_file_location("reward_func", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.reward_func(request["query"], request["prompts"], request["labels"])
    assert answer["rewards"] == expected["rewards"].tolist() == [s for _, _, s in cases]
    assert answer["scores"] == expected["scores"].tolist()
    assert answer["extra_logs"] == {k: v.tolist() for k, v in expected["extra_logs"].items()}


def test_batch_endpoint_scores_each_response(server, cases):
    status, answer = post(
        server.url + "/grade",
        {"responses": [r for r, _, _ in cases], "ground_truths": [g for _, g, _ in cases]},
    )
    assert status == 200
    assert [s["score"] for s in answer["scores"]] == [s for _, _, s in cases]
    assert answer["scores"][1]["reason"] != "passed" and answer["scores"][0]["reason"] == "passed"


@pytest.mark.parametrize(
    ("path", "body", "status", "words"),
    [
        ("/grade", b"{not json", 400, "not valid JSON"),
        ("/grade", [1, 2], 400, "JSON object"),
        ("/grade", {"responses": ["a"]}, 400, "'ground_truths'"),
        ("/grade", {"responses": ["a"], "ground_truths": "{}"}, 400, "list of ground-truth"),
        ("/grade", {"responses": [1], "ground_truths": ["{}"]}, 400, "'responses'"),
        ("/grade", {"responses": ["a", "b"], "ground_truths": ["{}"]}, 400, "2 responses, 1"),
        ("/get_reward", {"query": ["q"], "labels": ["{}"]}, 400, "'prompts'"),
        ("/get_reward", {"query": ["q"], "prompts": [], "labels": ["{}"]}, 400, "0 prompts"),
        ("/elsewhere", {}, 404, "POST /get_reward or /grade"),
    ],
)
def test_a_malformed_request_gets_a_status_and_one_sentence(server, path, body, status, words):
    code, answer = post(server.url + path, body)
    assert code == status and list(answer) == ["error"]
    message = answer["error"]
    assert words in message and message.endswith(".") and message.count(". ") == 0


def test_an_unreadable_label_scores_zero_not_an_error(server):
    body = {"responses": ["x", "y", "z"], "ground_truths": ["{}", None, 7]}
    status, answer = post(server.url + "/grade", body)
    assert status == 200 and [s["score"] for s in answer["scores"]] == [0.0] * 3
    assert [s["gradable"] for s in answer["scores"]] == [False] * 3


def test_a_token_is_required_when_set(verifier, cases):
    body = openrlhf_request(cases[:2])
    with RewardServer(verifier, port=0, token="s3cret") as server:
        url = server.url + "/get_reward"
        assert post(url, body)[0] == 401
        assert post(url, body, {"Authorization": "Bearer wrong"})[0] == 401
        code, answer = post(url + "?token=s3cret", body)
        assert code == 200 and answer["rewards"] == [1.0, 0.0]
        code, answer = post(url, body, {"Authorization": "Bearer s3cret"})
        assert code == 200 and answer["rewards"] == [1.0, 0.0]
    with pytest.raises(ValueError, match="empty"):
        RewardServer(verifier, port=0, token=" ")


@pytest.mark.slow
def test_load_concurrent_clients_lose_no_request(server, cases):
    """32 clients, 6 requests each of 1 to 3 responses: every request answered, correctly."""

    def client(c: int) -> list[bool]:
        ok = []
        for k in range(6):
            picked = [cases[(c * 6 + k + j) % len(cases)] for j in range(1 + (c + k) % 3)]
            code, answer = post(server.url + "/get_reward", openrlhf_request(picked))
            ok.append(code == 200 and answer["rewards"] == [s for _, _, s in picked])
        return ok

    with ThreadPoolExecutor(32) as pool:
        results = [ok for client_results in pool.map(client, range(32)) for ok in client_results]
    assert len(results) == 192 and all(results)
    assert server.batches < 192  # concurrent requests were graded together


@pytest.mark.slow
def test_served_from_ray_actors(ray_cluster, verifier, cases):
    from selfplay.verifier.cluster import RayVerifier

    body = {"responses": [r for r, _, _ in cases], "ground_truths": [g for _, g, _ in cases]}
    with RayVerifier(actors=2, workers=1, timeout_s=10.0) as ray_verifier:
        with RewardServer(ray_verifier, port=0) as server:
            code, remote = post(server.url + "/grade", body)
    with RewardServer(verifier, port=0) as server:
        local = post(server.url + "/grade", body)[1]
    assert code == 200 and remote == local
