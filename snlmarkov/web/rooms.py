"""Rooms: the tables the server hosts, and the one manager that holds them.

A :class:`Room` owns one :class:`~snlmarkov.Game` and the connections
watching it. Only the server rolls: a client asks to roll for a seat and
proves it holds that seat with the seat's secret; the host's secret guards the
host's actions. Every change is broadcast to every connection of the room as
one message carrying the room's next sequence number ``seq``, so a client can
tell a lost or duplicated message. AI seats roll after ``ai_delay`` seconds;
in online rooms a human seat that has not rolled after ``countdown`` seconds
is skipped (:meth:`Game.skip_turn`: no roll is made for it).

Everything here runs on one asyncio event loop; a room's state only changes
while it holds its lock (:attr:`Room.lock`), so no two changes interleave.
The awaits inside a change are the writes to the store (:mod:`.persist`),
each made *before* what it writes is broadcast, and a starting game's short
wait for its odds.

With a store, every room is written at each change and a restarted server
brings the open ones back (:meth:`RoomManager.start`); a graceful stop leaves
them as they are, to be resumed.

Kinds of room: ``"local"`` (pass & play and play with AI: every seat is
given at creation, the game starts at once, no countdown) and ``"online"``
(the host creates it, others join from their own browsers, the host
configures and starts).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..board import Board
from ..dice import Die
from ..errors import SnlError
from ..game.engine import Game
from ..game.events import Event
from ..game.seats import Seat
from ..limits import MAX_CHOICES
from ..reach import check_winnable
from ..rules import CAP_POLICIES, FINISH_RULES, MODES, Rules
from . import persist, turns
from .coach import PolicySolver, TablePlay
from .connection import Connection
from .countdown import Countdown, later
from .limits import ServerLimits, client_key
from .odds import LiveOdds, OddsSolver
from .persist import digest
from .protocol import MAX_MOVE, MAX_SEATS, Message, ProtocolError, check_colour, check_name, check_strength
from .store import StoreBusyError

__all__ = []

log = logging.getLogger("snlmarkov.web")

#: kinds of room
KINDS = ("local", "online")
#: most values a room's die may show (the exact odds build a turn matrix per rule set)
MAX_FACES = 12
#: the largest move a room's die may show
MAX_ROOM_MOVE = MAX_MOVE
#: the longest custom die text (Die.parse's forms) a room takes
MAX_DIE_TEXT = 120
#: most dice a room's mover rolls to choose the move from (``choose_move``)
MAX_ROOM_CHOOSE_MOVE = 4
#: the dice the house-rules form offers by name: (text form, label); any other text form is a custom die.
#: Efron's dice A (0,0,4,4,4,4) and B (3,3,3,3,3,3) leave squares of the built-in boards from which the
#: finish cannot be reached, so a room refuses them there: they are left to the custom form.
ROOM_DICE = (
    ("d6", "Fair die 1-6"),
    ("d4", "Fair die 1-4"),
    ("d8", "Fair die 1-8"),
    ("2d6", "Two dice summed, 2-12"),
    ("spinner:10", "Spinner 1-10"),
    ("efron-c", "Efron's die C: 2,2,2,2,6,6"),
    ("efron-d", "Efron's die D: 1,1,1,5,5,5"),
    ("cowries:4", "Four cowrie shells (none up scores 8)"),
)
#: event texts kept for a newcomer's log
LOG_TAIL = 80
#: statuses of a room whose game is not over
_LIVE = ("lobby", "starting", "playing")
#: messages that change a lobby (written before what they change is told)
_LOBBY_CHANGES = ("join", "configure", "add_ai", "remove_seat")
#: extra seconds of the first countdown after a restart (the pages reconnect within 10 s)
RESTORE_GRACE = 10.0
#: WebSocket close code a graceful stop gives (1012: service restart; the pages reconnect)
CLOSE_RESTART = 1012


def _token() -> str:
    return secrets.token_urlsafe(18)


def rules_fields() -> list[dict[str, Any]]:
    """Every field of :class:`~snlmarkov.Rules` with its kind, default and choices (for the pages)."""
    out = []
    for f in dataclasses.fields(Rules):
        default = f.default
        item: dict[str, Any] = {"name": f.name, "default": default}
        if f.name == "finish":
            item.update(kind="choice", choices=list(FINISH_RULES))
        elif f.name == "on_cap":
            item.update(kind="choice", choices=list(CAP_POLICIES))
        elif isinstance(default, bool):
            item.update(kind="bool")
        elif f.name == "max_sixes":
            item.update(kind="int_or_none", min=1, max=6)
        elif f.name == "die":  # a named die or a custom text form
            choices = [{"value": text, "spec": Die.parse(text).spec, "label": label} for text, label in ROOM_DICE]
            item.update(kind="die", default=Die().spec, choices=choices, max_length=MAX_DIE_TEXT)
        elif f.name == "choose_die":  # a choice rule: the dice the mover picks from before each roll
            choices = [{"value": text, "spec": Die.parse(text).spec, "label": label} for text, label in ROOM_DICE]
            item.update(kind="dice", default=[], choices=choices, min=2, max=MAX_CHOICES)
        elif f.name == "choose_move":  # a choice rule: roll k dice, move by one of them
            item.update(kind="int_or_none", default=None, min=2, max=MAX_ROOM_CHOOSE_MOVE, none_label="no choice")
        elif isinstance(default, int):
            item.update(kind="int", min=1, max=1000)
        elif isinstance(default, str):
            item.update(kind="text")
        else:
            continue
        out.append(item)
    return out


def rules_from_data(data: Any, board: Board) -> Rules:
    """Rules from a client's ``{field: value}`` object (unset fields keep the app defaults).

    Raises
    ------
    ProtocolError
        For an unknown field, a value of the wrong kind, a die of more than
        :data:`MAX_FACES` values or a move over :data:`MAX_ROOM_MOVE`, or
        rules the board cannot be played by.

    Examples
    --------
    >>> rules_from_data({"finish": "bounce", "max_sixes": None}, Board.builtin()).finish
    'bounce'
    """
    _check_rule_values(data)
    changes = dict(data)
    if isinstance(changes.get("choose_die"), list):
        changes["choose_die"] = tuple(changes["choose_die"])
        if not changes["choose_die"]:
            changes.pop("choose_die")  # no dice to choose from: no choice rule
    try:
        rules = Rules().replace(**changes)
        _check_playable(rules, board)
    except (SnlError, TypeError) as exc:
        raise ProtocolError(f"rules refused: {exc}", "bad_rules") from None
    for die in rules.choose_die or (rules.die,):
        if len(die.values) > MAX_FACES or die.top > MAX_ROOM_MOVE:
            raise ProtocolError(
                f"rules refused: die: a room's die shows at most {MAX_FACES} values, each at most {MAX_ROOM_MOVE}; "
                f"{die.spec[:60]} shows {len(die.values)} up to {die.top}",
                "bad_rules",
            )
    if rules.choose_move is not None and rules.choose_move > MAX_ROOM_CHOOSE_MOVE:
        raise ProtocolError(
            f"rules refused: choose_move: a room rolls at most {MAX_ROOM_CHOOSE_MOVE} dice to choose from", "bad_rules"
        )
    return rules


def _check_rule_values(data: Any) -> None:
    """Refuse a rules object whose values are not plain data of a bounded size (before any rule is built)."""
    if not isinstance(data, Mapping):
        raise ProtocolError("rules must be an object", "bad_field")
    for key, value in data.items():
        if key == "choose_die" and isinstance(value, list):
            if len(value) > MAX_CHOICES or not all(isinstance(d, str) and len(d) <= MAX_DIE_TEXT for d in value):
                raise ProtocolError(
                    f"choose_die: a list of at most {MAX_CHOICES} dice, each a text form of at most "
                    f"{MAX_DIE_TEXT} characters",
                    "bad_field",
                )
            continue
        if value is not None and not isinstance(value, (bool, int, str)):
            raise ProtocolError("rule values are true/false, integers, text or null", "bad_field")
        if key == "die" and isinstance(value, str) and len(value) > MAX_DIE_TEXT:
            raise ProtocolError(f"die: a custom die is at most {MAX_DIE_TEXT} characters", "bad_field")
        if key != "die" and isinstance(value, str) and len(value) > 40:
            raise ProtocolError("rule value too long", "bad_field")


def _check_playable(rules: Rules, board: Board) -> None:
    """:meth:`Rules.check_board`, and the board can be finished with this die (a die may leave squares stuck)."""
    rules.check_board(board)
    check_winnable(board, rules, rules.bump)


@dataclass
class SeatSlot:
    """A seat of a room: who sits there, whether the server plays it, its secret."""

    name: str
    colour: str
    ai: bool = False
    secret: str = field(default_factory=_token, repr=False)
    strength: str = ""  # an AI seat's under a choice rule: random, greedy or optimal
    connected: int = 0
    digest: str = field(default="", repr=False)  # the secret's hash, all a restored seat knows of it

    def __post_init__(self) -> None:
        if not self.digest:
            self.digest = digest(self.secret)
        if self.ai and not self.strength:
            self.strength = "optimal"

    def opens(self, secret: str) -> bool:
        """Whether ``secret`` is this seat's (a restored seat learns its secret back from it)."""
        if not hmac.compare_digest(self.digest, digest(secret)):
            return False
        self.secret = self.secret or secret
        return True

    def public(self) -> dict[str, Any]:
        out = {"name": self.name, "colour": self.colour, "ai": self.ai, "connected": self.ai or self.connected > 0}
        if self.ai:
            out["strength"] = self.strength
        return out


class Room:
    """One table: its seats, its game, its connections and its timer.

    Create rooms with :meth:`RoomManager.create`.
    """

    def __init__(
        self,
        manager: RoomManager,
        kind: str,
        board_name: str,
        rules: Rules,
        mode: str,
        countdown: float,
        owner: str = "",
        *,
        board: Board | None = None,
    ) -> None:
        self.manager = manager
        self.owner = owner  # the client key of the address that created it
        self.id = secrets.token_urlsafe(12)
        self.kind = kind
        self.host_secret = _token()
        self.host_digest = digest(self.host_secret)
        self.board_name = board_name
        self.board = manager.boards[board_name] if board is None else board
        self.rules = rules
        self.mode = mode
        self.countdown = countdown
        self.seats: list[SeatSlot] = []
        self.status = "lobby"  # lobby -> playing -> over | abandoned
        self.game: Game | None = None
        self.seq = 0
        self.conns: set[Connection] = set()
        self.texts: deque[str] = deque(maxlen=LOG_TAIL)
        self.odds = LiveOdds((), "none")
        self.game_id = 0  # id in the store, once stored
        self.deadline = 0.0  # monotonic time of the countdown's end (0: no countdown running)
        self.paused = False  # no seat still racing is played by the server or a connected browser
        self._unstored = False  # abandoned, and its game not stored yet
        self._queued = False  # its game waits in the store's queue for a busy database (never queued twice)
        self._timer: Countdown | None = None  # the countdown running (the mover's, or the AI seat's pause)
        self.idle_since = time.monotonic()
        self.lock = asyncio.Lock()  # held by every change: no two interleave, awaits included
        self._held: list[tuple[Connection | None, str]] | None = None  # messages waiting for a write
        self.saving = "ok" if manager.persists else "off"  # how the last write to the store went
        self.restored = False  # brought back from the store by this server
        self.odds_method = ""  # a restored room's odds method before the restart
        self._fresh_for: tuple[int, int] | None = None  # (turn, seat): a full countdown when that seat is back
        self.turn_times: list[float] = []  # monotonic time each turn was applied (load benchmark)
        self.play: TablePlay | None = None  # under a choice rule: the AI seats' tables and the coach
        self._asked = 0  # decisions asked of a player so far (a decision's countdown knows its own)
        self._turn_mark = 0  # the length of the game's log when the turn in progress began
        self.frozen_json: tuple[Board, Rules, str] | None = None  # persist.room_state's board and rules, encoded

    # ------------------------------------------------------------ views
    def snapshot(self) -> dict[str, Any]:
        """The whole room as one message body (no secrets)."""
        game = self.game
        n = len(self.seats)
        return {
            "room": self.id,
            "kind": self.kind,
            "status": self.status,
            "board": _board_data(self.board, self.board_name),
            "rules": self.rules.to_dict(),
            "mode": self.mode,
            "countdown": self.countdown,
            "seats": [s.public() for s in self.seats],
            "positions": _positions_now(game) if game else [0] * n,
            "decision": turns.decision_data(game) if game else None,
            "current": game.current_seat if game else 0,
            "finished": list(game.finishing_order) if game else [],
            "turn": game.total_turns if game else 0,
            "round": game.round if game else 1,
            "odds": self.odds.to_dict(),
            "remaining": self.remaining(),
            "log": list(self.texts),
            "game_id": self.game_id,
            "paused": self.paused,
            "saving": self.saving,
            "restored": self.restored,
            "server": self.manager.boot,
        }

    def remaining(self) -> float:
        """Seconds left on the countdown (0 when none is running)."""
        return round(max(0.0, self.deadline - time.monotonic()), 3) if self.deadline else 0.0

    def welcome(self, conn: Connection) -> dict[str, Any]:
        return {"type": "welcome", "seq": self.seq, "you": {"seat": conn.seat, "host": conn.host}, **self.snapshot()}

    # ------------------------------------------------------------ messages
    def broadcast(self, body: dict[str, Any]) -> None:
        """Send ``body`` to every connection with the room's next sequence number."""
        self.seq += 1
        text = json.dumps({**body, "seq": self.seq})
        if self._held is not None:
            self._held.append((None, text))
            return
        for conn in self.conns:
            conn.push(text)

    def _send(self, conn: Connection, body: dict[str, Any]) -> None:
        """Send ``body`` to one connection (after the change is written, when one is being made)."""
        if self._held is not None:
            self._held.append((conn, json.dumps(body)))
        else:
            conn.push(body)

    def _release(self) -> None:
        held, self._held = self._held or [], None
        for conn, text in held:
            for c in self.conns if conn is None else (conn,):
                c.push(text)

    def broadcast_room(self) -> None:
        self.broadcast({"type": "room", **self.snapshot()})

    def _is_host(self, secret: str) -> bool:
        if not hmac.compare_digest(digest(secret), self.host_digest):
            return False
        self.host_secret = self.host_secret or secret  # a restored room learns it back
        return True

    def _need_host(self, msg: Message) -> None:
        if not self._is_host(msg.fields["secret"]):
            raise ProtocolError(f"{msg.type}: only the host may do that", "not_host")

    def _need_lobby(self, what: str) -> None:
        if self.status != "lobby":
            raise ProtocolError(f"{what}: the game has already started", "not_in_lobby")

    async def handle(self, conn: Connection, msg: Message) -> None:
        """Apply one checked message from ``conn``; ProtocolError refuses it (nothing changed)."""
        self.idle_since = time.monotonic()
        if msg.type == "ping":
            conn.push({"type": "pong"})
            return
        async with self.lock:
            if msg.type not in _LOBBY_CHANGES:
                await self._handle(conn, msg)
                return
            self._held = []  # what the change sends waits until it is written
            try:
                await self._handle(conn, msg)
                await self._persist()
            finally:
                self._release()

    async def _handle(self, conn: Connection, msg: Message) -> None:  # noqa: C901
        kind, f = msg.type, msg.fields
        if kind == "hello":
            self._hello(conn, f)
        elif kind == "join":
            self._join(conn, f["name"], f["colour"])
        elif kind == "configure":
            self._need_host(msg)
            self._need_lobby("configure")
            self._configure(f)
        elif kind == "add_ai":
            self._need_host(msg)
            self._need_lobby("add_ai")
            self._add_seat(f["name"], f["colour"], ai=True, strength=f.get("strength", "optimal"))
            self.broadcast_room()
        elif kind == "remove_seat":
            self._need_host(msg)
            self._need_lobby("remove_seat")
            seat = f["seat"]
            if not 0 < seat < len(self.seats):
                raise ProtocolError("remove_seat: no such seat (the host's seat 0 stays)", "bad_seat")
            self.seats.pop(seat)
            for c in self.conns:  # seats after it move down one; each browser is told its new seat
                if c.seat >= seat:
                    c.seat = -1 if c.seat == seat else c.seat - 1
                    self._send(c, {"type": "you", "seat": c.seat, "host": c.host})
            self.broadcast_room()
        elif kind == "start":
            self._need_host(msg)
            self._need_lobby("start")
            if len(self.seats) < 2:
                raise ProtocolError("start: a game needs at least 2 seats", "too_few_seats")
            await self._start()
        elif kind == "roll":
            await self._roll(f["seat"], f["secret"], f.get("die"))
        elif kind == "choose":
            self._check_mover(f["seat"], f["secret"], "choose")
            if not self.rules.choice:
                raise ProtocolError("choose: these rules give the mover no choice", "bad_choice")
            await turns.answer(self, f.get("die"), f.get("value"))

    def _hello(self, conn: Connection, f: dict[str, Any]) -> None:
        if conn.greeted:
            raise ProtocolError("hello: already greeted", "bad_message")
        secret = f.get("secret")
        seat = -1
        if secret is not None:
            if self._is_host(secret):
                conn.host = True
                seat = 0 if self.kind == "online" else -1
            else:
                seat = next((i for i, s in enumerate(self.seats) if s.opens(secret)), -2)
                if seat == -2:
                    raise ProtocolError("hello: that secret opens no seat of this room", "bad_secret")
        conn.greeted = True
        self._claim(conn, seat)
        conn.push(self.welcome(conn))
        if seat >= 0:
            self.broadcast_room()  # presence changed

    def _claim(self, conn: Connection, seat: int) -> None:
        if conn.seat >= 0 and conn.seat < len(self.seats):
            self.seats[conn.seat].connected -= 1
        conn.seat = seat
        if seat >= 0:
            self.seats[seat].connected += 1
            self._maybe_resume(seat)
            game = self.game
            if self._fresh_for is not None and game is not None and self._fresh_for == (game.total_turns, seat):
                self._fresh_for = None  # back after a restart: a full countdown from now, not what was left
                if self.status == "playing" and self.deadline:
                    self._schedule()

    def _join(self, conn: Connection, name: str, colour: str) -> None:
        if self.kind != "online":
            raise ProtocolError("join: only online rooms take new players", "not_online")
        self._need_lobby("join")
        if conn.seat >= 0:
            raise ProtocolError("join: this browser already holds a seat", "already_seated")
        slot = self._add_seat(name, colour, ai=False)
        self._claim(conn, len(self.seats) - 1)
        self._send(conn, {"type": "joined", "seat": conn.seat, "secret": slot.secret})
        self.broadcast_room()

    def _add_seat(self, name: str, colour: str, *, ai: bool, strength: str = "") -> SeatSlot:
        if len(self.seats) >= MAX_SEATS:
            raise ProtocolError(f"the room is full ({MAX_SEATS} seats)", "room_full")
        if any(s.name == name for s in self.seats):
            raise ProtocolError(f"the name {name!r} is taken in this room", "name_taken")
        slot = SeatSlot(name, colour, ai=ai, strength=strength if ai else "")
        self.seats.append(slot)
        return slot

    def _configure(self, f: dict[str, Any]) -> None:
        board_name = f.get("board", self.board_name)
        if board_name not in self.manager.boards:
            raise ProtocolError(f"unknown board {board_name[:40]!r}", "bad_field")
        board = self.manager.boards[board_name]
        rules = rules_from_data(f["rules"], board) if "rules" in f else self.rules
        try:
            _check_playable(rules, board)
        except SnlError as exc:
            raise ProtocolError(f"rules refused: {exc}", "bad_rules") from None
        self.board_name, self.board, self.rules = board_name, board, rules
        self.mode = f.get("mode", self.mode)
        self.countdown = f.get("countdown", self.countdown)
        self.broadcast_room()

    # ------------------------------------------------------------ playing
    async def start(self) -> None:
        """Start the game with the seats as they are."""
        async with self.lock:
            await self._start()

    async def save(self) -> None:
        """Write the room to the store as it is (a new room; every change writes itself)."""
        async with self.lock:
            await self._persist()

    async def _start(self) -> None:
        seats = [Seat(s.name, s.colour) for s in self.seats]
        game = Game(self.board, self.rules, seats, self.mode, rng=self.manager.seed_for(self))
        self.status = "starting"  # refuses every other change while the odds are prepared
        await self._prepare_odds(game, self.manager.odds_wait)
        await self._prepare_play()
        self.game, self.status = game, "playing"
        self.texts.append(f"The game starts: {self.mode.replace('_', ' ')}, {len(seats)} players.")
        if self.play is not None and self.play.reason:
            self.texts.append(f"No coach for this game ({self.play.reason}).")
        if self.odds.method == "busy":
            self.texts.append("The server is busy working out other games' odds: this game plays without them.")
        await self._persist()  # on disk before anyone is told
        self._schedule()
        self.broadcast_room()

    async def _prepare_play(self) -> None:
        """Under a choice rule: the optimal policy (solved off the event loop, cached per table) and each AI seat's table."""
        if not self.rules.choice:
            self.play = None
            return
        strengths = [s.strength if s.ai else "" for s in self.seats]
        seeds = [self.manager.seed_for(self) for s in self.seats if s.ai and s.strength == "random"]
        rngs = [None if x is None else np.random.default_rng(x) for x in seeds]
        self.play = await self.manager.policies.table_play(self.board, self.rules, self.mode, strengths, rngs)

    async def _prepare_odds(self, game: Game, wait: float) -> None:
        """Send the table's odds to the odds pool and wait up to ``wait`` s for them (then an "odds" message)."""
        if self.rules.choice:  # the exact odds assume no choice (the library's Odds take no policies yet)
            self.odds = LiveOdds((), "none")
            return
        # solving a table's odds can take seconds (the bump rule's joint chain): in the odds pool, and the
        # game does not wait more than a moment for it; the odds follow in an "odds" message
        solve = self.manager.odds.submit(self.board, self.rules, len(game.seats), self.mode)
        if solve is None:  # the odds pool is full: this game plays without odds rather than wait
            self.odds = LiveOdds((), "busy")
            return
        task = asyncio.wrap_future(solve)
        self.odds = LiveOdds((), "pending")
        try:
            await asyncio.wait_for(asyncio.shield(task), wait)
        except asyncio.TimeoutError:
            task.add_done_callback(self._odds_ready)
        except Exception:  # no odds is not a reason not to play
            log.exception("room %s: odds failed", self.id)
        self.odds = self.manager.odds_of(game)

    async def _persist(self, turns: tuple[tuple[int, str], ...] = (), then: Callable[[], None] | None = None) -> None:
        """Write the room (and its new turns) to the store before anything is broadcast; a failure is logged.

        ``then()`` (what tells the players) is called once the write is on
        disk (by the commit itself: :func:`persist.written`), or once it has
        failed; its own exceptions are raised.
        """
        store = self.manager.store
        told = False

        def tell() -> None:
            nonlocal told
            told = True
            if then is not None:
                then()

        if self.manager.persists:
            row = persist.room_row(self, turns)
            try:
                await persist.written(self, lambda: store.save_room_later(row), tell if then is not None else None)
            except Exception:  # queued (busy) or failed: the room goes on, and says so (``saving``)
                if told:  # the write was made: the exception is ``then``'s
                    raise
                log.exception("room %s: could not write the room", self.id)
        if not told:
            tell()

    def _odds_ready(self, task: asyncio.Future) -> None:
        """The odds of this table are solved: tell everyone (once no change is in progress), unless a turn did."""
        if not task.cancelled() and task.exception() is None:
            asyncio.ensure_future(self._tell_odds())

    async def _tell_odds(self) -> None:
        async with self.lock:
            if self.game is not None and self.status == "playing" and self.odds.method == "pending":
                self._compute_odds()
                self.broadcast({"type": "odds", "odds": self.odds.to_dict()})

    def _compute_odds(self) -> None:
        assert self.game is not None
        if self.odds.method != "busy":  # a game that started without odds stays without them
            self.odds = self.manager.odds_of(self.game)

    def _check_mover(self, seat: int, secret: str, what: str) -> None:
        """Refuse a ``what`` (roll, choose) that is not the mover's own: no game, wrong secret, not its turn."""
        if self.status != "playing" or self.game is None:
            raise ProtocolError(f"{what}: no game is being played", "not_playing")
        own = seat < len(self.seats) and self.seats[seat].opens(secret)
        if not own and not (self.kind == "online" and seat == 0 and self._is_host(secret)):  # the host's own seat
            raise ProtocolError(f"{what}: wrong secret for that seat", "bad_secret")
        if self.seats[seat].ai:
            raise ProtocolError(f"{what}: the server plays that seat", "not_your_turn")
        if seat != self.game.current_seat:
            raise ProtocolError(f"{what}: it is seat {self.game.current_seat}'s turn", "not_your_turn")

    async def _roll(self, seat: int, secret: str, die: int | None = None) -> None:
        self._check_mover(seat, secret, "roll")
        if self.rules.choice:
            if die is not None and self.rules.choice != "die":
                raise ProtocolError("roll: these rules let the mover choose the move, not the die", "bad_choice")
            await turns.start_turn(self, die)
            return
        if die is not None:
            raise ProtocolError("roll: these rules offer no die to choose", "bad_choice")
        await self._play(skip=False)

    async def _play(self, *, skip: bool) -> None:
        """Play (or skip) the current seat's turn and tell everyone."""
        game = self.game
        assert game is not None and not game.is_over
        self._cancel_timer()
        if self.rules.choice and not skip:  # the turn stops at each of a player's decisions
            await turns.start_turn(self, None)
            return
        seat, turn = game.current_seat, game.total_turns
        events = game.skip_turn() if skip else game.take_turn()
        await self._turn_done(seat, turn, events, events, skip=skip)

    def _event_items(self, events: list[Event]) -> list[dict[str, Any]]:
        names = [s.name for s in self.seats]
        return [_event_data(e, names) for e in events]

    async def _turn_done(
        self,
        seat: int,
        turn: int,
        events: list[Event],
        new: list[Event],
        *,
        skip: bool,
        coach: list[dict[str, Any]] | tuple = (),
    ) -> None:
        """A turn ended: write it (all its ``events``), then tell everyone (the ``new`` ones not told yet)."""
        game = self.game
        assert game is not None
        written = (persist.turn_row(turn, events),)
        self.turn_times.append(time.monotonic())
        items = self._event_items(new)
        self.texts.extend(i["text"] for i in items)
        self._compute_odds()  # read from the kept table (no solve), on the loop

        def tell() -> None:
            body = {
                "type": "turn",
                "turn": turn,
                "seat": seat,
                "skipped": skip,
                "events": items,
                "positions": list(game.positions),
                "current": game.current_seat,
                "finished": list(game.finishing_order),
                "round": game.round,
                "odds": self.odds.to_dict(),
            }
            if self.rules.choice:
                body["coach"] = list(coach)
            if game.is_over:
                body.update(status="over", game_id=self.game_id, remaining=0, saving=self.saving)
            else:
                self._schedule()
                body.update(status="playing", remaining=self.remaining(), saving=self.saving)
            self.broadcast(body)

        if game.is_over:
            self.status = "over"
            self.game_id = await self.manager.store_game(self, "finished", written)  # on disk before anyone is told
            tell()
        else:  # on disk before anyone is told, and before the next countdown; told by the commit itself
            await self._persist(written, tell)

    def _schedule(self) -> None:
        """Start the timer for the seat to play: the AI's pause, or the online countdown."""
        game = self.game
        assert game is not None
        self._cancel_timer()
        seat = game.current_seat
        if game.waiting:  # a player's decision: its own countdown (online), the server decides past it
            if self.kind == "online" and not self.seats[seat].ai:
                self.deadline = time.monotonic() + self.countdown
                self._timer = turns.after_choice(self, self.countdown, self._asked)
            return
        if not self._anyone_racing():  # nobody here to play: pause rather than skip absent seats for ever
            if not self.paused:
                self.paused = True
                self.texts.append("The game is paused: no player still racing is here.")
            return
        turn = game.total_turns
        if self.seats[seat].ai:
            self._timer = later(self.manager.ai_delay, lambda: self._after(turn, skip=False))
        elif self.kind == "online":
            wait = self.countdown + (RESTORE_GRACE if self._fresh_for == (turn, seat) else 0.0)
            self.deadline = time.monotonic() + wait
            self._timer = later(wait, lambda: self._after(turn, skip=True))

    def _anyone_racing(self) -> bool:
        """Whether a seat still racing is played by the server or by a connected browser."""
        game = self.game
        assert game is not None
        done = set(game.finishing_order)
        return any(s.ai or s.connected > 0 for i, s in enumerate(self.seats) if i not in done)

    def _maybe_resume(self, seat: int) -> None:
        """A seat came back: a paused game goes on (a running countdown keeps running: the server decides)."""
        if self.paused and self.status == "playing" and self.game is not None and seat not in self.game.finishing_order:
            self.paused = False
            self.texts.append(f"{self.seats[seat].name} is back: the game goes on.")
            self._schedule()  # the caller tells everyone (the presence changed)

    async def _after(self, turn: int, *, skip: bool) -> None:
        """The countdown of turn ``turn`` ran out: play it (the AI seat) or skip it (an idle player)."""
        async with self.lock:
            game = self.game
            if self.status != "playing" or game is None or game.total_turns != turn:
                return
            self._timer = None
            self.deadline = 0.0
            try:
                await self._play(skip=skip)
            except Exception:  # never let a timer kill the loop; the room is abandoned instead
                log.exception("room %s: timer failed", self.id)
                await self._abandon()

    def _cancel_timer(self) -> None:
        self.deadline = 0.0
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    async def abandon(self) -> bool:
        """Stop a game that will not be finished: stored as abandoned, everyone told.

        Returns whether the room may be dropped: its game is stored (or there
        was none to store).
        """
        async with self.lock:
            return await self._abandon()

    async def _abandon(self) -> bool:
        self._cancel_timer()
        if self.status == "playing":
            self.status, self._unstored = "abandoned", True  # no change from here on
        if not self._unstored:
            return True
        self.game_id = await self.manager.store_game(self, "abandoned")
        if (
            self.game_id > 0
            or self._queued
            or self.manager.store is None
            or self.game is None
            or self.game.total_turns == 0
        ):
            self._unstored = False
            self.broadcast_room()
        return not self._unstored

    def disconnect(self, conn: Connection) -> None:
        self.conns.discard(conn)
        if 0 <= conn.seat < len(self.seats):
            self.seats[conn.seat].connected -= 1
            if self.status in ("lobby", "playing"):
                asyncio.ensure_future(self._tell_presence())  # after any change in progress is told
        conn.seat = -1
        self.idle_since = time.monotonic()

    async def _tell_presence(self) -> None:
        async with self.lock:
            if self.status in ("lobby", "playing"):
                self.broadcast_room()

    def resume(self) -> None:
        """Go on after a restart (a room :func:`persist.restore` rebuilt): timers, odds, a line in the log."""
        self.restored, self.idle_since = True, time.monotonic()
        self.texts.append("The server restarted; the game is back where it was.")
        game = self.game
        if self.status != "playing" or game is None:
            return
        if self.odds_method in ("busy", "none"):
            self.odds = LiveOdds((), self.odds_method)
        else:
            asyncio.ensure_future(self._prepare_odds(game, 0.0))
        self._fresh_for = (game.total_turns, game.current_seat)
        self.paused = not self._anyone_racing()  # quietly: the first player back resumes it
        if self.rules.choice:
            asyncio.ensure_future(self._resume_play())
        elif not self.paused:
            self._schedule()

    async def _resume_play(self) -> None:
        """A restored game under a choice rule: its tables first, then its timers."""
        async with self.lock:
            await self._prepare_play()
            if self.status == "playing" and not self.paused:
                self._schedule()


class RoomManager:
    """Every room of one server, the store, and the limits.

    Parameters
    ----------
    boards : mapping of str to Board
        The boards a room may be played on, by name.
    store : GameStore, optional
        Where finished and abandoned games go (nowhere when not given).
    countdown : float, default 30
        Default seconds an online seat has to roll before it is skipped.
    ai_delay : float, default 1.2
        Seconds an AI seat waits before rolling.
    max_rooms : int, default 2000
        Rooms held at once; creating more is refused.
    idle_timeout : float, default 900
        A room with no connection for this long is closed (a game still being
        played in it is stored as abandoned).
    seed : int, optional
        Makes every room's dice reproducible (tests); unpredictable otherwise.
    odds_wait : float, default 1.5
        Seconds a starting game waits for its odds to be solved; past that
        it starts with ``"pending"`` odds and an ``odds`` message follows.
    limits : ServerLimits, optional
        ``rooms_per_address`` and the odds pool's size, queue and memory.
    """

    def __init__(
        self,
        boards: Mapping[str, Board],
        *,
        store: Any = None,
        countdown: float = 30.0,
        ai_delay: float = 1.2,
        max_rooms: int = 2000,
        idle_timeout: float = 900.0,
        seed: int | None = None,
        odds_wait: float = 1.5,
        limits: ServerLimits | None = None,
    ) -> None:
        self.limits = limits = limits or ServerLimits()
        self.odds = OddsSolver(
            workers=limits.odds_workers, queue=limits.odds_queue, cache_bytes=limits.odds_cache_bytes
        )
        self.policies = PolicySolver()
        self.boards = dict(boards)
        self.odds_wait = float(odds_wait)
        self.store = store
        self.countdown = float(countdown)
        self.ai_delay = float(ai_delay)
        self.max_rooms = int(max_rooms)
        self.idle_timeout = float(idle_timeout)
        self.rooms: dict[str, Room] = {}
        self._seed = seed
        self._made = 0
        self._reaper: asyncio.Task | None = None
        self.boot = secrets.token_hex(6)  # this server's run: a page that sees it change knows of a restart
        self.on_store: Callable[[Room, int], None] | None = None

    @property
    def persists(self) -> bool:
        """Whether the rooms are written to the store at every change (a :class:`GameStore` is given)."""
        return hasattr(self.store, "save_room")

    def seed_for(self, room: Room) -> Any:
        if self._seed is None:
            return None
        self._made += 1
        return [self._seed, self._made]

    def create(  # noqa: C901
        self,
        kind: Any,
        seats: Any,
        *,
        board: str | None = None,
        rules: Any = None,
        mode: str = "classic",
        countdown: float | None = None,
        owner: str = "",
    ) -> Room:
        """A new room with its first seats (all of them for a local room), created by the address ``owner``.

        Raises
        ------
        ProtocolError
            For a bad kind, seats, board, rules or mode, too many rooms
            (``server_full``), or too many rooms of ``owner`` not over yet
            (``too_many_rooms``).
        """
        if len(self.rooms) >= self.max_rooms:
            raise ProtocolError(f"the server holds {self.max_rooms} rooms already; try later", "server_full")
        owner = client_key(owner) if owner else ""
        cap = self.limits.rooms_per_address
        if owner and sum(r.owner == owner and r.status in _LIVE for r in self.rooms.values()) >= cap:
            raise ProtocolError(f"one address may hold {cap} rooms not over yet; finish or leave one", "too_many_rooms")
        if kind not in KINDS:
            raise ProtocolError(f"kind must be one of {KINDS}", "bad_field")
        board_name = next(iter(self.boards)) if board is None else board
        if not isinstance(board_name, str) or board_name not in self.boards:
            raise ProtocolError(f"board must be one of {', '.join(self.boards)}", "bad_field")
        if mode not in MODES:
            raise ProtocolError(f"mode must be one of {MODES}", "bad_field")
        the_rules = rules_from_data(rules or {}, self.boards[board_name])
        if countdown is None:
            countdown = self.countdown
        if type(countdown) not in (int, float) or not 0.05 <= countdown <= 600:
            raise ProtocolError("countdown must be a number of seconds 0.05..600", "bad_field")
        if not isinstance(seats, list) or not 1 <= len(seats) <= MAX_SEATS:
            raise ProtocolError(f"seats must be a list of 1 to {MAX_SEATS} seats", "bad_field")
        room = Room(self, kind, board_name, the_rules, mode, float(countdown), owner)
        for item in seats:
            if not isinstance(item, dict) or not set(item) <= {"name", "colour", "ai", "strength"}:
                raise ProtocolError("each seat is {name, colour, ai, strength}", "bad_field")
            ai = item.get("ai", False)
            if not isinstance(ai, bool):
                raise ProtocolError("seat ai must be true or false", "bad_field")
            strength = check_strength(item["strength"]) if "strength" in item else "optimal"
            if "strength" in item and not ai:
                raise ProtocolError("strength: only an AI seat has one", "bad_field")
            room._add_seat(check_name(item.get("name")), check_colour(item.get("colour")), ai=ai, strength=strength)
        if kind == "local":
            if len(room.seats) < 2:
                raise ProtocolError("a local game needs 2 to 6 seats", "too_few_seats")
            if all(s.ai for s in room.seats):
                raise ProtocolError("a local game needs at least one human seat", "bad_field")
        elif room.seats[0].ai or len(room.seats) != 1:
            raise ProtocolError("an online room is created with the host's own seat only", "bad_field")
        self.rooms[room.id] = room
        return room

    async def store_game(self, room: Room, status: str, turns: tuple[tuple[int, str], ...] = ()) -> int:
        """Write the room's game to the store (in a worker thread; with the room's row and ``turns``, in
        the same transaction); its id, 0 with no store."""
        if self.store is None or room.game is None or room.game.total_turns == 0:
            return 0  # nothing to store: no game, or not a single turn played
        record, store = room.game.record(), self.store
        online = room.kind == "online"
        options = {"row": persist.room_row(room, turns)} if self.persists else {}
        try:
            game_id = await persist.written(
                room, lambda: store.add_later(record, room=room.id, status=status, online=online, **options)
            )
        except StoreBusyError as busy:  # queued: the store writes it, in order, when the database frees
            log.warning("room %s: the database is busy; its game waits in the store's queue", room.id)
            room._queued = True
            if status == "finished":
                asyncio.ensure_future(self._when_written(room, busy))
            return 0
        except Exception:
            log.exception("room %s: could not store the game", room.id)
            return 0
        if self.on_store is not None:
            self.on_store(room, game_id)
        return game_id

    async def _when_written(self, room: Room, busy: StoreBusyError) -> None:
        """A finished game queued for a busy database: once it is written, its room learns its id, and says so."""
        store = self.store
        while not await asyncio.to_thread(busy.written, 1.0):
            if store is None or store.closed:
                return
        async with room.lock:
            room.game_id = busy.id
            room.saving = "ok" if busy.id > 0 else "failed"
            room.broadcast_room()

    def start(self) -> None:
        """Bring back the rooms of the store, and start the reaper of idle rooms (call from the running loop)."""
        if self.persists:
            for room in persist.restore(self, Room, SeatSlot):
                self.rooms[room.id] = room
                room.resume()
            if self.rooms:
                log.info("%d rooms restored from the store", len(self.rooms))
        self._reaper = asyncio.ensure_future(self._reap())

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(30.0, self.idle_timeout / 2))
            await self.reap()

    async def reap(self) -> int:
        """Close the rooms idle past ``idle_timeout``: each game still being played is stored first.

        A room whose game could not be stored stays (it is tried again at the
        next sweep): nothing leaves memory without reaching the store.
        Returns how many rooms were closed.
        """
        now, closed = time.monotonic(), 0
        for room in list(self.rooms.values()):
            if not room.conns and now - room.idle_since > self.idle_timeout:
                try:
                    stored = await room.abandon()
                except Exception:
                    log.exception("room %s: could not be closed", room.id)
                    continue
                if stored:
                    self.rooms.pop(room.id, None)
                    closed += 1
                    await self._forget(room)
        return closed

    async def _forget(self, room: Room) -> None:
        """Delete the row of a room that left memory (its game is stored already)."""
        if self.persists:
            try:
                await asyncio.to_thread(self.store.drop_room, room.id)
            except Exception:  # the row stays: a restart brings the room back, to be reaped again
                log.exception("room %s: could not delete its row", room.id)

    def odds_of(self, game: Game) -> LiveOdds:
        """The live odds of a game between two turns (the one call to the odds code)."""
        try:
            return self.odds.win_odds(
                game.board,
                game.rules,
                game.mode,
                positions=game.positions,
                finished=game.finishing_order,
                current=game.current_seat,
            )
        except SnlError:  # no figure for this board and rules
            return LiveOdds((), "none")
        except Exception:  # a bug in the odds is no reason not to play: no odds, logged
            log.exception("odds query failed")
            return LiveOdds((), "none")

    async def shutdown(self) -> None:
        """Stop the timers and close the connections; the rooms stay in the store as they are, to be resumed.

        Without a store (nowhere to resume from) every game still being
        played is abandoned and everyone told.
        """
        self.odds.shutdown()
        self.policies.shutdown()
        if self._reaper is not None:
            self._reaper.cancel()
        for room in list(self.rooms.values()):
            with contextlib.suppress(Exception):
                if self.persists:
                    async with room.lock:  # a write in progress ends first
                        room._cancel_timer()
                else:
                    await room.abandon()
            for conn in list(room.conns):
                conn.close_code = CLOSE_RESTART
                conn.close()


def _positions_now(game: Game) -> list[int]:
    """Every token's square, the mover's where its turn has taken it when the turn waits for a choice."""
    out = list(game.positions)
    if game.waiting:
        out[game.decision.seat] = game.decision.square
    return out


def _board_data(board: Board, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "size": board.size,
        "ladders": [[s, e] for s, e in board.ladders.items()],
        "snakes": [[s, e] for s, e in board.snakes.items()],
    }


def _event_data(event: Event, names: list[str]) -> dict[str, Any]:
    d = event.to_dict()
    d["text"] = event.describe(names[event.seat])
    return d
