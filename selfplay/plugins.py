"""Plugins: modules of one's own that register a task kind, a procedural family, a scheduler,
an exporter or a training method, loaded before the `selfplay` command reads its options.

Each of those is one module that registers itself when imported (`selfplay.kinds.register`,
`selfplay.families.register`, `curricula.register_scheduler`, `selfplay.export.register`,
`selfplay.methods.register_method`). The registries live in the process, so the command has
to import the module before it builds its help and its choices. Name the modules:

- in `$SELFPLAY_PLUGINS`, comma-separated module names importable here (a file `mine.py` in
  a folder on `PYTHONPATH`): `SELFPLAY_PLUGINS=mine selfplay export --format mine ...`;
- or, for an installed package, as an entry point in the group `selfplay.plugins`
  (`[project.entry-points."selfplay.plugins"] mine = "mypackage.mine"` in its pyproject).

A library user imports the module themself; `load_plugins()` does what the command does.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

ENV = "SELFPLAY_PLUGINS"
GROUP = "selfplay.plugins"

_loaded: set[str] = set()


class PluginError(Exception):
    """A named plugin could not be imported; the message is one sentence."""


def plugin_names() -> list[tuple[str, str]]:
    """(module or entry point value, where it was named), entry points first."""
    named = [(ep.value, f"the entry point {ep.name!r}") for ep in entry_points(group=GROUP)]
    env = [m.strip() for m in os.environ.get(ENV, "").split(",") if m.strip()]
    return named + [(m, f"${ENV}") for m in env]


def load_plugins() -> list[str]:
    """Import every named plugin once; the names imported. Raises `PluginError` for the
    first that fails (after importing the ones before it)."""
    done = []
    for value, where in plugin_names():
        if value in _loaded:
            continue
        module, _, attr = value.partition(":")
        try:
            loaded = importlib.import_module(module.strip())
            if attr:  # an entry point may name an object whose import is not enough
                getattr(loaded, attr.strip())
        except Exception as e:  # whatever the plugin raises, said in one sentence
            text = str(e).rstrip(".") or type(e).__name__
            raise PluginError(
                f"the plugin {value!r} (named in {where}) failed to load: {text}."
            ) from None
        _loaded.add(value)
        done.append(value)
    return done
