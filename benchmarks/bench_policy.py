"""Benchmark the one-token optimal policies of issue 19 against their targets.

Targets (2-core machine):

- ``optimal_policy(board, rules)`` (fewest expected turns, policy iteration
  ending in an exact solve) on the jungle board with three dice to choose
  from: under 0.2 s;
- the same on ``Board.random(10**5, rng=1)``: under 10 s.

Every case runs in a fresh subprocess (imports not timed; one BLAS thread),
which builds the decision process from scratch on every run (the cache of
``DecisionProcess`` per board and rules is cleared) and reports wall time
(best of the runs, held against the target; and the first run), CPU time
(``time.process_time``) and peak resident memory. The baseline, measured in
the same process, is ``expected_turns`` of the plain rules with the best
single die of the choice (the same board: one exact sparse solve of a chain
of ``N`` states); the ratio says how many such solves the policy costs.
Other rows (no target) show the rule toggles that change the decision
states: ``on_cap="forfeit"`` (a state per origin), ``choose_move``, no cap,
``objective="within"`` and ``analyze(policy=)`` with every figure.

Usage::

    python benchmarks/bench_policy.py            # every case (about a minute)
    python benchmarks/bench_policy.py --quick    # no forfeit on 500 squares, no choose_move or within row
    python benchmarks/bench_policy.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

#: name -> (what, board, rules keyword arguments, objective, target seconds or None)
CASES: dict[str, tuple] = {
    "jungle-3-dice": ("optimal_policy, 3 dice (d4, d6, d8)", "jungle", {"choose_die": (4, 6, 8)}, "turns", 0.2),
    "jungle-3-dice-efron": (
        "optimal_policy, 3 dice (d4, d6, faces:0,0,4,4,4,4)",
        "jungle",
        {"choose_die": (4, 6, "faces:0,0,4,4,4,4")},
        "turns",
        0.2,
    ),
    "jungle-forfeit": (
        "the same, on_cap=forfeit",
        "jungle",
        {"choose_die": (4, 6, 8), "on_cap": "forfeit"},
        "turns",
        None,
    ),
    "jungle-move-3": ("optimal_policy, choose_move=3", "jungle", {"choose_move": 3}, "turns", None),
    "jungle-no-cap": (
        "optimal_policy, 3 dice, no cap",
        "jungle",
        {"choose_die": (4, 6, 8), "max_sixes": None},
        "turns",
        None,
    ),
    "jungle-within-50": ("optimal_policy within 50 turns, 3 dice", "jungle", {"choose_die": (4, 6, 8)}, "within", None),
    "jungle-analyze": (
        "analyze(policy=optimal), every figure, 3 dice",
        "jungle",
        {"choose_die": (4, 6, 8)},
        "analyze",
        None,
    ),
    "1e5-3-dice": ("optimal_policy, 3 dice (d4, d6, d8)", 10**5, {"choose_die": (4, 6, 8)}, "turns", 10.0),
    "1e5-move-2": ("optimal_policy, choose_move=2", 10**5, {"choose_move": 2}, "turns", None),
    "500-forfeit": ("optimal_policy, 2 dice, forfeit", 500, {"choose_die": (4, 6), "on_cap": "forfeit"}, "turns", None),
}
QUICK_SKIP = {"500-forfeit", "1e5-move-2", "jungle-within-50"}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _child(name: str, repeat: int) -> dict:
    import snlmarkov as snl
    from snlmarkov.analysis.single import expected_turns
    from snlmarkov.chain import choice

    what, size, kwargs, objective, _ = CASES[name]
    board = snl.Board.builtin() if size == "jungle" else snl.Board.random(size, rng=1)
    rules = snl.Rules(**kwargs)

    def run():
        choice._process.cache_clear()  # the decision process is built again on every run
        if objective == "within":
            return snl.optimal_policy(board, rules, objective="within", turns=50).value
        p = snl.optimal_policy(board, rules)
        if objective == "analyze":
            a = snl.analyze(board, rules, policy=p)
            a.var_turns, a.length, a.landings, a.hit_probability, a.position_distributions(100)
            return a.expected_turns
        return p.value

    def baseline():
        plain = (
            [rules.option_rules(i) for i in range(len(rules.choose_die))]
            if rules.choose_die
            else [rules.option_rules()]
        )
        best = float("inf")
        for r in plain:
            try:
                best = min(best, expected_turns(board, r))
            except snl.UnwinnableBoardError:  # that die alone never finishes: no baseline
                pass
        return best

    walls, cpus, value = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        value = run()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    base_walls, base_cpus, base_value = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        base_value = baseline()
        base_walls.append(time.perf_counter() - t)
        base_cpus.append(time.process_time() - c)
    return {
        "best_s": min(walls),
        "first_s": walls[0],
        "cpu_s": min(cpus),
        "base_s": min(base_walls),
        "base_cpu_s": min(base_cpus),
        "value": value,
        "base_value": base_value,
        "peak_mb": _peak_mb(),
    }


def _run(name: str, repeat: int) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, __file__, "--child", name, "--repeat", str(repeat)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fmt(x: float) -> str:
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="*", help="case names to run")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.repeat)))
        return 0
    names = args.only or [n for n in CASES if not (args.quick and n in QUICK_SKIP)]
    print(f"one-token optimal policies; load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| case | squares | best | first | CPU | peak RSS | baseline (CPU) | ratio (CPU) | value | target | met? |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    results, missed = {}, []
    for name in names:
        what, size, _, _, target = CASES[name]
        repeat = 2 if size == 10**5 or name == "500-forfeit" else args.repeat
        r = results[name] = _run(name, repeat)
        squares = "100" if size == "jungle" else f"{size:,}"
        if "error" in r:
            print(f"| {what} | {squares} | error: {r['error']} | | | | | | | | no |", flush=True)
            missed.append(name)
            continue
        met = "-" if target is None else ("yes" if r["best_s"] < target else "no")
        if met == "no":
            missed.append(name)
        print(
            f"| {what} | {squares} | {_fmt(r['best_s'])} | {_fmt(r['first_s'])} | {_fmt(r['cpu_s'])} | "
            f"{r['peak_mb']:.0f} MB | {_fmt(r['base_cpu_s'])} | {r['cpu_s'] / max(r['base_cpu_s'], 1e-9):.1f}x | "
            f"{r['value']:.6g} | {'-' if target is None else '< ' + _fmt(target)} | {met} |",
            flush=True,
        )
    print(
        "(best/first: wall time of the fastest and the first run in a fresh process; CPU: process time; baseline: "
        "expected_turns of the plain rules with the best single die, the same board, in the same process)"
    )
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    if missed:
        print("targets missed: " + ", ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
