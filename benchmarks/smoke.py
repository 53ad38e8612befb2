"""A benchmark smoke check for CI: ratios of CPU times measured in one process, in seconds.

Absolute times on a shared, loaded machine say little; the ratio of two
computations timed side by side in the same process says whether one of
them regressed. Each row times a figure against a baseline that shares its
set-up (the best of several runs, CPU time, one BLAS thread), and fails when
the ratio passes its bound. The bounds are about twice the ratios last
measured (``benchmarks/README.md``), so noise passes and a regression like
the 12x slowdown of ``hit_probability`` in the jungle board does not.

Usage::

    python benchmarks/smoke.py          # exits 1 if a ratio passes its bound
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import snlmarkov as snl  # noqa: E402
from snlmarkov.analysis.hitting import hit_probabilities  # noqa: E402


def _cpu(func) -> float:
    t = time.process_time()
    func()
    return time.process_time() - t


def best_cpu_pair(work, base, rounds: int = 7) -> tuple[float, float]:
    """The smallest CPU time of ``work`` and of ``base``, timed in alternation (after one warm-up each).

    Each of ``rounds`` rounds times ``work`` once, then ``base`` as many times as fit in that time (at least
    once): both see the same phases of the machine's load, and the short baseline gets as many tries as the
    work's CPU time allows, so that the load, which only ever adds time, has less say in either minimum.
    """
    work(), base()
    best_work = best_base = float("inf")
    for _ in range(rounds):
        t = _cpu(work)
        best_work = min(best_work, t)
        spent = 0.0
        while spent < t or spent == 0.0:
            b = _cpu(base)
            best_base, spent = min(best_base, b), spent + max(b, 1e-6)
    return best_work, best_base


def every_attribute(board, rules):
    a = snl.analyze(board, rules)
    return a.expected_turns, a.var_turns, a.length, a.occupancy, a.landings, a.jump_uses, a.hit_probability


#: (name, what is timed, the baseline, the largest ratio allowed)
ROWS = [
    (
        "analyze(jungle), every attribute / expected_turns(jungle)",
        lambda b, r: every_attribute(b, r),
        lambda b, r: snl.expected_turns(b, r),
        60.0,
    ),
    (
        "hit_probability(jungle) / expected_turns(jungle)",
        lambda b, r: hit_probabilities(b, r),
        lambda b, r: snl.expected_turns(b, r),
        20.0,
    ),
    (
        "exact_expected_turns(milton_bradley, plain) / expected_turns(same)",
        lambda b, r: snl.exact_expected_turns(snl.Board.builtin("milton_bradley"), snl.Rules.preset("plain")),
        lambda b, r: snl.expected_turns(snl.Board.builtin("milton_bradley"), snl.Rules.preset("plain")),
        150.0,
    ),
    (
        "optimal_policy(jungle, 3 dice), decision process rebuilt / expected_turns(jungle, d6)",
        lambda b, r: _optimal_three_dice(b),
        lambda b, r: snl.expected_turns(b, r),
        35.0,
    ),
]


def _optimal_three_dice(board):
    from snlmarkov.chain import choice

    choice._process.cache_clear()  # time the whole solve, not a cached decision process
    return snl.optimal_policy(board, snl.Rules(choose_die=(4, 6, 8))).value


def main() -> int:
    board, rules = snl.Board.builtin(), snl.Rules()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"benchmark smoke (CPU time, best of 7 rounds, work and baseline alternated, one BLAS thread; load {load:.1f})"
    )
    failed = 0
    for name, work, base, bound in ROWS:
        t_work, t_base = best_cpu_pair(lambda w=work: w(board, rules), lambda b=base: b(board, rules))
        ratio = t_work / max(t_base, 1e-9)
        ok = ratio <= bound
        failed += not ok
        print(
            f"  {'ok  ' if ok else 'FAIL'} {name}: {t_work * 1e3:.2f} ms / {t_base * 1e3:.2f} ms = {ratio:.1f} (bound {bound:g})"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
