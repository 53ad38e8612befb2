"""How fast is the Monte Carlo simulator? Rates measured side by side in one run.

For each rule set (``plain`` and ``app`` on the jungle board, one player,
every per-game result kept) the script times :func:`snlmarkov.sim.core.simulate`
(then, without a target, the same for a loaded die and two dice summed: what a
die dealt from more slots, or with more sixes, costs per roll)
and a straightforward pure-Python loop over the same rules, the raw rate at
which numpy draws die rolls (``rng.integers(1, 7, size=...)``), and the
*ceiling* that rate allows: raw rolls per second / mean rolls per game. It
prints one table of rates and ratios.

Rates are games per second of CPU time of this process (one core: numpy is
single-threaded here), best of ``--repeats`` runs; wall-clock rates are shown
beside them, since other work on the machine slows the wall clock down.

Usage::

    python benchmarks/bench_simulate.py            # 4,000,000 games per rule set, best of 3
    python benchmarks/bench_simulate.py --quick    # a quick look

Targets (from the project brief): plain >= 4,000,000 games/s, app >=
2,000,000 games/s, both >= 100x the pure-Python loop, and >= 40% of the ceiling.
Exits 1 when a target is missed (so ``benchmarks/run_all.sh`` fails).

What made it fast (measured while building it, app rules, games/s of cpu):

- one table look-up per step instead of rule code per roll: the rules applied
  once to every (state, code) pair; with one whole turn per look-up (180
  codes) that gave ~1.7-2.5 M/s;
- several rolls per random integer, running on from one turn into the next
  (``roll_table``: 4 rolls per uniform code in 0..1295, so the ceiling can be
  passed): ~3.4-4 M/s with 3 rolls per step;
- dealing the roll after the cap by rejection (a six there is "never dealt"),
  so every digit is a fair die and 4 rolls fit in 1296 codes, not 32400;
- counting turns and rolls in 16-bit sums per block of 8 steps, folded into
  the per-game tallies at compaction, instead of an int64 add per step
  (~4 -> ~5.5 M/s);
- a pool of 2**17 games kept full (finished games replaced every 8 steps, no
  long tail of nearly empty steps), states stored as table offsets so the
  index is one add, ``np.take(..., out=)`` in place, landings counted with one
  ``np.bincount`` per ~500k steps of entries.

Tried and dropped: packing state and counters into one int64 (strided views
were slower), two steps' codes from one 32-bit draw (no measurable gain),
composing whole turns (tables too large for app).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from snlmarkov import Board, Die, Rules  # noqa: E402
from snlmarkov.sim.core import _roll_tables, simulate  # noqa: E402
from snlmarkov.sim.solo import BLOCK, WIDTH  # noqa: E402
from snlmarkov.sim.tables import slots  # noqa: E402

TARGETS = {"plain": 4_000_000, "app": 2_000_000}
MIN_SPEEDUP = 100
MIN_CEILING_SHARE = 0.40


# ------------------------------------------------------ the plain loop
def python_games(board: Board, rules: Rules, games: int, seed: int):
    """Play ``games`` solo games one roll at a time, as the rules read.

    Returns per-game turns and rolls, and the landing count of every square.
    """
    rnd = random.Random(seed)
    size, faces, jumps = board.size, rules.faces, dict(board.jumps)
    cap, redeal = rules.max_sixes, rules.on_cap == "redeal"
    turns_out, rolls_out = [0] * games, [0] * games
    landings = [0] * (size + 1)
    for g in range(games):
        pos = turns = rolls = 0
        while pos != size:
            turns += 1
            start, sixes = pos, 0
            entered = not (rules.start_on_six and pos == 0)
            while True:
                capped = cap is not None and sixes >= cap
                roll = rnd.randrange(faces - 1 if capped and redeal else faces) + 1
                rolls += 1
                six = roll == faces
                if capped and six:  # forfeit: the whole turn is void
                    pos = start
                    break
                if not entered:
                    if not six:
                        break
                    entered, sixes = True, sixes + 1
                    continue
                target = pos + roll
                if target > size:
                    if rules.finish == "stay":
                        break
                    target = 2 * size - target if rules.finish == "bounce" else size
                landings[target] += 1
                pos = jumps.get(target, target)
                if pos == size or not (six and rules.bonus_on_six):
                    break
                sixes += 1
        turns_out[g], rolls_out[g] = turns, rolls
    return turns_out, rolls_out, landings


# ------------------------------------------------------------- timing
def best_rate(run, count: int, repeats: int) -> tuple[float, float]:
    """Best (cpu, wall) rate of ``count`` items per second over ``repeats`` runs."""
    cpu_best = wall_best = 0.0
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        run()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        cpu_best = max(cpu_best, count / max(cpu, 1e-9))
        wall_best = max(wall_best, count / max(wall, 1e-9))
    return cpu_best, wall_best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games and one repeat")
    parser.add_argument("--games", type=int, default=None, help="simulated games per run (default 4,000,000)")
    parser.add_argument("--python-games", type=int, default=None, help="games for the pure-Python loop")
    parser.add_argument("--repeats", type=int, default=None, help="runs per measurement; the best counts")
    args = parser.parse_args(argv)
    games = args.games or (400_000 if args.quick else 4_000_000)
    py_games = args.python_games or (3_000 if args.quick else 20_000)
    repeats = args.repeats or (1 if args.quick else 3)

    board = Board.builtin()
    rng = np.random.default_rng(0)
    n_raw = 1 << 24
    raw_cpu, raw_wall = best_rate(lambda: rng.integers(1, 7, size=n_raw), n_raw, repeats)

    print("snlmarkov simulator benchmark: jungle board, 1 player, per-game results kept")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}; "
        f"pool {WIDTH} games, compaction every {BLOCK} steps"
    )
    print(
        f"raw numpy die rolls (rng.integers(1, 7, size={n_raw})): {raw_cpu / 1e6:.1f} M rolls/s cpu "
        f"({raw_wall / 1e6:.1f} M/s wall)"
    )
    print()
    header = (
        f"{'rules':6} {'rolls/step':>10} {'sim games/s':>12} {'(wall)':>10} {'python games/s':>15} "
        f"{'speed-up':>9} {'rolls/game':>10} {'ceiling':>10} {'of ceiling':>10}  targets"
    )
    print(header)
    print("-" * len(header))
    failures = []
    for name in ("plain", "app"):
        rules = Rules.preset(name)
        table, _ = _roll_tables(board, rules)
        simulate(board, rules, 1000, rng=1)  # build and cache the tables outside the timing
        holder = {}

        def run_sim():
            holder["r"] = simulate(board, rules, games, rng=2)

        sim_cpu, sim_wall = best_rate(run_sim, games, repeats)
        result = holder["r"]
        py_cpu, _ = best_rate(lambda: python_games(board, rules, py_games, 3), py_games, 1)
        mean_rolls = result.mean_rolls()
        ceiling = raw_cpu / mean_rolls
        speedup, share = sim_cpu / py_cpu, sim_cpu / ceiling
        checks = {
            f">= {TARGETS[name] / 1e6:g} M/s": sim_cpu >= TARGETS[name],
            f">= {MIN_SPEEDUP}x python": speedup >= MIN_SPEEDUP,
            f">= {MIN_CEILING_SHARE:.0%} ceiling": share >= MIN_CEILING_SHARE,
        }
        verdict = ", ".join(f"{k} {'ok' if ok else 'MISSED'}" for k, ok in checks.items())
        failures += [f"{name}: {k}" for k, ok in checks.items() if not ok]
        print(
            f"{name:6} {table.rolls_per_step:>10} {sim_cpu / 1e6:>10.2f} M {sim_wall / 1e6:>8.2f} M "
            f"{py_cpu / 1e3:>13.1f} k {speedup:>8.0f}x {mean_rolls:>10.2f} {ceiling / 1e6:>8.2f} M "
            f"{share:>10.0%}  {verdict}"
        )
    print()
    print("other dice (no target: what a die's slots cost; rolls/s against the fair die's)")
    header = f"{'rules':6} {'die':22} {'slots':>5} {'rolls/step':>10} {'sim games/s':>12} {'rolls/game':>10} {'M rolls/s':>9} {'vs fair':>8}"
    print(header)
    print("-" * len(header))
    for name in ("plain", "app"):
        fair_rate = 0.0
        for die in (Die(6), Die.weighted({1: 1, 2: 1, 6: 4}), Die.sum_of(2, 6)):
            rules = Rules.preset(name).replace(die=die)
            table, _ = _roll_tables(board, rules)
            simulate(board, rules, 1000, rng=1)
            holder = {}

            def run_die():
                holder["r"] = simulate(board, rules, games, rng=2)

            sim_cpu, _ = best_rate(run_die, games, repeats)
            roll_rate = sim_cpu * holder["r"].mean_rolls()
            fair_rate = fair_rate or roll_rate
            print(
                f"{name:6} {die.spec:22.22} {slots(die).size:>5} {table.rolls_per_step:>10} {sim_cpu / 1e6:>10.2f} M "
                f"{holder['r'].mean_rolls():>10.2f} {roll_rate / 1e6:>9.1f} {roll_rate / fair_rate:>8.2f}"
            )
    print()
    print(
        f"simulated games per run: {games:,}; pure-Python games: {py_games:,}; best of {repeats} "
        f"(rates from cpu time; wall-clock beside them)"
    )
    if failures:
        print("targets missed: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
