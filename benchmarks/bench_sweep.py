"""Benchmark ``snl.sweep`` (targets: >= 1,000 boards/s serial, 2 workers >= 1.7x serial).

What is timed, in this process:

1. **serial**: ``snl.sweep`` of ``--boards`` random 100-square boards under the
   app rules, the default columns (expected turns, sd, median, 10% and 90%
   quantiles, P(length > 50), P(length > 100)); boards per CPU second and per
   wall second. The target is on the CPU figure (the machine is shared).
2. **baseline** in the same run: the same sweep of a sample of the boards,
   one ``analyze`` per pair (the path every row took before the batched
   evaluator), and the agreement of the two tables (within 1e-10 relative,
   quantiles equal).
3. **2 workers**: the same sweep on a ``ProcessPoolExecutor(2)`` (started and
   warmed up before the clock starts), serial and pool runs alternated
   ``--repeats`` times, the best of each kept: the wall-time speed-up (target
   >= 1.7x; meaningful only on a quiet machine: the load is printed, with a
   reference row for a pure-Python loop split into 16 tasks), and the CPU
   figures that do not depend on the load (``benchmarks/poolstats.py``): all
   the pool's CPU over the serial CPU (target <= 1.10), the parent's share
   (<= 5%), and the speed-up two idle cores would give (>= 1.7x).

Usage::

    python benchmarks/bench_sweep.py                # 10,000 boards
    python benchmarks/bench_sweep.py --quick        # 2,000 boards
    python benchmarks/bench_sweep.py --no-pool      # skip the pool
    python benchmarks/bench_sweep.py --cpu-only     # a loaded machine: the wall target shown, not held

Exits 1 if a target is missed or the tables disagree.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import time

from poolstats import HEADER, compare, load, reference

TARGET_SERIAL = 1_000.0
TARGET_POOL = 1.7
CPU_OVERHEAD = 1.10
PARENT_SHARE = 0.05


def _same(rows: list[dict], ref: list[dict]) -> float:
    """The largest relative difference of the float columns; raises if another column differs."""
    worst = 0.0
    for a, b in zip(rows, ref):
        for key, value in b.items():
            if isinstance(value, float):
                worst = max(worst, abs(a[key] - value) / max(1.0, abs(value)))
            elif a[key] != value:
                raise SystemExit(f"column {key}: {a[key]!r} != {value!r}")
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="2,000 boards")
    parser.add_argument("--no-pool", action="store_true", help="skip the 2-worker run")
    parser.add_argument("--repeats", type=int, default=2, help="serial and pool runs alternated")
    parser.add_argument("--cpu-only", action="store_true", help="hold the CPU targets only (a loaded machine)")
    args = parser.parse_args(argv)
    n = 2_000 if args.quick else args.boards
    import snlmarkov as snl
    from snlmarkov.search import sweep as sweep_module

    print(f"machine: {os.cpu_count()} cores, load {load()} (1, 5, 15 min)")
    boards = [snl.Board.random(100, rng=i) for i in range(n)]
    snl.sweep(boards[:50], as_frame=False)  # warm up: imports, caches
    c0, w0 = time.process_time(), time.perf_counter()
    rows = snl.sweep(boards, as_frame=False)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    print(
        f"serial: {n:,} boards in {wall:.2f} s wall, {cpu:.2f} s CPU: {n / cpu:,.0f} boards/s CPU, {n / wall:,.0f} wall"
    )

    sample = max(50, n // 20)
    batched = sweep_module._batch_rows
    sweep_module._batch_rows = lambda tasks, options: {}  # every pair through analyze(), as before
    try:
        c1 = time.process_time()
        ref = snl.sweep(boards[:sample], as_frame=False)
        base = time.process_time() - c1
    finally:
        sweep_module._batch_rows = batched
    worst = _same(rows[:sample], ref)
    print(
        f"baseline (one analyze per pair): {sample / base:,.0f} boards/s CPU; batched is {base / sample * n / cpu:.1f}x; agreement {worst:.1e}"
    )
    missed = []
    if n / cpu < TARGET_SERIAL:
        missed.append(f"serial {n / cpu:,.0f} < {TARGET_SERIAL:,.0f} boards/s")
    if worst > 1e-10:
        missed.append(f"agreement {worst:.1e} > 1e-10")
    if not args.no_pool:
        with cf.ProcessPoolExecutor(2) as pool:
            snl.sweep(boards[:64], executor=pool, as_frame=False)  # workers import and warm up
            ref = reference(pool)
            print(f"reference, a pure-Python loop in 16 tasks: {ref.wall_x:.2f}x wall, cpu x {ref.cpu_x:.2f}")
            c = compare(
                lambda: snl.sweep(boards, as_frame=False),
                lambda: snl.sweep(boards, executor=pool, as_frame=False),
                pool,
                args.repeats,
            )
        if c.pool_result != rows or c.serial_result != rows:
            missed.append("the pool's table differs from the serial one")
        print(f"2 workers:  {HEADER}\n            {c.cells()}  (load {load()})")
        if c.cpu_x > CPU_OVERHEAD:
            missed.append(f"the pool's CPU is {c.cpu_x:.2f}x serial > {CPU_OVERHEAD}")
        if c.parent > PARENT_SHARE:
            missed.append(f"the parent's CPU is {c.parent:.2f} of serial > {PARENT_SHARE}")
        if c.two_cores < TARGET_POOL:
            missed.append(f"two idle cores would give {c.two_cores:.2f}x < {TARGET_POOL}x")
        if not args.cpu_only and c.wall_x < TARGET_POOL:
            missed.append(f"2 workers {c.wall_x:.2f}x wall < {TARGET_POOL}x")
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
