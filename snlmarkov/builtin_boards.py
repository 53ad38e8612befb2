"""The built-in boards as plain data (no numpy: the command line lists their
names in ``--help`` without loading the numerical stack).

:class:`snlmarkov.Board` reads them (``Board.builtin(name)``, ``Board.names()``).

Examples
--------
>>> from snlmarkov.builtin_boards import BUILTIN_BOARDS
>>> list(BUILTIN_BOARDS), BUILTIN_BOARDS["jungle"][0]
(['jungle', 'milton_bradley'], 100)
"""

from __future__ import annotations

import types
from collections.abc import Mapping

__all__ = ["BUILTIN_BOARDS"]

_JUNGLE_LADDERS = {1: 38, 4: 14, 9: 31, 21: 42, 28: 84, 36: 44, 51: 67, 71: 91, 80: 98}
_JUNGLE_SNAKES = {16: 6, 47: 26, 49: 11, 56: 53, 62: 19, 64: 60, 87: 24, 93: 73, 95: 75, 99: 27}
_MB_LADDERS = {1: 38, 4: 14, 9: 31, 21: 42, 28: 84, 36: 44, 51: 67, 71: 91, 80: 100}
_MB_SNAKES = {16: 6, 47: 26, 49: 11, 56: 53, 62: 19, 64: 60, 87: 24, 93: 73, 95: 75, 98: 78}

#: The built-in boards, by name: ``(size, ladders, snakes)``; the default first.
BUILTIN_BOARDS: Mapping[str, tuple[int, Mapping[int, int], Mapping[int, int]]] = types.MappingProxyType(
    {
        "jungle": (100, _JUNGLE_LADDERS, _JUNGLE_SNAKES),
        "milton_bradley": (100, _MB_LADDERS, _MB_SNAKES),
    }
)
