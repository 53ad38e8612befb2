"""``snlmarkov games``: list the games a ``snlmarkov serve --db`` server stored.

Examples
--------
>>> import os, tempfile
>>> from snlmarkov import Game
>>> from snlmarkov.cli import main
>>> from snlmarkov.web.store import GameStore
>>> path = os.path.join(tempfile.mkdtemp(), "g.sqlite")
>>> store = GameStore(path); _ = store.add(Game(players=["Ann", "Bob"], rng=1).play(), room="r"); store.close()
>>> main(["games", "--db", path])  # doctest: +ELLIPSIS
   id  status      mode               players  turns  winner  finished at (UTC)
    1  finished    classic            2        ...
1 game: 1 finished, 0 abandoned
0
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ..errors import InputFileError

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``games`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "games", help="list the games stored by snlmarkov serve --db", description="List the stored games."
    )
    parser.add_argument("--db", required=True, metavar="FILE", help="the SQLite file of snlmarkov serve --db")
    parser.add_argument("--status", choices=("finished", "abandoned"), help="only games of this status")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one line per stored game."""
    from ..web.store import GameStore

    if not Path(args.db).is_file():
        raise InputFileError(f"no game store at {args.db!r}")
    store = GameStore(args.db)
    try:
        games = store.games(args.status)
        print(
            f"{'id':>5}  {'status':<10}  {'mode':<17}  {'players':<7}  {'turns':<5}  {'winner':<6}  finished at (UTC)"
        )
        for g in games:
            record = store.record(g.id)
            winner = record.seats[record.winner].name if record.has_winner else "-"
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(g.finished_at))
            print(f"{g.id:>5}  {g.status:<10}  {g.mode:<17}  {g.players:<7}  {g.turns:<5}  {winner[:6]:<6}  {when}")
        done = sum(g.status == "finished" for g in games)
        print(f"{len(games)} game{'' if len(games) == 1 else 's'}: {done} finished, {len(games) - done} abandoned")
    finally:
        store.close()
    return 0
