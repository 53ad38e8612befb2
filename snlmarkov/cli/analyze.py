"""``snlmarkov analyze``: headline single-player figures for one board and rule set."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from .common import add_board_rules_arguments, board_from_args, rules_from_args, show

__all__ = ["register", "run", "PROGRESS_SQUARES"]

#: From this many squares on, the length distribution (the slow part) shows a progress bar.
PROGRESS_SQUARES = 5_000


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``analyze`` sub-command."""
    p = sub.add_parser(
        "analyze",
        help="exact single-player figures for one board and rule set",
        description="Exact single-player figures: expected turns, spread, length distribution, rolls, jumps.",
    )
    add_board_rules_arguments(p)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov analyze``; return the exit status."""
    from ..analysis.single import analyze

    board = board_from_args(args)
    rules = rules_from_args(args)
    a = analyze(board, rules)
    if board.size >= PROGRESS_SQUARES:
        _length_with_progress(a)
    summary = a.summary()
    summary["jump_uses"] = {str(k): v for k, v in a.jump_uses.items()}
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return 0
    rule_text = ", ".join(f"{k}={v}" for k, v in rules.to_dict().items())
    print(
        f"board: {show(summary['board'])} ({board.size} squares, {len(board.ladders)} ladders, {len(board.snakes)} snakes)"
    )
    print(f"rules: {rules.preset_name} ({rule_text})")
    if rules.bump:
        print("note: bump acts only between players; single-player figures ignore it")
    d = a.length
    rows = [
        ("expected turns", f"{a.expected_turns:.6f}"),
        ("std of turns", f"{a.std_turns:.6f}"),
        ("median turns", f"{d.median()}"),
        ("most likely turns", f"{d.mode}"),
        ("fewest turns", f"{d.minimum}"),
        ("90% of games within", f"{d.ppf(0.9)} turns"),
        ("expected rolls", f"{a.expected_rolls:.6f}"),
        ("length tail beyond horizon", f"{d.tail_mass:.1e} (horizon {d.horizon} turns)"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")
    print("  most used jumps:")
    for start in sorted(a.jump_uses, key=lambda s: a.jump_uses[s], reverse=True)[:5]:
        end = board.jumps[start]
        kind = "ladder" if end > start else "snake"
        print(f"    {kind:6} {start:>3} -> {end:<3} {a.jump_uses[start]:.4f} uses per game")
    return 0


def _length_with_progress(a: Any) -> None:
    """Compute the length distribution with a tqdm bar counting orders of magnitude of mass left."""
    from tqdm.auto import tqdm

    goal = -math.log10(a.tail)
    with tqdm(total=round(goal, 1), desc="length distribution", unit="decade", file=sys.stderr) as bar:

        def step(turns: int, left: float) -> None:
            done = min(goal, -math.log10(left)) if left > 0 else goal
            bar.n = round(max(done, 0.0), 1)
            bar.set_postfix(turns=turns, refresh=False)
            bar.refresh()

        a.compute_length(progress=step)
