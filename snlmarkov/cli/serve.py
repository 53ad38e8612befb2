"""``snlmarkov serve``: the browser game (pass & play, AI seats, private online rooms).

Starts the web app of :mod:`snlmarkov.web` under uvicorn, on 127.0.0.1 unless
``--host`` says otherwise. With ``--db`` every finished game (and every
abandoned one, marked so) is stored in that SQLite file; see
``snlmarkov games`` and ``snlmarkov verify``. Needs the ``web`` extra
(``pip install "snlmarkov[web]"``).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import SnlError
from .common import check_host

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``serve`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "serve",
        help="play in the browser: pass & play, AI seats and online rooms",
        description="Serve the browser game. Open the address it prints; share an online room's link to play together.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--db", metavar="FILE", help="SQLite file storing every finished and abandoned game")
    parser.add_argument(
        "--countdown", type=float, default=30.0, metavar="S", help="seconds before a stalled online player is skipped"
    )
    parser.add_argument("--ai-delay", type=float, default=1.2, metavar="S", help="seconds an AI seat waits to roll")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    check_host(args.host)  # before the address is printed
    if not 0 <= args.port <= 65535:
        raise SnlError(f"--port must be 0..65535; got {args.port}")
    if not 0.05 <= args.countdown <= 600:
        raise SnlError(f"--countdown must be 0.05..600 seconds; got {args.countdown}")
    if not 0 <= args.ai_delay <= 60:
        raise SnlError(f"--ai-delay must be 0..60 seconds; got {args.ai_delay}")
    try:
        import uvicorn

        from ..web.app import create_app
    except ImportError as exc:
        raise SnlError(f'serve needs the web extra (pip install "snlmarkov[web]"): {exc}') from None
    from ..web.store import GameStore

    store = GameStore(args.db) if args.db else None
    app = create_app(store=store, countdown=args.countdown, ai_delay=args.ai_delay)
    print(f"snlmarkov: open http://{args.host}:{args.port}/  (Ctrl+C stops)", flush=True)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        ws_max_size=16384,
        ws_per_message_deflate=False,
        log_level="warning",
        lifespan="on",
    )
    try:
        uvicorn.Server(config).run()
    finally:
        if store is not None:
            store.close()
    return 0
