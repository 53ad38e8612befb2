"""Rematch: a finished room's seats, rules and board in a new room.

``POST /api/rooms/{id}/rematch`` with ``{"secret": ...}`` (a seat's or the
host's secret of a room whose game is over). In a local room (pass & play,
play with AI) the one browser holds every seat, so the new room starts at once
and the answer carries its secrets, as ``POST /api/rooms`` does. In an online
room each human seat must ask (AI seats accept by themselves); every request
is broadcast to the old room as ``{"type": "rematch", "accepted", "waiting",
"room"}``, and once the last seat has asked the new room starts and each
seat's browsers are sent their own link (``{"type": "rematch_ready", "url"}``,
with that seat's secret; never broadcast).

The votes and the new rooms are kept beside the rooms (weakly: a closed room
takes its votes with it); :mod:`.rooms` is not changed.
"""

from __future__ import annotations

import hmac
import weakref
from typing import Any

from .protocol import ProtocolError
from .rooms import Room, RoomManager, SeatSlot

__all__ = []

_votes: weakref.WeakKeyDictionary[Room, set[int]] = weakref.WeakKeyDictionary()
_next: weakref.WeakKeyDictionary[Room, Room] = weakref.WeakKeyDictionary()


def _who(room: Room, secret: Any) -> tuple[int, bool]:
    """(seat, is_host) for a secret of ``room``; ProtocolError if it opens nothing."""
    if not isinstance(secret, str) or not 8 <= len(secret) <= 64:
        raise ProtocolError("rematch: a seat's or the host's secret is needed", "bad_secret")
    if hmac.compare_digest(secret, room.host_secret):
        return (0 if room.kind == "online" else -1), True
    for i, s in enumerate(room.seats):
        if not s.ai and hmac.compare_digest(s.secret, secret):
            return i, False
    raise ProtocolError("rematch: that secret opens no seat of this room", "bad_secret")


def _link(new: Room, seat: int, host: bool) -> str:
    return f"/room/{new.id}#" + (f"h={new.host_secret}" if host else f"s={new.seats[seat].secret}")


async def _open(manager: RoomManager, room: Room) -> Room:
    """The new room: the same seats (new secrets), board, rules, mode and countdown, started."""
    first = room.seats[0]
    new = manager.create(
        room.kind,
        [{"name": first.name, "colour": first.colour, "ai": first.ai}]
        if room.kind == "online"
        else [
            {"name": s.name, "colour": s.colour, "ai": s.ai, **({"strength": s.strength} if s.ai else {})}
            for s in room.seats
        ],
        board=room.board_name,
        rules=room.rules.to_dict(),
        mode=room.mode,
        countdown=room.countdown,
    )
    if room.kind == "online":
        new.seats += [SeatSlot(s.name, s.colour, ai=s.ai, strength=s.strength) for s in room.seats[1:]]
    _next[room] = new
    await new.start()
    return new


async def rematch(manager: RoomManager, room_id: str, secret: Any) -> dict[str, Any]:
    """Ask for a rematch of room ``room_id`` with ``secret``; the answer for the asking browser.

    Returns
    -------
    dict
        Local rooms: ``{room, kind, host, seats, url}`` of the new room.
        Online rooms: ``{accepted, waiting, room, url}``; ``room`` and
        ``url`` (this seat's own link) are empty until every seat has asked.

    Raises
    ------
    ProtocolError
        ``no_room``, ``not_over`` or ``bad_secret``.
    """
    room = manager.rooms.get(room_id) if isinstance(room_id, str) else None
    if room is None:
        raise ProtocolError("no such room", "no_room")
    if room.status != "over":
        raise ProtocolError("rematch: the game is not over", "not_over")
    seat, host = _who(room, secret)
    new = _next.get(room)
    if room.kind == "local":
        if new is None:
            new = await _open(manager, room)
            room.broadcast({"type": "rematch", "accepted": list(range(len(room.seats))), "waiting": [], "room": new.id})
        return {
            "room": new.id,
            "kind": new.kind,
            "host": new.host_secret,
            "seats": [s.secret if not s.ai else "" for s in new.seats],
            "url": f"/room/{new.id}",
        }
    votes = _votes.setdefault(room, {i for i, s in enumerate(room.seats) if s.ai})
    votes.add(seat)
    waiting = [i for i in range(len(room.seats)) if i not in votes]
    if not waiting and new is None:
        new = await _open(manager, room)
        for conn in list(room.conns):
            if conn.seat >= 0 or conn.host:
                own = 0 if conn.host and room.kind == "online" else conn.seat
                conn.push({"type": "rematch_ready", "url": _link(new, own, conn.host)})
    room.broadcast({"type": "rematch", "accepted": sorted(votes), "waiting": waiting, "room": new.id if new else ""})
    return {
        "accepted": sorted(votes),
        "waiting": waiting,
        "room": new.id if new else "",
        "url": _link(new, seat, host) if new else "",
    }
