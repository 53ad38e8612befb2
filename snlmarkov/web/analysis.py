"""The analysis of one game record, as the game pages show it (``/games/<id>``, ``/games/upload``).

:func:`analyse` turns a :class:`~snlmarkov.GameRecord` into plain JSON-ready
data computed with the library: the states after every turn
(:meth:`GameRecord.states`), what happened in each turn, each seat's exact
chances over the whole game (:meth:`snlmarkov.Odds.timeline`), the big swings
(:meth:`snlmarkov.Odds.swings`), each player's luck, and each player's accuracy under a choice rule
(:func:`snlmarkov.web.coach.accuracy`), and the verdict of
:func:`snlmarkov.verify_game` (with the server's signing key, when it has one:
the signature verdict too).

A player's *luck* is the change of their own figure (chance of winning in
classic, expected place under last one standing) over the turns they rolled,
summed over the game. The exact odds are a martingale of the game (each
turn's expected change of any seat's chance is zero), so luck is what that
player's own dice gave or took; the rest of the change from the first state
to the last came from the other seats' turns (and turns skipped).

Every record is bounded before any work (:func:`check_analysable`), solved
odds are kept per table (board, rules, seats, mode), and one analysis runs at
a time (:func:`analyse` holds a lock): the server has two cores.

Examples
--------
>>> from snlmarkov import Game
>>> data = analyse(Game(players=["Ann", "Bob"], rng=29).play())
>>> data["odds"]["method"], len(data["states"]) == data["turns_played"] + 1
('exact', True)
>>> data["swings"][0]["story"]
'the 99 snake on turn 27 cost Ann 29 points (63% -> 34%)'
>>> data["verification"]["verdict"], data["verification"]["signature"]
('follows the rules', 'not signed')
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from ..board import Board
from ..checks.verify import verify_game
from ..errors import GameError, LimitError, SnlError
from ..game.record import GameRecord
from ..limits import MAX_PLAYERS
from ..races.odds import Odds
from ..rules import PRESETS, Rules
from .coach import accuracy

__all__ = []

#: largest board a game page analyses (the exact odds and the verification build its turn matrix)
MAX_ANALYSIS_SQUARES = 10_000
#: most turns a game page analyses (one odds query per state)
MAX_ANALYSIS_TURNS = 20_000
#: largest move of the die a game page analyses (a fair die's faces)
MAX_ANALYSIS_FACES = 100
#: swings marked on the graph
SWINGS = 3
#: solved odds kept at once (one per table: board, rules, seats, mode)
_ODDS_CACHE = 8

_odds: OrderedDict[tuple, Odds | str] = OrderedDict()
_lock = threading.Lock()


def check_analysable(record: GameRecord) -> None:
    """Refuse a record the game pages will not analyse, naming the limit.

    Raises
    ------
    LimitError
        For a board over :data:`MAX_ANALYSIS_SQUARES` squares, a die that
        moves more than :data:`MAX_ANALYSIS_FACES` squares, more than
        :data:`MAX_ANALYSIS_TURNS` turns or more than
        :data:`snlmarkov.limits.MAX_PLAYERS` seats.

    Examples
    --------
    >>> from snlmarkov import Board, Game
    >>> check_analysable(Game(Board(20_000), players=1, dice=[6]).record())
    Traceback (most recent call last):
    ...
    snlmarkov.errors.LimitError: the record's board has 20000 squares; game pages analyse boards of at most 10000 (snlmarkov.web.analysis.MAX_ANALYSIS_SQUARES)
    """
    checks = (
        (
            record.board.size,
            MAX_ANALYSIS_SQUARES,
            "the record's board has {} squares",
            "boards of",
            "MAX_ANALYSIS_SQUARES",
        ),
        (
            record.rules.die.top,
            MAX_ANALYSIS_FACES,
            "the record's die moves up to {} squares",
            "dice moving",
            "MAX_ANALYSIS_FACES",
        ),
        (len(record.turns()), MAX_ANALYSIS_TURNS, "the record holds {} turns", "games of", "MAX_ANALYSIS_TURNS"),
    )
    for value, cap, what, kind, name in checks:
        if value > cap:
            raise LimitError(
                f"{what.format(value)}; game pages analyse {kind} at most {cap} (snlmarkov.web.analysis.{name})"
            )
    if len(record.seats) > MAX_PLAYERS:
        raise LimitError(
            f"the record has {len(record.seats)} seats; game pages analyse games of at most {MAX_PLAYERS} "
            "(snlmarkov.limits.MAX_PLAYERS)"
        )


def rules_name(rules: Rules) -> str:
    """The preset a rule set is (``"app"``, ``"family"``, ...), or ``"custom"``.

    Examples
    --------
    >>> rules_name(Rules.preset("family")), rules_name(Rules(faces=8))
    ('family', 'custom')
    """
    return next((name for name in PRESETS if Rules.preset(name) == rules), "custom")


def _solved_odds(record: GameRecord) -> Odds | str:
    """The exact odds of the record's table (cached), or why there are none."""
    key = (record.board, record.rules, len(record.seats), record.mode)
    found = _odds.get(key)
    if found is None:
        try:
            found = Odds(record.board, record.rules, players=len(record.seats), mode=record.mode)
        except SnlError as exc:
            found = f"no exact odds for this game: {exc}"
        _odds[key] = found
        while len(_odds) > _ODDS_CACHE:
            _odds.popitem(last=False)
    _odds.move_to_end(key)
    return found


def _odds_data(record: GameRecord) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The odds over the game, its swings and each seat's luck."""
    odds = _solved_odds(record)
    names = [s.name for s in record.seats]
    if isinstance(odds, str):
        return {"method": "none", "reason": odds}, [], []
    timeline = odds.timeline(record)
    classic = record.mode == "classic"
    figure = timeline.win if classic else timeline.expected_place
    swings = odds.swings(record, top=SWINGS, timeline=timeline) if record.turns() else ()
    own = np.zeros(len(names))
    for t in record.turns():
        if not t.skipped:
            own[t.seat] += figure[t.turn + 1, t.seat] - figure[t.turn, t.seat]
    luck = [
        {
            "seat": i,
            "name": name,
            "own": float(own[i]),
            "start": float(figure[0, i]),
            "end": float(figure[-1, i]),
            "others": float(figure[-1, i] - figure[0, i] - own[i]),
        }
        for i, name in enumerate(names)
    ]
    data = {
        "method": "exact",
        "series": "win" if classic else "expected_place",
        "win": timeline.win.tolist(),
        "expected_place": timeline.expected_place.tolist() if not classic else [],
    }
    stories = [
        {
            "turn": s.turn,
            "seat": s.seat,
            "name": s.name,
            "before": s.before,
            "after": s.after,
            "change": s.change,
            "what": s.what,
            "story": s.story(record.mode),
        }
        for s in swings
    ]
    return data, stories, luck


def _verification(record: GameRecord, key: bytes | None) -> dict[str, Any]:
    """verify_game's verdict on the rules and on the signature (``key``: the server's)."""
    try:
        report = verify_game(record, key=key)
    except GameError as exc:
        return {
            "passed": False,
            "verdict": "nothing to verify",
            "checked": 0,
            "failures": [str(exc)],
            "log_probability": None,
            "signature": "not checked",
        }
    checked = sum(not t.skipped for t in report.turns)
    logp = report.log_probability if math.isfinite(report.log_probability) else None
    return {
        "passed": report.passed,
        "whole_game": report.whole_game,
        "verdict": report.rules_verdict,
        "checked": checked,
        "failures": list(report.failures[:20]),
        "log_probability": logp,
        "signature": report.signature,
        "signed": report.signed,
    }


def _board_data(board: Board) -> dict[str, Any]:
    return {
        "name": board.name or f"{board.size} squares",
        "size": board.size,
        "ladders": [[s, e] for s, e in board.ladders.items()],
        "snakes": [[s, e] for s, e in board.snakes.items()],
    }


def _turns_data(record: GameRecord) -> list[dict[str, Any]]:
    names = [s.name for s in record.seats]
    texts: dict[int, list[str]] = {}
    for e in record.log:
        texts.setdefault(e.turn, []).append(e.describe(names[e.seat]))
    return [
        {
            "turn": t.turn,
            "seat": t.seat,
            "start": t.start,
            "end": t.end,
            "rolls": list(t.rolls),
            "skipped": t.skipped,
            "bumped": t.bumped,
            "texts": texts.get(t.turn, []),
        }
        for t in record.turns()
    ]


def analyse(record: GameRecord, *, key: bytes | None = None) -> dict:
    """Everything a game page shows about ``record``, as plain data.

    Parameters
    ----------
    record : GameRecord
    key : bytes, optional
        The server's signing key (:func:`snlmarkov.web.store.load_key`):
        whether this server signed the record. Never part of the answer.

    Returns
    -------
    dict
        ``board``, ``rules`` (with ``rules_name``), ``mode``, ``seats``,
        ``finishing_order``, ``winner`` (-1 for none), ``over``,
        ``turns_played``, ``states`` (``positions``, ``to_move``, ``places``
        of every :meth:`GameRecord.states`), ``turns`` (each turn's seat,
        squares, rolls and event texts), ``odds`` (``method`` ``"exact"`` with
        ``win`` and ``expected_place`` per state, or ``"none"`` with a
        ``reason``), ``swings``, ``luck`` and ``verification`` (:func:`~snlmarkov.verify_game`'s
        ``verdict`` on the rules and its ``signature`` verdict).

    Raises
    ------
    LimitError
        From :func:`check_analysable`.
    """
    if not isinstance(record, GameRecord):
        raise SnlError(f"analyse takes a GameRecord, got {type(record).__name__}")
    check_analysable(record)
    with _lock:
        odds, swings, luck = _odds_data(record)
        verification = _verification(record, key)
        choices = accuracy(record)
    return {
        "board": _board_data(record.board),
        "rules": record.rules.to_dict(),
        "rules_name": rules_name(record.rules),
        "mode": record.mode,
        "seats": [s.to_dict() for s in record.seats],
        "finishing_order": list(record.finishing_order),
        "winner": record.finishing_order[0] if record.finishing_order else -1,
        "over": record.is_over,
        "turns_played": len(record.turns()),
        "states": [
            {"positions": list(s.positions), "to_move": s.to_move, "places": list(s.places)} for s in record.states()
        ],
        "turns": _turns_data(record),
        "odds": odds,
        "swings": swings,
        "luck": luck,
        "verification": verification,
        "accuracy": choices,
    }
