"""How fast the command line answers ``--help``, as a ratio to a bare interpreter.

Each command is started as a fresh process, again and again, mixed with as
many runs of ``python -c pass``: every round runs each command and a bare
interpreter for each, in an order shuffled with a fixed seed (a fixed order
favours or penalises whichever process follows another), so all see the same
machine load. The median CPU time (user and system, the child's own) of
``python -m snlmarkov --help`` (and of ``python -m snlmarkov <cmd> --help``
for every sub-command) is divided by the median of ``python -c pass``, and
the same is printed for the wall time. The target is a CPU ratio of at most
2 for each (the wall ratio is the same on a quiet machine, and moves with
the load on a busy one): building the parser imports neither
numpy, scipy nor matplotlib, nor the configuration classes (dataclasses,
fractions) nor the modules of the commands' work (json, sqlite3); see
tests/test_cli_light.py. Python must be allowed to keep compiled modules, as
an installed package has them, or every start compiles the package again: the
children run without ``PYTHONDONTWRITEBYTECODE`` even when it is set here (the
run says so).

Run from the repository with the project's environment::

    python benchmarks/bench_cli.py            # 15 runs of each command
    python benchmarks/bench_cli.py --runs 40  # steadier medians
    python benchmarks/bench_cli.py --quick    # 7 runs
    python benchmarks/bench_cli.py --path /tmp/before   # time another checkout (put first on PYTHONPATH)

Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

TARGET = 2.0


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The wall time and the CPU time (user + system) of one run of ``cmd``, in seconds."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, cmd)
    return wall, usage.ru_utime + usage.ru_stime


def _commands(env: dict[str, str]) -> list[str]:
    """The sub-commands, read from the package (in a child, so this process stays bare)."""
    code = "from snlmarkov.cli import _COMMANDS\nprint(' '.join(_COMMANDS))\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    parser.add_argument("--quick", action="store_true", help="7 runs of each command")
    parser.add_argument("--path", help="put this folder first on PYTHONPATH (to time another checkout)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 7
    if args.runs < 3:
        parser.error("--runs must be at least 3")

    env = dict(os.environ)
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        print("PYTHONDONTWRITEBYTECODE is set here: unset for the timed commands (they keep compiled modules)")
    if args.path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.path, env.get("PYTHONPATH", "")]))
    bare = [sys.executable, "-c", "pass"]
    cases = {"snlmarkov --help": [sys.executable, "-m", "snlmarkov", "--help"]}
    for name in _commands(env):
        cases[f"snlmarkov {name} --help"] = [sys.executable, "-m", "snlmarkov", name, "--help"]

    for cmd in [bare, *cases.values()]:  # warm the file cache and the bytecode
        _timed(cmd, env)
    order = random.Random(1)
    base: list[tuple[float, float]] = []
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(args.runs):
        runs = [(name, cmd) for name, cmd in cases.items()] + [("", bare)] * len(cases)
        order.shuffle(runs)
        for name, cmd in runs:
            (times[name] if name else base).append(_timed(cmd, env))
    base_wall, base_cpu = (1e3 * statistics.median(t[i] for t in base) for i in (0, 1))

    print(
        f"python -c pass: median CPU {base_cpu:.1f} ms, wall {base_wall:.1f} ms over {len(base)} runs ({sys.executable})"
    )
    print(f"{'command':<32} {'CPU ms':>7} {'ratio':>7} {'wall ms':>8} {'ratio':>7}  target: CPU ratio <= {TARGET:g}x")
    missed = []
    for name, values in times.items():
        wall, cpu = (1e3 * statistics.median(t[i] for t in values) for i in (0, 1))
        ratio = cpu / base_cpu
        ok = ratio <= TARGET
        if not ok:
            missed.append(name)
        print(f"{name:<32} {cpu:>7.1f} {ratio:>6.2f}x {wall:>8.1f} {wall / base_wall:>6.2f}x  {'yes' if ok else 'NO'}")
    if missed:
        print(f"targets missed: {', '.join(missed)}")
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
