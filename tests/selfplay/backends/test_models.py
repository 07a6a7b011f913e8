"""Model specs: aliases, GGUF files, directories and Hub ids, and what a missing model says."""

import hashlib
import http.server
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from selfplay.backends import ModelNotFound, models, resolve_model
from selfplay.backends.models import PACKAGED, PackagedModel, local_model_dir


def test_bundled_aliases_resolve_to_the_packaged_qwen():
    for spec in ("bundled", "Qwen2.5-Coder-0.5B", None):
        source = resolve_model(spec)
        assert (source.kind, source.location) == ("packaged", "qwen2.5-coder-0.5b")


def test_a_gguf_file_and_a_model_directory_resolve_to_their_paths(tmp_path):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    assert resolve_model(str(gguf)).kind == "gguf"
    source = resolve_model(str(tmp_path / "model"))
    assert (source.kind, source.location) == ("directory", str(tmp_path / "model"))


def test_a_directory_without_config_is_not_a_model(tmp_path):
    with pytest.raises(ModelNotFound, match="no config.json"):
        resolve_model(str(tmp_path))


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"x")
    with pytest.raises(ModelNotFound, match="not a .gguf file"):
        resolve_model(str(path))


@pytest.mark.parametrize("spec", ["./missing-dir", "/nowhere/model.gguf", "model.gguf"])
def test_a_missing_path_says_how_to_get_a_model(spec):
    with pytest.raises(ModelNotFound, match=r"does not exist.*pip install 'selfplay\[bundled\]'"):
        resolve_model(spec)


def test_an_uncached_hub_id_fails_at_once_when_the_hub_is_off(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelNotFound, match="hf download someone/some-model"):
        resolve_model("someone/some-model")


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """A Hub on loopback that knows one model, set as HF_ENDPOINT; yields the paths asked."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            known = self.path == "/api/models/Qwen/Qwen2.5-Coder-1.5B-Instruct"
            self.send_response(200 if known else 404)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(flag, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    yield asked
    server.shutdown()


def test_a_hub_id_the_hub_knows_is_left_to_the_hub(hub):
    source = resolve_model("Qwen/Qwen2.5-Coder-1.5B-Instruct")
    assert (source.kind, source.location) == ("hub", "Qwen/Qwen2.5-Coder-1.5B-Instruct")
    assert hub == ["/api/models/Qwen/Qwen2.5-Coder-1.5B-Instruct"]


def test_a_hub_id_the_hub_does_not_know_is_one_sentence(hub):
    with pytest.raises(ModelNotFound, match="has no model 'Qwen/Qwen2.5-Coder-1.5B-Instrcut'"):
        resolve_model("Qwen/Qwen2.5-Coder-1.5B-Instrcut")


def test_a_misspelt_alias_names_the_alias_without_asking_the_network(hub):
    started = time.monotonic()
    with pytest.raises(ModelNotFound, match="did you mean 'bundled'"):
        resolve_model("bundeld")
    assert hub == []  # a bare name is no Hub id: nothing was asked
    assert time.monotonic() - started < 5


def test_a_hub_id_with_no_hub_reachable_fails_in_seconds(monkeypatch, tmp_path):
    with socket.socket() as closed:  # a port nobody listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    for flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(flag, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    with pytest.raises(ModelNotFound, match="cannot be reached.*hf download someone/some-model"):
        resolve_model("someone/some-model")
    assert time.monotonic() - started < 5


def _fake_package(root, name, files):
    package = root / name
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('parts are found, never imported')\n")
    for relative, data in files.items():
        (package / relative).write_bytes(data)


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Two installed part packages, registered as a packaged model called `fake`."""
    _fake_package(tmp_path, "fake_part1", {"data/part01.bin": b"GGUF-first-half|"})
    _fake_package(tmp_path, "fake_part2", {"data/part02.bin": b"second-half"})
    monkeypatch.syspath_prepend(str(tmp_path))
    whole = b"GGUF-first-half|second-half"

    def register(sha256=hashlib.sha256(whole).hexdigest(), parts=("fake_part1", "fake_part2")):
        packaged = PackagedModel(
            name="fake",
            title="Fake-Model",
            parts=tuple((p, f"data/part0{i}.bin") for i, p in enumerate(parts, 1)),
            sha256=sha256,
            install="pip install fake-parts",
        )
        monkeypatch.setitem(PACKAGED, "fake", packaged)
        monkeypatch.setitem(models.ALIASES, "fake", "fake")
        return packaged

    monkeypatch.setenv("SELFPLAY_CACHE", str(tmp_path / "cache"))
    return register, whole


def test_parts_join_in_order_and_are_checked(fake_parts, tmp_path):
    register, whole = fake_parts
    packaged = register()
    out = tmp_path / "joined.gguf"
    models._join_parts(packaged, out)
    assert out.read_bytes() == whole


def test_a_missing_part_package_names_it_and_the_install_command(fake_parts):
    register, _ = fake_parts
    register(parts=("fake_part1", "fake_part_absent"))
    with pytest.raises(ModelNotFound, match="fake-part-absent is missing.*pip install fake-parts"):
        resolve_model("fake")


def test_parts_with_the_wrong_checksum_are_refused_and_nothing_is_cached(fake_parts):
    register, _ = fake_parts
    register(sha256="0" * 64)
    with pytest.raises(ModelNotFound, match="pip install --force-reinstall fake-parts"):
        local_model_dir("fake")
    cached = models.cache_dir() / "models"
    assert not cached.exists() or not any(cached.iterdir())


def test_a_gguf_file_is_cached_by_path_size_and_mtime(tmp_path, monkeypatch):
    monkeypatch.setenv("SELFPLAY_CACHE", str(tmp_path / "cache"))
    gguf = tmp_path / "my-model.gguf"
    gguf.write_bytes(b"GGUF v1")
    first = models.converted_dir(resolve_model(str(gguf)))
    assert first.parent == tmp_path / "cache" / "models"
    assert first.name.startswith("my-model-") and first.name.endswith("-bf16")
    assert models.converted_dir(resolve_model(str(gguf))) == first
    gguf.write_bytes(b"GGUF v2, replaced")
    assert models.converted_dir(resolve_model(str(gguf))) != first


@pytest.mark.slow
def test_a_packaged_gguf_is_converted_once_to_a_cached_safetensors_directory():
    """The real SmolLM2 GGUF, in the user's cache: converted on first use, then reused.

    Dequantizing a GGUF takes minutes on two busy cores, so the tests share one
    conversion per machine instead of converting into a temporary cache each run.
    """
    first = local_model_dir("smollm2-135m")
    files = set(os.listdir(first))
    assert {"config.json", "model.safetensors", "tokenizer.json", models.MARKER} <= files
    assert "model.gguf" not in files
    marker = json.loads((Path(first) / models.MARKER).read_text())
    assert (marker["kind"], marker["dtype"]) == ("packaged", "bfloat16")
    assert marker["sha256"] == PACKAGED["smollm2-135m"].sha256
    assert "quantization_config" not in json.loads((Path(first) / "config.json").read_text())
    stamp = os.stat(os.path.join(first, "model.safetensors")).st_mtime_ns
    assert local_model_dir("smollm2-135m") == first
    assert os.stat(os.path.join(first, "model.safetensors")).st_mtime_ns == stamp
    assert not [p for p in os.listdir(Path(first).parent) if ".tmp-" in p]


def test_a_cards_snippet_gets_its_model_or_one_sentence(monkeypatch):
    from selfplay.backends.models import local_model_dir, model_for_trainers

    monkeypatch.setenv("MODEL", "smollm2-135m")
    assert model_for_trainers("Qwen/Qwen2.5-Coder-0.5B-Instruct") == local_model_dir("smollm2-135m")
    monkeypatch.setenv("MODEL", "/no/such/model")
    with pytest.raises(SystemExit) as info:
        model_for_trainers("Qwen/Qwen2.5-Coder-0.5B-Instruct")
    message = str(info.value)
    assert message.startswith("MODEL=/no/such/model: ") and "\n" not in message
    assert "'bundled'" in message
