"""Keep every game the server hosts: one SQLite row per finished or abandoned game, and the open rooms.

:class:`GameStore` writes each game's :class:`~snlmarkov.GameRecord` as JSON
in one transaction (stdlib :mod:`sqlite3`, write-ahead log, ``synchronous=FULL``, the log copied into the
database every :data:`WAL_CHECKPOINT_PAGES` pages),
so a game whose result has been broadcast is on disk: the room writes before it
tells anyone the game is over, and a crash or restart loses no finished game.

The rooms still open are kept too (table ``rooms``: one row a room, its
state as JSON; table ``room_turns``: one row a turn, its events as JSON),
each turn in one transaction written before the turn is broadcast
(:meth:`GameStore.save_room`), so that a restarted server can bring them
back (:mod:`snlmarkov.web.persist`). A database made before those tables
existed gets them when it is opened.

Writes asked for at the same moment (by different rooms, from different
threads) share a transaction: the writer that holds the database takes every
write queued behind it, each under a savepoint of its own (a write that fails
is undone alone), and commits them together, one ``fsync`` for all (a group
commit; at most :data:`MAX_BATCH` writes). Each write's caller returns only
once that commit is on disk.

A database held by another connection does not lose a game either: a write
that finds it locked is retried with backoff, the record stays queued in
memory until it is written (at most :data:`MAX_PENDING` records), and
:meth:`GameStore.status` tells the server that writing is behind.

Every record is signed before it is stored (:meth:`GameRecord.signed
<snlmarkov.game.record.GameRecord.signed>`) with the server's key, kept beside
the database (``<db>.key``, 32 random bytes, created on first start, mode
0600, never sent to a client); ``snlmarkov verify --db`` checks the
signatures with it (:func:`load_key`).

Examples
--------
>>> import tempfile, os
>>> from snlmarkov import Game, verify_game
>>> path = os.path.join(tempfile.mkdtemp(), "games.sqlite")
>>> store = GameStore(path)
>>> row = store.add(Game(players=2, rng=1).play(), room="r1")
>>> [(g.id, g.status, g.players) for g in store.games()]
[(1, 'finished', 2)]
>>> store.record(1).is_over
True
>>> verify_game(store.record(1), key=load_key(path)).signature
'signed by this server'
>>> store.status().behind
False
>>> store.save_room(RoomRow("r2", "playing", '{"seq": 1}', ((0, '[]'),)))
>>> [(r.id, r.status, r.turns) for r in store.open_rooms()]
[('r2', 'playing', ((0, '[]'),))]
>>> store.drop_room("r2"); store.open_rooms()
[]
>>> store.close()
"""

from __future__ import annotations

import collections
import os
import secrets
import sqlite3
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import GameError, InputFileError, LimitError, SnlError
from ..game.record import GameRecord

__all__ = ["GameStore"]

#: what a stored game can be
STATUSES = ("finished", "abandoned")
#: what a stored room can be
ROOM_STATUSES = ("lobby", "playing", "over", "abandoned")
#: most records kept in memory while the database is locked
MAX_PENDING = 10_000
#: size of the signing key
KEY_BYTES = 32
#: most writes committed together in one transaction (a group commit)
MAX_BATCH = 64
#: pages (4 KiB each) the write-ahead log may hold before a commit copies them into the database (SQLite's
#: ``wal_autocheckpoint``, 1,000 by default): the commit that does so waits for it, so fewer, larger copies
#: stall the server's turns less in all (docs/web.md "Group commit"); the log file keeps its largest size
WAL_CHECKPOINT_PAGES = 10_000
#: first and longest pause between two tries of a locked write (seconds)
_BACKOFF = (0.05, 2.0)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    room TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('finished', 'abandoned')),
    mode TEXT NOT NULL,
    players INTEGER NOT NULL,
    turns INTEGER NOT NULL,
    finished_at REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rooms (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('lobby', 'playing', 'over', 'abandoned')),
    game_id INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS room_turns (
    room TEXT NOT NULL,
    turn INTEGER NOT NULL,
    events TEXT NOT NULL,
    PRIMARY KEY (room, turn)
) WITHOUT ROWID;
"""
#: the schema's version (``PRAGMA user_version``): 1 games only, 2 with the rooms
SCHEMA_VERSION = 2
#: test hook: seconds to sleep inside every write transaction, before its commit (a kill lands there),
#: and a file: when that is set, only while the file exists
_HOOK_ENV, _HOOK_FILE_ENV = "SNLMARKOV_STORE_HOOK_SLEEP", "SNLMARKOV_STORE_HOOK_FILE"


class StoreBusyError(SnlError):
    """The database stayed locked for longer than the store waits; the record is kept queued.

    :meth:`written` says whether the queued write has been made since (waiting
    up to ``timeout`` seconds), and :attr:`id` is then what it returned (the
    game's id; 0 if the write could never be made).
    """

    def __init__(self, message: str, pending: PendingWrite | None = None) -> None:
        super().__init__(message)
        self._pending = pending

    def written(self, timeout: float = 0.0) -> bool:
        """Whether the queued write is done (made, or given up as impossible), waiting ``timeout`` s at most."""
        return self._pending is not None and self._pending.done.wait(timeout)

    @property
    def id(self) -> int:
        """The id the write returned once :meth:`written` (0 before, or if it could not be made)."""
        return self._pending.id if self._pending is not None else 0


@dataclass(frozen=True)
class RoomRow:
    """One open room as stored: its id, status, state (JSON text) and turns ``(turn, events JSON)``.

    :meth:`GameStore.save_room` writes the state and adds the turns given;
    :meth:`GameStore.open_rooms` gives every turn stored, in order. What the
    state holds is :mod:`snlmarkov.web.persist`'s business.
    """

    id: str
    status: str
    state: str
    turns: tuple[tuple[int, str], ...] = ()
    game_id: int = 0

    def __post_init__(self) -> None:
        if self.status not in ROOM_STATUSES:
            raise SnlError(f"a room's status is one of {ROOM_STATUSES}; got {self.status!r}")


@dataclass(frozen=True)
class StoredGame:
    """One row of the store (without the record itself; see :meth:`GameStore.record`)."""

    id: int
    room: str
    status: str
    mode: str
    players: int
    turns: int
    finished_at: float


@dataclass(frozen=True)
class StoreStatus:
    """Whether writing keeps up: ``pending`` records wait for a locked database (``behind``)."""

    pending: int
    last_error: str

    @property
    def behind(self) -> bool:
        return self.pending > 0


def key_path(db: str | Path) -> Path:
    """Where the signing key of the database ``db`` is kept: beside it, ``<db>.key``."""
    return Path(f"{db}.key")


def load_key(db: str | Path, *, create: bool = False) -> bytes | None:
    """The signing key of the database ``db``; ``None`` if there is none (and ``create`` is off).

    With ``create`` a missing key is made (:func:`secrets.token_bytes`,
    written to a new file of mode 0600).

    Raises
    ------
    SnlError
        If the key file is not a regular file of :data:`KEY_BYTES` bytes, or
        others than its owner may read it.
    """
    path = key_path(db)
    if create and not os.path.lexists(path):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: read theirs
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(KEY_BYTES))
                fh.flush()
                os.fsync(fh.fileno())
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size != KEY_BYTES:
        raise InputFileError(f"the signing key {str(path)!r} must be a regular file of {KEY_BYTES} bytes")
    if st.st_mode & 0o077:
        raise InputFileError(
            f"the signing key {str(path)!r} may be read by others (mode {stat.S_IMODE(st.st_mode):o}); "
            "make it private: chmod 600"
        )
    return path.read_bytes()


class PendingWrite:
    """One transaction queued in a :class:`GameStore`: ``write(db)`` runs inside it and returns an id.

    ``done`` is set once it is written (``id``) or given up (``error`` says why).
    """

    __slots__ = ("write", "what", "id", "done", "error")

    def __init__(self, write: Callable[[sqlite3.Connection], int], what: str = "write") -> None:
        self.write, self.what = write, what
        self.id = 0
        self.done = threading.Event()
        self.error = ""  # why it could never be written (done, id 0)


def _save_room(db: sqlite3.Connection, row: RoomRow, game_id: int) -> None:
    db.execute(
        "INSERT INTO rooms (id, status, game_id, updated_at, state) VALUES (?,?,?,?,?) "
        "ON CONFLICT(id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, "
        "state = excluded.state, game_id = MAX(game_id, excluded.game_id)",
        (row.id, row.status, game_id, time.time(), row.state),
    )
    db.executemany(
        "INSERT OR REPLACE INTO room_turns (room, turn, events) VALUES (?,?,?)",
        [(row.id, turn, events) for turn, events in row.turns],
    )


def _hook_sleep() -> float:
    """The test hook's sleep (:data:`_HOOK_ENV`, seconds in 0..60; 0 when unset or unreadable)."""
    try:
        value = float(os.environ.get(_HOOK_ENV, "0"))
    except ValueError:
        return 0.0
    return value if 0 < value <= 60 else 0.0


def _locked(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class GameStore:
    """An SQLite file of game records.

    Parameters
    ----------
    path : str or Path
        The database file (created if missing).
    timeout : float, default 5
        Seconds one write waits for a lock held by another connection
        (SQLite's busy timeout).
    wait : float, default 60
        Seconds :meth:`add` keeps retrying a locked write (with backoff)
        before it gives up with :class:`StoreBusyError`; the record stays
        queued and a background thread goes on writing it.
    create_key : bool, default True
        Make the signing key beside the database if there is none (the
        server; reading tools pass False).

    Raises
    ------
    SnlError
        If the file cannot be opened as a game store, or its key is bad.
    """

    def __init__(self, path: str | Path, *, timeout: float = 5.0, wait: float = 60.0, create_key: bool = True) -> None:
        self.path = Path(path)
        for name, value in (("timeout", timeout), ("wait", wait)):
            if not isinstance(value, (int, float)) or not 0 <= value <= 86_400:
                raise SnlError(f"GameStore {name} must be seconds in 0..86400; got {value!r}")
        self.wait = float(wait)
        self._busy_ms = int(float(timeout) * 1000)
        try:
            self._db = sqlite3.connect(self.path, timeout=float(timeout), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            self._db.executescript(_SCHEMA)  # an older database gets the new tables: the migration
            if self._db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise InputFileError(f"cannot open the game store {str(path)!r}: {exc}") from None
        self._hook, self._hook_file = _hook_sleep(), os.environ.get(_HOOK_FILE_ENV, "")
        self._key = load_key(self.path, create=create_key)
        self._lock = threading.Lock()  # the connection
        self._queue: collections.deque[PendingWrite] = collections.deque()
        self._queue_lock = threading.Lock()
        self._last_error = ""
        self._closed = threading.Event()
        self._retry: threading.Thread | None = None

    # ------------------------------------------------------------ writing
    def add(
        self,
        record: GameRecord,
        *,
        room: str = "",
        status: str = "finished",
        online: bool = False,
        row: RoomRow | None = None,
    ) -> int:
        """Sign and store one game (one transaction, committed on return); return its id.

        ``online``: the game was played in an online room (whose countdown
        may skip turns); the signature covers it. ``row``: the room's row,
        written in the same transaction with the game's id.

        Raises
        ------
        StoreBusyError
            If the database stayed locked for :attr:`wait` seconds: the game
            is not lost, it waits in memory and is written once the lock is
            released (see :meth:`status`).
        LimitError
            If :data:`MAX_PENDING` records already wait (nothing is queued).
        """
        return self.wait_for(self.add_later(record, room=room, status=status, online=online, row=row))

    def add_later(
        self,
        record: GameRecord,
        *,
        room: str = "",
        status: str = "finished",
        online: bool = False,
        row: RoomRow | None = None,
    ) -> PendingWrite:
        """Queue :meth:`add`'s transaction without writing it: :meth:`flush_now` or :meth:`wait_for` writes it.

        Raises
        ------
        SnlError
            As :meth:`add` (nothing is queued).
        """
        if not isinstance(record, GameRecord):
            raise SnlError(f"GameStore.add takes a GameRecord, got {type(record).__name__}")
        if status not in STATUSES:
            raise SnlError(f"status must be one of {STATUSES}; got {status!r}")
        if self._key is not None:  # the signed record's JSON, without a signed copy validated again
            text = record.signed_json(self._key, online=online)
        else:
            text = record.to_json()
        values = (room, status, record.mode, len(record.seats), len(record.turns()), time.time(), text)

        def write(db: sqlite3.Connection) -> int:
            cur = db.execute(
                "INSERT INTO games (room, status, mode, players, turns, finished_at, record) VALUES (?,?,?,?,?,?,?)",
                values,
            )
            game_id = int(cur.lastrowid or 0)
            if row is not None:
                _save_room(db, row, game_id)
            return game_id

        return self._enqueue(write, "game")

    def save_room(self, row: RoomRow) -> None:
        """Write one room's state and its new turns (one transaction, committed on return).

        Raises
        ------
        StoreBusyError, LimitError
            As :meth:`add` (a write that waits stays queued, in order).
        """
        self.wait_for(self.save_room_later(row))

    def save_room_later(self, row: RoomRow) -> PendingWrite:
        """Queue :meth:`save_room`'s transaction without writing it: :meth:`flush_now` or :meth:`wait_for` writes it.

        Raises
        ------
        LimitError
            If :data:`MAX_PENDING` writes already wait (nothing is queued).
        """

        def write(db: sqlite3.Connection) -> int:
            _save_room(db, row, row.game_id)
            return 0

        return self._enqueue(write, "room")

    def drop_room(self, room_id: str) -> None:
        """Forget a room that left the server's memory (its game, if any, is stored in ``games``)."""

        def write(db: sqlite3.Connection) -> int:
            db.execute("DELETE FROM room_turns WHERE room = ?", (room_id,))
            db.execute("DELETE FROM rooms WHERE id = ?", (room_id,))
            return 0

        self._submit(write, "room")

    def _submit(self, write: Callable[[sqlite3.Connection], int], what: str) -> int:
        """Queue one transaction and write it (and those before it), retrying a locked database."""
        return self.wait_for(self._enqueue(write, what))

    def _enqueue(self, write: Callable[[sqlite3.Connection], int], what: str) -> PendingWrite:
        item = PendingWrite(write, what)
        with self._queue_lock:
            if len(self._queue) >= MAX_PENDING:
                raise LimitError(
                    f"{MAX_PENDING} writes already wait for the locked database (snlmarkov.web.store.MAX_PENDING)"
                )
            self._queue.append(item)
        return item

    def wait_for(self, item: PendingWrite) -> int:
        """Write the queued ``item`` (and the writes before it), retrying a locked database; its id.

        Raises
        ------
        StoreBusyError
            If the database stayed locked for :attr:`wait` seconds (``item``
            stays queued, written in the background once the lock frees).
        InputFileError
            If the write failed (it is dropped).
        """
        deadline = time.monotonic() + self.wait
        delay = _BACKOFF[0]
        while True:
            if not item.done.is_set():
                self._flush(item)
            if item.done.is_set():
                return self.result(item)
            if time.monotonic() >= deadline:
                self._start_retry()
                raise StoreBusyError(
                    f"the game store {str(self.path)!r} is locked by another connection ({self._last_error}); "
                    f"the {item.what} waits in memory ({self.status().pending} waiting) and is written when it frees",
                    item,
                )
            item.done.wait(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(2 * delay, _BACKOFF[1])

    def result(self, item: PendingWrite) -> int:
        """The id of a written ``item`` (0 for a room's write).

        Raises
        ------
        InputFileError
            If the write failed.
        """
        if item.error:
            raise InputFileError(f"cannot write to the game store {str(self.path)!r}: {item.error}")
        return item.id

    def flush_now(self) -> bool:
        """Write every queued transaction now, in order, without waiting: True when the queue is empty.

        For a caller that must not block (the server's event loop, which
        commits the writes of all rooms queued at one moment together): it
        takes the connection only if no other thread holds it and tries the
        database once (SQLite's busy timeout 0), and returns False, leaving
        the queue as it is, when either is held; :meth:`wait_for` then writes
        them with the retries.
        """
        if not self._lock.acquire(blocking=False):
            return False
        try:
            self._db.execute("PRAGMA busy_timeout = 0")
            try:
                return self._flush_locked(None)
            finally:
                self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
        finally:
            self._lock.release()

    def _flush(self, mine: PendingWrite | None = None) -> bool:
        """Write the queued transactions in order until none is left (True) or the database is locked (False).

        With ``mine``, stop as soon as that write is done (another thread's
        commit may have made it): its caller returns, and the writes queued
        after it are their own callers' to make.
        """
        with self._lock:
            return self._flush_locked(mine)

    def _flush_locked(self, mine: PendingWrite | None) -> bool:
        while True:
            with self._queue_lock:
                if not self._queue or (mine is not None and mine.done.is_set()):
                    self._last_error = "" if not self._queue else self._last_error
                    return True
                batch = [self._queue[i] for i in range(min(len(self._queue), MAX_BATCH))]
            try:
                self._transaction(batch)
            except sqlite3.Error as exc:
                if _locked(exc):
                    self._last_error = str(exc)
                    return False
                for item in batch:  # the commit itself failed: none of them is written
                    item.error = str(exc)
            with self._queue_lock:
                for _ in batch:
                    self._queue.popleft()
            for item in batch:
                item.done.set()

    def _transaction(self, batch: list[PendingWrite]) -> None:
        """Run every write of ``batch`` in one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``), each under
        its own savepoint: a write that fails is rolled back alone (its ``error`` says why), a locked
        database rolls back the whole transaction (raised)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for item in batch:
                db.execute("SAVEPOINT one_write")
                try:
                    item.id = item.write(db)
                except sqlite3.Error as exc:
                    if _locked(exc):
                        raise
                    db.execute("ROLLBACK TO one_write")
                    item.error, item.id = str(exc), 0
                db.execute("RELEASE one_write")
            if self._hook and (not self._hook_file or os.path.exists(self._hook_file)):  # the test hook: a kill
                # during this sleep lands inside the transaction
                sys.stderr.write("snlmarkov-store: inside a write\n")
                sys.stderr.flush()
                time.sleep(self._hook)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            for item in batch:
                item.id = 0
            raise

    def _start_retry(self) -> None:
        """Go on writing the queued records in the background, with backoff, until none is left."""
        if self._retry is not None and self._retry.is_alive():
            return

        def run() -> None:
            delay = _BACKOFF[0]
            while not self._closed.is_set():
                if self._flush():  # a write that can never be made is dropped with its error, the rest go on
                    return
                self._closed.wait(delay)
                delay = min(2 * delay, _BACKOFF[1])

        self._retry = threading.Thread(target=run, name="snlmarkov-store-retry", daemon=True)
        self._retry.start()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (what is still queued then is not written)."""
        return self._closed.is_set()

    def status(self) -> StoreStatus:
        """How many records wait for the database (``behind`` when any does), and the last lock error."""
        with self._queue_lock:
            return StoreStatus(pending=len(self._queue), last_error=self._last_error)

    # ------------------------------------------------------------ reading
    def games(self, status: str | None = None) -> list[StoredGame]:
        """Every stored game, oldest first (only those of ``status`` if given)."""
        sql = "SELECT id, room, status, mode, players, turns, finished_at FROM games"
        args: tuple = ()
        if status is not None:
            sql, args = sql + " WHERE status = ?", (status,)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY id", args).fetchall()
        return [StoredGame(*r) for r in rows]

    def record(self, game_id: int) -> GameRecord:
        """The record of game ``game_id`` (signed, if the store signed it)."""
        with self._lock:
            row = self._db.execute("SELECT record FROM games WHERE id = ?", (int(game_id),)).fetchone()
        if row is None:
            raise GameError(f"no stored game with id {game_id}")
        return GameRecord.from_json(row[0])

    def records(self, status: str | None = None) -> Iterator[tuple[StoredGame, GameRecord]]:
        """Every stored game with its record, oldest first."""
        for game in self.games(status):
            yield game, self.record(game.id)

    def open_rooms(self) -> list[RoomRow]:
        """Every stored room with all its turns, oldest first (what a restarted server brings back)."""
        with self._lock:
            rooms = self._db.execute("SELECT id, status, state, game_id FROM rooms ORDER BY updated_at").fetchall()
            turns: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
            for room, turn, events in self._db.execute("SELECT room, turn, events FROM room_turns ORDER BY room, turn"):
                turns[room].append((int(turn), events))
        return [RoomRow(r, status, state, tuple(turns.get(r, ())), int(game_id)) for r, status, state, game_id in rooms]

    def count(self) -> int:
        """How many games are stored."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def close(self) -> None:
        """Write what is queued (trying for :attr:`wait` seconds at most), then close the database."""
        deadline = time.monotonic() + self.wait
        delay = _BACKOFF[0]
        while not self._flush() and time.monotonic() < deadline:
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(2 * delay, _BACKOFF[1])
        self._closed.set()
        if self._retry is not None:
            self._retry.join()
        with self._lock:
            self._db.close()
