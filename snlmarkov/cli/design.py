"""``snlmarkov design``: search for a board that meets a target, print it and write it to a board file."""

from __future__ import annotations

import argparse
import math
import sys

from .common import RULES_HELP, add_die_argument, at_least_arg, rules_from_args, workers_arg

__all__ = []


_count = at_least_arg  # an integer >= low in plain digits


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _pair(text: str) -> tuple[float, float]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return _number(key.strip()), _number(value.strip())


def register(p: argparse.ArgumentParser) -> None:
    """Give the ``design`` sub-command's parser its description and arguments."""
    p.description = (
        "Search jump placements for a board whose exact figures meet a target, print the best board found "
        "and write it to a board file (draw it with: snlmarkov report --board FILE). "
        "Example: snlmarkov design --mean 25 --max-sd 15 --ladders 8 --snakes 8 --seed 1 --out board.toml"
    )
    g = p.add_argument_group("target (at least one)")
    g.add_argument("--mean", type=_number, metavar="TURNS", help="expected turns to hit (within --tolerance)")
    g.add_argument("--sd", type=_number, metavar="TURNS", help="standard deviation of the turns to hit")
    for name, what in (("min-mean", "expected turns"), ("max-mean", "expected turns")):
        g.add_argument(f"--{name}", type=_number, metavar="TURNS", help=f"bound on the {what}")
    for name in ("min-sd", "max-sd"):
        g.add_argument(f"--{name}", type=_number, metavar="TURNS", help="bound on the standard deviation")
    g.add_argument("--quantile", type=_pair, action="append", default=[], metavar="Q=TURNS", help="a quantile to hit")
    g.add_argument(
        "--max-quantile",
        type=_pair,
        action="append",
        default=[],
        metavar="Q=TURNS",
        help="e.g. 0.95=60: 19 games in 20 end within 60 turns",
    )
    g.add_argument("--longer", type=_pair, action="append", default=[], metavar="T=P", help="P(length > T) to hit")
    g.add_argument(
        "--max-longer", type=_pair, action="append", default=[], metavar="T=P", help="P(length > T) at most P"
    )
    g.add_argument(
        "--min-longer", type=_pair, action="append", default=[], metavar="T=P", help="P(length > T) at least P"
    )
    g.add_argument(
        "--max-advantage",
        type=_pair,
        action="append",
        default=[],
        metavar="K=A",
        help="seat 0's win chance minus 1/K, for K players, at most A",
    )
    g.add_argument("--min-ladder-share", type=_number, metavar="P", help="every ladder used in at least P of games")
    g.add_argument("--tolerance", type=_number, default=0.02, help="relative tolerance of --mean/--sd (0.02)")
    b = p.add_argument_group("board")
    b.add_argument("--size", type=_count(2), default=100, help="finishing square (default 100)")
    b.add_argument("--ladders", type=_count(0), default=8, help="ladders (default 8)")
    b.add_argument("--snakes", type=_count(0), default=8, help="snakes (default 8)")
    b.add_argument("--min-ladder", type=_count(1), default=1, metavar="LEN", help="shortest ladder")
    b.add_argument("--max-ladder", type=_count(1), default=0, metavar="LEN", help="longest ladder (0: no limit)")
    b.add_argument("--min-snake", type=_count(1), default=1, metavar="LEN", help="shortest snake")
    b.add_argument("--max-snake", type=_count(1), default=0, metavar="LEN", help="longest snake (0: no limit)")
    b.add_argument("--must", type=_count(1), nargs="+", default=[], metavar="SQ", help="squares that must start a jump")
    b.add_argument("--avoid", type=_count(1), nargs="+", default=[], metavar="SQ", help="squares no jump touches")
    b.add_argument("--rules", default="app", metavar="PRESET|FILE", help=RULES_HELP)
    b.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="change one rule (repeatable)")
    add_die_argument(b)
    s = p.add_argument_group("search")
    s.add_argument("--seed", type=_count(0), default=1, help="seed (default 1): the same seed gives the same board")
    s.add_argument("--budget", type=_count(1), default=20_000, help="candidate boards at most (default 20000)")
    s.add_argument("--workers", type=workers_arg, default=1, help="processes to search on (default 1)")
    s.add_argument("--out", default="designed.toml", metavar="FILE", help="board file to write (.toml or .json)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov design``; return the exit status (0 also when the target was not met; see the output)."""
    import concurrent.futures as cf
    from pathlib import Path

    from ..errors import BoardError
    from ..search.anneal import ISLANDS, design
    from ..search.files import write_board
    from ..search.target import Constraints, Target

    if Path(args.out).suffix.lower() not in (".toml", ".json"):  # refuse before searching, not after
        raise BoardError(f"{args.out}: board files must end in .toml or .json")
    rules = rules_from_args(args)
    target = Target(
        mean=args.mean,
        sd=args.sd,
        min_mean=args.min_mean,
        max_mean=args.max_mean,
        min_sd=args.min_sd,
        max_sd=args.max_sd,
        quantiles=dict(args.quantile),
        max_quantiles=dict(args.max_quantile),
        longer_than=dict(args.longer),
        max_longer_than=dict(args.max_longer),
        min_longer_than=dict(args.min_longer),
        max_first_seat_advantage=dict(args.max_advantage),
        min_ladder_share=args.min_ladder_share,
        tolerance=args.tolerance,
    )
    constraints = Constraints(
        min_ladder_length=args.min_ladder,
        max_ladder_length=args.max_ladder or math.inf,
        min_snake_length=args.min_snake,
        max_snake_length=args.max_snake or math.inf,
        must_jump=args.must,
        no_jump=args.avoid,
    )
    common = dict(
        size=args.size,
        ladders=args.ladders,
        snakes=args.snakes,
        rules=rules,
        constraints=constraints,
        rng=args.seed,
        budget=args.budget,
        progress=not args.no_progress,
    )
    if args.workers > 1:
        with cf.ProcessPoolExecutor(max_workers=min(args.workers, ISLANDS)) as pool:  # one island per process
            result = design(target, executor=pool, **common)
    else:
        result = design(target, **common)
    best = result.best
    board = best.board
    print(result.message)
    print(f"target: {', '.join(g.label for g in target.goals)}")
    print(f"rules: {rules.preset_name}")
    for key, value in best.figures.items():
        print(f"  {key:<14} {value:.6g}")
    print("  ladders: " + ", ".join(f"{s}->{e}" for s, e in board.ladders.items()))
    print("  snakes:  " + ", ".join(f"{s}->{e}" for s, e in board.snakes.items()))
    comment = "\n".join(
        [
            f"designed by: snlmarkov design {' '.join(sys.argv[2:]) if sys.argv[1:2] == ['design'] else ''}".rstrip(),
            result.message,
            f"target: {', '.join(g.label for g in target.goals)}; rules: {rules.preset_name}",
            "figures: " + ", ".join(f"{k} {v:.6g}" for k, v in best.figures.items()),
        ]
    )
    path = write_board(board, args.out, comment=comment)
    print(f"wrote {path} (draw it with: snlmarkov report --board {path})")
    return 0
