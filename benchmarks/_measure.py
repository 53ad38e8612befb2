"""What every benchmark run records besides its figures: the command, the date, the load, CPU, wall, peak RSS.

In a script (``benchmarks/`` is on ``sys.path`` when a script there runs)::

    from _measure import Run

    run = Run()     # prints the command, the date (UTC), the cores and the load average
    ...
    run.finish()    # prints CPU (this process and the children it waited for), wall, peak RSS, the load again

or, around a script's ``main``: ``run_main(main)`` (see there).

As a wrapper (``benchmarks/run_all.sh`` runs every script this way)::

    python benchmarks/_measure.py --summary FILE -- benchmarks/bench_x.py --quick

runs the command, prints one line with its exit status, wall and CPU time
(user + system of the command and everything it waited for), peak RSS (the
largest process of the command's tree) and the load before and after, and
appends that line to ``FILE`` when given; it exits with the command's status.
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from typing import NoReturn


def load() -> str:
    """The load averages over 1, 5 and 15 minutes, as ``a/b/c``."""
    return "/".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # kB on Linux


class Run:
    """One benchmark run: prints its header when made, its CPU, wall, peak RSS and load at :meth:`finish`."""

    def __init__(self, argv: list[str] | None = None, *, out=None) -> None:
        self.out = out or sys.stdout
        self.argv = list(sys.argv if argv is None else argv)
        self.wall, self.cpu = time.perf_counter(), _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)
        self.load = load()
        print(
            f"run: {shlex.join([os.path.basename(sys.executable), *self.argv])}  |  {now()}, "
            f"{os.cpu_count()} cores, load {self.load}",
            file=self.out,
            flush=True,
        )

    def finish(self) -> str:
        """Print (and return) the run's CPU and wall time, peak RSS and the load now."""
        cpu = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - self.cpu
        rss = max(_rss_mb(resource.RUSAGE_SELF), _rss_mb(resource.RUSAGE_CHILDREN))
        line = (
            f"run: CPU {cpu:.1f} s (this process and its children), wall {time.perf_counter() - self.wall:.1f} s, "
            f"peak RSS {rss:.0f} MB, load {self.load} before, {load()} after"
        )
        print(line, file=self.out, flush=True)
        return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a benchmark command and record its CPU, wall, RSS and load.")
    parser.add_argument("--summary", metavar="FILE", help="append the result line to FILE")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    if command[0].endswith(".py"):
        command = [sys.executable, *command]
    before, cpu0, wall = load(), _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    status = subprocess.call(command)
    cpu, wall = _cpu(resource.RUSAGE_CHILDREN) - cpu0, time.perf_counter() - wall
    name = " ".join([os.path.basename(command[1] if command[0] == sys.executable else command[0]), *command[2:]])
    line = (
        f"{name}\texit {status}\twall {wall:.1f} s\tCPU {cpu:.1f} s\tpeak RSS {_rss_mb(resource.RUSAGE_CHILDREN):.0f} MB"
        f"\tload {before} -> {load()}\t{now()}"
    )
    print(f"=== {line}", flush=True)
    if args.summary:
        with open(args.summary, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())


def run_main(main: Callable[[], int]) -> NoReturn:
    """``sys.exit(main())`` between a :class:`Run`'s header and footer.

    On stderr when the command asks for ``--json`` (stdout is the JSON then);
    none in a ``--child`` process (a script timing a case in a fresh process
    of its own reads that child's stdout).
    """
    if "--child" in sys.argv:
        sys.exit(main())
    run = Run(out=sys.stderr if "--json" in sys.argv else sys.stdout)
    try:
        status = main()
    finally:
        run.finish()
    sys.exit(status)
