"""``simulate`` on a pool of two workers against serial (targets: never slower; >= 1.7x at 10^7 games).

For ``--games`` (default 10^7) games of the app rules on the jungle board,
one player, ``keep="summary"`` and ``keep="games"``: the wall time serially
(one process, the same 16 streams) and on a ``ProcessPoolExecutor(2)``
started and warmed up before the clock starts. Below
``snlmarkov.sim.parallel.POOL_MIN_WORK`` games the pool is not used (the
warning says so) and the ratio is 1 by construction: the row for 10^6 games
checks that. Wall time is what a pool saves, so the figures mean something
only on a quiet machine: the load is printed with each row.

Usage::

    python benchmarks/bench_parallel.py            # 10^7 games (and 10^6)
    python benchmarks/bench_parallel.py --quick    # 4 x 10^6 games

Exits 1 when the pool is slower than serial at any size, or under 1.7x at
the largest size.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import sys
import time
import warnings

TARGET = 1.7


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    import snlmarkov as snl
    from snlmarkov.sim.parallel import POOL_MIN_WORK

    largest = 4_000_000 if args.quick else args.games
    board, rules = snl.Board.builtin(), snl.Rules()
    missed = []
    with cf.ProcessPoolExecutor(2) as pool:
        snl.simulate(board, rules, 1000, rng=1)
        list(pool.map(abs, range(4)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            snl.simulate(board, rules, 4000, executor=pool, streams=2, rng=1)  # workers import and warm up
        print(f"{'games':>12} {'keep':>8} {'serial s':>9} {'pool s':>8} {'ratio':>6}  load")
        for games in (1_000_000, largest):
            for keep in ("summary", "games"):
                w0 = time.perf_counter()
                a = snl.simulate(board, rules, games, streams=16, keep=keep, rng=5)
                serial = time.perf_counter() - w0
                w1 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    b = snl.simulate(board, rules, games, executor=pool, keep=keep, rng=5)
                pooled = time.perf_counter() - w1
                ratio = serial / pooled
                same = a.games == b.games and float(a.mean_turns()) == float(b.mean_turns())
                print(f"{games:>12,} {keep:>8} {serial:>9.2f} {pooled:>8.2f} {ratio:>5.2f}x  {_load()}")
                if not same:
                    missed.append(f"{games:,} {keep}: the pool's result differs")
                if games >= POOL_MIN_WORK and ratio < 0.95:  # below it both runs are serial: noise only
                    missed.append(f"{games:,} {keep}: the pool is slower ({ratio:.2f}x)")
                if games == largest and ratio < TARGET:
                    missed.append(f"{games:,} {keep}: {ratio:.2f}x < {TARGET}x")
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
