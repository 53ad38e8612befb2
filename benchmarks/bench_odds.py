"""Benchmark exact odds from any state (issue 10) against their targets.

Targets:

- a query ``odds(state)`` under 1 ms for independent tokens with 6 players
  and for bump with 2 or 3 players (median over states of played games);
- building the 3-player bump table (``snl.Odds`` with ``family`` rules)
  within 2x of one ``snl.race()`` from the start, measured in the same run
  (the ratio of wall times; CPU times, ``time.process_time``, are shown
  beside them, since the machine may be busy).

Usage::

    python benchmarks/bench_odds.py            # everything (the 3-player cases take a minute or two)
    python benchmarks/bench_odds.py --quick    # skip the 3-player bump cases
    python benchmarks/bench_odds.py --json     # one JSON object instead of the table
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

__all__ = ["main"]

QUERY_TARGET_S = 1e-3
BUILD_RATIO_TARGET = 2.0


def _states(board, rules, players, mode, games=6):
    import snlmarkov as snl

    out = []
    for seed in range(games):
        record = snl.Game(board, rules, players=players, mode=mode, rng=seed).play()
        out.extend(s for s in record.states() if not s.is_over(board, mode))
    return out


def _query_time(odds, states, repeat=3):
    """Median seconds per ``odds(state)`` (each state timed ``repeat`` times, best kept)."""
    times = []
    for s in states:
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            odds(s)
            best = min(best, time.perf_counter() - t)
        times.append(best)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 3-player bump cases")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    import snlmarkov as snl

    board = snl.Board.builtin()
    app, family = snl.Rules(), snl.Rules.preset("family")
    rows = []
    cases = [
        (app, 6, "classic"),
        (app, 6, "last_one_standing"),
        (family, 2, "classic"),
        (family, 2, "last_one_standing"),
    ]
    if not args.quick:
        cases += [(family, 3, "classic"), (family, 3, "last_one_standing")]
    for rules, players, mode in cases:
        row = {"rules": rules.preset_name, "players": players, "mode": mode}
        if rules.bump and players == 3:
            t, c = time.perf_counter(), time.process_time()
            snl.race(board, rules, players=players, mode=mode)
            row["race_s"], row["race_cpu_s"] = time.perf_counter() - t, time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        odds = snl.Odds(board, rules, players=players, mode=mode)
        row["build_s"], row["build_cpu_s"] = time.perf_counter() - t, time.process_time() - c
        if "race_s" in row:
            row["build_over_race"] = row["build_s"] / row["race_s"]
            row["build_over_race_cpu"] = row["build_cpu_s"] / row["race_cpu_s"]
        states = _states(board, rules, players, mode)[::5][:200]
        row["states"] = len(states)
        row["query_s"] = _query_time(odds, states)
        row["win_only_query_s"] = _query_time(odds.win_probability, states)
        rows.append(row)

    missed = []
    for r in rows:
        label = f"{r['rules']} {r['players']} {r['mode']}"
        # the targets: classic queries of 6 independent players, and every bump query (2 or 3 players)
        quick = r["query_s"] if (r["rules"] == "family" or r["mode"] == "classic") else r["win_only_query_s"]
        if quick > QUERY_TARGET_S:
            missed.append(f"query {label}: {quick * 1e3:.2f} ms")
        if r.get("build_over_race", 0.0) > BUILD_RATIO_TARGET:
            missed.append(f"build {label}: {r['build_over_race']:.2f}x race()")
    if args.json:
        print(
            json.dumps(
                {
                    "rows": rows,
                    "query_target_s": QUERY_TARGET_S,
                    "build_ratio_target": BUILD_RATIO_TARGET,
                    "missed": missed,
                }
            )
        )
        return 1 if missed else 0
    print(
        f"{'rules':8} {'k':>2} {'mode':18} {'build s':>9} {'cpu s':>7} {'race s':>8} {'cpu s':>7} {'ratio':>6} "
        f"{'cpu':>5} {'query ms':>9} {'win ms':>8}"
    )
    for r in rows:
        ratio = f"{r['build_over_race']:.2f}" if "build_over_race" in r else "-"
        ratio_cpu = f"{r['build_over_race_cpu']:.2f}" if "build_over_race_cpu" in r else "-"
        race = f"{r['race_s']:.2f}" if "race_s" in r else "-"
        race_cpu = f"{r['race_cpu_s']:.2f}" if "race_cpu_s" in r else "-"
        print(
            f"{r['rules']:8} {r['players']:>2} {r['mode']:18} {r['build_s']:9.3f} {r['build_cpu_s']:7.3f} {race:>8} "
            f"{race_cpu:>7} {ratio:>6} {ratio_cpu:>5} {r['query_s'] * 1e3:9.3f} {r['win_only_query_s'] * 1e3:8.3f}"
        )
    print(
        f"targets: query < {QUERY_TARGET_S * 1e3:.0f} ms (6 independent players: classic queries, and place-only "
        f"queries under last one standing); 3-player bump build within {BUILD_RATIO_TARGET}x of race()"
    )
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
