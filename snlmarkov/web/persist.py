"""Open rooms on disk: what a room writes at each change, and how a restarted server brings it back.

Every change of a room is written to the store (:meth:`GameStore.save_room
<snlmarkov.web.store.GameStore.save_room>`, one transaction each) by
:func:`written`: a turn (its events, with the dice) and the room's state
(:func:`room_state`) *before* the turn is broadcast, the start of a game
before it is announced, a change in the lobby as it is made. The state holds
the room's kind, owner, board, rules, mode and countdown, its seats with the
SHA-256 of their secrets (never a secret: they are 144 random bits, so a
plain hash cannot be reversed), the log lines, the sequence number, the
positions, the finishing order and the seat to move.

:func:`restore` rebuilds every room of a store as it was at its last write:
the game is replayed from its stored turns (:meth:`Game.resume
<snlmarkov.Game.resume>`, which checks them) and goes on with a fresh die.
A player's link (its secret) opens the same seat, since the hashes match.

Examples
--------
>>> digest("abc")[:16]
'ba7816bf8f01cfea'
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from ..board import Board
from ..errors import InputFileError, SnlError
from ..game.engine import Game
from ..game.events import Event, Roll, event_from_dict
from ..game.record import GameRecord
from ..game.seats import Seat
from ..rules import Rules
from .protocol import STRENGTHS
from .store import GameStore, PendingWrite, RoomRow, StoreBusyError
from .timing import WriteClock, run_as

#: a room or its manager (:mod:`.rooms`, which imports this module)
Room: TypeAlias = Any
RoomManager: TypeAlias = Any

__all__ = []

log = logging.getLogger("snlmarkov.web")

#: the version of a stored room's state
STATE_FORMAT = 1
#: seconds a write may take before the room tells its players that writing is behind
BEHIND_AFTER = 1.0
#: seconds the first write of a group commit waits for the writes queued after it: a write queued later
#: commits the group at once (see :func:`_commit_soon`)
GROUP_WAIT = 0.001


def digest(secret: str) -> str:
    """The hash of a secret that the store keeps instead of the secret (SHA-256, hex)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def room_state(room: Room) -> str:
    """The room as the JSON text of its ``rooms`` row (no secret, only their hashes).

    The board and the rules (frozen, and the same at every turn) are encoded
    once for as long as the room keeps them (``room.frozen_json``); the text is
    what ``json.dumps`` gives the whole state.
    """
    game = room.game
    head = {
        "format": STATE_FORMAT,
        "kind": room.kind,
        "owner": room.owner,
        "host": room.host_digest,
        "board_name": room.board_name,
    }
    state: dict[str, Any] = {
        "mode": room.mode,
        "countdown": room.countdown,
        "seats": [
            {"name": s.name, "colour": s.colour, "ai": s.ai, "hash": s.digest, "strength": s.strength}
            for s in room.seats
        ],
        "seq": room.seq,
        "texts": list(room.texts),
        "odds": room.odds.method,
        "paused": room.paused,
    }
    if game is not None:
        state.update(
            positions=list(game.positions),
            finished=list(game.finishing_order),
            to_move=game.current_seat,
            turns=game.total_turns,
        )
    frozen = room.frozen_json
    if frozen is None or frozen[0] is not room.board or frozen[1] is not room.rules:
        text = f'"board": {json.dumps(room.board.to_dict())}, "rules": {json.dumps(room.rules.to_dict())}'
        frozen = room.frozen_json = (room.board, room.rules, text)
    return f"{json.dumps(head)[:-1]}, {frozen[2]}, {json.dumps(state)[1:]}"


def _status(room: Room) -> str:
    return "lobby" if room.status == "starting" else room.status


def turn_row(turn: int, events: Sequence[Event]) -> tuple[int, str]:
    """One ``room_turns`` row: the turn's number and its events as JSON (the rolls carry the dice)."""
    return turn, json.dumps([e.to_dict() for e in events])


def room_row(room: Room, turns: Sequence[tuple[int, str]] = ()) -> RoomRow:
    """The room's row as it is now, with the new ``turns`` (see :func:`turn_row`)."""
    return RoomRow(room.id, _status(room), room_state(room), tuple(turns), room.game_id)


class _Waiter:
    """A write waiting for its store's next commit: the future its task awaits, and what to do once the write is
    on disk (run by the commit itself, in the task's context)."""

    __slots__ = ("future", "item", "then", "task", "context")

    def __init__(self, future: asyncio.Future[Any], item: PendingWrite, then: Callable[[], None] | None) -> None:
        self.future, self.item, self.then = future, item, then
        self.task = asyncio.current_task()
        self.context = contextvars.copy_context() if then is not None else None

    def resolve(self) -> None:
        """After the commit: run ``then`` if the write was made, and wake the task with True (``then`` ran), False
        (it did not: the write is not done, or failed) or the exception ``then`` raised (which never reaches the
        commit: every waiter of a commit is resolved)."""
        if self.future.done():  # its task was cancelled
            return
        outcome: bool | BaseException = False
        made = self.item.done.is_set() and not self.item.error
        if made and self.then is not None and self.context is not None:
            try:
                run_as(self.task, self.context, self.then)
                outcome = True
            except BaseException as exc:  # raised in the task, as if it had called ``then`` itself
                outcome = exc
        self.future.set_result(outcome)


class _Group:
    """The writes of one group commit of a store on a loop: their waiters, and when the first was queued.

    It does not hold its store (the key it is kept under in :data:`_GROUPS`,
    which holds stores weakly): a group a closed loop never committed does
    not keep its store alive.
    """

    __slots__ = ("loop", "waiters", "since", "done")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiters: list[_Waiter] = []
        self.since = loop.time()
        self.done = False

    def commit(self, store: GameStore) -> None:
        """Write the group's writes to ``store`` in one transaction and resolve their waiters, in order (once:
        later calls do nothing)."""
        if self.done:
            return
        self.done = True
        if _GROUPS.get(store) is self:  # writes queued from here on go in the next group
            del _GROUPS[store]
        try:
            store.flush_now()
        except Exception:  # the writes stay queued: their callers wait for them in a thread
            log.exception("the game store could not be written from the event loop")
        finally:
            for w in self.waiters:
                w.resolve()


#: the group each store is gathering on the running loop (its commit scheduled just after this pass)
_GROUPS: weakref.WeakKeyDictionary[GameStore, _Group] = weakref.WeakKeyDictionary()


def _commit_soon(
    store: GameStore, item: PendingWrite, then: Callable[[], None] | None = None
) -> asyncio.Future[bool | BaseException]:
    """A future of the commit of ``item``: every write queued on this loop from the first of its group on goes in
    it (group commit).

    The group's commit runs just after the pass of the loop in which its
    first write was queued, or sooner: a write queued more than
    :data:`GROUP_WAIT` seconds after the group's first commits the group
    at once, itself included, in its own task (a pass that handles many
    messages then makes several commits, and no write waits for all of
    the pass's work). Each caller gets a future of its own, which the
    commit completes directly: a caller cancelled meanwhile cancels only
    its own (the commit still runs for the others). Its ``then`` (for its
    write ``item``) is run by the commit, in order, as soon as the write
    is on disk, rather than in the next pass of the loop, where the
    caller's task wakes: what a turn tells its players goes out a pass
    sooner. The future's result says whether ``then`` ran (see
    :meth:`_Waiter.resolve`).
    """
    loop = asyncio.get_running_loop()
    waiter = _Waiter(loop.create_future(), item, then)
    group = _GROUPS.get(store)
    if group is None or group.loop is not loop:  # not one a closed loop left behind
        group = _GROUPS[store] = _Group(loop)
        loop.call_soon(group.commit, store)
    group.waiters.append(waiter)
    if loop.time() - group.since > GROUP_WAIT:
        group.commit(store)
    return waiter.future


async def written(room: Room, queue: Callable[[], PendingWrite], then: Callable[[], None] | None = None) -> int:
    """Queue a write (``queue()`` returns it, e.g. ``lambda: store.save_room_later(row)``), wait until it is
    on disk, call ``then()`` (what may be told once it is) and return the write's id.

    The writes of every room queued in one pass of the event loop are
    committed together, on the loop, just after it (``GameStore.flush_now``:
    it never waits for a lock), or, in a pass long enough, in groups of the
    writes queued within :data:`GROUP_WAIT` of each group's first; the
    ``then`` of each write made there is called by the commit itself, in
    the order they were queued. If that
    cannot be done (another connection holds the database, or a thread holds
    the store's connection) the write is waited for in a worker thread with
    the store's retries, and ``then`` called once it is made; if that takes
    longer than :data:`BEHIND_AFTER` seconds the room's players are told (a
    ``saving`` message with ``saving: "behind"``). ``room.saving`` says how
    the last write went (``"ok"``, ``"behind"``: queued in the store,
    written when the database frees, or ``"failed"``), and is set before
    ``then`` is called. Exceptions are the write's (``then`` is not called)
    or ``then``'s own.
    """
    store = room.manager.store
    assert store is not None  # only rooms of a manager with a store write
    clock = WriteClock()  # the load benchmark's split of a message's time (snlmarkov/web/timing.py)

    def made() -> None:
        room.saving = "ok"
        clock.stop()
        if then is not None:
            then()

    try:
        item = queue()
        outcome = await _commit_soon(store, item, made if then is not None else None)
        if item.done.is_set():
            out = store.result(item)
        else:
            task = asyncio.ensure_future(asyncio.to_thread(store.wait_for, item))
            done, _ = await asyncio.wait({task}, timeout=BEHIND_AFTER)
            if not done and room.saving != "behind":
                room.saving = "behind"
                room.broadcast({"type": "saving", "saving": "behind"})
            out = await task
    except StoreBusyError:
        room.saving = "behind"
        raise
    except BaseException:
        room.saving = "failed"
        raise
    finally:
        clock.stop()
    if isinstance(outcome, BaseException):
        raise outcome
    if outcome is not True:
        made()
    return out


def restore(manager: RoomManager, room_type: Callable[..., Room], seat_type: Callable[..., Any]) -> list[Room]:
    """Every room of ``manager.store`` rebuilt as it was last written (rooms that cannot be are logged and left).

    ``room_type`` and ``seat_type`` are :class:`~snlmarkov.web.rooms.Room`
    and :class:`~snlmarkov.web.rooms.SeatSlot`.
    """
    rooms = []
    for row in manager.store.open_rooms():
        if row.status == "abandoned":  # its game is stored; it was on its way out
            continue
        try:
            rooms.append(_rebuild(manager, row, room_type, seat_type))
        except (SnlError, ValueError, KeyError, TypeError) as exc:
            log.warning("room %s: not restored: %s", row.id, exc)
    return rooms


def _rebuild(manager: RoomManager, row: RoomRow, room_type: Callable[..., Room], seat_type: Callable[..., Any]) -> Room:
    s = json.loads(row.state)
    if not isinstance(s, dict) or s.get("format") != STATE_FORMAT:
        raise InputFileError("unknown state format")
    board = Board.from_dict(s["board"], source="stored room board")
    rules = Rules().replace(**s["rules"])
    room = room_type(
        manager, s["kind"], s["board_name"], rules, s["mode"], float(s["countdown"]), s["owner"], board=board
    )
    room.id, room.status, room.game_id, room.seq = row.id, row.status, row.game_id, int(s["seq"])
    room.host_secret, room.host_digest = "", str(s["host"])
    room.seats = [
        seat_type(
            x["name"],
            x["colour"],
            ai=bool(x["ai"]),
            secret="",
            digest=str(x["hash"]),
            strength=str(x.get("strength", "")) if x.get("strength", "") in ("", *STRENGTHS) else "",
        )
        for x in s["seats"]
    ]
    room.texts.extend(str(t) for t in s["texts"])
    room.paused = bool(s["paused"])
    if row.status in ("playing", "over"):
        if [t for t, _ in row.turns] != list(range(int(s["turns"]))):
            raise InputFileError(f"the stored turns are not 0..{int(s['turns']) - 1}")
        events = tuple(event_from_dict(e) for _, text in row.turns for e in json.loads(text))
        record = GameRecord(
            board=board,
            rules=rules,
            seats=tuple(Seat(x.name, x.colour) for x in room.seats),
            mode=room.mode,
            log=events,
            dice=tuple(e.value for e in events if isinstance(e, Roll)),
            positions=tuple(s["positions"]),
            finishing_order=tuple(s["finished"]),
        )
        if row.status == "over":
            room.game = Game.replay(record)
        else:
            room.game = Game.resume(record, rng=manager.seed_for(room))
    room.odds_method = str(s["odds"])
    return room
