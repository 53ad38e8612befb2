"""``snlmarkov sweep``: exact figures for every board under every rule set, as a table (or CSV)."""

from __future__ import annotations

import argparse
import sys

from .common import RULES_HELP, add_die_argument, base_rules, players_arg, rule_changes, workers_arg

__all__ = []


def register(p: argparse.ArgumentParser) -> None:
    """Give the ``sweep`` sub-command's parser its description and arguments."""
    p.description = (
        "Exact figures (mean, spread, median, quantiles, P(length > t), first-seat advantage) "
        "for every board under every rule preset given."
    )
    p.add_argument("--board", action="append", default=[], metavar="NAME|FILE", help="board (repeatable)")
    p.add_argument("--rules", action="append", default=[], metavar="PRESET|FILE", help=RULES_HELP + " (repeatable)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="change one rule of every set")
    add_die_argument(p)
    p.add_argument("--players", type=players_arg, default=1, help="seats of the race (1..6; default 1)")
    p.add_argument("--metric", action="append", default=[], metavar="NAME", help="an extra figure (repeatable)")
    p.add_argument("--workers", type=workers_arg, default=1, help="processes to compute on (default 1)")
    p.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov sweep``; return the exit status."""
    import concurrent.futures as cf
    import csv

    from ..search.sweep import sweep

    changes = rule_changes(args)
    rules = [base_rules(name).replace(**changes) for name in (args.rules or ["app"])]
    boards = args.board or ["jungle"]
    kw = dict(players=args.players, metrics=args.metric, progress=not args.no_progress, as_frame=False)
    if args.workers > 1:
        with cf.ProcessPoolExecutor(max_workers=args.workers) as pool:
            rows = sweep(boards, rules, executor=pool, **kw)
    else:
        rows = sweep(boards, rules, **kw)
    columns = list(rows[0])
    cells = [[_cell(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)))
    if args.csv:
        try:
            with open(args.csv, "w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=columns)
                writer.writeheader()
                writer.writerows(rows)
        except OSError as exc:
            print(f"snlmarkov sweep: error: cannot write {args.csv} ({exc.strerror or exc})", file=sys.stderr)
            return 2
        print(f"wrote {args.csv}")
    return 0


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
