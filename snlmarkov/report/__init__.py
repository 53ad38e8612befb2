"""The report: every figure of the default board computed exactly and written
to a folder with ``summary.json`` and ``summary.md``.

Public names are imported lazily, so ``snlmarkov.report.defaults`` can be read
without numpy or matplotlib. ``PUZZLE_CHAIN`` (a read-only mapping ``{83: 84,
84: 97}``) is the chain of jumps that :func:`compare_house_rules` adds to a board.

Examples
--------
>>> from snlmarkov.report import compare_toggles
>>> len(compare_toggles()) > 0
True
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ToggleCase",
    "compare_toggles",
    "compare_house_rules",
    "PUZZLE_CHAIN",
    "Report",
    "write_report",
    "headline_table",
    "STAGES",
    "DEFAULT_GAMES",
    "MIN_GAMES",
    "DEFAULT_SEED",
    "DPI",
]

_DEFAULTS = {"DEFAULT_GAMES", "MIN_GAMES", "DEFAULT_SEED", "DPI"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'snlmarkov.report' has no attribute {name!r}")
    module = importlib.import_module(".defaults" if name in _DEFAULTS else ".core", __name__)
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
