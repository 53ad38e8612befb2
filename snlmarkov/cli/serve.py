"""``snlmarkov serve``: the browser game (pass & play, AI seats, private online rooms).

Starts the web app of :mod:`snlmarkov.web` under uvicorn, on 127.0.0.1 unless
``--host`` says otherwise. The address and port are checked (and the port
taken) before the address is printed or the database created. The server's
limits are those of :class:`snlmarkov.web.limits.ServerLimits` (``docs/web.md``). With ``--db`` every finished game (and every
abandoned one, marked so) is stored in that SQLite file; see
``snlmarkov games`` and ``snlmarkov verify``. Needs the ``web`` extra
(``pip install "snlmarkov[web]"``).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import AddressError, SnlError
from .common import check_host

__all__ = []


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``serve`` sub-command's parser its description and arguments."""
    parser.description = (
        "Serve the browser game. Open the address it prints; share an online room's link to play together."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--db", metavar="FILE", help="SQLite file storing every finished and abandoned game")
    parser.add_argument(
        "--countdown", type=float, default=30.0, metavar="S", help="seconds before a stalled online player is skipped"
    )
    parser.add_argument("--ai-delay", type=float, default=1.2, metavar="S", help="seconds an AI seat waits to roll")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the pages are reached by (besides IP addresses and localhost); repeatable",
    )
    parser.add_argument(
        "--proxy",
        metavar="ADDR",
        help="address of a reverse proxy in front: its X-Forwarded-For names the client (ignored otherwise)",
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change one of the server's limits (docs/web.md lists them), e.g. --limit rooms_per_address=50; repeatable",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    check_host(args.host)  # before the address is printed
    if not 0 <= args.port <= 65535:
        raise AddressError(f"--port must be 0..65535; got {args.port}")
    if not 0.05 <= args.countdown <= 600:
        raise SnlError(f"--countdown must be 0.05..600 seconds; got {args.countdown}")
    if not 0 <= args.ai_delay <= 60:
        raise SnlError(f"--ai-delay must be 0..60 seconds; got {args.ai_delay}")
    try:
        import uvicorn

        from ..web.app import create_app
        from ..web.collector import FULL_EVERY
        from ..web.serving import bind, uvicorn_config
    except ImportError as exc:
        raise SnlError(f'serve needs the web extra (pip install "snlmarkov[web]"): {exc}') from None
    from ..web.store import GameStore

    for name in args.allowed_host:
        if not name or len(name) > 253 or not all(c.isalnum() or c in ".-" for c in name) or not name.isascii():
            raise AddressError(
                f"--allowed-host must be a host name (letters, digits, dots, hyphens); got {name[:80]!r}"
            )
    limits = _limits(args.limit)
    sock = bind(args.host, args.port)  # the address is checked and the port taken before anything else
    try:
        store = GameStore(args.db) if args.db else None
    except BaseException:
        sock.close()
        raise
    app = create_app(
        store=store,
        countdown=args.countdown,
        ai_delay=args.ai_delay,
        allowed_hosts=args.allowed_host,
        limits=limits,
        freeze_gc=True,  # the start-up's objects out of the collector's walks, and the full collections on a
        full_gc_every=FULL_EVERY,  # timer, not every few seconds under load (docs/web.md "The collector")
    )
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"snlmarkov: open http://{shown}:{port}/  (Ctrl+C stops)", flush=True)
    try:
        uvicorn.Server(uvicorn_config(app, proxy=args.proxy)).run(sockets=[sock])
    finally:
        sock.close()
        if store is not None:
            store.close()
    return 0


def _limits(items: list[str]) -> Any:
    """The server's limits with the ``--limit NAME=VALUE`` changes."""
    import dataclasses

    from ..limits import parse_ascii_int
    from ..web.limits import ServerLimits

    fields = {f.name: f for f in dataclasses.fields(ServerLimits)}
    changes: dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or name not in fields:
            raise SnlError(f"--limit takes NAME=VALUE with NAME one of {', '.join(fields)}; got {item[:80]!r}")
        if fields[name].type in ("int", int):
            changes[name] = parse_ascii_int(text, f"--limit {name}")
        else:
            try:
                changes[name] = float(text) if text.isascii() else float("nan")
            except ValueError:
                changes[name] = float("nan")
    return ServerLimits(**changes)  # type: ignore[arg-type]
