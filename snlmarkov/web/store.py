"""Keep every game the server hosts: one SQLite row per finished or abandoned game.

:class:`GameStore` writes each game's :class:`~snlmarkov.GameRecord` as JSON
in one transaction (stdlib :mod:`sqlite3`, write-ahead log, ``synchronous=FULL``),
so a game whose result has been broadcast is on disk: the room writes before it
tells anyone the game is over, and a crash or restart loses no finished game.

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
>>> store.close()
"""

from __future__ import annotations

import collections
import os
import secrets
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import LimitError, SnlError
from ..game.record import GameRecord

__all__ = [
    "GameStore",
    "StoredGame",
    "StoreStatus",
    "StoreBusyError",
    "STATUSES",
    "MAX_PENDING",
    "KEY_BYTES",
    "key_path",
    "load_key",
]

#: what a stored game can be
STATUSES = ("finished", "abandoned")
#: most records kept in memory while the database is locked
MAX_PENDING = 10_000
#: size of the signing key
KEY_BYTES = 32
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
)
"""


class StoreBusyError(SnlError):
    """The database stayed locked for longer than the store waits; the record is kept queued."""


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
        raise SnlError(f"the signing key {str(path)!r} must be a regular file of {KEY_BYTES} bytes")
    if st.st_mode & 0o077:
        raise SnlError(
            f"the signing key {str(path)!r} may be read by others (mode {stat.S_IMODE(st.st_mode):o}); "
            "make it private: chmod 600"
        )
    return path.read_bytes()


class _Pending:
    """One record waiting to be written."""

    __slots__ = ("row", "id", "done")

    def __init__(self, row: tuple) -> None:
        self.row = row
        self.id = 0
        self.done = threading.Event()


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
        try:
            self._db = sqlite3.connect(self.path, timeout=float(timeout), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise SnlError(f"cannot open the game store {str(path)!r}: {exc}") from None
        self._key = load_key(self.path, create=create_key)
        self._lock = threading.Lock()  # the connection
        self._queue: collections.deque[_Pending] = collections.deque()
        self._queue_lock = threading.Lock()
        self._last_error = ""
        self._closed = threading.Event()
        self._retry: threading.Thread | None = None

    # ------------------------------------------------------------ writing
    def add(self, record: GameRecord, *, room: str = "", status: str = "finished", online: bool = False) -> int:
        """Sign and store one game (one transaction, committed on return); return its id.

        ``online``: the game was played in an online room (whose countdown
        may skip turns); the signature covers it.

        Raises
        ------
        StoreBusyError
            If the database stayed locked for :attr:`wait` seconds: the game
            is not lost, it waits in memory and is written once the lock is
            released (see :meth:`status`).
        LimitError
            If :data:`MAX_PENDING` records already wait (nothing is queued).
        """
        if not isinstance(record, GameRecord):
            raise SnlError(f"GameStore.add takes a GameRecord, got {type(record).__name__}")
        if status not in STATUSES:
            raise SnlError(f"status must be one of {STATUSES}; got {status!r}")
        if self._key is not None:
            record = record.signed(self._key, online=online)
        row = (room, status, record.mode, len(record.seats), len(record.turns()), time.time(), record.to_json())
        item = _Pending(row)
        with self._queue_lock:
            if len(self._queue) >= MAX_PENDING:
                raise LimitError(
                    f"{MAX_PENDING} games already wait for the locked database (snlmarkov.web.store.MAX_PENDING)"
                )
            self._queue.append(item)
        deadline = time.monotonic() + self.wait
        delay = _BACKOFF[0]
        while True:
            self._flush()
            if item.done.is_set():
                return item.id
            if time.monotonic() >= deadline:
                self._start_retry()
                raise StoreBusyError(
                    f"the game store {str(self.path)!r} is locked by another connection ({self._last_error}); "
                    f"the game waits in memory ({self.status().pending} waiting) and is written when it frees"
                )
            item.done.wait(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(2 * delay, _BACKOFF[1])

    def _flush(self) -> bool:
        """Write the queued records in order until the queue is empty (True) or the database is locked (False)."""
        with self._lock:
            while True:
                with self._queue_lock:
                    if not self._queue:
                        self._last_error = ""
                        return True
                    item = self._queue[0]
                try:
                    cur = self._db.execute(
                        "INSERT INTO games (room, status, mode, players, turns, finished_at, record) "
                        "VALUES (?,?,?,?,?,?,?)",
                        item.row,
                    )
                except sqlite3.Error as exc:
                    if not _locked(exc):
                        with self._queue_lock:
                            self._queue.popleft()
                        item.done.set()  # id 0: never written
                        raise SnlError(f"cannot store the game in {str(self.path)!r}: {exc}") from None
                    self._last_error = str(exc)
                    return False
                item.id = int(cur.lastrowid or 0)
                with self._queue_lock:
                    self._queue.popleft()
                item.done.set()

    def _start_retry(self) -> None:
        """Go on writing the queued records in the background, with backoff, until none is left."""
        if self._retry is not None and self._retry.is_alive():
            return

        def run() -> None:
            delay = _BACKOFF[0]
            while not self._closed.is_set():
                try:
                    if self._flush():
                        return
                except SnlError:
                    continue  # that record could never be written; the rest still can
                self._closed.wait(delay)
                delay = min(2 * delay, _BACKOFF[1])

        self._retry = threading.Thread(target=run, name="snlmarkov-store-retry", daemon=True)
        self._retry.start()

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
            raise SnlError(f"no stored game with id {game_id}")
        return GameRecord.from_json(row[0])

    def records(self, status: str | None = None) -> Iterator[tuple[StoredGame, GameRecord]]:
        """Every stored game with its record, oldest first."""
        for game in self.games(status):
            yield game, self.record(game.id)

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
