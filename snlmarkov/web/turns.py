"""Turns with a choice in a room: the mover's decisions, made by a player, an AI seat or the server for an idle one.

Under a rule set with a choice (``docs/rules.md``, "Choices") the engine
stops at every decision of the mover (:attr:`Game.waiting
<snlmarkov.Game.waiting>`, :attr:`Game.decision <snlmarkov.Game.decision>`).
The room answers it:

- for an AI seat, at once from the seat's table (its strength's policy,
  resolved when the game started: :class:`~snlmarkov.web.coach.TablePlay`),
  every decision of its turn in one go;
- for a human seat it asks: a ``choice`` message (to everyone) carries the
  events so far and the decision, and the mover answers with ``choose``
  (or, under ``choose_die``, with a ``roll`` that names its die). In an
  online room a decision left unanswered for the countdown is made by the
  server, the greedy choice, and the log says so.

After every choice the coach's verdict (:meth:`TablePlay.judge
<snlmarkov.web.coach.TablePlay.judge>`) goes out with it. A turn is written
to the store, and its end broadcast as a ``turn`` message, once it ends;
the events a ``choice`` message already carried are not sent again.

The functions here change a room: the caller holds its lock.
"""

from __future__ import annotations

import logging
from typing import Any

from ..game.engine import Game
from .coach import TablePlay
from .countdown import Countdown, later
from .protocol import ProtocolError

__all__ = []

log = logging.getLogger("snlmarkov.web")

#: a room (:class:`~snlmarkov.web.rooms.Room`, which imports this module)
Room = Any


def decision_data(game: Game) -> dict[str, Any] | None:
    """The decision the game waits for, as plain data (None when it waits for none)."""
    if not game.waiting:
        return None
    d = game.decision
    options = [o.spec for o in d.options] if d.kind == "die" else [int(v) for v in d.options]
    return {
        "kind": d.kind,
        "seat": d.seat,
        "turn": d.turn,
        "square": d.square,
        "sixes": d.sixes,
        "capped": d.capped,
        "options": options,
    }


def _check_answer(game: Game, die: int | None, value: int | None) -> int:
    """The answer to the decision the game waits for, checked against what it offers (nothing changes on refusal)."""
    d = game.decision
    if d.kind == "die":
        if die is None:
            raise ProtocolError("choose: these rules let the mover choose the die: send die (its index)", "bad_choice")
        if not 0 <= die < len(d.options):
            raise ProtocolError(f"choose: die must be 0..{len(d.options) - 1} (the dice offered)", "bad_choice")
        return die
    if value is None:
        raise ProtocolError("choose: these rules let the mover choose the move: send value (one rolled)", "bad_choice")
    if value not in d.options:
        raise ProtocolError(f"choose: value must be one of the values rolled {list(d.options)}", "bad_choice")
    return value


def _need_play(room: Room) -> None:
    """Refuse a move while a restored room's tables are still being prepared (a moment after a restart)."""
    if room.play is None:
        raise ProtocolError("the server is preparing this game's choices after a restart: try again", "not_ready")


async def start_turn(room: Room, die: int | None) -> None:
    """The mover's turn starts (a player's ``roll``, or the AI seat's timer); ``die`` is a ``roll``'s die."""
    game: Game = room.game
    _need_play(room)
    if game.waiting:
        raise ProtocolError("roll: the turn has begun; answer its choice with choose", "not_your_turn")
    if die is not None and not 0 <= die < len(room.rules.choose_die):
        raise ProtocolError(f"roll: die must be 0..{len(room.rules.choose_die) - 1} (the dice offered)", "bad_choice")
    room._cancel_timer()
    room._turn_mark = len(game.log)
    events = game.take_turn()
    await _go_on(room, events, die)


async def answer(room: Room, die: int | None, value: int | None) -> None:
    """The mover's answer (a ``choose`` message) to the decision its turn waits for."""
    game: Game = room.game
    _need_play(room)
    if not game.waiting:
        raise ProtocolError("choose: there is nothing to choose now (roll first)", "not_choosing")
    chosen = _check_answer(game, die, value)
    room._cancel_timer()
    await _go_on(room, [], chosen)


async def choose_for_idle(room: Room, asked: int) -> None:
    """The countdown of decision number ``asked`` ran out: the server makes the greedy choice for the mover."""
    game: Game = room.game
    if not game.waiting or room._asked != asked:
        return
    play: TablePlay = room.play
    d = game.decision
    chosen = play.choice(play.greedy, d)
    name = room.seats[d.seat].name
    shown = d.options[chosen].spec if d.kind == "die" else str(chosen)
    what = f"the {shown}" if d.kind == "die" else f"to move {shown}"
    room.texts.append(f"{name} took too long: the server chose {what} for {name} (the greedy choice).")
    await _go_on(room, [], chosen, idle=True)


async def _go_on(room: Room, events: list[Any], chosen: int | None, *, idle: bool = False) -> None:
    """Play the turn on: ``chosen`` answers the decision waiting (if any), an AI seat answers its own."""
    game: Game = room.game
    play: TablePlay = room.play
    seat, turn = game.current_seat, game.total_turns
    names = [s.name for s in room.seats]
    table = play.seats[seat]
    coach: list[dict[str, Any]] = []
    new = list(events)
    while game.waiting:
        d = game.decision
        if chosen is None:
            if table is None:
                break  # a human's decision: ask
            chosen = play.choice(table, d)
        verdict = play.judge(d, chosen)
        if verdict is not None:
            coach.append(
                {
                    "seat": seat,
                    "idle": idle,
                    "sixes": d.sixes,
                    "origin": d.origin,
                    "others": list(d.others),
                    **verdict.to_dict(names[seat]),
                }
            )
        new += game.choose(chosen) if d.kind == "die" else game.pick(chosen)
        chosen, idle = None, False
    if game.total_turns != turn:  # the turn ended: written and told as every turn is
        await room._turn_done(seat, turn, list(game.log[room._turn_mark :]), new, skip=False, coach=coach)
        return
    room._asked += 1
    items = room._event_items(new)
    room.texts.extend(i["text"] for i in items)
    room._schedule()
    room.broadcast(
        {
            "type": "choice",
            "turn": turn,
            "seat": seat,
            "events": items,
            "decision": decision_data(game),
            "coach": coach,
            "remaining": room.remaining(),
        }
    )


def after_choice(room: Room, delay: float, asked: int) -> Countdown:
    """The countdown of a decision: past ``delay`` seconds the server chooses for the idle mover."""

    async def run() -> None:
        async with room.lock:
            if room.status != "playing" or room.game is None or room._asked != asked:
                return
            room._timer = None
            room.deadline = 0.0
            try:
                await choose_for_idle(room, asked)
            except Exception:  # never let a timer kill the loop; the room is abandoned instead
                log.exception("room %s: a choice's timer failed", room.id)
                await room._abandon()

    return later(delay, run)
