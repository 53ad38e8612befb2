"""``snlmarkov analyze``: headline single-player figures for one board and rule set."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from .common import add_board_rules_arguments, board_from_args, rules_from_args, show

__all__ = []

#: From this many squares on, the length distribution (the slow part) shows a progress bar.
PROGRESS_SQUARES = 5_000


def register(p: argparse.ArgumentParser) -> None:
    """Give the ``analyze`` sub-command's parser its description and arguments."""
    p.description = "Exact single-player figures: expected turns, spread, length distribution, rolls, jumps."
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
        import json

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
    """Compute the length distribution with a tqdm bar in turns, towards an estimated horizon.

    The horizon is first guessed from the mean and spread of the length
    (known already), then, once mass has started to leave, from the rate at
    which the mass left falls (decades per turn) down to the tail.
    """
    from tqdm.auto import tqdm

    goal = -math.log10(a.tail)
    guess = max(64, int(a.expected_turns + 8 * a.std_turns))
    seen: list[tuple[int, float]] = []
    with tqdm(total=guess, desc="length distribution", unit="turn", file=sys.stderr) as bar:

        def step(turns: int, left: float) -> None:
            decades = -math.log10(left) if left > 0 else goal
            seen.append((turns, decades))
            if decades > 0.5 and len(seen) > 1:  # mass is leaving: extrapolate its decay to the tail
                back_turns, back_decades = seen[len(seen) // 2]
                rate = (decades - back_decades) / max(1, turns - back_turns)
                if rate > 0:
                    bar.total = max(turns, int(turns + (goal - decades) / rate))
            bar.total = max(bar.total or 0, turns)
            bar.n = turns
            bar.set_postfix(left=f"{left:.1e}", refresh=False)
            bar.refresh()

        a.compute_length(progress=step)
        bar.total = bar.n = max(bar.n, a.length.horizon)
        bar.refresh()
