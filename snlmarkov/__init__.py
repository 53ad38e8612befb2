"""snlmarkov: Snakes & Ladders as an exact absorbing Markov chain.

The data flows one way: a :class:`Board` and :class:`Rules` give a transition
model (:func:`turn_model`, :func:`roll_model`), which gives analysis results
(:func:`analyze`, :func:`race`, :func:`exact_expected_turns`), which feed the
figures, the report and the command line. The playable :class:`Game` and the
Monte Carlo :func:`simulate` branch off Board and Rules and share no
probability code with the matrices; :func:`crosscheck` and
:func:`verify_game` compare the two paths.

Public names are imported lazily, so ``import snlmarkov`` stays cheap.

Examples
--------
>>> import snlmarkov as snl
>>> a = snl.analyze(snl.Board.builtin("milton_bradley"), snl.Rules.preset("plain"))
>>> round(a.expected_turns, 4)
39.2251
"""

from __future__ import annotations

import importlib

from ._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start of the CLI spares it)
if TYPE_CHECKING:
    from typing import Any

# public name -> module that defines it
_EXPORTS = {
    # errors
    "SnlError": "errors",
    "BoardError": "errors",
    "RuleError": "errors",
    "UnwinnableBoardError": "errors",
    "GameError": "errors",
    "DiceError": "errors",
    "SweepError": "errors",
    "TargetError": "errors",
    "MetricError": "errors",
    "LimitError": "errors",
    "SeedError": "errors",
    "InputFileError": "errors",
    "ModelError": "errors",
    "AddressError": "errors",
    "PolicyError": "errors",
    # configuration
    "Board": "board",
    "Rules": "rules",
    "Die": "dice",
    "GameState": "state",
    "Policy": "policy",
    "PolicyTable": "policy",
    # exact models and analysis
    "TransitionModel": "chain.model",
    "RollState": "chain.model",
    "turn_model": "chain.model",
    "roll_model": "chain.model",
    "LengthDistribution": "analysis.distribution",
    "Analysis": "analysis.single",
    "JumpEffect": "analysis.single",
    "analyze": "analysis.single",
    "expected_turns": "analysis.single",
    "exact_expected_turns": "chain.exact",
    "optimal_policy": "races.policy",
    "policy_gain": "analysis.policy",
    "PolicyGain": "analysis.policy",
    "race": "races.core",
    "RaceResult": "races.core",
    "Odds": "races.odds",
    "OddsTimeline": "races.odds",
    "Swing": "races.odds",
    # the game and the simulator (no matrix code)
    "Game": "game.engine",
    "Seat": "game.seats",
    "Decision": "game.choosing",
    "GameRecord": "game.record",
    "render": "game.textboard",
    "simulate": "sim.core",
    "SimulationResult": "sim.core",
    "SimulationSummary": "sim.summary",
    # comparing the two paths
    "verify_game": "checks.verify",
    "VerificationReport": "checks.verify",
    "crosscheck": "checks.crosschecking",
    "CrosscheckReport": "checks.crosschecking",
    # design and sweeps
    "sweep": "search.sweep",
    "rules_grid": "search.sweep",
    "design": "search.anneal",
    "DesignResult": "search.anneal",
    "DesignedBoard": "search.anneal",
    "Target": "search.target",
    "Goal": "search.target",
    "Constraints": "search.target",
    "write_board": "search.files",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'snlmarkov' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
