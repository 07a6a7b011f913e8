"""`selfplay serve-rewards` as a user runs it: a subprocess on loopback, real HTTP requests."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import urllib.request

from selfplay_cli import cli_command

from selfplay.rewards import GroundTruth

LABEL = GroundTruth(kind="codegen", entry_point="f", tests=["assert f(2) == 4"]).to_json()


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        cli_command("serve-rewards", "--workers", "1", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_serves_openrlhf_requests_until_interrupted():
    server = start("--port", "0", "--token", "t0k")
    try:
        line = server.stdout.readline()
        assert line.startswith("serving rewards at http://127.0.0.1:"), line + server.stderr.read()
        url = line.split("--reward.remote_url ")[1].strip().rstrip(")")
        body = {
            "query": ["```python\ndef f(x):\n    return 2 * x\n```", "```python\nf = abs\n```"],
            "prompts": ["", ""],
            "labels": [LABEL, LABEL],
        }
        request = urllib.request.Request(
            url + "?token=t0k", data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert json.load(response)["rewards"] == [1.0, 0.0]
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
        server.wait()


def test_bad_options_get_one_sentence_and_exit_2():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = str(taken.getsockname()[1])
    cases = [
        (("--host", "0.0.0.0"), "needs a token"),
        (("--port", port), "cannot listen"),
        (("--token", " "), "token is empty"),
    ]
    try:
        for args, words in cases:
            server = start(*args)
            out, err = server.communicate(timeout=120)
            lines = [line for line in err.splitlines() if line.strip()]
            assert server.returncode == 2, err
            assert len(lines) == 1 and lines[0].startswith("selfplay serve-rewards: "), err
            assert words in lines[0] and not out
    finally:
        taken.close()
