"""``snlmarkov race``: who wins a game of several players, and how long it lasts.

Prints one row per seat (win chance, expected place and place distribution
under last one standing), the expected number of rounds and of turns of all
seats together, how much going first is worth, and how the figures were
obtained (exact, or Monte Carlo with 95% confidence intervals).

Seats are numbered from 1 in the table (seat 1 moves first in every round);
the ``--json`` output keeps the 0-based seat index of :class:`RaceResult`.

Examples
--------
>>> from snlmarkov.cli import main
>>> main(["race", "--players", "2", "--board", "milton_bradley", "--rules", "plain"])
race: milton_bradley board (100 squares), rules plain, 2 players, classic
method: exact: independent players
<BLANKLINE>
seat  win chance
   1      0.5079
   2      0.4921
<BLANKLINE>
going first: +1.58 points of win chance over the last seat
expected rounds        26.3310   (median 23, 90% of games within 44)
expected total turns   52.1540   (median 46, 90% of games within 87)
classic: only the winner is placed; use --mode last_one_standing for every place
0
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..races.defaults import DEFAULT_GAMES, METHODS
from ..vocab import MODES
from .common import (
    PLAYERS_HELP,
    add_board_rules_arguments,
    board_from_args,
    count_arg,
    players_arg,
    rules_from_args,
    seed_arg,
    show,
)

if TYPE_CHECKING:
    from ..races.core import RaceResult

__all__ = []

_ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``race`` sub-command's parser its description and arguments."""
    parser.description = (
        "Per-seat win chances (and, under last_one_standing, expected place and place distribution), "
        "expected rounds and total turns. Exact without bump, and with bump for up to 3 players "
        "(4 with --method exact, minutes on the jungle board); "
        "otherwise Monte Carlo with 95% confidence intervals."
    )
    parser.add_argument(
        "--players", type=players_arg, default=2, metavar="N", help=f"seats, {PLAYERS_HELP} (default 2)"
    )
    parser.add_argument(
        "--mode", default="classic", choices=MODES, help="classic (the first home wins) or last_one_standing"
    )
    add_board_rules_arguments(parser)
    parser.add_argument(
        "--method",
        default="auto",
        choices=METHODS,
        help="auto (exact when affordable, default), exact, or monte_carlo",
    )
    parser.add_argument(
        "--games",
        type=count_arg,
        default=DEFAULT_GAMES,
        metavar="N",
        help=f"games to simulate when the figures are estimated (default {DEFAULT_GAMES})",
    )
    parser.add_argument(
        "--seed", type=seed_arg, metavar="INT", help="seed for the simulation (default: unpredictable; checked always)"
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar while simulating, or the rounds of an exact bump race",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov race``; return the exit status."""
    from ..races.core import race

    board, rules = board_from_args(args), rules_from_args(args)
    result = race(
        board,
        rules,
        players=args.players,
        mode=args.mode,
        method=args.method,
        games=args.games,
        rng=args.seed,
        progress=args.progress,
    )
    if args.json:
        import json

        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(format_result(result))
    return 0


def _with_ci(result: RaceResult, value: float, half: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    if not result.exact:
        text += f" ± {half:.{digits}f}"
    return text


def format_result(result: RaceResult) -> str:
    """The text report of ``snlmarkov race`` for one result."""
    import numpy as np

    k = result.players
    lines = [
        f"race: {show(result.board.name) or 'custom'} board ({result.board.size} squares), rules {result.rules.preset_name}, "
        f"{k} player{'s' if k > 1 else ''}, {result.mode}",
        f"method: {result.method}",
        "",
    ]
    low, high = result.confidence_interval("win_probability")
    win_half = (np.asarray(high) - np.asarray(low)) / 2
    columns = ["seat", "win chance"]
    rows = [
        [f"{i + 1:>4}", _with_ci(result, float(result.win_probability[i]), float(win_half[i]), 4)] for i in range(k)
    ]
    if result.mode == "last_one_standing":
        plow, phigh = result.confidence_interval("expected_place")
        place_half = (np.asarray(phigh) - np.asarray(plow)) / 2
        columns.append("expected place")
        columns += [_ORDINALS.get(j, f"{j}th") for j in range(1, k + 1)]
        for i in range(k):
            rows[i].append(_with_ci(result, float(result.expected_place[i]), float(place_half[i]), 3))
            rows[i] += [f"{p:.4f}" for p in result.place_probability[i]]
    widths = [max(len(c), *(len(r[j]) for r in rows)) for j, c in enumerate(columns)]
    lines.append("  ".join(c.rjust(w) if j else c for j, (c, w) in enumerate(zip(columns, widths))))
    for r in rows:
        lines.append("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    lines.append("")
    if k > 1:
        edge = 100 * (result.win_probability[0] - result.win_probability[-1])
        lines.append(f"going first: {edge:+.2f} points of win chance over the last seat")
    else:
        lines.append("one player: the figures are the single-player game")
    for label, name, dist in (
        ("expected rounds", "expected_rounds", result.rounds_distribution),
        ("expected total turns", "expected_total_turns", result.turns_distribution),
    ):
        lo, hi = result.confidence_interval(name)
        value = _with_ci(result, getattr(result, name), (hi - lo) / 2, 4)
        lines.append(f"{label:<20}  {value:>8}   (median {dist.median()}, 90% of games within {dist.ppf(0.9)})")
    if result.mode == "classic" and k > 1:
        lines.append("classic: only the winner is placed; use --mode last_one_standing for every place")
    return "\n".join(lines)
