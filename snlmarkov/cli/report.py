"""``snlmarkov report``: write every figure and the summary tables of one board."""

from __future__ import annotations

import argparse
import sys

from .common import add_board_rules_arguments, board_from_args, seed_arg, whole_arg, writable_folder

__all__ = []


def register(p: argparse.ArgumentParser) -> None:
    """Give the ``report`` sub-command's parser its description and arguments."""
    from ..report.defaults import DEFAULT_GAMES, DEFAULT_SEED, MIN_GAMES

    p.description = (
        "Analyse a board under every rule preset and write the figures (PNG, and SVG for the line art), "
        "summary.json and summary.md. The output is deterministic: the same code writes the same bytes."
    )
    add_board_rules_arguments(p, rules=False)
    p.add_argument("--out", default="figures", metavar="DIR", help="output folder (default: figures)")
    p.add_argument(
        "--games",
        type=whole_arg,
        default=DEFAULT_GAMES,
        metavar="N",
        help=f"games simulated for the cross-check (at least {MIN_GAMES}; default: {DEFAULT_GAMES})",
    )
    p.add_argument(
        "--seed",
        type=seed_arg,
        default=DEFAULT_SEED,
        metavar="S",
        help=f"seed of the cross-check (default: {DEFAULT_SEED})",
    )
    p.add_argument(
        "--max-players",
        type=whole_arg,
        default=6,
        metavar="K",
        help="races are computed for 2..K players (2..6; default: 6)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on standard error")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov report``; return the exit status."""
    import matplotlib

    matplotlib.use("Agg")
    from ..report.core import STAGES, write_report

    board = board_from_args(args)
    out = writable_folder(args.out)  # before any work: /proc, /sys, '' are refused here

    def progress(i: int, name: str) -> None:
        if not args.quiet:
            print(f"report [{i}/{len(STAGES)}] {name}", file=sys.stderr, flush=True)

    report = write_report(board, out, games=args.games, seed=args.seed, max_players=args.max_players, progress=progress)
    print(report.table())
    check = report.summary.get("crosscheck")
    if check:
        print(f"cross-check: {check['verdict']}")
    print(f"wrote {len(report.files)} files to {report.out}: {', '.join(report.files)}")
    return 0
