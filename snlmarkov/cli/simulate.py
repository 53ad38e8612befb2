"""``snlmarkov simulate``: play many games by rolling dice, beside the exact figures.

With one player the simulated figures are printed beside the exact ones of
the analysis, with the cross-check verdict (:func:`snlmarkov.checks.crosschecking.crosscheck`:
mean turns and rolls, the distribution of turns and the landings per square
tested at an overall alpha of 1e-5). With more players the simulated race
figures are printed (exact race figures: ``snlmarkov race``). A progress bar
is shown on standard error unless ``--no-progress`` is given.

Exit status: 0, or 1 when the cross-check fails; 2 for bad arguments.

Examples
--------
>>> from snlmarkov.cli import main
>>> main(["simulate", "--games", "20000", "--rules", "plain", "--seed", "1", "--no-progress"])
... # doctest: +ELLIPSIS
simulate: 20,000 games, jungle board (100 squares), rules plain, 1 player
<BLANKLINE>
                     simulated        exact        z
mean turns ...
cross-check: PASSED at overall alpha 1e-05
0
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

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

__all__ = []

#: cross-check batches (fewer for small runs)
BATCHES = 40


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``simulate`` sub-command's parser its description and arguments."""
    parser.description = (
        "Simulate games by rolling dice. With one player, print the simulated figures beside the exact "
        "ones and whether they agree (exit status 1 if not; at least 100 games); with more, the simulated "
        "race figures."
    )
    parser.add_argument("--games", type=count_arg, required=True, metavar="N", help="games to simulate")
    add_board_rules_arguments(parser)
    parser.add_argument(
        "--players", type=players_arg, default=1, metavar="N", help=f"seats per game, {PLAYERS_HELP} (default 1)"
    )
    parser.add_argument(
        "--mode", default="classic", choices=MODES, help="classic (the first home wins) or last_one_standing"
    )
    parser.add_argument("--seed", type=seed_arg, metavar="INT", help="seed for the dice (default: unpredictable)")
    parser.add_argument(
        "--max-turns", type=count_arg, default=100_000, metavar="N", help="turn limit per game (default 100000)"
    )
    parser.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov simulate``; return the exit status."""
    from ..checks.crosschecking import crosscheck
    from ..sim.core import simulate

    board, rules = board_from_args(args), rules_from_args(args)
    progress = not args.no_progress

    def title(games: int) -> str:
        return (
            f"simulate: {games:,} games, {show(board.name) or 'custom'} board ({board.size} squares), "
            f"rules {rules.preset_name}, {args.players} player{'s' if args.players != 1 else ''}"
            + (f", {args.mode}" if args.players > 1 else "")
        )

    if args.players == 1 and args.games >= 10 * 10:
        batches = min(BATCHES, args.games // 10)
        report = crosscheck(
            board, rules, args.games, rng=args.seed, batches=batches, progress=progress, max_turns=args.max_turns
        )
        if args.json:
            import json

            print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
        else:
            _print_solo(title(report.games), report)
        return 0 if report.passed else 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        result = simulate(
            board,
            rules,
            args.games,
            args.players,
            args.mode,
            rng=args.seed,
            progress=progress,
            max_turns=args.max_turns,
        )
    if args.json:
        import json

        print(json.dumps(_race_dict(result), indent=2, sort_keys=True))
        return 0
    _print_race(title(result.games), result)
    for w in caught:
        print(f"note: {w.message}")
    if args.players == 1:
        print("note: a cross-check needs at least 100 games")
    return 0


def _print_solo(title: str, report: Any) -> None:
    import numpy as np

    print(title)
    if report.rules.bump:
        print("note: bump acts only between players; one token ignores it")
    print()
    checks = {c.name: c for c in report.checks}
    z_turns = np.sign(report.mean_turns - report.exact_mean_turns) * checks["mean turns"].statistic
    z_rolls = np.sign(report.mean_rolls - report.exact_mean_rolls) * checks["mean rolls"].statistic
    rows = [
        ("mean turns", report.mean_turns, report.exact_mean_turns, f"{z_turns:+8.2f}"),
        ("std of turns", report.std_turns, report.exact_std_turns, ""),
        ("mean rolls", report.mean_rolls, report.exact_mean_rolls, f"{z_rolls:+8.2f}"),
    ]
    print(f"{'':16} {'simulated':>12} {'exact':>12} {'z':>8}")
    for name, sim, exact, z in rows:
        print(f"{name:16} {sim:12.4f} {exact:12.4f} {z:>8}")
    busiest = int(np.argmax(report.exact_landings))
    print(
        f"{'landings on ' + str(busiest):16} {report.landings[busiest]:12.4f} {report.exact_landings[busiest]:12.4f} "
        f"{report.landing_t[busiest]:+8.2f}   (per game; the square landed on most)"
    )
    print()
    for c in report.checks:
        print(f"[{'pass' if c.passed else 'FAIL'}] {c.name:18} p = {c.p_value:<9.3g} {c.detail}")
    if report.n_truncated:
        print(f"[FAIL] {report.n_truncated} games reached the turn limit")
    print(f"cross-check: {'PASSED' if report.passed else 'FAILED'} at overall alpha {report.alpha:g}")


def _print_race(title: str, result: Any) -> None:
    print(title)
    print()
    seats = " (all seats)" if result.players > 1 else ""
    print(f"{'mean turns' + seats:22} {result.mean_turns():10.4f}   std {result.std_turns():.4f}")
    if result.players > 1:
        print(f"{'mean rounds':22} {result.mean_rounds():10.4f}")
    print(f"{'mean rolls' + seats:22} {result.mean_rolls():10.4f}")
    if result.players > 1:
        print()
        places = result.place_frequencies()
        shown = result.players if result.mode == "last_one_standing" else 1
        header = "seat  win share" + "".join(f"  {'place ' + str(p + 1):>8}" for p in range(1, shown))
        print(header)
        for seat, wins in enumerate(result.win_frequencies()):
            cells = "".join(f"  {places[seat, p]:8.4f}" for p in range(1, shown))
            print(f"{seat + 1:>4}  {wins:9.4f}{cells}")
        print()
        print("exact race figures: snlmarkov race")
    if result.n_truncated:
        print(f"truncated at {result.max_turns} turns: {result.n_truncated} games")


def _race_dict(result: Any) -> dict[str, Any]:
    return {
        "board": result.board.to_dict(),
        "rules": result.rules.to_dict(),
        "games": result.games,
        "players": result.players,
        "mode": result.mode,
        "mean_turns": result.mean_turns(),
        "std_turns": result.std_turns(),
        "mean_rounds": result.mean_rounds(),
        "mean_rolls": result.mean_rolls(),
        "win_frequencies": result.win_frequencies().tolist(),
        "place_frequencies": result.place_frequencies().tolist(),
        "landings_per_game": (result.landings / result.games).tolist(),
        "n_truncated": result.n_truncated,
        "max_turns": result.max_turns,
    }
