"""What the server's cheaper per-turn paths give is what the plain ones gave.

The room's state row (its board and rules encoded once), a turn's odds read
on the loop (a failing query gives no odds, not a failed turn), and a record
signed with ``online`` (no intermediate record).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from snlmarkov import Board, Game, Rules
from snlmarkov.game.seats import Seat
from snlmarkov.web import persist
from snlmarkov.web.odds import LiveOdds
from snlmarkov.web.rooms import RoomManager

TINY = Board(25, {3: 11, 17: 4, 20: 24}, name="tiny")


def plain_state(room) -> str:
    """The state row as ``json.dumps`` of the whole state (the board and rules encoded at every call)."""
    game = room.game
    state = {
        "format": persist.STATE_FORMAT,
        "kind": room.kind,
        "owner": room.owner,
        "host": room.host_digest,
        "board_name": room.board_name,
        "board": room.board.to_dict(),
        "rules": room.rules.to_dict(),
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
    return json.dumps(state)


def test_room_state_is_the_whole_state_encoded_and_follows_a_new_board_and_rules():
    async def run():
        manager = RoomManager({"tiny": TINY, "jungle": Board.builtin("jungle")}, seed=3, ai_delay=0.0)
        room = manager.create("online", [{"name": "Ann", "colour": "#e53935"}], board="tiny")
        assert persist.room_state(room) == plain_state(room)  # the lobby
        room._configure({"board": "jungle", "rules": {"finish": "bounce"}})
        assert persist.room_state(room) == plain_state(room)  # a new board and rules: encoded again
        assert json.loads(persist.room_state(room))["board"]["size"] == 100
        room._add_seat("Bob", "#1e88e5", ai=False)
        await room.start()
        for _ in range(12):
            seat = room.game.current_seat
            async with room.lock:
                await room._roll(seat, room.seats[seat].secret)
            assert persist.room_state(room) == plain_state(room)
            if room.status != "playing":
                break
        room._cancel_timer()
        manager.odds.shutdown()

    asyncio.run(run())


def test_a_failing_odds_query_gives_no_odds_and_the_turn_is_played(monkeypatch, caplog):
    async def run():
        manager = RoomManager({"tiny": TINY}, seed=3, ai_delay=0.0)
        room = manager.create("online", [{"name": "Ann", "colour": "#e53935"}], board="tiny")
        room._add_seat("Bob", "#1e88e5", ai=False)
        await room.start()
        assert room.odds.method == "exact"

        def failing(*args, **kwargs):
            raise ValueError("a bug in a query")

        monkeypatch.setattr(manager.odds, "win_odds", failing)
        seat = room.game.current_seat
        async with room.lock:
            await room._roll(seat, room.seats[seat].secret)
        room._cancel_timer()
        manager.odds.shutdown()
        return room

    room = asyncio.run(run())
    assert room.game.total_turns == 1  # the turn was played
    assert room.odds == LiveOdds((), "none")  # without odds
    assert "odds query failed" in caplog.text


def test_signing_with_online_signs_the_record_marked_online():
    game = Game(TINY, Rules(), [Seat("Ann", "red"), Seat("Bob", "blue")], "classic", rng=5)
    while not game.is_over:
        game.take_turn()
    record, key = game.record(), bytes(range(32))
    marked = dataclasses.replace(record, online=True)
    signed = record.signed(key, online=True)
    assert signed.online and signed.signature == marked.signed(key).signature
    assert signed.signature_matches(key) and not record.signed(key).online
    again = signed.signed(key, online=False)  # a signed record signed again, unmarked
    assert not again.online and again.signature == record.signed(key).signature and again.signature_matches(key)


@pytest.mark.parametrize("preset", ["plain", "app", "family"])
@pytest.mark.parametrize("players", [1, 3])
def test_the_signed_json_is_the_signed_records_json(preset, players):
    key = bytes(range(32))
    record = Game(Board.builtin(), Rules.preset(preset), players=players, rng=players * 7 + len(preset)).play()
    cut = Game(Board.builtin(), Rules.preset(preset), players=players, rng=2)
    for _ in range(5):
        cut.take_turn()  # an unfinished game
    for rec in (record, cut.record(), record.signed(bytes(32), online=True)):  # an already-signed one too
        for online in (None, True, False):
            text = rec.signed_json(key, online=online)
            assert text == rec.signed(key, online=online).to_json()  # the same bytes, the same signature
            again = type(rec).from_json(text)
            assert again.signature_matches(key) and again.online == (rec.online if online is None else online)


def test_the_store_keeps_the_signed_records_json(tmp_path):
    from snlmarkov.web.store import GameStore, load_key

    path = tmp_path / "g.sqlite"
    store = GameStore(path)
    record = Game(TINY, Rules(), players=2, rng=3).play()
    game_id = store.add(record, room="r", online=True)
    key = load_key(path)
    assert key is not None
    text = store._db.execute("SELECT record FROM games WHERE id = ?", (game_id,)).fetchone()[0]
    assert text == record.signed(key, online=True).to_json()
    assert store.record(game_id).signature_matches(key) and store.record(game_id).online
    store.close()
