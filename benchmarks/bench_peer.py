"""The simulator against a compiled peer, in one process (target: >= 1.0x the peer).

The peer is what a careful user would write with numba: one compiled loop per
game, a xorshift64* generator (cheaper than numpy's PCG64), the jungle board
as a destination array, the per-game turns kept. It plays the ``plain`` rules
(one roll a turn, overshoot stays) and the ``app`` rules (a six rolls again,
at most two sixes a turn, the roll after them dealt from 1..5). Both sides are
timed in this process, one core, CPU time (``time.process_time``) and wall,
best of ``--repeats`` runs after a warm-up (numba's compilation is not timed);
the mean turns of the two must agree within 5 standard errors (the peer is a
simulation too).

The peer needs numba, which snlmarkov itself does not use::

    pip install -e ".[bench]"          # numba and llvmlite
    python benchmarks/bench_peer.py    # 2,000,000 games per rule set
    python benchmarks/bench_peer.py --quick
    python benchmarks/bench_peer.py --baseline-tree /path/to/other/checkout

``--baseline-tree`` also times another checkout's simulator in the same run
(in a subprocess with that tree first on ``PYTHONPATH``, between this tree's
runs and the peer's) and prints this tree's rate over that one's.

Exits 1 when snlmarkov's rate is below the peer's for a rule set, 2 when numba
is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

TARGET = 1.0


def _peer():
    """The compiled peer (numba imported here, so --help works without it)."""
    import numba

    @numba.njit(cache=False, nogil=True)
    def play(dest, size, games, seed, bonus, cap):  # pragma: no cover - compiled
        out = np.empty(games, np.int32)
        s = np.uint64(seed) | np.uint64(1)
        mult = np.uint64(2685821657736338717)
        for g in range(games):
            pos = 0
            turns = 0
            while pos != size:
                turns += 1
                sixes = 0
                while True:
                    s ^= s >> np.uint64(12)
                    s ^= s << np.uint64(25)
                    s ^= s >> np.uint64(27)
                    r = (s * mult) >> np.uint64(33)  # 31 random bits
                    capped = bonus and sixes >= cap
                    faces = 5 if capped else 6
                    k = 1 + ((r * np.uint64(faces)) >> np.uint64(31))
                    t = pos + np.int64(k)
                    if t > size:  # overshoot: the token stays and the turn ends, even on a six
                        break
                    pos = dest[t]
                    if pos == size or not bonus or capped or k != 6:
                        break
                    sixes += 1
            out[g] = turns
        return out

    return play


def _best(run, count: int, repeats: int) -> tuple[float, float, object]:
    cpu_best = wall_best = 0.0
    result = None
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        result = run()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        cpu_best = max(cpu_best, count / max(cpu, 1e-9))
        wall_best = max(wall_best, count / max(wall, 1e-9))
    return cpu_best, wall_best, result


_BASELINE = """
import json, sys, time
import snlmarkov as snl
name, games, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
board, rules = snl.Board.builtin(), snl.Rules.preset(name)
snl.simulate(board, rules, 1000, rng=1)
cpu = wall = 0.0
for _ in range(repeats):
    c0, w0 = time.process_time(), time.perf_counter()
    snl.simulate(board, rules, games, rng=2)
    cpu = max(cpu, games / max(time.process_time() - c0, 1e-9))
    wall = max(wall, games / max(time.perf_counter() - w0, 1e-9))
print(json.dumps([cpu, wall, snl.__file__]))
"""


def _baseline(tree: str, name: str, games: int, repeats: int) -> tuple[float, float]:
    """Best CPU and wall rates of the simulator of the checkout ``tree``, in a subprocess."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, "-c", _BASELINE, name, str(games), str(repeats)]
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True, cwd=tree)
    cpu, wall, where = json.loads(out.stdout.splitlines()[-1])
    if not os.path.realpath(where).startswith(os.path.realpath(tree)):
        raise SystemExit(f"--baseline-tree {tree}: the subprocess imported snlmarkov from {where}")
    return cpu, wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2_000_000)
    parser.add_argument("--quick", action="store_true", help="400,000 games, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-tree", help="also time the simulator of this checkout (a subprocess)")
    args = parser.parse_args(argv)
    games = 400_000 if args.quick else args.games
    repeats = 1 if args.quick else args.repeats
    try:
        play = _peer()
    except ImportError:
        print("numba is not installed: pip install -e '.[bench]' (the peer needs it)")
        return 2
    import snlmarkov as snl

    board = snl.Board.builtin()
    dest = board.destination().astype(np.int64)
    print(f"load {', '.join(f'{x:.2f}' for x in os.getloadavg())}; {games:,} games, best of {repeats}, CPU time")
    base_head = f" {'baseline M/s':>13} {'(wall)':>8} {'ours/base':>9}" if args.baseline_tree else ""
    print(
        f"{'rules':6} {'snlmarkov M/s':>14} {'(wall)':>8} {'peer M/s':>10} {'(wall)':>8} {'ratio':>7}{base_head}"
        "  mean turns (ours, peer)"
    )
    missed = []
    for name, bonus, cap in (("plain", False, 0), ("app", True, 2)):
        rules = snl.Rules.preset(name)
        snl.simulate(board, rules, 1000, rng=1)  # tables built and cached
        play(dest, board.size, 1000, 7, bonus, cap)  # compiled
        ours_cpu, ours_wall, ours = _best(lambda: snl.simulate(board, rules, games, rng=2), games, repeats)
        base = ""
        if args.baseline_tree:
            base_cpu, base_wall = _baseline(args.baseline_tree, name, games, repeats)
            base = f" {base_cpu / 1e6:>13.2f} {base_wall / 1e6:>8.2f} {ours_cpu / base_cpu:>8.2f}x"
        peer_cpu, peer_wall, peer = _best(lambda: play(dest, board.size, games, 12345, bonus, cap), games, repeats)
        mean_ours = float(np.mean(ours.turns))  # type: ignore[attr-defined]
        mean_peer = float(np.mean(peer))  # type: ignore[arg-type]
        se = float(np.std(peer)) * np.sqrt(2.0 / games)  # type: ignore[arg-type]
        ratio = ours_cpu / peer_cpu
        print(
            f"{name:6} {ours_cpu / 1e6:>14.2f} {ours_wall / 1e6:>8.2f} {peer_cpu / 1e6:>10.2f} {peer_wall / 1e6:>8.2f} "
            f"{ratio:>6.2f}x{base}  {mean_ours:.3f}, {mean_peer:.3f}"
        )
        if abs(mean_ours - mean_peer) > 5 * se:
            missed.append(f"{name}: the two disagree ({mean_ours:.3f} vs {mean_peer:.3f}, se {se:.3f})")
        if ratio < TARGET:
            missed.append(f"{name}: {ratio:.2f}x the peer < {TARGET}x")
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
