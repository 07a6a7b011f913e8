"""A module of one's own, named in $SELFPLAY_PLUGINS, is loaded before the `selfplay` command
reads its options: what it registers (here a training method and a scheduler) is in the
command's help and runs from the command line like the built-in ones."""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from selfplay_cli import run_cli

PLUGIN = '''
"""A plugin: a training method that notes its tasks, and a scheduler."""
from dataclasses import dataclass
from pathlib import Path

from curricula import register_scheduler
from curricula.schedulers import Uniform
from selfplay.methods import Method, register_method
from selfplay.training import Trained
from selfplay.training.data import solver_items


@dataclass
class NoteJob:
    task_ids: list

    def run(self, ctx):
        ctx.progress("train", 1, 1)
        return Trained(steps=1, rows=len(self.task_ids), data={}, log=[])

    def save(self, out: Path) -> None:
        (out / "tasks.txt").write_text("\\n".join(self.task_ids))


def build(ctx):
    return NoteJob([item.task.id for item in solver_items(ctx.bank, ctx.config, ctx.exclude)])


register_method(Method("note", __name__, roles={"solver": "a note of its tasks"}))


@register_scheduler("plugin-uniform")
class PluginUniform(Uniform):
    pass
'''


@pytest.fixture
def plugin_env(tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "my_plugin.py").write_text(textwrap.dedent(PLUGIN))
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "SELFPLAY_PLUGINS": "my_plugin"}


def test_a_plugin_method_is_in_the_help_and_trains_from_the_command_line(
    plugin_env, bank_file, tmp_path
):
    helped = run_cli("train", "--help", env=plugin_env | {"COLUMNS": "300"})
    assert helped.returncode == 0, helped.stderr
    assert "note" in helped.stdout.split("--method", 1)[1].split("--out", 1)[0]
    without = run_cli("train", "--help", env={"COLUMNS": "300", "SELFPLAY_PLUGINS": None})
    assert "note" not in without.stdout.split("--method", 1)[1].split("--out", 1)[0]

    out = tmp_path / "noted"
    res = run_cli("train", "--method", "note", "--bank", str(bank_file), "--out", str(out),
                  "--model", "smollm2-135m", "--json", env=plugin_env)  # fmt: skip
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["method"] == "note" and result["steps"] == 1
    assert len((out / "tasks.txt").read_text().split("\n")) == result["rows"] > 0


def test_a_plugin_scheduler_is_a_choice_of_the_command(plugin_env):
    args = ("curriculum", "simulate", "--schedulers", "uniform,plugin-uniform", "--tasks", "50",
            "--heldout", "10", "--seeds", "1", "--structures", "lineage")  # fmt: skip
    res = run_cli(*args, "--json", env=plugin_env)
    assert res.returncode == 0, res.stderr
    simulated = json.loads(res.stdout)["structures"]["lineage"]["schedulers"]
    assert set(simulated) == {"uniform", "plugin-uniform"}
    unknown = run_cli(*args, env={"SELFPLAY_PLUGINS": None})
    assert unknown.returncode == 2 and "unknown scheduler plugin-uniform" in unknown.stderr


def test_a_plugin_that_fails_to_load_is_one_sentence_and_exit_2(tmp_path):
    res = run_cli("bank", "stats", env={"SELFPLAY_PLUGINS": "no_such_plugin_module"})
    assert res.returncode == 2
    assert res.stderr.strip() == (
        "selfplay: the plugin 'no_such_plugin_module' (named in $SELFPLAY_PLUGINS) failed to "
        "load: No module named 'no_such_plugin_module'."
    )
    assert "Traceback" not in res.stderr
