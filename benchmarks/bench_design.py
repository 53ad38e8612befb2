"""Benchmark the batched exact evaluator behind ``snl.design`` (target: >= 5,000 boards/s/core).

What is timed, in this process, after a warm-up:

1. **boards/s/core**: exact mean and sd of ``--boards`` random candidate
   100-square boards (8 ladders, 8 snakes, drawn as the search draws them)
   under the app rules with :func:`snlmarkov.search.batch.evaluate`, BLAS on
   one thread. Reported per CPU second (``time.process_time``) and per wall
   second; the target is on the CPU figure.
2. **baseline** in the same run: the per-board sparse path
   (``snl.analyze(board).expected_turns`` / ``.var_turns``) on a sample of the
   same boards, and the agreement of the two (must be within 1e-10 relative).
3. **scaling**: the same boards sent in chunks to a ``ProcessPoolExecutor``
   with 1, 2, ... workers (``--workers``); wall-clock boards/s and speed-up
   over one worker (the pool start-up is not timed).
4. the CLI example ``snlmarkov design --mean 25 --max-sd 15 --ladders 8
   --snakes 8 --seed 1``, serially and on the largest pool.

Usage::

    python benchmarks/bench_design.py                 # 20,000 boards, workers 1 2
    python benchmarks/bench_design.py --quick         # 4,000 boards
    python benchmarks/bench_design.py --workers 1 2 4 --json out.json

Exits 1 if the evaluator misses 5,000 boards/s/core or disagrees with analyze.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import time

import numpy as np

TARGET = 5_000.0


def candidates(count: int, seed: int = 1) -> np.ndarray:
    """Destination arrays of ``count`` random boards with 8 ladders and 8 snakes (as the search draws them)."""
    import snlmarkov as snl
    from snlmarkov.search.anneal import _horizon, _initial, _Problem

    target = snl.Target(mean=25)
    horizon, tail = _horizon(target)
    problem = _Problem(target, snl.Constraints(), snl.Rules(), 100, 8, 8, 1, horizon, tail, False)
    gen = np.random.default_rng(seed)
    dest = np.broadcast_to(np.arange(101), (count, 101)).copy()
    for i in range(count):
        s, e = _initial(problem, gen)
        dest[i, s] = e
    return dest


def evaluate_chunk(dest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of a chunk (runs on the workers)."""
    import snlmarkov as snl
    from snlmarkov.search.batch import evaluate

    fig = evaluate(dest, snl.Rules())
    return fig.mean, fig.var


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="4,000 boards, a smaller baseline")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    n = 4_000 if args.quick else args.boards
    import snlmarkov as snl
    from snlmarkov.search.batch import _board_of, evaluate, single_threaded

    print(f"machine: {os.cpu_count()} cores (shared machines make wall times noisy; CPU time is per core)")
    t0 = time.perf_counter()
    dest = candidates(n)
    print(f"drew {n} candidate boards in {time.perf_counter() - t0:.2f} s (not timed below)")
    rules = snl.Rules()
    evaluate(dest[:512], rules)  # warm-up
    with single_threaded():
        c0, w0 = time.process_time(), time.perf_counter()
        fig = evaluate(dest, rules)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    per_core = n / cpu
    print(f"batched evaluate, mean+sd, app rules: {per_core:,.0f} boards/s/core (CPU), {n / wall:,.0f} boards/s wall")
    sample = 100 if args.quick else 400
    boards = [_board_of(row) for row in dest[:sample]]
    c0 = time.process_time()
    ref = [snl.analyze(b, rules) for b in boards]
    base = sample / (time.process_time() - c0)
    worst = max(
        max(abs(fig.mean[i] - a.expected_turns) / a.expected_turns, abs(fig.var[i] - a.var_turns) / a.var_turns)
        for i, a in enumerate(ref)
    )
    print(f"baseline snl.analyze per board: {base:,.0f} boards/s/core; batched is {per_core / base:.1f}x faster")
    print(f"agreement with analyze on {sample} boards: worst relative difference {worst:.1e}")
    scaling = {}
    chunks = [dest[i : i + 1024] for i in range(0, n, 1024)]
    for w in args.workers:
        with cf.ProcessPoolExecutor(max_workers=w) as pool:
            list(pool.map(evaluate_chunk, chunks[:w]))  # start the workers, import snlmarkov
            w0 = time.perf_counter()
            out = list(pool.map(evaluate_chunk, chunks))
            wall = time.perf_counter() - w0
        got = np.concatenate([m for m, _ in out])
        assert np.array_equal(got, fig.mean), "executor results differ from the serial ones"
        scaling[w] = n / wall
        print(f"ProcessPoolExecutor({w}): {n / wall:,.0f} boards/s wall, x{scaling[w] / scaling[args.workers[0]]:.2f}")
    target = snl.Target(mean=25, max_sd=15)
    t0 = time.perf_counter()
    res = snl.design(target, ladders=8, snakes=8, rng=1)
    serial_s = time.perf_counter() - t0
    w = max(args.workers)
    with cf.ProcessPoolExecutor(max_workers=w) as pool:
        pool.submit(int, 0).result()
        t0 = time.perf_counter()
        res_p = snl.design(target, ladders=8, snakes=8, rng=1, executor=pool)
        pool_s = time.perf_counter() - t0
    same = [dict(b.board.jumps) for b in res.boards] == [dict(b.board.jumps) for b in res_p.boards]
    print(
        f"design --mean 25 --max-sd 15 --seed 1: {res.message}; {serial_s:.2f} s serial, {pool_s:.2f} s on {w} workers"
    )
    print(f"  best: {res.best}; same boards on the pool: {same}")
    ok = per_core >= TARGET and worst < 1e-10 and same
    print(f"target >= {TARGET:,.0f} boards/s/core: {'PASS' if per_core >= TARGET else 'FAIL'}")
    missed = [
        name
        for name, bad in (
            (f"{TARGET:,.0f} boards/s/core", per_core < TARGET),
            ("agreement with analyze to 1e-10", worst >= 1e-10),
            ("the same boards on the pool", not same),
        )
        if bad
    ]
    if missed:
        print(f"targets missed: {', '.join(missed)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "boards": n,
                    "boards_per_s_per_core": per_core,
                    "baseline_per_s": base,
                    "worst_rel_diff": worst,
                    "scaling_boards_per_s": scaling,
                    "design_serial_s": serial_s,
                    "design_pool_s": pool_s,
                    "design_evaluated": res.evaluated,
                },
                fh,
                indent=2,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
