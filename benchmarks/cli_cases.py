"""Hostile command lines, each run as a real process: does every one answer within seconds?

Every case must end with exit status 0 or 1 (a result; 1 is a cross-check that failed or a quit),
or 2 with one line on standard error naming the problem; never a traceback, never a hang.

Usage::

    python benchmarks/cli_cases.py              # every case, 2 at a time
    python benchmarks/cli_cases.py --list       # print the cases only

Prints a tally and every case that broke the contract; exits 1 if any did.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TIMEOUT = 60


def board_files(folder: Path) -> dict[str, str]:
    """Hostile board files, by label."""
    files = {
        "binary.json": b"\x89PNG\r\n\x1a\n\x00\xff\xfe",
        "latin1.toml": "size = 10\nname = 'caf\u00e9'\n".encode("latin-1"),
        "utf16.toml": "size = 10\n".encode("utf-16"),
        "bom.toml": b"\xef\xbb\xbfsize = 30\n[ladders]\n2 = 20\n",
        "dupkey.json": b'{"size": 100, "size": 50}',
        "underscore.json": b'{"size": 30, "ladders": {"3_0": 7}}',
        "arabic.json": '{"size": 30, "ladders": {"\u0663": 7}}'.encode(),
        "fullwidth.json": '{"size": 30, "ladders": {"\uff13": 7}}'.encode(),
        "surrogate.json": b'{"size": 30, "name": "\\ud800"}',
        "escape.json": json.dumps({"size": 30, "name": "x\x1b[2J\x1b]0;t\x07"}).encode(),
        "float.json": b'{"size": 10.5}',
        "huge.json": b'{"size": 1e300}',
        "huge12.toml": b"size = 1_000_000_000_000\n",
        "digits30.json": b'{"size": 123456789012345678901234567890}',
        "ten_million.json": b'{"size": 10000000}',
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "nan.json": b'{"size": NaN}',
        "unwinnable.json": b'{"size": 9, "ladders": {"2": 9}, "snakes": {"7": 5, "8": 6}}',
        "chain.json": b'{"size": 10, "ladders": {"2": 7}, "snakes": {"7": 1}}',
        "empty.toml": b"",
        "big.json": b'{"size": 10}' + b" " * (17 * 2**20),
    }
    out = {}
    for name, raw in files.items():
        path = folder / name
        path.write_bytes(raw)
        out[name] = str(path)
    fifo = folder / "fifo.toml"
    os.mkfifo(fifo)
    out["fifo.toml"] = str(fifo)
    zero = folder / "zero.json"
    zero.symlink_to("/dev/zero")
    out["zero.json"] = str(zero)
    return out


def cases(folder: Path) -> list[list[str]]:
    """The command lines, without the leading ``snlmarkov``."""
    files = board_files(folder)
    cmds = ["analyze", "race", "play", "simulate", "report"]
    report = ["--out", str(folder / "r"), "--quiet", "--games", "1000", "--max-players", "2"]
    extra = {"simulate": ["--games", "200", "--no-progress"], "report": report}
    out: list[list[str]] = []
    for cmd in cmds:
        base = [cmd] + extra.get(cmd, [])
        for path in [*files.values(), "/dev/null", "/dev/zero", "/dev/urandom", "/proc/self", "moon", "", "x.yaml"]:
            out.append(base + ["--board", path])
        for setting in [
            "faces=100000",
            "faces=20000",
            "faces=1001",
            "faces=1",
            "faces=1_0",
            "faces=\u0666",
            "bump_to=5000",
            "bump_to=0",
            "max_sixes=0",
            "max_sixes=100000",
            "finish=exact",
            "bump=maybe",
            "size=3",
            "=",
            "faces",
        ]:
            if cmd != "report":
                out.append(base + ["--set", setting])
        for seed in ["-1", "1.5", "abc", "1_0", "\u0661", "99999999999999999999999999999"]:
            if cmd != "analyze":
                out.append(base + ["--seed", seed])
    for players in ["0", "7", "100", "-1", "x", "\uff12"]:
        for cmd in ("simulate", "race", "play"):
            out.append([cmd, "--players", players] + extra.get(cmd, []))
    for games in ["1000000000", "10000000000", "0", "-5", "1e9", "1_000"]:
        out.append(["simulate", "--games", games, "--no-progress"])
        out.append(["race", "--method", "monte_carlo", "--games", games])
        out.append(["report", "--games", games, "--out", str(folder / "r2"), "--quiet"])
    out += [
        ["simulate", "--games", "2000", "--max-turns", "1", "--no-progress"],
        ["simulate", "--games", "200", "--max-turns", "0", "--no-progress"],
        ["simulate", "--games", "200", "--players", "3", "--max-turns", "2", "--no-progress"],
        ["race", "--seed", "-1"],
        ["race", "--method", "exact", "--players", "4", "--rules", "family"],
        ["play", "--max-turns", "0"],
        ["play", "--names", "\x1b[31mEve", "Bob", "--seed", "1", "--no-board"],
        ["play", "--names", "Ann", "Ann"],
        ["play", "--ai", "9"],
        ["play", "--board", files["unwinnable.json"], "--set", "faces=2", "--rules", "plain"],
        ["report", "--out", "/proc", "--quiet"],
        ["report", "--out", "/sys", "--quiet"],
        ["report", "--out", "/proc/x/y", "--quiet"],
        ["report", "--out", "", "--quiet"],
        ["report", "--out", "/dev/null", "--quiet"],
        ["report", "--max-players", "9", "--out", str(folder / "r3"), "--quiet"],
        ["analyze", "--board", files["ten_million.json"]],
        ["games", "--db", "/dev/zero"],
        ["games", "--db", "/proc"],
        ["games", "--db", "/nonexistent/dir/x.db"],
        ["verify", "--db", "/dev/zero"],
        ["verify", "--db", str(folder / "binary.json")],
        ["verify", "--db", str(folder / "none.db"), "--alpha", "nan"],
        ["nonsense"],
        [],
        ["--version"],
    ]
    return out


def run_case(argv: list[str]) -> dict:
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "snlmarkov", *argv],
            capture_output=True,
            text=True,
            errors="backslashreplace",
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "MPLBACKEND": "Agg"},
        )
    except subprocess.TimeoutExpired:
        return {"argv": argv, "status": "hang", "seconds": TIMEOUT, "err": ""}
    seconds = time.monotonic() - start
    err = proc.stderr
    ok = proc.returncode in (0, 1) or (proc.returncode == 2 and err.count("\n") <= 1 and "Traceback" not in err)
    if "Traceback" in err:
        ok = False
    return {"argv": argv, "status": proc.returncode, "seconds": seconds, "err": err.strip()[-300:], "ok": ok}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        all_cases = cases(Path(tmp))
        if args.list:
            for c in all_cases:
                print(" ".join(c))
            return 0
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run_case, all_cases))
    named = sum(r["status"] == 2 and r.get("ok") for r in results)
    works = sum(r["status"] in (0, 1) and r.get("ok") for r in results)
    broken = [r for r in results if not r.get("ok")]
    slowest = max(results, key=lambda r: r["seconds"])
    print(f"{len(results)} cases: {works} worked (exit 0/1), {named} gave a one-line named error (exit 2), ")
    print(f"{len(broken)} broke the contract (traceback, hang or other status)")
    print(f"slowest: {slowest['seconds']:.1f} s: snlmarkov {' '.join(slowest['argv'])}")
    for r in broken:
        print(f"BROKEN [{r['status']}] snlmarkov {' '.join(r['argv'])}\n    {r['err']}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
