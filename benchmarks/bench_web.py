"""Load benchmark of the web game on loopback: many online rooms of simulated players at once.

Starts ``snlmarkov serve --db`` as a subprocess on 127.0.0.1, then, in this
process, opens ``--rooms`` online rooms (default 200) of ``--players``
simulated players each (default 4), every player on its own WebSocket. The
host creates the room over HTTP, the others join, the host starts, and each
player rolls from its own connection when it is its turn, after a think time
drawn from ``--think`` seconds (default 0.05..0.5). All rooms play one
classic game at once on the jungle board.

Reported:

- the server's own time per roll message, p50 / p90 / p99 / max: from the
  moment the server has received it to the moment it has sent the last frame
  it caused (the turn, to every connection of the room), the database write
  made before the broadcast included, and split into that write and the rest
  (``snlmarkov/web/timing.py``, switched on by ``SNLMARKOV_WEB_TIMING``);
  target: p99 < 5 ms. Beside it the disk's own ``fsync`` time, measured in
  the same run in the database's folder (each turn's commit waits for one:
  ``synchronous=FULL``), the pauses of the server's cyclic garbage collector
  by generation (count, p50, max and sum: each stops the event loop), and the
  server process's CPU time per message;
- the delay from a roll (the moment the player's client sends it) to its
  broadcast (the moment that client receives the turn), p50 / p90 / p99 / max
  (target: p99 < 50 ms, meaningful only on a quiet machine: client and server
  share the cores, so the load average is printed before and after);
- turns and messages per second, and the turn rate of the busiest five
  seconds (the games end at different times, so the load falls after the
  first seconds) with the clients' p99 in the busy windows and the others;
- that no event was lost or duplicated: every client of a room saw sequence
  numbers without gap or repeat and the same turns, numbered 0, 1, 2, ...;
- that every game was stored, once, and every stored record verifies
  (``verify_game``) and they pass the pooled check together.

The command, the date, the load before and after, the server's peak RSS,
and (``_measure.run_main``) the CPU and wall time and peak RSS of the whole
run are printed with the figures.

Bounded: ``--rooms`` and ``--players`` fix the count, ``--timeout`` (default
300 s) the time. Exit status 0 when everything held and both targets were met,
1 otherwise (``targets missed: ...``).

    python benchmarks/bench_web.py                    # 200 rooms x 4 players
    python benchmarks/bench_web.py --rooms 20 --quick # a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib.util
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from websockets.asyncio.client import connect

#: every simulated player comes from 127.0.0.1: the per-address limits raised to what this load needs
LOAD_LIMITS = [
    f"--limit={item}"
    for item in (
        "room_rate=1000",
        "room_burst=1000",
        "rooms_per_address=100000",
        "message_rate=100000",
        "message_burst=100000",
        "connections_per_address=5000",
        "max_connections=5000",
    )
]
COLOURS = ["#e53935", "#1e88e5", "#43a047", "#fdd835", "#8e24aa", "#fb8c00"]
#: targets (ms): the server's own p99 per roll message, and the client's roll-to-broadcast p99
SERVER_P99_MS, END_TO_END_P99_MS = 5.0, 50.0
#: seconds in a window of the turn rate's report
WINDOW_S = 5.0


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def fsync_ms(folder: Path, n: int = 40) -> tuple[float, float]:
    """Median and largest time (ms) of ``n`` appends of one page, each followed by ``fsync``, in ``folder``."""
    times = []
    path = folder / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(n):
            t = time.perf_counter()
            os.write(fd, b"x" * 4096)
            os.fsync(fd)
            times.append(time.perf_counter() - t)
    finally:
        os.close(fd)
        path.unlink()
    return float(np.median(times)) * 1e3, max(times) * 1e3


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far (Linux ``/proc``; nan elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def served_package_root() -> Path:
    """The folder holding the ``snlmarkov`` package this interpreter imports (``PYTHONPATH`` included).

    The server is started there: ``python -m`` puts its working directory
    first on ``sys.path``, so a server started elsewhere (in another
    checkout) would run that checkout's code, not this one's.
    """
    spec = importlib.util.find_spec("snlmarkov")
    if spec is None or spec.origin is None:
        raise SystemExit("bench_web: the snlmarkov package is not importable")
    return Path(spec.origin).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(base: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


class Player:
    """One simulated player: its socket, what it saw, and its roll delays."""

    def __init__(self, ws, name: str) -> None:
        self.ws, self.name = ws, name
        self.secret = ""
        self.seat = -1
        self.seqs: list[int] = []
        self.turns: list[tuple] = []
        self.delays: list[float] = []
        self.delay_at: list[float] = []  # when each roll of ``delays`` was sent
        self.turn_at: list[float] = []  # when each turn was received
        self.sent_at = 0.0
        self.state: dict = {}
        self.game_id = 0

    async def recv(self) -> dict:
        m = json.loads(await self.ws.recv())
        if "seq" in m and m["type"] != "welcome":
            self.seqs.append(m["seq"])
        return m


async def play_room(
    base: str, ws_base: str, k: int, players: int, think: tuple[float, float], results: list, sem: asyncio.Semaphore
) -> None:
    rng = random.Random(k)
    async with sem:
        ps, room = await seat_room(base, ws_base, players)
    host = ps[0]
    await host.ws.send(json.dumps({"type": "start", "secret": room["host"]}))
    await play(ps, rng, think, k)
    results.append(ps)


async def seat_room(base: str, ws_base: str, players: int) -> tuple[list[Player], dict]:
    room = await asyncio.to_thread(
        post, base, "/api/rooms", {"kind": "online", "seats": [{"name": "P0", "colour": COLOURS[0], "ai": False}]}
    )
    rid = room["room"]
    ps: list[Player] = []
    for i in range(players):
        ws = await connect(f"{ws_base}/ws/{rid}", max_size=2**22, open_timeout=60, ping_interval=None)
        p = Player(ws, f"P{i}")
        await ws.send(json.dumps({"type": "hello", "secret": room["host"]} if i == 0 else {"type": "hello"}))
        while (m := await p.recv())["type"] != "welcome":
            pass
        p.seqs = [m["seq"]]
        if i == 0:
            p.secret, p.seat = room["host"], 0
        else:
            await ws.send(json.dumps({"type": "join", "name": p.name, "colour": COLOURS[i % 6]}))
            while (m := await p.recv())["type"] != "joined":
                pass
            p.secret, p.seat = m["secret"], m["seat"]
        ps.append(p)
    # everyone is seated once the host has seen them all
    host = ps[0]
    while True:
        m = await host.recv()
        if m["type"] == "room" and len(m["seats"]) == players:
            break
    return ps, room


async def play(ps: list[Player], rng: random.Random, think: tuple[float, float], k: int) -> None:
    async def run(p: Player) -> None:
        while True:
            m = await p.recv()
            if m["type"] == "error":
                raise RuntimeError(f"room {k} {p.name}: {m}")
            if m["type"] == "room" and m["status"] == "playing":
                p.state = m
            elif m["type"] == "turn":
                now = time.perf_counter()
                p.turn_at.append(now)
                if m["seat"] == p.seat and p.sent_at:
                    p.delays.append(now - p.sent_at)
                    p.delay_at.append(p.sent_at)
                    p.sent_at = 0.0
                p.turns.append((m["turn"], m["seat"], json.dumps(m["events"])))
                p.state = {**p.state, **m}
                if m["status"] == "over":
                    p.game_id = m["game_id"]
                    return
            else:
                continue
            if p.state.get("status") == "playing" and p.state["current"] == p.seat:
                await asyncio.sleep(rng.uniform(*think))
                p.sent_at = time.perf_counter()
                await p.ws.send(json.dumps({"type": "roll", "seat": p.seat, "secret": p.secret}))

    await asyncio.gather(*(run(p) for p in ps))
    for p in ps:
        await p.ws.close()


async def main_async(args: argparse.Namespace, base: str) -> tuple[list, float]:
    ws_base = base.replace("http", "ws")
    results: list = []
    t0 = time.perf_counter()
    # rooms open a few at a time (a burst of 800 handshakes is not the load being measured), then play together
    sem = asyncio.Semaphore(40)

    think = (args.think[0], args.think[1])
    rooms = (play_room(base, ws_base, k, args.players, think, results, sem) for k in range(args.rooms))
    await asyncio.wait_for(asyncio.gather(*rooms), args.timeout)
    return results, time.perf_counter() - t0


def busiest(results: list, delays_ms: np.ndarray) -> tuple[float, float, float]:
    """The turn rate (turns/s) of the busiest :data:`WINDOW_S`-second window of the play (as the rooms' hosts
    received their turns), and the clients' p99 delay (ms) of the rolls sent in windows at least half as busy,
    then in the others (nan where there are none)."""
    turn_at = np.array([t for ps in results for t in ps[0].turn_at])
    sent_at = np.array([t for ps in results for p in ps for t in p.delay_at])
    if not turn_at.size:
        return float("nan"), float("nan"), float("nan")
    start = turn_at.min()
    counts = np.bincount(((turn_at - start) // WINDOW_S).astype(int))
    busy = counts >= counts.max() / 2
    window = np.clip(((sent_at - start) // WINDOW_S).astype(int), 0, counts.size - 1)
    in_busy = busy[window]

    def p99(x: np.ndarray) -> float:
        return float(np.percentile(x, 99)) if x.size else float("nan")

    return counts.max() / WINDOW_S, p99(delays_ms[in_busy]), p99(delays_ms[~in_busy])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--think", type=float, nargs=2, default=(0.05, 0.5), metavar=("MIN", "MAX"))
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--quick", action="store_true", help="20 rooms unless --rooms is given")
    args = parser.parse_args(argv)
    if args.quick and "--rooms" not in (argv or sys.argv):
        args.rooms = 20
    if not (1 <= args.rooms <= 1000 and 2 <= args.players <= 6 and 0 <= args.think[0] <= args.think[1] <= 10):
        parser.error("--rooms 1..1000, --players 2..6, --think 0 <= MIN <= MAX <= 10")

    load_before = load()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    tmp = Path(tempfile.mkdtemp(prefix="snl-bench-web-"))
    db, timing_file = tmp / "games.sqlite", tmp / "timing.json"
    disk = fsync_ms(tmp)
    port = free_port()
    package_root = served_package_root()
    print(f"  the server runs the snlmarkov package of {package_root}")
    server = subprocess.Popen(
        [sys.executable, "-m", "snlmarkov", "serve", "--port", str(port), "--db", str(db), *LOAD_LIMITS],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "SNLMARKOV_WEB_TIMING": str(timing_file)},
        cwd=package_root,  # ``-m`` puts its working directory first on sys.path
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(400):
            try:
                urllib.request.urlopen(base + "/api/config", timeout=2).read()
                break
            except OSError:
                time.sleep(0.05)
        server_cpu0 = proc_cpu(server.pid)
        results, elapsed = asyncio.run(main_async(args, base))
        server_cpu = proc_cpu(server.pid) - server_cpu0
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
    load_after = load()
    timing = json.loads(timing_file.read_text()) if timing_file.exists() else {"messages": {}}

    from snlmarkov import verify_game
    from snlmarkov.checks.stored import check_stored
    from snlmarkov.web.store import GameStore

    problems = []
    delays = np.array([d for ps in results for p in ps for d in p.delays]) * 1000
    turns = sum(len(ps[0].turns) for ps in results)
    messages = sum(len(p.seqs) for ps in results for p in ps)
    for ps in results:
        for p in ps:
            if p.seqs != list(range(p.seqs[0], p.seqs[0] + len(p.seqs))):
                problems.append(f"{p.name}: sequence numbers with a gap or a repeat")
            if [t[0] for t in p.turns] != list(range(len(p.turns))):
                problems.append(f"{p.name}: turns missing or repeated")
            if p.turns != ps[0].turns:
                problems.append(f"{p.name}: saw other turns than its host")
    ids = [ps[0].game_id for ps in results]
    store = GameStore(db)
    stored = store.games()
    records = [store.record(g.id) for g in stored]
    store.close()
    if sorted(ids) != sorted(g.id for g in stored) or len(set(ids)) != len(ids):
        problems.append(f"{len(ids)} games told, {len(stored)} stored")
    bad = sum(not verify_game(r).passed for r in records)
    if bad:
        problems.append(f"{bad} stored records do not verify")
    pooled = check_stored(records, alpha=1e-4)
    p50, p90, p99 = np.percentile(delays, [50, 90, 99])
    rate = busiest(results, delays)
    kinds = timing["messages"]
    roll = kinds.get("roll", {"count": 0, "unfinished": 0, "total": {"n": 0}})
    handled = sum(k["count"] for k in kinds.values())
    print(
        f"bench_web: {len(results)} rooms x {args.players} players on loopback, think {args.think[0]}..{args.think[1]} s"
    )
    print(f"  {when}, load {load_before} before, {load_after} after ({os.cpu_count()} cores, shared with the client)")
    print(f"  {turns} turns ({turns / elapsed:.0f}/s), {messages} broadcasts received ({messages / elapsed:.0f}/s)")
    print(f"  wall time {elapsed:.1f} s of play")
    print(
        f"  the games end at different times: turns/s in {WINDOW_S:g}-s windows, busiest {rate[0]:.0f}; the clients'"
        f" p99 (ms) {rate[1]:.1f} for rolls sent in windows at least half as busy, {rate[2]:.1f} in the others"
    )
    print(f"  server's own time per roll message, receipt to its last frame sent (ms; n={roll['total']['n']}):")
    for name, label in (("total", "total"), ("write", "database write"), ("rest", "the rest")):
        s = roll.get(name, {"n": 0})
        if s["n"]:
            print(
                f"    {label:>15}: p50 {s['p50']:.2f}  p90 {s['p90']:.2f}  p99 {s['p99']:.2f}  max {s['max']:.2f}"
                f"  mean {s['mean']:.2f}"
            )
    print(f"    (target total p99 < {SERVER_P99_MS:g}; this disk's fsync: median {disk[0]:.2f}, max {disk[1]:.2f})")
    others = ", ".join(f"{k} {v['count']}" for k, v in kinds.items() if k != "roll")
    print(
        f"    messages handled: roll {roll['count']}, {others}; unfinished (frames never sent): "
        f"{sum(k['unfinished'] for k in kinds.values())}"
    )
    pauses = [timing.get("collector", {}).get(f"gen{g}", {"n": 0}) for g in range(3)]
    print(
        "    the collector's pauses (ms): "
        + "; ".join(
            f"generation {g} n={s['n']}"
            + (f" p50 {s['p50']:.2f} max {s['max']:.2f} sum {s['mean'] * s['n']:.0f}" if s["n"] else "")
            for g, s in enumerate(pauses)
        )
    )
    print(
        f"  server CPU during play: {server_cpu:.2f} s, {server_cpu / max(handled, 1) * 1e3:.2f} ms per message"
        f" handled, {server_cpu / max(turns, 1) * 1e3:.2f} ms per turn; whole process {timing.get('cpu_s', 0):.2f} s"
        f", peak RSS {timing.get('maxrss_kb', 0) / 1024:.0f} MB"
    )
    print(
        f"  roll -> broadcast delay at the client (ms): p50 {p50:.1f}  p90 {p90:.1f}  p99 {p99:.1f}"
        f"  max {delays.max():.1f}  (n={delays.size}; target p99 < {END_TO_END_P99_MS:g} on a quiet machine)"
    )
    print(
        f"  stored {len(stored)} games, {len(stored) - bad} verify; pooled check: {'PASSED' if pooled.passed else 'FAILED'}"
    )
    print(f"  events lost or duplicated: {'none' if not problems else '; '.join(problems[:5])}")
    missed = []
    if not roll["total"]["n"] or roll["total"]["p99"] >= SERVER_P99_MS:
        missed.append(f"server p99 < {SERVER_P99_MS:g} ms")
    if p99 >= END_TO_END_P99_MS:
        missed.append(f"end-to-end p99 < {END_TO_END_P99_MS:g} ms")
    ok = not problems and pooled.passed and not missed
    if missed:
        print(f"  targets missed: {', '.join(missed)}")
    print(f"  verdict: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    from _measure import run_main  # the command, CPU, wall, peak RSS and load of the run

    run_main(main)
