"""Benchmark the exact joint chain of races with ``bump`` against the targets of issue 4.

Targets: 2 players in under 1 s, 3 players (about 3 x 10^6 states before
the jump starts are dropped) in under 60 s, peak memory under 4 GB. Each
case runs in a fresh subprocess that times :func:`snlmarkov.race` (turn
model included, interpreter start-up and imports excluded) and reports its
peak resident memory (``ru_maxrss``, the whole process: Python, numpy and
scipy included).

Usage::

    python benchmarks/bench_race.py            # 2 and 3 players, both modes
    python benchmarks/bench_race.py --quick    # skip the 3-player cases
    python benchmarks/bench_race.py --rules app --set bump=true
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

__all__ = ["main", "child"]

TARGET_SECONDS = {2: 1.0, 3: 60.0}
TARGET_MEMORY_MB = 4096.0


def child(players: int, mode: str, board_name: str, rules_name: str, settings: list[str]) -> None:
    """Run one case and print its figures as JSON (runs in the subprocess)."""
    import snlmarkov as snl
    from snlmarkov.cli.common import parse_setting
    from snlmarkov.races.core import joint_chain_states

    board = snl.Board.builtin(board_name)
    rules = snl.Rules.preset(rules_name)
    changes = dict(parse_setting(s) for s in settings)
    rules = rules.replace(**changes) if changes else rules
    start = time.perf_counter()
    r = snl.race(board, rules, players=players, mode=mode)
    seconds = time.perf_counter() - start
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scale = 1.0 if sys.platform == "darwin" else 1024.0  # bytes on macOS, kB elsewhere
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_mb": maxrss * scale / 2**20,
                "states": joint_chain_states(board, rules, players),
                "method": r.method,
                "expected_rounds": r.expected_rounds,
                "expected_total_turns": r.expected_total_turns,
                "win": r.win_probability.tolist(),
                "tail": r.tail_mass,
            }
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the 3-player cases")
    parser.add_argument("--board", default="jungle", help="built-in board (default jungle)")
    parser.add_argument("--rules", default="family", help="rule preset (default family: bump on)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="change one rule")
    parser.add_argument("--child", nargs=2, metavar=("PLAYERS", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(int(args.child[0]), args.child[1], args.board, args.rules, args.set)
        return 0

    cases = [(2, "classic"), (2, "last_one_standing")]
    if not args.quick:
        cases += [(3, "classic"), (3, "last_one_standing")]
    env = dict(os.environ)
    print(f"exact races with bump: board {args.board}, rules {args.rules} {' '.join(args.set)}".rstrip())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; one subprocess per case")
    print()
    header = (
        f"{'players':>7}  {'mode':<17}  {'states':>9}  {'seconds':>8}  {'target':>7}  "
        f"{'peak MB':>8}  {'E[rounds]':>10}  {'E[turns]':>10}  verdict"
    )
    print(header)
    print("-" * len(header))
    failed = 0
    for players, mode in cases:
        cmd = [sys.executable, __file__, "--board", args.board, "--rules", args.rules, "--child", str(players), mode]
        for s in args.set:
            cmd += ["--set", s]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            print(f"{players:>7}  {mode:<17}  failed: {done.stderr.strip().splitlines()[-1]}")
            failed += 1
            continue
        d = json.loads(done.stdout.strip().splitlines()[-1])
        target = TARGET_SECONDS[players]
        ok = d["seconds"] < target and d["peak_mb"] < TARGET_MEMORY_MB and d["method"].startswith("exact")
        failed += not ok
        print(
            f"{players:>7}  {mode:<17}  {d['states']:>9}  {d['seconds']:>8.2f}  {target:>7.0f}  "
            f"{d['peak_mb']:>8.0f}  {d['expected_rounds']:>10.4f}  {d['expected_total_turns']:>10.4f}  "
            f"{'ok' if ok else 'MISSED'}"
        )
    print()
    print(
        "states: players x n**players over the n squares a token can rest on "
        "(the full product over squares 0..N-1 would be players x N**players: 3 x 10^6 for 3 players on 100)"
    )
    print(
        f"targets: 2 players < {TARGET_SECONDS[2]:.0f} s, 3 players < {TARGET_SECONDS[3]:.0f} s, peak < {TARGET_MEMORY_MB:.0f} MB"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
