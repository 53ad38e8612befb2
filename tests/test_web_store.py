"""Stored games: the SQLite store, the pooled check against the exact model, the games/verify commands,
and a server killed with SIGKILL in the middle of a load losing no finished game."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from snlmarkov import Board, Game, GameRecord, Rules, SnlError
from snlmarkov.checks.stored import check_stored
from snlmarkov.cli import main
from snlmarkov.web.store import GameStore

BOARD = Board(20, {3: 12, 17: 5, 8: 15, 14: 2}, name="small")
ALPHA = 1e-6  # per check: the suite's false-failure budget


def games(n, rules=None, players=3, mode="last_one_standing", seed=0, skip_every=0):
    out = []
    for i in range(n):
        g = Game(BOARD, rules or Rules(), players=players, mode=mode, rng=[seed, i])
        while not g.is_over:
            if skip_every and g.total_turns % skip_every == skip_every - 1:
                g.skip_turn()
            else:
                g.take_turn()
        out.append(g.record())
    return out


def loaded_games(n, p6=0.4, seed=1, mode="last_one_standing"):
    rng = np.random.default_rng(seed)
    probs = [(1 - p6) / 5] * 5 + [p6]

    def die():
        while True:
            yield int(rng.choice(6, p=probs)) + 1

    return [Game(BOARD, Rules.preset("plain"), players=2, mode=mode, dice=die()).play() for _ in range(n)]


@pytest.mark.parametrize(
    "rules, mode, skip",
    [
        (Rules(), "last_one_standing", 0),
        (Rules(), "classic", 0),  # censored: only the winner finishes
        (Rules.preset("plain"), "classic", 3),  # skipped turns are not counted
        (Rules.preset("family"), "last_one_standing", 0),  # bump: landings only
    ],
)
def test_fair_games_pass(rules, mode, skip):
    report = check_stored(games(250, rules, mode=mode, skip_every=skip), alpha=ALPHA)
    assert report.passed, str(report)
    (group,) = report.groups
    assert group.games == 250 and group.turns > 1000
    if not rules.bump:
        assert "log-rank" in group.checks[0].detail


def test_a_loaded_die_is_caught():
    report = check_stored(loaded_games(250), alpha=ALPHA)
    assert not report.passed
    assert "landings" in {c.name for c in report.groups[0].checks if not c.passed}


def test_a_biased_sample_is_caught():
    """Keeping only the short games (a server that lost the long ones) is caught by the turn counts."""
    classic = games(500, mode="classic", seed=5)
    median = np.median([len(r.turns()) for r in classic])
    short = [r for r in classic if len(r.turns()) <= median]
    report = check_stored(short, alpha=ALPHA)
    assert not report.passed and not report.groups[0].checks[0].passed


def test_the_wrong_model_is_caught():
    """Games played with bonus rolls on six, stored as if played without."""
    played = games(250, Rules(), mode="last_one_standing", seed=7)
    relabelled = []
    for r in played:
        data = json.loads(r.to_json())
        data["rules"] = Rules.preset("plain").to_dict()
        relabelled.append(GameRecord.from_dict(data))
    assert not check_stored(relabelled, alpha=ALPHA).passed


def test_store_and_commands(tmp_path, capsys):
    path = tmp_path / "g.sqlite"
    store = GameStore(path)
    recs = games(40)
    for r in recs[:39]:
        store.add(r, room="r")
    store.add(recs[39], room="r", status="abandoned")
    assert store.count() == 40
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    assert main(["games", "--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert "40 games: 39 finished, 1 abandoned" in out
    assert main(["games", "--db", str(path), "--status", "abandoned"]) == 0
    assert "1 game: 0 finished, 1 abandoned" in capsys.readouterr().out
    assert main(["verify", "--db", str(path), "--alpha", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert "40 of 40 stored games verify" in out and out.strip().endswith("verdict: PASSED")
    # an edited game is found
    db = sqlite3.connect(path)
    data = json.loads(db.execute("SELECT record FROM games WHERE id = 3").fetchone()[0])
    first_roll = next(e for e in data["log"] if e["kind"] == "roll")
    first_roll["value"] = 7 - first_roll["value"] if first_roll["value"] != 6 else 5
    data["dice"][0] = first_roll["value"]
    db.execute("UPDATE games SET record = ? WHERE id = 3", (json.dumps(data),))
    db.commit()
    db.close()
    assert main(["verify", "--db", str(path)]) == 1
    out = capsys.readouterr().out
    assert "game 3" in out and "verdict: FAILED" in out
    assert main(["games", "--db", str(tmp_path / "missing.sqlite")]) == 2
    assert main(["verify", "--db", str(path), "--alpha", "2"]) == 2


def test_serve_refuses_bad_arguments(capsys):
    assert main(["serve", "--port", "70000"]) == 2
    assert main(["serve", "--countdown", "0"]) == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.slow  # a server killed under load: a crash run (README: the slow step)
def test_sigkill_mid_load_loses_no_finished_game(tmp_path):
    pytest.importorskip("uvicorn")
    from _webserver import Client, create_room, free_port, http, wait_started

    db = tmp_path / "games.sqlite"
    port = free_port()
    cmd = [sys.executable, "-m", "snlmarkov", "serve", "--port", str(port), "--db", str(db), "--ai-delay", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_started(base, proc)
        told: list[int] = []  # ids of the games whose result reached a client
        stop = threading.Event()

        def player(k):
            try:
                play(k)
            except Exception:  # the server was killed under this player
                pass

        def play(k):
            while not stop.is_set():
                room = create_room(
                    base,
                    kind="local",
                    board="milton_bradley" if k % 2 else "jungle",
                    seats=[
                        {"name": "Ann", "colour": "#e53935", "ai": False},
                        {"name": "Bot", "colour": "#1e88e5", "ai": True},
                    ],
                )
                c = Client(base, room["room"])
                state = c.hello(room["host"])
                try:
                    while not stop.is_set():
                        if state["status"] == "over":
                            told.append(state["game_id"])
                            break
                        if state["current"] == 0:
                            c.send(type="roll", seat=0, secret=room["seats"][0])
                            time.sleep(0.1)  # a person's pace: under the rate limit
                        state = {**state, **c.until(lambda m: m["type"] in ("turn", "room"))}
                except Exception:
                    return
                finally:
                    try:
                        c.close()
                    except Exception:
                        pass

        threads = [threading.Thread(target=player, args=(k,), daemon=True) for k in range(12)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120  # on a loaded machine eight games may take a while
        while len(told) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # in the middle of the load: no shutdown, no flush
        proc.wait(10)
        stop.set()
        for t in threads:
            t.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert len(told) >= 8
    store = GameStore(db)  # as a restarted server opens it
    stored = {g.id: g for g in store.games()}
    assert set(told) <= set(stored)  # every result a client saw is on disk
    assert all(stored[i].status == "finished" for i in told)
    store.close()
    assert main(["verify", "--db", str(db), "--alpha", str(ALPHA)]) == 0
    # a restarted server opens the same file and goes on adding to it
    port = free_port()
    cmd[cmd.index("--port") + 1] = str(port)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_started(base, proc)
        assert http(base, "/")[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
    assert GameStore(db).count() >= len(told)


# ------------------------------------------------------------ signatures
def test_every_stored_record_is_signed_with_a_private_key_kept_beside_the_database(tmp_path, capsys):
    import os
    import stat

    from snlmarkov import verify_game
    from snlmarkov.web.store import key_path, load_key

    path = tmp_path / "g.sqlite"
    assert load_key(path) is None
    store = GameStore(path)
    key = load_key(path)
    assert len(key) == 32 and stat.S_IMODE(os.stat(key_path(path)).st_mode) == 0o600
    skipping = games(1, skip_every=3)[0]
    store.add(games(1)[0], room="a")
    store.add(skipping, room="b", online=True)
    store.add(skipping, room="c")  # the same skips, stored as a local game's
    store.close()
    assert GameStore(path).record(1).signature and load_key(path, create=True) == key  # not made twice
    reports = [verify_game(GameStore(path).record(i), key=key) for i in (1, 2, 3)]
    assert [r.signature for r in reports] == ["signed by this server"] * 3
    assert [r.passed for r in reports] == [True, True, False]  # a skip is legal only online
    assert not verify_game(skipping, key=key).passed  # nor unsigned
    assert main(["verify", "--db", str(path), "--alpha", "1e-6"]) == 1
    out = capsys.readouterr().out
    assert "game 3" in out and "legal only in a record this server signed" in out
    assert "3 of 3 signed by this server" in out
    # a row forged in the database: follows the rules, but the server never signed it
    db = sqlite3.connect(path)
    db.execute("DELETE FROM games WHERE id = 3")
    data = json.loads(db.execute("SELECT record FROM games WHERE id = 1").fetchone()[0])
    data["seats"][0]["name"] = "Mallory"
    db.execute("UPDATE games SET record = ? WHERE id = 1", (json.dumps(data),))
    db.commit()
    db.close()
    assert main(["verify", "--db", str(path), "--alpha", "1e-6"]) == 1
    out = capsys.readouterr().out
    assert "game 1 (finished): signature does not match" in out and "2 of 2 stored games verify" in out
    assert "1 of 2 signed by this server, 1 not signed / signature does not match" in out
    os.chmod(key_path(path), 0o644)
    with pytest.raises(SnlError, match="may be read by others"):
        GameStore(path)


def test_an_abandoned_game_is_stored_unfinished_and_a_finished_one_whole(tmp_path, capsys):
    path = tmp_path / "g.sqlite"
    store = GameStore(path)
    g = Game(BOARD, Rules(), players=2, rng=1)
    g.take_turn()
    store.add(g.record(), status="abandoned")
    store.add(g.record(), status="finished")  # a part of a game, stored as a whole one
    store.close()
    assert main(["verify", "--db", str(path), "--alpha", "1e-6"]) == 1
    out = capsys.readouterr().out
    assert "game 2 (finished)" in out and "stored as finished, but the record is unfinished" in out
    assert "game 1" not in out and "1 of 2 stored games verify" in out


# ------------------------------------------------------------ a busy database
def _hold_lock(path, seconds, started):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    started.set()
    time.sleep(seconds)
    db.execute("COMMIT")
    db.close()


def test_a_write_blocked_past_the_timeout_is_retried_until_it_is_written(tmp_path):
    path = tmp_path / "g.sqlite"
    store = GameStore(path, timeout=0.1, wait=20)
    started = threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(path, 1.0, started))
    holder.start()
    started.wait(5)
    t0 = time.monotonic()
    game_id = store.add(games(1)[0], room="r")  # SQLite alone gives up after 0.1 s: "database is locked"
    waited = time.monotonic() - t0
    holder.join()
    assert game_id == 1 and store.count() == 1 and store.record(1).is_over
    assert 0.5 < waited < 10 and not store.status().behind
    store.close()


def test_a_game_blocked_past_the_wait_stays_queued_and_is_written_later(tmp_path):
    from snlmarkov.web.store import StoreBusyError

    path = tmp_path / "g.sqlite"
    store = GameStore(path, timeout=0.05, wait=0.3)
    recs = games(2)
    started = threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(path, 2.0, started))
    holder.start()
    started.wait(5)
    with pytest.raises(StoreBusyError, match="waits in memory"):
        store.add(recs[0], room="first")
    status = store.status()
    assert status.behind and status.pending == 1 and "locked" in status.last_error
    with pytest.raises(StoreBusyError):
        store.add(recs[1], room="second")
    assert store.status().pending == 2
    holder.join()
    deadline = time.monotonic() + 10
    while store.status().behind and time.monotonic() < deadline:
        time.sleep(0.05)  # the background retry writes them, in order
    assert not store.status().behind and store.status().last_error == ""
    assert [(g.id, g.room) for g in store.games()] == [(1, "first"), (2, "second")]
    assert store.record(2) == recs[1]
    store.close()


def test_close_writes_what_is_queued(tmp_path):
    from snlmarkov.web.store import StoreBusyError

    path = tmp_path / "g.sqlite"
    store = GameStore(path, timeout=0.05, wait=0.2)
    started = threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(path, 0.8, started))
    holder.start()
    started.wait(5)
    with pytest.raises(StoreBusyError):
        store.add(games(1)[0])
    store.wait = 10  # the shutdown waits longer than a turn would
    store.close()
    holder.join()
    assert GameStore(path).count() == 1


def test_a_chained_jump_counts_its_middle_square_as_landed_on():
    """Board(20, {3: 12, 12: 17}, chain=True): a token landing on 3 climbs to 12 and on to 17 in the same
    roll, landing on 3 and on 12 (the model counts both); fair games pass, and the landings of one such
    turn are read off the log as 3 and 12."""
    from snlmarkov.checks.stored import _landed
    from snlmarkov.game.events import Ladder, Move, Roll

    chained = Board(20, {3: 12, 12: 17, 15: 6}, chain=True)
    turn = [Roll(seat=0, turn=0, value=3), Move(seat=0, turn=0, start=0, end=3)]
    turn += [Ladder(seat=0, turn=0, start=3, end=12), Ladder(seat=0, turn=0, start=12, end=17)]
    assert _landed(turn) == [3, 12]
    recs = [Game(chained, Rules(), players=3, mode="last_one_standing", rng=[7, i]).play() for i in range(250)]
    report = check_stored(recs, alpha=ALPHA)
    assert report.passed, str(report)


def test_a_store_without_a_key_is_verified_without_signatures(tmp_path, capsys):
    from snlmarkov.web.store import key_path

    path = tmp_path / "old.sqlite"
    store = GameStore(path, create_key=False)  # as a server from before the signatures
    store.add(games(1)[0])
    store.close()
    assert not key_path(path).exists() and not GameStore(path, create_key=False).record(1).signature
    assert main(["verify", "--db", str(path), "--alpha", "1e-6"]) == 0
    assert "signatures not checked: no signing key at" in capsys.readouterr().out
    assert not key_path(path).exists()  # verify never makes one


def test_the_log_is_copied_into_the_database_only_after_wal_checkpoint_pages(tmp_path):
    from snlmarkov.web import store as store_module
    from snlmarkov.web.store import RoomRow

    store = GameStore(tmp_path / "g.sqlite")
    for turn in range(1_000):  # rows of 12 KB, each new: over 1,500 pages of log in all, past SQLite's
        state = json.dumps({"turn": turn, "pad": "x" * 12_000})  # own default of 1,000
        store.save_room(RoomRow(f"r{turn % 7}", "playing", state, ((turn, "[]"),)))
    other = sqlite3.connect(tmp_path / "g.sqlite")
    busy, frames, copied = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == store_module.WAL_CHECKPOINT_PAGES
    # the log was never copied and reset before this checkpoint: it holds every page written
    assert busy == 0 and 1_500 < frames < store_module.WAL_CHECKPOINT_PAGES and copied == frames
    other.close()
    store.close()
