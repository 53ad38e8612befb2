"""``snlmarkov games``: list the games a ``snlmarkov serve --db`` server stored.

The file is checked read-only before it is opened as a store (an SQLite
database holding the ``games`` table of ``snlmarkov serve --db``): a corrupt
file, another database or a row of the wrong types gives a one-line error,
never a traceback, and nothing is written to a file that is not a store.
Names and modes read from the file are printed with control characters
escaped. Each game's page on the server is ``/games/<id>``. Games played
under a choice rule (``docs/rules.md``, "Choices") are followed by each
player's accuracy: the expected turns to the finish their choices lost,
per choice, against the optimal policy (:func:`snlmarkov.web.coach.accuracy`).

Examples
--------
>>> import os, tempfile
>>> from snlmarkov import Game
>>> from snlmarkov.cli import main
>>> from snlmarkov.web.store import GameStore
>>> path = os.path.join(tempfile.mkdtemp(), "g.sqlite")
>>> store = GameStore(path); _ = store.add(Game(players=["Ann", "Robot 1"], rng=1).play(), room="r"); store.close()
>>> main(["games", "--db", path])  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
   id  status      mode               players  turns  finished at (UTC)    page       winner
    1  finished    classic            2        ...  /games/1   Robot 1
1 game: 1 finished, 0 abandoned
0
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputFileError, SnlError
from .common import show

__all__ = []

#: The columns of the ``games`` table that ``snlmarkov serve --db`` writes.
_COLUMNS = ("id", "room", "status", "mode", "players", "turns", "finished_at", "record")


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``games`` sub-command's parser its description and arguments."""
    parser.description = "List the stored games."
    parser.add_argument("--db", required=True, metavar="FILE", help="the SQLite file of snlmarkov serve --db")
    parser.add_argument("--status", choices=("finished", "abandoned"), help="only games of this status")
    parser.set_defaults(func=run)


def game_page(game_id: int) -> str:
    """The address of a stored game's page on the server, relative to its root.

    Examples
    --------
    >>> game_page(7)
    '/games/7'
    """
    return f"/games/{int(game_id)}"


def open_store(path: str) -> Any:
    """The :class:`~snlmarkov.web.store.GameStore` in ``path``, after a read-only check that it is one.

    Raises
    ------
    InputFileError
        If ``path`` is not a regular file, not an SQLite database, corrupt,
        or has no ``games`` table with the columns the server writes.
    """
    import sqlite3
    from urllib.parse import quote

    from ..web.store import GameStore

    shown = show(path)
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"no game store at {shown!r}")
    try:
        con = sqlite3.connect(f"file:{quote(str(p.resolve()))}?mode=ro", uri=True)
        try:
            columns = {row[1] for row in con.execute("PRAGMA table_info(games)")}
            con.execute("PRAGMA quick_check(1)").fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise InputFileError(f"{shown}: not a game store of snlmarkov serve --db ({show(exc)})") from None
    if not columns:
        raise InputFileError(f"{shown}: not a game store of snlmarkov serve --db (it has no games table)")
    missing = [c for c in _COLUMNS if c not in columns]
    if missing:
        raise InputFileError(f"{shown}: its games table lacks the column(s) {', '.join(missing)}")
    return GameStore(p, create_key=False)  # a reading tool never makes the signing key


def stored_games(store: Any, status: str | None = None) -> Iterator[tuple[Any, Any, str]]:
    """Every stored game as ``(row, record, problem)``: ``problem`` is "" or why the row cannot be used.

    A row whose fields have the wrong types, or whose record does not read
    as a valid :class:`~snlmarkov.GameRecord`, comes with ``record`` None
    and the reason; database errors become :class:`InputFileError`.
    """
    import sqlite3

    try:
        games = store.games(status)
    except sqlite3.Error as exc:
        raise InputFileError(f"{show(store.path)}: cannot read the stored games ({show(exc)})") from None
    for g in games:
        bad = _bad_fields(g)
        if bad:
            yield g, None, bad
            continue
        try:
            record = store.record(g.id)
        except sqlite3.Error as exc:
            raise InputFileError(f"{show(store.path)}: cannot read game {g.id} ({show(exc)})") from None
        except SnlError as exc:
            yield g, None, f"unreadable: {show(exc)}"
            continue
        except Exception as exc:  # a record column that is not text at all
            yield g, None, f"unreadable: {type(exc).__name__}"
            continue
        yield g, record, ""


def _bad_fields(g: Any) -> str:
    """Why a row's fields are unusable ("" when they are fine)."""
    if isinstance(g.id, bool) or not isinstance(g.id, int):
        return "the id is not a whole number"
    for name in ("status", "mode"):
        if not isinstance(getattr(g, name), str):
            return f"the {name} is not text"
    for name in ("players", "turns"):
        value = getattr(g, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{name} is not a whole number"
    when = g.finished_at
    if isinstance(when, bool) or not isinstance(when, (int, float)) or not math.isfinite(when) or abs(when) > 1e11:
        return "finished_at is not a time"
    return ""


def run(args: argparse.Namespace) -> int:
    """Print one line per stored game (and, for games under a choice rule, each player's accuracy)."""
    store = open_store(args.db)
    try:
        rows, choices = [], []
        for g, record, problem in stored_games(store, args.status):
            if problem:
                rows.append((show(g.id), "-", "-", "-", "-", "-", "-", f"({problem})"))
                continue
            if record.rules.choice:
                choices.append(accuracy_line(g.id, record))
            winner = show(record.seats[record.winner].name) if record.has_winner else "-"
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(g.finished_at))
            rows.append(
                (str(g.id), show(g.status), show(g.mode), str(g.players), str(g.turns), when, game_page(g.id), winner)
            )
    finally:
        store.close()
    page_width = max([len("page")] + [len(r[6]) for r in rows])
    print(
        f"{'id':>5}  {'status':<10}  {'mode':<17}  {'players':<7}  {'turns':<5}  {'finished at (UTC)':<19}  "
        f"{'page':<{page_width}}  winner"
    )
    for r in rows:
        print(f"{r[0]:>5}  {r[1]:<10}  {r[2]:<17}  {r[3]:<7}  {r[4]:<5}  {r[5]:<19}  {r[6]:<{page_width}}  {r[7]}")
    done = sum(r[1] == "finished" for r in rows)
    left = sum(r[1] == "abandoned" for r in rows)
    bad = sum(r[1] == "-" for r in rows)
    unreadable = f", {bad} unreadable" if bad else ""
    print(f"{len(rows)} game{'' if len(rows) == 1 else 's'}: {done} finished, {left} abandoned{unreadable}")
    if choices:
        print("accuracy under a choice rule (what each player's choices lost, per choice, against the optimal policy):")
        for line in choices:
            print(line)
    return 0


def accuracy_line(game_id: int, record: Any) -> str:
    """One game's accuracy in words: each player's turns lost per choice, choices made and best ones.

    Examples
    --------
    >>> from snlmarkov import Board, Game, Rules, Seat
    >>> game = Game(Board(3), Rules(choose_die=(2, 3), bonus_on_six=False), [Seat("Ann", "red")], dice=[1, 2])
    >>> _ = game.take_turn(); _ = game.choose(0); _ = game.take_turn(); _ = game.choose(0)
    >>> accuracy_line(4, game.record())
    '    4  expected turns: Ann 0.33 (2 choices, 1 best)'
    """
    from ..web.coach import accuracy

    acc = accuracy(record)
    if "reason" in acc:
        return f"{int(game_id):>5}  (no figure: {show(acc['reason'])})"
    parts, win = [], acc["unit"] == "win"
    for s in acc["seats"]:
        per = "-" if s["per_choice"] is None else f"{100 * s['per_choice']:.1f}" if win else f"{s['per_choice']:.2f}"
        if s["choices"] and s["lost"] is None:
            per = "risked never finishing"
        plural = "" if s["choices"] == 1 else "s"
        parts.append(f"{show(s['name'])} {per} ({s['choices']} choice{plural}, {s['best']} best)")
    unit = "points of win chance" if win else "expected turns"
    return f"{int(game_id):>5}  {unit}: " + "; ".join(parts)
