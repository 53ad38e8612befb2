"""Keep every game the server hosts: one SQLite row per finished or abandoned game.

:class:`GameStore` writes each game's :class:`~snlmarkov.GameRecord` as JSON
in one transaction (stdlib :mod:`sqlite3`, write-ahead log, ``synchronous=FULL``),
so a game whose result has been broadcast is on disk: the room writes before it
tells anyone the game is over, and a crash or restart loses no finished game.

Examples
--------
>>> import tempfile, os
>>> from snlmarkov import Game
>>> path = os.path.join(tempfile.mkdtemp(), "games.sqlite")
>>> store = GameStore(path)
>>> row = store.add(Game(players=2, rng=1).play(), room="r1")
>>> [(g.id, g.status, g.players) for g in store.games()]
[(1, 'finished', 2)]
>>> store.record(1).is_over
True
>>> store.close()
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import SnlError
from ..game.record import GameRecord

__all__ = ["GameStore", "StoredGame", "STATUSES"]

#: what a stored game can be
STATUSES = ("finished", "abandoned")

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


class GameStore:
    """An SQLite file of game records.

    Parameters
    ----------
    path : str or Path
        The database file (created if missing).

    Raises
    ------
    SnlError
        If the file cannot be opened as a game store.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise SnlError(f"cannot open the game store {str(path)!r}: {exc}") from None
        self._lock = threading.Lock()

    def add(self, record: GameRecord, *, room: str = "", status: str = "finished") -> int:
        """Store one game (one transaction, committed on return); return its id."""
        if not isinstance(record, GameRecord):
            raise SnlError(f"GameStore.add takes a GameRecord, got {type(record).__name__}")
        if status not in STATUSES:
            raise SnlError(f"status must be one of {STATUSES}; got {status!r}")
        row = (room, status, record.mode, len(record.seats), len(record.turns()), time.time(), record.to_json())
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO games (room, status, mode, players, turns, finished_at, record) VALUES (?,?,?,?,?,?,?)",
                row,
            )
        return int(cur.lastrowid or 0)

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
        """The record of game ``game_id``."""
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
        """Close the database."""
        with self._lock:
            self._db.close()
