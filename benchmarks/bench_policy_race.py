"""Benchmark the race policies of issue 19 against their targets.

Targets:

- ``optimal_policy(board, rules, players=2, objective="win")`` on the jungle
  board: under 60 s and 2 GB (peak of the allocations traced by
  :mod:`tracemalloc`, numpy's arrays included);
- once solved, the room's AI answers a choice in under 10 ms (a look-up in
  the policy's table: ``table.die_index`` / ``table.pick`` with the other
  token's square).

Each row shows wall and CPU time (``time.process_time``; the machine may be
busy) and, as the baseline measured in the same run, the one-token
``optimal_policy(objective="turns")`` of the same rules, with the ratio of
the race solve to it.

Usage::

    python benchmarks/bench_policy_race.py            # every case (a minute or two), and a 3-seat best response
    python benchmarks/bench_policy_race.py --quick    # choose_die (d4, d6) only
    python benchmarks/bench_policy_race.py --json     # one JSON object instead of the table
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import tracemalloc

__all__ = ["main"]

SOLVE_TARGET_S = 60.0
MEMORY_TARGET_BYTES = 2 * 1024**3
ANSWER_TARGET_S = 10e-3


def _timed(fn):
    """``(result, wall s, cpu s, peak traced bytes)`` of ``fn()``."""
    tracemalloc.start()
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, wall, cpu, peak


def _answer_time(policy, rules, board, count=2000):
    """Median and 99th percentile seconds of one AI answer: the choice at a random decision state (table look-up)."""
    import numpy as np

    rng = np.random.default_rng(1)
    table = policy.table
    n = board.size
    times = []
    for _ in range(count):
        sq, other = int(rng.integers(n)), int(rng.integers(n))
        t = time.perf_counter()
        if rules.choice == "die":
            table.die_index(sq, 0, sq, others=(other,))
        else:
            table.pick(sq, 0, sq, tuple(rng.choice(rules.die.values, size=rules.choose_move)), others=(other,))
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="choose_die (d4, d6) only")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    import snlmarkov as snl

    board = snl.Board.builtin()
    cases = [("app, choose_die d4 d6", snl.Rules(choose_die=(4, 6)))]
    if not args.quick:
        cases += [
            ("app, choose_die d4 d6 efron", snl.Rules(choose_die=(4, 6, snl.Die.faces(0, 0, 4, 4, 4, 4)))),
            ("app, choose_move 2", snl.Rules(choose_move=2)),
            ("family (bump), choose_die d4 d6", snl.Rules.preset("family").replace(choose_die=(4, 6))),
        ]
    from snlmarkov.chain.choice import _process

    snl.optimal_policy(snl.Board(10), snl.Rules(choose_die=(4, 6)), players=2, objective="win")  # imports, warm-up
    load_before = os.getloadavg()
    rows = []
    for label, rules in cases:
        row = {"case": label}
        _process.cache_clear()  # each solve builds its own decision process
        _, row["solo_s"], row["solo_cpu_s"], _ = _timed(lambda r=rules: snl.optimal_policy(board, r))
        _process.cache_clear()
        pair, row["race_s"], row["race_cpu_s"], row["race_peak_bytes"] = _timed(
            lambda r=rules: snl.optimal_policy(board, r, players=2, objective="win")
        )
        row["value"] = pair[0].value
        row["ratio"] = row["race_s"] / row["solo_s"]
        row["ratio_cpu"] = row["race_cpu_s"] / row["solo_cpu_s"]
        row["answer_median_s"], row["answer_p99_s"] = _answer_time(pair[0], rules, board)
        rows.append(row)
    if not args.quick:  # more seats: the best response of seat 1 to two seats that always roll the d6
        rules = snl.Rules(choose_die=(4, 6))
        fixed = snl.Policy.fixed(6)
        row = {"case": "3 seats: best response to d6, d6"}
        _process.cache_clear()
        _, row["solo_s"], row["solo_cpu_s"], _ = _timed(lambda: snl.optimal_policy(board, rules))
        _process.cache_clear()
        out, row["race_s"], row["race_cpu_s"], row["race_peak_bytes"] = _timed(
            lambda: snl.optimal_policy(board, rules, players=3, objective="win", policies=(fixed, None, fixed), seat=1)
        )
        row["value"] = out[1].value
        row["ratio"] = row["race_s"] / row["solo_s"]
        row["ratio_cpu"] = row["race_cpu_s"] / row["solo_cpu_s"]
        row["answer_median_s"] = row["answer_p99_s"] = None  # a race policy of 3 is not played by a room
        rows.append(row)
    load_after = os.getloadavg()

    missed = []
    for r in rows:
        if r["case"].startswith("3 seats"):  # no target: shown for scale
            continue
        if r["race_s"] > SOLVE_TARGET_S:
            missed.append(f"{r['case']}: solve {r['race_s']:.1f} s")
        if r["race_peak_bytes"] > MEMORY_TARGET_BYTES:
            missed.append(f"{r['case']}: peak {r['race_peak_bytes'] / 2**20:.0f} MiB")
        if r["answer_p99_s"] is not None and r["answer_p99_s"] > ANSWER_TARGET_S:
            missed.append(f"{r['case']}: answer {r['answer_p99_s'] * 1e3:.2f} ms")
    if args.json:
        print(json.dumps({"rows": rows, "load": [load_before, load_after], "missed": missed}))
        return 1 if missed else 0
    print(
        f"{'case':34} {'race s':>7} {'cpu s':>7} {'peak MiB':>9} {'solo s':>7} {'cpu s':>6} {'ratio':>6} "
        f"{'cpu':>6} {'answer ms':>10} {'p99 ms':>7} {'value':>8}"
    )
    for r in rows:
        answer = "-" if r["answer_median_s"] is None else f"{r['answer_median_s'] * 1e3:.4f}"
        p99 = "-" if r["answer_p99_s"] is None else f"{r['answer_p99_s'] * 1e3:.3f}"
        print(
            f"{r['case']:34} {r['race_s']:7.2f} {r['race_cpu_s']:7.2f} {r['race_peak_bytes'] / 2**20:9.0f} "
            f"{r['solo_s']:7.3f} {r['solo_cpu_s']:6.3f} {r['ratio']:6.0f} {r['ratio_cpu']:6.0f} "
            f"{answer:>10} {p99:>7} {r['value']:8.5f}"
        )
    print(
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; targets: solve < {SOLVE_TARGET_S:.0f} s "
        f"and < {MEMORY_TARGET_BYTES / 2**30:.0f} GiB, an answer < {ANSWER_TARGET_S * 1e3:.0f} ms"
    )
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
