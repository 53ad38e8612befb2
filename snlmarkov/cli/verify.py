"""``snlmarkov verify``: check every stored game against the exact model, one by one and all together.

Each game's record is replayed through the model's roll mechanics
(:func:`~snlmarkov.verify_game`, with the server's signing key beside the
database: each game is reported as signed by this server, or not signed /
signature does not match; a game stored as finished must be a whole game,
not a part of one); then all of them are pooled
(:func:`~snlmarkov.checks.stored.check_stored`: the seats' turn counts with
censoring, and the landings per square). The verdict is the last line; the
exit status is 0 when everything passed, 1 otherwise.
"""

from __future__ import annotations

import argparse

from ..errors import SnlError
from .common import show

__all__ = []


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``verify`` sub-command's parser its description and arguments."""
    parser.description = (
        "Run verify_game on each stored game (the rules, and the signature of the server's key beside "
        "the database) and the pooled statistical check on all of them."
    )
    parser.add_argument("--db", required=True, metavar="FILE", help="the SQLite file of snlmarkov serve --db")
    parser.add_argument("--alpha", type=float, default=1e-4, help="overall significance level (default 1e-4)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the per-game failures, the pooled report and the verdict."""
    from ..checks.stored import check_stored
    from ..checks.verify import SIGNED, verify_game
    from ..web.store import key_path, load_key
    from .games import open_store, stored_games

    if not 0 < args.alpha < 1:
        raise SnlError(f"--alpha must be in (0, 1); got {args.alpha}")
    store = open_store(args.db)
    try:
        key = load_key(args.db)  # never made here: only the server makes its key
        records, bad, unsigned, total = [], 0, 0, 0
        for game, record, problem in stored_games(store):
            total += 1
            where = f"game {show(game.id)} ({show(game.status)})"
            if problem:  # a row that is not a valid record
                bad += 1
                print(f"{where}: {problem}")
                continue
            try:
                report = verify_game(record, key=key)
            except SnlError as exc:
                bad += 1
                print(f"{where}: unreadable: {show(exc)}")
                continue
            if not report.passed or (game.status == "finished" and not report.finished):
                bad += 1
                why = (
                    "" if not report.passed else f" (stored as {game.status}, but the record is {report.rules_verdict})"
                )
                print(f"{where}: {report}{why}")
            if key is not None and report.signature != SIGNED:
                unsigned += 1
                print(f"{where}: {report.signature}")
            records.append(record)
    finally:
        store.close()
    print(f"{total - bad} of {total} stored games verify turn by turn")
    if key is None:
        print(f"signatures not checked: no signing key at {show(str(key_path(args.db)))!r}")
    else:
        print(f"{total - unsigned} of {total} signed by this server, {unsigned} not signed / signature does not match")
    pooled = check_stored(records, alpha=args.alpha)
    print(pooled)
    ok = bad == 0 and unsigned == 0 and pooled.passed
    print(f"verdict: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1
