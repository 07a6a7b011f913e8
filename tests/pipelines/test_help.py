"""Every command's --help says what its source says: nothing in square brackets (an install
extra like 'selfplay[ray]') is eaten as rich markup, and no hint names a retired tool."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from pipelines.cli import app

ROOT = typer.main.get_command(app)


def _commands(group, path: tuple[str, ...] = ()):
    yield path, group
    for name, sub in getattr(group, "commands", {}).items():  # a group: its commands too
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(ROOT))


def _said(command) -> str:
    """The help text as written in the source, rich's escapes undone."""
    texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
    return " ".join(texts).replace("\\[", "[")


def _flat(text: str) -> str:
    return re.sub(r"[\s│╭╮╰╯─]+", " ", text)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "selfplay")
def test_help_keeps_every_bracketed_word(path):
    command = dict(COMMANDS)[path]
    res = CliRunner().invoke(app, [*path, "--help"], terminal_width=400, env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    shown = _flat(res.output)
    for bracketed in re.findall(r"\S*\[[\w,-]+\]\S*", _said(command)):
        assert bracketed in shown, f"{' '.join(path)} --help lost {bracketed!r}"
    assert "huggingface-cli" not in shown


def test_the_ray_option_names_its_install_extra():
    res = CliRunner().invoke(app, ["run", "--help"], terminal_width=400, env={"COLUMNS": "400"})
    assert "pip install 'selfplay[ray]'" in _flat(res.output)


CONFIG_BACKED = [
    (("train",), "max_steps", "TrainConfig", "max_steps"),
    (("train",), "iterations", "TrainConfig", "ei.iterations"),
    (("train",), "lora", "TrainConfig", "lora.enabled"),
    (("train",), "model", "TrainConfig", "model"),
    (("train",), "average", "TrainConfig", "average"),
    (("run",), "rounds", "RunConfig", "rounds"),
    (("loop",), "iterations", "LoopConfig", "iterations"),
    (("export",), "split", None, "split"),
]


@pytest.mark.parametrize(("path", "param", "config", "field"), CONFIG_BACKED)
def test_a_config_backed_option_is_described_by_its_config_field(path, param, config, field):
    # The flag and the YAML (`--print-config`) describe a setting in the same words.
    import selfplay.config as configs
    from pipelines.common import field_description
    from selfplay.export.select import ExportOptions

    model = getattr(configs, config) if config else ExportOptions
    words = _flat(field_description(model, field)).rstrip(")").lower()
    help_ = {p.name: p.help for p in dict(COMMANDS)[path].params}[param]
    assert _flat(help_).lower().startswith(words), (help_, words)
    assert config is None or f"config: {field}" in help_
