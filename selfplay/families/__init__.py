"""Procedural families: programs of one skill each, drawn at a level of difficulty.

`get(name)`, `FAMILIES` (name -> family, in registration order) and `register` come from
`selfplay.families.base`; importing this package registers the built-in families, one
module each. `selfplay.procedural.candidates` turns their draws into proposals admission
runs like any other; `selfplay bank generate --family NAME --levels 1-5` is the command.
"""

from selfplay.families import arith, bits, counting, lists, nested, recursion, search, strings
from selfplay.families.base import (
    ENTRY_POINT,
    FAMILIES,
    LEVELS,
    MAX_LEVEL,
    Drawn,
    Family,
    difficulty,
    get,
    register,
)

del arith, bits, counting, lists, nested, recursion, search, strings

__all__ = [
    "ENTRY_POINT",
    "FAMILIES",
    "LEVELS",
    "MAX_LEVEL",
    "Drawn",
    "Family",
    "difficulty",
    "get",
    "register",
]
