"""Multi-player races: :func:`race` with independent tokens, the exact joint
chain of the bump rule, and the Monte Carlo fallback (through :mod:`snlmarkov.sim`).

Public names are imported lazily, so :mod:`snlmarkov.races.defaults` can be
read without numpy (the command line's ``--help``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import RaceResult, race

# public name -> module that defines it (relative to this package)
_EXPORTS = {"RaceResult": ".core", "race": ".core"}

__all__ = ["RaceResult", "race"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
