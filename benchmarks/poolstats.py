"""Serial against a process pool, in wall time and in CPU time (for bench_parallel.py and bench_sweep.py).

Wall time is what a pool saves, but on a shared machine it measures the
other processes as much as ours. CPU time says what the pool costs whatever
the load: the parent's CPU and each worker's (read from ``/proc``, or
psutil where there is no ``/proc``) against the serial run's CPU. From them:

- ``cpu_x``: all the pool's CPU over the serial CPU (what splitting the
  work costs: shipping, merging, work done twice); 1.0 is free.
- ``parent``: the parent's CPU over the serial CPU (work the pool cannot share).
- ``two_cores``: serial CPU / (parent CPU + the busiest worker's CPU), the
  speed-up two idle cores would give.

Each comparison alternates serial and pool runs and keeps the smallest
figure of each kind (the others are the same work slowed by the load).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on this platform
        return "?"


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:  # no /proc (macOS, Windows)
        import psutil

        t = psutil.Process(pid).cpu_times()
        return float(t.user + t.system)


def workers_cpu(pool: cf.ProcessPoolExecutor) -> dict[int, float]:
    """CPU seconds of each of the pool's worker processes so far."""
    return {pid: cpu_of(pid) for pid in pool._processes}


def spin(n: int) -> int:
    """Pure-Python work with nothing to ship or share."""
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


@dataclass
class Run:
    """One timed run: wall and parent CPU seconds, and each worker's CPU seconds (a pool run)."""

    result: Any
    wall: float
    cpu: float
    workers: list[float]


def timed(fn: Callable[[], Any], pool: cf.ProcessPoolExecutor | None = None) -> Run:
    before = workers_cpu(pool) if pool is not None else {}
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    after = workers_cpu(pool) if pool is not None else {}
    return Run(out, wall, cpu, [v - before.get(pid, 0.0) for pid, v in after.items()])


@dataclass
class Comparison:
    """The best serial and pool figures of a few alternated runs."""

    serial_wall: float
    serial_cpu: float
    pool_wall: float
    parent_cpu: float
    workers: list[float]
    serial_result: Any
    pool_result: Any

    @property
    def wall_x(self) -> float:
        return self.serial_wall / self.pool_wall

    @property
    def cpu_x(self) -> float:
        return (self.parent_cpu + sum(self.workers)) / self.serial_cpu

    @property
    def parent(self) -> float:
        return self.parent_cpu / self.serial_cpu

    @property
    def two_cores(self) -> float:
        return self.serial_cpu / (self.parent_cpu + max(self.workers, default=0.0))

    def cells(self) -> str:
        """``serial s, pool s, wall x | serial cpu, parent, workers, cpu x, 2 cores`` as table cells."""
        workers = "+".join(f"{w:.2f}" for w in self.workers)
        return (
            f"{self.serial_wall:>8.2f} {self.pool_wall:>7.2f} {self.wall_x:>5.2f}x | {self.serial_cpu:>10.2f} "
            f"{self.parent_cpu:>6.2f} {workers:>11} {self.cpu_x:>5.2f} {self.two_cores:>6.2f}x"
        )


HEADER = f"{'serial s':>8} {'pool s':>7} {'wall x':>6} | {'serial cpu':>10} {'parent':>6} {'workers':>11} {'cpu x':>5} {'2 cores':>7}"


def compare(
    serial: Callable[[], Any], pooled: Callable[[], Any], pool: cf.ProcessPoolExecutor, repeats: int = 2
) -> Comparison:
    """Run ``serial()`` and ``pooled()`` (on ``pool``) in turn ``repeats`` times; keep the best of each figure."""
    s_runs: list[Run] = []
    p_runs: list[Run] = []
    for _ in range(max(1, repeats)):
        for runs in (s_runs, p_runs):
            if runs:  # keep only the last result (kept games can be large)
                runs[-1].result = None
        s_runs.append(timed(serial))
        p_runs.append(timed(pooled, pool))
    best = min(p_runs, key=lambda r: r.cpu + sum(r.workers))
    return Comparison(
        serial_wall=min(r.wall for r in s_runs),
        serial_cpu=min(r.cpu for r in s_runs),
        pool_wall=min(r.wall for r in p_runs),
        parent_cpu=best.cpu,
        workers=best.workers,
        serial_result=s_runs[-1].result,
        pool_result=p_runs[-1].result,
    )


def reference(pool: cf.ProcessPoolExecutor, tasks: int = 16, n: int = 1_000_000) -> Comparison:
    """The same comparison for :func:`spin` in ``tasks`` tasks: what the machine gives work with no overhead now."""
    return compare(lambda: [spin(n) for _ in range(tasks)], lambda: list(pool.map(spin, [n] * tasks)), pool)
