"""Game records: everything needed to replay a game exactly, as JSON.

A :class:`GameRecord` holds the board, the rules, the seats, the mode, the
full event log and the dice actually rolled, with the final positions and
finishing order. It checks on construction that these agree with each other
(the dice are the log's rolls, the positions and finishing order are where
the log leaves the tokens). :meth:`GameRecord.turns` summarises the log turn
by turn as :class:`TurnSummary` objects, and
:meth:`Game.replay <snlmarkov.game.engine.Game.replay>` plays a record again.

A record says whether it is a whole game (``"finished"`` in its JSON: the log
ends with the game over). A server signs the records it keeps
(:meth:`GameRecord.signed`): an HMAC-SHA256, under a key only the server
holds, of the record's canonical JSON (:func:`canonical_json`), stored as
``"signature"``; :meth:`GameRecord.signature_matches` checks it. A signed
record also says whether it was played online (``"online"``), where a
countdown may skip a turn.

Examples
--------
>>> from snlmarkov import Board, Game, GameRecord, Rules
>>> record = Game(Board(10, {3: 8}), Rules.preset("plain"), players=2, dice=[3, 4, 2]).play()
>>> [(t.seat, t.start, t.end, t.rolls) for t in record.turns()]
[(0, 0, 8, (3,)), (1, 0, 4, (4,)), (0, 8, 10, (2,))]
>>> GameRecord.from_json(record.to_json()) == record
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..board import Board
from ..errors import GameError, LimitError
from ..limits import MAX_RECORD_BOARD_SIZE, clean_text, format_bytes, limit
from ..rules import MODES, Rules
from ..state import GameState
from .events import (
    Bump,
    ChooseDie,
    ChooseMove,
    Event,
    Finish,
    Forfeit,
    GameOver,
    Ladder,
    Move,
    Restart,
    Roll,
    RolledDice,
    Skip,
    Snake,
    _is_int,
    event_from_dict,
)
from .seats import Seat

__all__ = ["GameRecord", "TurnSummary"]

#: Version of the record's data layout, stored as ``"format"`` in its JSON.
RECORD_FORMAT = 1

#: Fewest bytes a signing key may have.
MIN_KEY_BYTES = 16

#: Keys a record's data may hold besides the required ones.
_OPTIONAL_KEYS = {"start", "finished", "online", "signature"}


def canonical_json(data: Mapping[str, Any]) -> bytes:
    """The canonical JSON of a record's data, the bytes a signature covers.

    The data as JSON (so that integer keys become the strings JSON holds),
    with the ``"signature"`` entry left out, keys sorted at every level, no
    whitespace, non-ASCII text as UTF-8.

    Examples
    --------
    >>> canonical_json({"b": [1, 2], "a": "é", "signature": "ff"})
    b'{"a":"\\xc3\\xa9","b":[1,2]}'
    """
    return _canonical_of(json.dumps({k: v for k, v in data.items() if k != "signature"}))


def _canonical_of(text: str) -> bytes:
    """:func:`canonical_json` of the data whose JSON is ``text`` (``json.dumps`` of it, no signature)."""
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _check_key(key: Any) -> bytes:
    if not isinstance(key, (bytes, bytearray)) or len(key) < MIN_KEY_BYTES:
        raise GameError(f"a signing key must be bytes, at least {MIN_KEY_BYTES} of them")
    return bytes(key)


def _hmac(key: bytes, data: Mapping[str, Any]) -> str:
    return _sign(key, canonical_json(data))


def _sign(key: bytes, canonical: bytes) -> str:
    """The signature of a record whose canonical JSON is ``canonical``: HMAC-SHA256 with ``key``, in hex."""
    return hmac.new(key, canonical, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class TurnSummary:
    """One turn of a recorded game, as the turn-level transition model sees it.

    Parameters
    ----------
    turn : int
        Global index of the turn (0-based, all seats together).
    seat : int
        The seat whose turn it was.
    start : int
        The seat's square when the turn began.
    end : int
        The seat's square when the turn ended, after any bump.
    end_before_bump : int
        Where the turn's rolls left the token, before the bump rule; equal to
        ``end`` when there was no bump. This is the square a single-token
        turn model predicts from ``start`` and ``rolls``.
    rolls : tuple of int
        Every roll of the turn in order: failed entry rolls, the entering six,
        capped rolls (as dealt) and a six voided by ``forfeit`` or sent
        home by ``restart`` included;
        empty for a skipped turn.
    bumped : bool
        Whether the bump rule placed the token on ``bump_to`` at the end of
        the turn (``end_before_bump`` may equal ``bump_to`` when the token
        shared it with another).
    skipped : bool
        Whether the turn was skipped (no rolls; ``start == end``).

    Examples
    --------
    >>> TurnSummary(turn=4, seat=1, start=12, end=1, end_before_bump=20, rolls=(6, 2), bumped=True, skipped=False)
    TurnSummary(turn=4, seat=1, start=12, end=1, end_before_bump=20, rolls=(6, 2), bumped=True, skipped=False)
    """

    turn: int
    seat: int
    start: int
    end: int
    end_before_bump: int
    rolls: tuple[int, ...]
    bumped: bool
    skipped: bool

    def __post_init__(self) -> None:
        for name in ("turn", "seat", "start", "end", "end_before_bump"):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                raise GameError(f"TurnSummary.{name} must be an integer >= 0; got {value!r}")
            object.__setattr__(self, name, int(value))
        rolls = tuple(self.rolls)
        if not all(_is_int(r) and r >= 0 for r in rolls):
            raise GameError(f"TurnSummary.rolls must be die values >= 0; got {rolls!r}")
        object.__setattr__(self, "rolls", tuple(int(r) for r in rolls))
        for name in ("bumped", "skipped"):
            if not isinstance(getattr(self, name), bool):
                raise GameError(f"TurnSummary.{name} must be True or False")
        if not self.bumped and self.end != self.end_before_bump:
            raise GameError("TurnSummary: end differs from end_before_bump without a bump")
        _check_skip(self.skipped, self.rolls, self.bumped, self.start, self.end)

    @classmethod
    def _walked(
        cls, turn: int, seat: int, start: int, end: int, before_bump: int, rolls: tuple[int, ...], skipped: bool
    ) -> TurnSummary:
        """The summary of a turn walked by :func:`_summarise` (``before_bump`` -1: no bump), from events that
        were validated when made (their squares and rolls are integers >= 0): only the turn's consistency is
        checked."""
        bumped = before_bump >= 0
        _check_skip(skipped, rolls, bumped, start, end)
        self = object.__new__(cls)
        for name, value in (
            ("turn", turn),
            ("seat", seat),
            ("start", start),
            ("end", end),
            ("end_before_bump", before_bump if bumped else end),
            ("rolls", rolls),
            ("bumped", bumped),
            ("skipped", skipped),
        ):
            object.__setattr__(self, name, value)
        return self


def _check_skip(skipped: bool, rolls: tuple[int, ...], bumped: bool, start: int, end: int) -> None:
    if skipped and (rolls or bumped or start != end):
        raise GameError("TurnSummary: a skipped turn has no rolls and no move")


@dataclass(frozen=True)
class GameRecord:
    """A played game, complete enough to replay it exactly.

    Parameters
    ----------
    board : Board
        The board played on.
    rules : Rules
        The rules played by.
    seats : tuple of Seat
        The players, in playing order.
    mode : {"classic", "last_one_standing"}
        How the game ends.
    log : tuple of Event
        Every event of the game in order.
    dice : tuple of int
        Every value the die showed, in order (capped rolls as dealt): the
        values of the log's :class:`~snlmarkov.game.events.Roll` events.
        Under ``choose_move`` these are the values moved; every die thrown
        is in the ``rolled_dice`` events (:meth:`throws`).
    positions : tuple of int
        Each seat's square at the end of the log.
    finishing_order : tuple of int
        Seat indices in the order they reached the finish (seats already
        finished in ``start`` first).
    start : GameState, optional
        Where the game began; by default the beginning (every token on 0,
        seat 0 to move). A game started from a state (``Game(...,
        state=...)``) records it here, and its JSON holds it as ``"start"``.
    online : bool, default False
        Played in an online room, whose countdown skips a stalled seat's
        turn. Only a signature makes it believable (see :meth:`signed`).
    signature : str, default ""
        The server's HMAC-SHA256 of the record (64 hex digits; empty when not
        signed). Neither this nor ``online`` is compared by ``==``, which
        compares the games (where a record came from is for
        :func:`~snlmarkov.verify_game` to judge).

    Raises
    ------
    GameError
        If a part has the wrong type, or the parts disagree: the dice are not
        the log's rolls, the log's turns are out of order, or the positions
        or finishing order are not where the log leaves the tokens.

    Examples
    --------
    >>> from snlmarkov import Board, Game, Rules
    >>> record = Game(Board(10), Rules(), players=["Ann", "Bob"], dice=[6, 3, 2, 1]).play()
    >>> record.dice, record.positions, record.finishing_order, record.is_over
    ((6, 3, 2, 1), (10, 2), (0,), True)
    >>> record.winner, record.seats[record.winner].name
    (0, 'Ann')
    """

    board: Board
    rules: Rules
    seats: tuple[Seat, ...]
    mode: str
    log: tuple[Event, ...]
    dice: tuple[int, ...]
    positions: tuple[int, ...]
    finishing_order: tuple[int, ...]
    start: GameState | None = field(default=None, repr=False)
    online: bool = field(default=False, repr=False, compare=False)
    signature: str = field(default="", repr=False, compare=False)
    _turns: tuple[TurnSummary, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # noqa: C901
        if not isinstance(self.board, Board):
            raise GameError(f"GameRecord.board must be a Board; got {type(self.board).__name__}")
        if not isinstance(self.rules, Rules):
            raise GameError(f"GameRecord.rules must be a Rules; got {type(self.rules).__name__}")
        seats = tuple(self.seats)
        if not seats or not all(isinstance(s, Seat) for s in seats):
            raise GameError("GameRecord.seats must be a non-empty sequence of Seat")
        if self.mode not in MODES:
            raise GameError(f"GameRecord.mode must be one of {', '.join(map(repr, MODES))}; got {self.mode!r}")
        if self.board.size > MAX_RECORD_BOARD_SIZE:
            raise LimitError(
                f"GameRecord.board has {self.board.size} squares; records are kept for boards of at most "
                f"{MAX_RECORD_BOARD_SIZE} (snlmarkov.limits.MAX_RECORD_BOARD_SIZE)"
            )
        log = tuple(self.log)
        if not all(isinstance(e, Event) for e in log):
            raise GameError("GameRecord.log must hold events")
        _check_ranges(log, self.board.size, self.rules, len(seats))
        object.__setattr__(self, "seats", seats)
        object.__setattr__(self, "log", log)
        for name in ("dice", "positions", "finishing_order"):
            values = tuple(getattr(self, name))
            if not all(_is_int(v) for v in values):
                raise GameError(f"GameRecord.{name} must hold integers; got {values!r}")
            object.__setattr__(self, name, tuple(int(v) for v in values))
        if len(self.positions) != len(seats):
            raise GameError(f"GameRecord.positions has {len(self.positions)} entries for {len(seats)} seats")
        start = GameState.initial(len(seats)) if self.start is None else self.start
        if not isinstance(start, GameState):
            raise GameError(f"GameRecord.start must be a GameState; got {type(start).__name__}")
        if start.players != len(seats):
            raise GameError(f"GameRecord.start has {start.players} seats' squares for {len(seats)} seats")
        start.validate(self.board, self.rules, self.mode)
        object.__setattr__(self, "start", start)
        rolled = tuple(e.value for e in log if isinstance(e, Roll))
        if rolled != self.dice:
            raise GameError("GameRecord.dice are not the rolls of its log")
        turns, positions, finished = _summarise(log, len(seats), start)
        if positions != self.positions:
            raise GameError(f"GameRecord.positions {self.positions} differ from the log's {positions}")
        if finished != self.finishing_order:
            raise GameError(f"GameRecord.finishing_order {self.finishing_order} disagrees with the log {finished}")
        object.__setattr__(self, "_turns", turns)
        if not isinstance(self.online, bool):
            raise GameError(f"GameRecord.online must be True or False; got {self.online!r}")
        sig = self.signature
        if not isinstance(sig, str) or (sig and (len(sig) != 64 or sig.strip("0123456789abcdef"))):
            raise GameError("GameRecord.signature must be empty or 64 lower-case hex digits")

    # ------------------------------------------------------------ views
    def throws(self) -> tuple[int, ...]:
        """Every value a die showed, in order: :attr:`dice`, or under ``choose_move`` every die thrown.

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules, Seat
        >>> game = Game(Board(10), Rules(choose_move=2), [Seat("Bot", "red", policy="greedy")], dice=[3, 5, 1, 5])
        >>> record = game.play()
        >>> record.dice, record.throws()
        ((5, 5), (3, 5, 1, 5))
        """
        if self.rules.choice != "move":
            return self.dice
        return tuple(v for e in self.log if isinstance(e, RolledDice) for v in e.values)

    def choices(self) -> tuple[Event, ...]:
        """The choices logged, in order (``choose_die`` and ``choose_move`` events; none under plain rules)."""
        return tuple(e for e in self.log if isinstance(e, (ChooseDie, ChooseMove)))

    def turns(self) -> tuple[TurnSummary, ...]:
        """The game turn by turn (see :class:`TurnSummary`).

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> game = Game(Board(10), Rules(start_on_six=True, bump=True), players=2, dice=[6, 3, 2, 6, 3])
        >>> _ = game.take_turn(), game.take_turn(), game.skip_turn(), game.take_turn()
        >>> for t in game.record().turns():
        ...     print(t.seat, t.start, t.end_before_bump, t.end, t.rolls, t.bumped, t.skipped)
        0 0 3 3 (6, 3) False False
        1 0 0 0 (2,) False False
        0 3 3 3 () False True
        1 0 3 1 (6, 3) True False
        """
        return self._turns

    def states(self) -> tuple[GameState, ...]:
        """The state of the game before every turn, and after the last.

        One more state than turns: ``states()[i]`` is the state in which
        turn ``i`` was played (its ``to_move`` is that turn's seat), and the
        last is where the record ends (over or not; once over, ``to_move``
        is the seat that played the last turn, as :attr:`Game.current_seat
        <snlmarkov.game.engine.Game.current_seat>`).

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> record = Game(Board(10, {3: 8}), Rules.preset("plain"), players=2, dice=[3, 4, 2]).play()
        >>> for s in record.states():
        ...     print(s.positions, s.to_move, s.places)
        (0, 0) 0 ()
        (8, 0) 1 ()
        (8, 4) 0 ()
        (10, 4) 0 (0,)
        """
        start = self.start
        assert start is not None  # set in __post_init__
        positions = list(start.positions)
        places = list(start.places)
        states = []
        for t in self._turns:
            states.append(GameState(tuple(positions), to_move=t.seat, places=tuple(places)))
            positions[t.seat] = t.end
            if t.end == self.board.size and t.seat not in places:
                places.append(t.seat)
        if not self._turns:
            return (start,)
        last = self._turns[-1].seat
        n = len(self.seats)
        if self.is_over:
            to_move = last
        else:
            to_move = next(j % n for j in range(last + 1, last + n + 1) if j % n not in places)
        states.append(GameState(tuple(positions), to_move=to_move, places=tuple(places)))
        return tuple(states)

    @property
    def is_over(self) -> bool:
        """Whether the log ends with the game over."""
        return bool(self.log) and isinstance(self.log[-1], GameOver)

    @property
    def finished(self) -> bool:
        """Whether this is a whole game (the log ends with the game over); ``"finished"`` in its JSON."""
        return self.is_over

    # ------------------------------------------------------------ signature
    def signed(self, key: bytes, *, online: bool | None = None) -> GameRecord:
        """The record signed with ``key`` (and marked ``online`` if given).

        Parameters
        ----------
        key : bytes
            The signer's secret (at least :data:`MIN_KEY_BYTES` bytes).
        online : bool, optional
            Whether the game was played in an online room (default: as the
            record says).

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> key = bytes(range(32))
        >>> record = Game(Board(4), Rules.preset("plain"), players=1, dice=[4]).play().signed(key)
        >>> len(record.signature), record.signature_matches(key), record.signature_matches(bytes(32))
        (64, True, False)
        """
        data = self._signed_data(key, online)
        return dataclasses.replace(self, online="online" in data, signature=data["signature"])

    def signed_json(self, key: bytes, *, online: bool | None = None) -> str:
        """The JSON text of the signed record, ``self.signed(key, online=online).to_json()``, without building it.

        The record is validated once, when it was made; the signed copy
        would be validated again (a whole game's replay), which a server
        storing the game at its end has no need of.

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> key = bytes(range(32))
        >>> record = Game(Board(4), Rules.preset("plain"), players=1, dice=[4]).play()
        >>> record.signed_json(key, online=True) == record.signed(key, online=True).to_json()
        True
        """
        key = _check_key(key)
        text = json.dumps(self._unsigned_data(online))  # the JSON that is signed, read back once
        signature = _sign(key, _canonical_of(text))
        return f'{text[:-1]}, "signature": "{signature}"}}'  # last, as to_dict places it

    def _signed_data(self, key: bytes, online: bool | None) -> dict[str, Any]:
        """What :meth:`to_dict` gives the record marked ``online`` (None: as it is) and signed with ``key``."""
        key = _check_key(key)
        data = self._unsigned_data(online)
        data["signature"] = _hmac(key, data)  # last, as to_dict places it
        return data

    def _unsigned_data(self, online: bool | None) -> dict[str, Any]:
        """What :meth:`to_dict` gives the record marked ``online`` (None: as it is), without its signature."""
        online = self.online if online is None else bool(online)
        data = self.to_dict()  # the data of this record marked ``online`` (the signature is not signed):
        data.pop("online", None)  # what to_dict gives the marked record, without building it first
        data.pop("signature", None)
        if online:
            data["online"] = True
        return data

    def signature_matches(self, key: bytes) -> bool:
        """Whether the record carries a signature and it is ``key``'s signature of this very record."""
        key = _check_key(key)
        return bool(self.signature) and hmac.compare_digest(self.signature, _hmac(key, self.to_dict()))

    @property
    def has_winner(self) -> bool:
        """Whether some token reached the finish."""
        return bool(self.finishing_order)

    @property
    def winner(self) -> int:
        """Index of the first seat to finish; GameError if none did."""
        if not self.finishing_order:
            raise GameError("no one finished in this record: there is no winner")
        return self.finishing_order[0]

    # ------------------------------------------------------------ data
    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-ready data.

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> d = Game(Board(4), Rules.preset("plain"), players=1, dice=[4]).play().to_dict()
        >>> d["dice"], d["positions"], d["log"][0]
        ([4], [4], {'kind': 'roll', 'seat': 0, 'turn': 0, 'value': 4, 'capped': False})
        """
        out = {
            "format": RECORD_FORMAT,
            "board": self.board.to_dict(),
            "rules": self.rules.to_dict(),
            "seats": [s.to_dict() for s in self.seats],
            "mode": self.mode,
            "log": [e.to_dict() for e in self.log],
            "dice": list(self.dice),
            "positions": list(self.positions),
            "finishing_order": list(self.finishing_order),
            "finished": self.finished,
        }
        if self.start is not None and self.start != GameState.initial(len(self.seats)):
            out["start"] = self.start.to_dict()  # only games started from a state say where
        if self.online:
            out["online"] = True
        if self.signature:
            out["signature"] = self.signature
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameRecord:  # noqa: C901
        """Rebuild a record from :meth:`to_dict` data.

        Raises
        ------
        SnlError
            GameError for a missing or unknown key or a bad value, BoardError
            or RuleError for a bad board or rule set.

        Examples
        --------
        >>> from snlmarkov import Board, Game
        >>> record = Game(Board(10), players=1, dice=[4, 6, 5]).play()
        >>> GameRecord.from_dict(record.to_dict()) == record
        True
        """
        if not isinstance(data, Mapping):
            raise GameError("a game record must be a mapping")
        keys = {"format", "board", "rules", "seats", "mode", "log", "dice", "positions", "finishing_order"}
        if not keys <= set(data) <= keys | _OPTIONAL_KEYS:
            missing, extra = sorted(keys - set(data)), sorted(map(str, set(data) - keys - _OPTIONAL_KEYS))
            raise GameError(f"game record: missing {missing or 'nothing'}, unexpected {extra or 'nothing'}")
        if data["format"] != RECORD_FORMAT:
            raise GameError(f"game record format {data['format']!r} is not supported (expected {RECORD_FORMAT})")
        rules = data["rules"]
        if not isinstance(rules, Mapping):
            raise GameError("game record: 'rules' must be a mapping")
        seats = data["seats"]
        if not isinstance(seats, list) or not all(isinstance(s, Mapping) for s in seats):
            raise GameError("game record: 'seats' must be a list of {name, colour}")
        try:
            seat_objs = tuple(Seat(**s) for s in seats)
        except TypeError:
            raise GameError("game record: each seat holds exactly a name and a colour") from None
        for name in ("log", "dice", "positions", "finishing_order"):
            if not isinstance(data[name], list):
                raise GameError(f"game record: {name!r} must be a list")
        start = None  # from the beginning
        if "start" in data:
            given = data["start"]
            if not isinstance(given, Mapping) or not {"positions"} <= set(given) <= {"positions", "to_move", "places"}:
                raise GameError("game record: 'start' must be a mapping of positions, to_move and places")
            start = GameState(**given)
        for name in ("finished", "online"):
            if name in data and not isinstance(data[name], bool):
                raise GameError(f"game record: {name!r} must be true or false")
        record = cls(
            board=Board.from_dict(data["board"], source="game record board"),
            rules=Rules().replace(**rules),
            seats=seat_objs,
            mode=data["mode"],
            log=tuple(event_from_dict(e) for e in data["log"]),
            dice=tuple(data["dice"]),
            positions=tuple(data["positions"]),
            finishing_order=tuple(data["finishing_order"]),
            start=start,
            online=data.get("online", False),
            signature=data.get("signature", ""),
        )
        if "finished" in data and data["finished"] != record.finished:
            says, log = ("finished", "does not end") if data["finished"] else ("unfinished", "ends")
            raise GameError(f"game record: it says it is {says}, but its log {log} with the game over")
        return record

    def to_json(self, indent: int | None = None) -> str:
        """The record as JSON text (see :meth:`to_dict`).

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> Game(Board(4), Rules.preset("plain"), players=1, dice=[4]).play().to_json()[:40]
        '{"format": 1, "board": {"size": 4, "ladd'
        """
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        """Read a record from :meth:`to_json` text.

        Raises
        ------
        GameError
            If the text is not JSON (or nested too deeply) or not a valid
            record.
        LimitError
            If the text is over :data:`snlmarkov.limits.MAX_RECORD_BYTES`
            (64 MiB; ``SNLMARKOV_MAX_RECORD_BYTES`` raises it), refused
            before parsing.

        Examples
        --------
        >>> GameRecord.from_json("[1, 2")
        Traceback (most recent call last):
        ...
        snlmarkov.errors.GameError: a game record must be JSON: Expecting ',' delimiter: line 1 column 6 (char 5)
        """
        if not isinstance(text, (str, bytes, bytearray)):
            raise GameError(f"a game record must be JSON text; got {type(text).__name__}")
        cap = limit("record_bytes")
        if len(text) > cap:
            raise LimitError(
                f"the game record holds {format_bytes(len(text))}, over the limit of {format_bytes(cap)}; "
                "set SNLMARKOV_MAX_RECORD_BYTES to raise it"
            )
        try:
            data = json.loads(text)
        except RecursionError:
            raise GameError("a game record must be JSON: it is nested too deeply") from None
        except (TypeError, ValueError) as exc:
            raise GameError(f"a game record must be JSON: {clean_text(exc)}") from None
        try:
            return cls.from_dict(data)
        except RecursionError:
            raise GameError("a game record must be JSON of the record's shape: it is nested too deeply") from None


#: The fields of each event kind that hold a square of the board.
_SQUARE_FIELDS = {
    "move": ("start", "end"),
    "ladder": ("start", "end"),
    "snake": ("start", "end"),
    "bounce": ("target",),
    "overshoot": ("square",),
    "forfeit": ("back_to",),
    "bump": ("from_square", "to_square"),
}


def _check_ranges(log: tuple[Event, ...], size: int, rules: Rules, n_seats: int) -> None:
    """Refuse events whose squares are off the board, rolls off the dice, choices the rules do not
    offer, or seats and places past the table (the order of the choices is for the replay to check)."""
    values = frozenset(v for d in rules.choose_die or (rules.die,) for v in d.values)
    for e in log:
        where = f"GameRecord.log: turn {e.turn}"
        if e.seat >= n_seats:
            raise GameError(f"{where}: seat {e.seat}, but there are {n_seats} seats")
        for name in _SQUARE_FIELDS.get(e.kind, ()):
            value = getattr(e, name)
            if value > size:
                raise GameError(f"{where}: {type(e).__name__}.{name}={value} is off the board 0..{size}")
        if isinstance(e, Roll) and e.value not in values:
            raise GameError(f"{where}: a roll of {e.value}, which the die cannot show")
        if isinstance(e, (ChooseDie, RolledDice, ChooseMove)):
            _check_choice(e, where, rules, values)
        if isinstance(e, Finish) and e.place > n_seats:
            raise GameError(f"{where}: finishing place {e.place} with {n_seats} seats")
        if isinstance(e, GameOver) and any(s >= n_seats for s in e.finishing_order):
            raise GameError(f"{where}: the finishing order {e.finishing_order} names a seat past {n_seats - 1}")


def _check_choice(e: Event, where: str, rules: Rules, values: frozenset[int]) -> None:
    """Refuse a choice event the rules do not offer: no such choice, a die not offered, a value off the die."""
    dice = rules.choose_die
    if isinstance(e, ChooseDie):
        if rules.choice != "die":
            raise GameError(f'{where}: a choice of die, but these rules offer none (docs/rules.md, "Choices")')
        if e.die >= len(dice) or e.spec != dice[e.die].spec:
            offered = ", ".join(f"{i}: {d.spec}" for i, d in enumerate(dice))
            raise GameError(f"{where}: die {e.die} ({e.spec}) is not one the rules offer ({offered})"[:300])
        return
    if rules.choice != "move":
        raise GameError(f'{where}: a {e.kind} event, but these rules choose no move (docs/rules.md, "Choices")')
    shown = e.values if isinstance(e, RolledDice) else (e.value,)  # type: ignore[attr-defined]
    if any(v not in values for v in shown):
        raise GameError(f"{where}: {e.kind} holds a value the die cannot show: {shown}"[:300])
    if isinstance(e, RolledDice) and len(e.values) != rules.choose_move:
        raise GameError(f"{where}: {len(e.values)} dice thrown; the rules throw {rules.choose_move}")


def _summarise(  # noqa: C901
    log: tuple[Event, ...], n_seats: int, begin: GameState | None = None
) -> tuple[tuple[TurnSummary, ...], tuple[int, ...], tuple[int, ...]]:
    """Walk the log turn by turn from ``begin`` (by default the beginning): the turn summaries, final positions and finishing order."""
    begin = GameState.initial(n_seats) if begin is None else begin
    positions = list(begin.positions)
    finished: list[int] = list(begin.places)
    turns: list[TurnSummary] = []
    i = 0
    while i < len(log):
        turn, seat = log[i].turn, log[i].seat
        if turn != len(turns):
            raise GameError(f"GameRecord.log: expected turn {len(turns)}, found turn {turn}")
        if seat >= n_seats:
            raise GameError(f"GameRecord.log: seat {seat} in turn {turn}, but there are {n_seats} seats")
        start = positions[seat]
        position, before_bump = start, -1
        rolls: list[int] = []
        skipped = False
        while i < len(log) and log[i].turn == turn:
            event = log[i]
            i += 1
            if event.seat != seat:
                raise GameError(f"GameRecord.log: turn {turn} mixes seats {seat} and {event.seat}")
            if isinstance(event, GameOver) and i < len(log):
                raise GameError(f"GameRecord.log: events follow the end of the game in turn {turn}")
            if isinstance(event, Roll):
                rolls.append(event.value)
            elif isinstance(event, (Move, Ladder, Snake)):
                position = event.end
            elif isinstance(event, Forfeit):
                position = event.back_to
            elif isinstance(event, Restart):
                position = 0
            elif isinstance(event, Bump):
                before_bump, position = event.from_square, event.to_square
            elif isinstance(event, Finish):
                finished.append(seat)
            elif isinstance(event, Skip):
                skipped = True
        positions[seat] = position
        turns.append(TurnSummary._walked(turn, seat, start, position, before_bump, tuple(rolls), skipped))
    return tuple(turns), tuple(positions), tuple(finished)
