"""`selfplay serve` as a user runs it: a subprocess on loopback, a real OpenAI client."""

from __future__ import annotations

import json
import signal
import socket
import subprocess

from selfplay_cli import cli_command

from selfplay.backends import Prompt, Sampling, make_backend


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        cli_command("serve", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_serves_a_backend_to_an_openai_client_until_interrupted(tmp_path):
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["first answer", "second answer"]))
    server = start("--backend", "scripted", "--model", str(script), "--port", "0", "--name", "m")
    try:
        line = server.stdout.readline()
        assert line.startswith("serving m at http://127.0.0.1:"), line + server.stderr.read()
        client = make_backend("openai", "m", base_url=line.split(" at ")[1].strip())
        [answers] = client.generate([Prompt.user("q")], n=2, sampling=Sampling(max_new_tokens=8))
        assert [c.text for c in answers] == ["first answer", "second answer"]
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
        server.wait()


def test_bad_input_gets_one_sentence_and_exit_2(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = str(taken.getsockname()[1])
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["x"]))
    cases = [
        (("--backend", "llama"), "unknown backend 'llama'"),
        (("--backend", "scripted", "--model", str(tmp_path / "absent.json")), "absent.json"),
        (("--backend", "scripted", "--model", str(script), "--port", port), "cannot listen"),
    ]
    try:
        for args, words in cases:
            server = start(*args)
            out, err = server.communicate(timeout=60)
            lines = [line for line in err.splitlines() if line.strip()]
            assert server.returncode == 2, err
            assert len(lines) == 1 and lines[0].startswith("selfplay serve: "), err
            assert words in lines[0] and not out
    finally:
        taken.close()
