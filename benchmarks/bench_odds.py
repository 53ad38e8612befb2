"""Benchmark exact odds from any state (``snl.Odds``, issues 10 and 21) against their targets.

Targets (CPU time, ``time.process_time``, per query, over random reachable
states: every non-final state of simulated games, sampled with a fixed seed):

- a query ``odds(state)`` (the :class:`~snlmarkov.races.result.RaceResult`;
  its finishing orders and length distributions are computed when first
  read) and ``odds.win_probability(state)``: median under 1 ms and 99th
  percentile under 5 ms, in every mode (classic, last one standing), for 1
  to 6 players without ``bump`` (app rules) and 1 to 3 with it (family
  rules: the value table is solved for up to 3);
- building the 3-player bump table (``snl.Odds`` with ``family`` rules)
  within 2x of one ``snl.race()`` from the start, measured in the same
  child process (wall and CPU).

The column ``figures`` is a query whose every figure is then read:
``order_probability`` (all ``players!`` orders under last one standing),
``expected_rounds``, ``expected_total_turns`` and, under last one standing,
``expected_place`` (the length distributions' pmfs of a bump state are a
forward run of the joint chain, not timed here). It is shown, not a target.

Each case runs in a fresh child process (table build included, interpreter
start-up excluded). ``--against DIR`` runs every case a second time with
``PYTHONPATH=DIR`` (another checkout, e.g. the code before a change), the
two alternating case by case, and prints the ratios of the medians: old and
new measured in the same run, on the same states.

Usage::

    python benchmarks/bench_odds.py                  # the whole grid (the 3-player bump cases take a minute)
    python benchmarks/bench_odds.py --quick          # fewer states, no 3-player bump build ratio
    python benchmarks/bench_odds.py --only app:6:last_one_standing family:3:classic
    python benchmarks/bench_odds.py --against /tmp/old-checkout
    python benchmarks/bench_odds.py --json           # one JSON object instead of the table
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

__all__ = ["main", "child"]

MEDIAN_TARGET_S = 1e-3
P99_TARGET_S = 5e-3
BUILD_RATIO_TARGET = 2.0
MODES = ("classic", "last_one_standing")


def _grid() -> list[tuple[str, int, str]]:
    cases = [("app", k, mode) for mode in MODES for k in range(1, 7)]
    cases += [("family", k, mode) for mode in MODES for k in range(1, 4)]
    return cases


def _rules(name: str):
    import snlmarkov as snl

    return snl.Rules() if name == "app" else snl.Rules.preset(name)


def _states(board, rules, players: int, mode: str, games: int, count: int, seed: int = 0) -> list:
    """``count`` states drawn at random (fixed seed) from every non-final state of ``games`` simulated games."""
    import numpy as np

    import snlmarkov as snl

    pool = []
    for g in range(games):
        record = snl.Game(board, rules, players=players, mode=mode, rng=g).play()
        pool.extend(s for s in record.states() if not s.is_over(board, mode))
    pick = np.random.default_rng(seed).choice(len(pool), size=min(count, len(pool)), replace=False)
    return [pool[i] for i in pick]


def _read_all(result, mode: str) -> None:
    dict(result.order_probability)
    result.expected_rounds, result.expected_total_turns  # noqa: B018 - reading them is the work
    if mode == "last_one_standing":
        result.expected_place  # noqa: B018


def _times(call, states) -> dict:
    """Per state: CPU and wall seconds of one call (after one warm-up call on the first state)."""
    import numpy as np

    call(states[0])
    cpu, wall = [], []
    for s in states:
        c, w = time.process_time_ns(), time.perf_counter_ns()
        call(s)
        cpu.append(time.process_time_ns() - c)
        wall.append(time.perf_counter_ns() - w)
    c, w = np.array(cpu) / 1e9, np.array(wall) / 1e9
    return {
        "cpu_median_s": float(np.median(c)),
        "cpu_p99_s": float(np.percentile(c, 99)),
        "cpu_max_s": float(c.max()),
        "wall_median_s": float(np.median(w)),
        "wall_p99_s": float(np.percentile(w, 99)),
    }


def child(rules_name: str, players: int, mode: str, games: int, count: int, build_ratio: bool) -> dict:
    """One case in this process: build the odds, then time the queries (returns the row)."""
    import snlmarkov as snl

    board = snl.Board.builtin()
    rules = _rules(rules_name)
    row: dict = {"rules": rules_name, "players": players, "mode": mode}
    if build_ratio:
        t, c = time.perf_counter(), time.process_time()
        snl.race(board, rules, players=players, mode=mode)
        row["race_s"], row["race_cpu_s"] = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    odds = snl.Odds(board, rules, players=players, mode=mode)
    row["build_s"], row["build_cpu_s"] = time.perf_counter() - t, time.process_time() - c
    if build_ratio:
        row["build_over_race"] = row["build_s"] / row["race_s"]
        row["build_over_race_cpu"] = row["build_cpu_s"] / row["race_cpu_s"]
    states = _states(board, rules, players, mode, games, count)
    row["states"] = len(states)
    row["query"] = _times(odds, states)
    row["win"] = _times(odds.win_probability, states)
    row["figures"] = _times(lambda s: _read_all(odds(s), mode), states)
    return row


def _run(case: tuple[str, int, str], args: argparse.Namespace, path: str | None) -> dict:
    rules_name, players, mode = case
    build_ratio = rules_name == "family" and players == 3 and not args.quick
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    # the checkout to import: DIR, else this one; the child runs in benchmarks/, where no package shadows it
    env["PYTHONPATH"] = os.pathsep.join([path or os.path.dirname(here), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_odds; "
        "print(json.dumps(bench_odds.child(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), "
        "int(sys.argv[6]), sys.argv[7] == '1')))"
    )
    argv = [sys.executable, "-c", code, here, rules_name, str(players), mode, str(args.games), str(args.states)]
    out = subprocess.run(
        [*argv, "1" if build_ratio else "0"], env=env, cwd=here, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"case {case} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(x: float) -> str:
    return f"{x * 1e3:.3f}"


def main(argv=None) -> int:  # noqa: C901, PLR0912
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 states per case, no 3-player build ratio")
    parser.add_argument("--games", type=int, default=None, help="simulated games per case (default 40, quick 10)")
    parser.add_argument("--states", type=int, default=None, help="states per case (default 1000, quick 200)")
    parser.add_argument("--only", nargs="*", default=None, help="cases as rules:players:mode (app or family)")
    parser.add_argument("--against", default=None, help="also run every case with PYTHONPATH=DIR (old code)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    args.games = args.games or (10 if args.quick else 40)
    args.states = args.states or (200 if args.quick else 1000)
    cases = _grid()
    if args.only:
        wanted = [tuple(c.split(":")) for c in args.only]
        cases = [(r, int(k), m) for r, k, m in wanted]

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_before = os.getloadavg()
    rows, old_rows = [], []
    for case in cases:
        if args.against:
            old_rows.append(_run(case, args, args.against))
        rows.append(_run(case, args, None))
    load_after = os.getloadavg()

    missed = []
    for r in rows:
        label = f"{r['rules']} {r['players']} {r['mode']}"
        for key in ("query", "win"):
            t = r[key]
            if t["cpu_median_s"] > MEDIAN_TARGET_S or t["cpu_p99_s"] > P99_TARGET_S:
                missed.append(f"{key} {label}: median {_ms(t['cpu_median_s'])} ms, p99 {_ms(t['cpu_p99_s'])} ms")
        if r.get("build_over_race", 0.0) > BUILD_RATIO_TARGET:
            missed.append(f"build {label}: {r['build_over_race']:.2f}x race()")
    meta = {
        "started": started,
        "load_before": load_before,
        "load_after": load_after,
        "games": args.games,
        "states": args.states,
        "median_target_s": MEDIAN_TARGET_S,
        "p99_target_s": P99_TARGET_S,
        "build_ratio_target": BUILD_RATIO_TARGET,
    }
    if args.json:
        print(json.dumps({**meta, "rows": rows, "against": old_rows, "missed": missed}))
        return 1 if missed else 0
    print(
        f"{started}; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after; CPU ms per query "
        f"(median / p99) over up to {args.states} states of {args.games} games per case"
    )
    print(
        f"{'rules':7} {'k':>1} {'mode':17} {'build cpu s':>11} {'query':>15} {'win':>15} {'figures':>17} {'wall query':>15}"
    )
    for r in rows:
        q, w, f = r["query"], r["win"], r["figures"]
        print(
            f"{r['rules']:7} {r['players']:>1} {r['mode']:17} {r['build_cpu_s']:11.3f} "
            f"{_ms(q['cpu_median_s']):>7} {_ms(q['cpu_p99_s']):>7} {_ms(w['cpu_median_s']):>7} {_ms(w['cpu_p99_s']):>7} "
            f"{_ms(f['cpu_median_s']):>8} {_ms(f['cpu_p99_s']):>8} {_ms(q['wall_median_s']):>7} {_ms(q['wall_p99_s']):>7}"
        )
    for r in rows:
        if "build_over_race" in r:
            print(
                f"build {r['rules']} {r['players']} {r['mode']}: {r['build_s']:.2f} s vs race() {r['race_s']:.2f} s "
                f"= {r['build_over_race']:.2f}x (CPU {r['build_cpu_s']:.2f} vs {r['race_cpu_s']:.2f} s "
                f"= {r['build_over_race_cpu']:.2f}x)"
            )
    if old_rows:
        print(f"against {args.against}: old / new CPU medians (query, win, figures) and old p99 of the query")
        for o, r in zip(old_rows, rows):
            ratios = [o[key]["cpu_median_s"] / max(r[key]["cpu_median_s"], 1e-9) for key in ("query", "win", "figures")]
            print(
                f"{r['rules']:7} {r['players']:>1} {r['mode']:17} "
                + " ".join(f"{x:7.1f}x" for x in ratios)
                + f"   old query {_ms(o['query']['cpu_median_s'])} / {_ms(o['query']['cpu_p99_s'])} ms"
            )
    print(
        f"targets: odds(state) and win_probability(state), median < {MEDIAN_TARGET_S * 1e3:.0f} ms and "
        f"p99 < {P99_TARGET_S * 1e3:.0f} ms CPU; 3-player bump build within {BUILD_RATIO_TARGET}x of race()"
    )
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
