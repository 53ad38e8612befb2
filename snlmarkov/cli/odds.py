"""``snlmarkov odds``: who wins from this moment of a game, exactly.

Give every seat's square (``--positions``, seat 0 first), the seat to move
(``--to-move``, numbered from 0 as in :class:`~snlmarkov.state.GameState`)
and, under last one standing, the seats already finished (``--places``, in
the order they finished). Prints each seat's chance of winning (and its
expected place and place distribution under last one standing) and the
expected rounds and turns left, exactly where that is affordable (see
``snlmarkov race``), with ``--json`` as elsewhere.

Examples
--------
>>> from snlmarkov.cli import main
>>> main(["odds", "--positions", "90", "30", "--to-move", "1"])
odds: jungle board (100 squares), rules app, classic
state: seat 0 on 90, seat 1 on 30; seat 1 to move
method: exact: independent players
<BLANKLINE>
seat  square  win chance
   0      90      0.6764
   1      30      0.3236  (to move)
<BLANKLINE>
expected rounds left   22.1786   (median 15, 90% of games within 51)
expected turns left    42.6808   (median 28, 90% of games within 100)
<BLANKLINE>
rounds left count the round in progress; classic: only the winner is placed
0
"""

from __future__ import annotations

import argparse
from typing import Any

from ..vocab import MODES
from .common import add_board_rules_arguments, board_from_args, count_arg, rules_from_args, seed_arg, whole_arg

__all__ = []

_ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``odds`` sub-command's parser its description and arguments."""
    parser.description = (
        "Exact win chances (and places under last_one_standing), expected rounds and turns left, from a "
        "state of a game. Seats are numbered from 0. Exact without bump, and with bump while at most 3 "
        "seats are racing; otherwise Monte Carlo from the state with 95% confidence intervals."
    )
    parser.add_argument(
        "--positions",
        nargs="+",
        type=whole_arg,
        required=True,
        metavar="SQUARE",
        help="each seat's square, seat 0 first",
    )
    parser.add_argument(
        "--to-move", type=whole_arg, default=0, metavar="SEAT", help="the seat to move next (default 0)"
    )
    parser.add_argument(
        "--places",
        nargs="*",
        type=whole_arg,
        default=[],
        metavar="SEAT",
        help="seats already finished, in finishing order",
    )
    parser.add_argument(
        "--mode", default="classic", choices=MODES, help="classic (the first home wins) or last_one_standing"
    )
    add_board_rules_arguments(parser)
    parser.add_argument(
        "--games", type=count_arg, default=100_000, metavar="N", help="games to simulate when estimated"
    )
    parser.add_argument("--seed", type=seed_arg, metavar="INT", help="seed for the simulation (default: unpredictable)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov odds``; return the exit status."""
    from ..races.core import race
    from ..state import GameState

    board, rules = board_from_args(args), rules_from_args(args)
    state = GameState(tuple(args.positions), to_move=args.to_move, places=tuple(args.places))
    result = race(board, rules, players=state.players, mode=args.mode, state=state, games=args.games, rng=args.seed)
    if args.json:
        out = result.to_dict()
        out["state"] = state.to_dict()
        out["over"] = state.is_over(board, args.mode)
        import json

        print(json.dumps(out, indent=2))
    else:
        print(format_odds(result, state))
    return 0


def format_odds(result: Any, state: Any) -> str:
    """The text report of ``snlmarkov odds``."""
    k = result.players
    over = state.is_over(result.board, result.mode)
    where = ", ".join(f"seat {i} on {p}" for i, p in enumerate(state.positions))
    done = f"; finished: {', '.join(map(str, state.places))}" if state.places else ""
    lines = [
        f"odds: {result.board.name or 'custom'} board ({result.board.size} squares), rules {result.rules.preset_name}, "
        f"{result.mode}",
        f"state: {where}{done}; " + ("the game is over" if over else f"seat {state.to_move} to move"),
        f"method: {result.method}",
        "",
    ]
    low, high = result.confidence_interval("win_probability")
    half = (high - low) / 2

    def fig(value: float, h: float, digits: int = 4) -> str:
        return f"{value:.{digits}f}" + ("" if result.exact else f" ± {h:.{digits}f}")

    columns = ["seat", "square", "win chance"]
    rows = [
        [f"{i:>4}", str(state.positions[i]), fig(float(result.win_probability[i]), float(half[i]))] for i in range(k)
    ]
    if result.mode == "last_one_standing":
        columns.append("expected place")
        columns += [_ORDINALS.get(j, f"{j}th") for j in range(1, k + 1)]
        for i in range(k):
            rows[i].append(f"{result.expected_place[i]:.3f}")
            rows[i] += [f"{p:.4f}" for p in result.place_probability[i]]
    widths = [max(len(c), *(len(r[j]) for r in rows)) for j, c in enumerate(columns)]
    lines.append("  ".join(c.rjust(w) if j else c for j, (c, w) in enumerate(zip(columns, widths))))
    for i, r in enumerate(rows):
        mark = "  (to move)" if i == state.to_move and not over else ""
        lines.append("  ".join(v.rjust(w) for v, w in zip(r, widths)) + mark)
    lines.append("")
    for label, name, dist in (
        ("expected rounds left", "expected_rounds", result.rounds_distribution),
        ("expected turns left", "expected_total_turns", result.turns_distribution),
    ):
        lo, hi = result.confidence_interval(name)
        value = fig(getattr(result, name), (hi - lo) / 2)
        lines.append(f"{label:<20}  {value:>8}   (median {dist.median()}, 90% of games within {dist.ppf(0.9)})")
    lines.append("")
    note = "rounds left count the round in progress"
    if result.mode == "classic":
        note += "; classic: only the winner is placed"
    lines.append(note)
    return "\n".join(lines)
