"""The vocabulary of the rules as plain data: finish rules, cap rules, modes, presets, named dice.

Nothing here computes or validates: :class:`~snlmarkov.Rules` and
:class:`~snlmarkov.Die` do, reading these names. The module imports nothing
heavier than :mod:`types`, so the command line's ``--help`` (which lists the
choices) stays cheap.

Examples
--------
>>> FINISH_RULES, list(PRESETS)
(('stay', 'bounce', 'none'), ['app', 'family', 'plain'])
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

__all__ = ["FINISH_RULES", "CAP_POLICIES", "MODES", "PRESETS", "NAMED_DICE"]

#: What happens when a roll would carry the token past the finish.
FINISH_RULES = ("stay", "bounce", "none")
#: What happens on the roll after a turn holds ``max_sixes`` sixes.
CAP_POLICIES = ("redeal", "forfeit", "restart")
#: How a game of several players ends: at the first finish, or when all have finished.
MODES = ("classic", "last_one_standing")

#: The named rule sets of ``docs/rules.md``.
PRESETS: Mapping[str, Mapping[str, Any]] = types.MappingProxyType(
    {
        "app": types.MappingProxyType({}),
        "family": types.MappingProxyType(
            {
                "finish": "bounce",
                "bonus_on_six": False,
                "max_sixes": None,
                "start_on_six": True,
                "bump": True,
                "bump_to": 1,
            }
        ),
        "plain": types.MappingProxyType({"finish": "stay", "bonus_on_six": False, "max_sixes": None}),
    }
)

#: Named dice the command line, files and the web game accept (text forms for :meth:`Die.parse`).
NAMED_DICE: Mapping[str, str] = {
    "efron-a": "faces:0,0,4,4,4,4",
    "efron-b": "faces:3,3,3,3,3,3",
    "efron-c": "faces:2,2,2,2,6,6",
    "efron-d": "faces:1,1,1,5,5,5",
    "loaded-six": "weights:1=1,2=1,3=1,4=1,5=1,6=3",
}
