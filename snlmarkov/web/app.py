"""The ASGI app: a list of routes, one room manager, the engine.

Routes
------
``GET /``                 the home page (pick a mode, seats, rules)
``GET /room/{id}``        the game page of a room (any kind)
``GET /static/...``       the pages' CSS and JavaScript (no build step, no CDN)
``GET /api/config``       boards, rule fields, presets, colours and limits for the pages
``POST /api/rooms``       create a room; the answer holds its secrets (only ever sent here)
``GET /api/rooms/{id}``   a room's public state
``WS /ws/{id}``           play and watch: the protocol of ``docs/web.md``
``/games...``             the archive, game pages and rematch (:mod:`.games`)

Examples
--------
>>> app = create_app(ai_delay=0.0)
>>> sorted(r.path for r in app.routes)[:2]
['/', '/api/config']
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..board import Board
from ..game.seats import COLOURS
from ..rules import PRESETS
from .games import game_routes
from .protocol import BURST, MAX_MESSAGE_BYTES, MAX_NAME, MAX_SEATS, RATE, ProtocolError, parse_message
from .rooms import Connection, RoomManager, _board_data, rules_fields

__all__ = ["create_app", "STATIC", "TOKEN_COLOURS", "MAX_BODY_BYTES"]

log = logging.getLogger("snlmarkov.web")

#: the pages' files
STATIC = Path(__file__).parent / "static"
#: the colours the pages offer for tokens (any ``#rrggbb`` is accepted)
TOKEN_COLOURS = {
    "red": "#e53935",
    "blue": "#1e88e5",
    "green": "#43a047",
    "yellow": "#fdd835",
    "purple": "#8e24aa",
    "orange": "#fb8c00",
}
#: largest accepted HTTP request body
MAX_BODY_BYTES = 8192
#: refused messages in a row (rate limit) after which a connection is closed
MAX_STRIKES = 100


class _Bucket:
    """A token bucket: ``rate`` messages per second on average, bursts of ``burst``."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.tokens, self.at = rate, burst, burst, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


def _error(exc: ProtocolError) -> dict[str, Any]:
    return {"type": "error", "code": exc.code, "message": str(exc)}


def create_app(  # noqa: C901, PLR0915
    *,
    store: Any = None,
    boards: Mapping[str, Board] | None = None,
    countdown: float = 30.0,
    ai_delay: float = 1.2,
    max_rooms: int = 2000,
    idle_timeout: float = 900.0,
    rate: float = RATE,
    burst: float = BURST,
    seed: int | None = None,
    odds_wait: float = 1.5,
) -> Starlette:
    """The web game as a Starlette app.

    Parameters
    ----------
    store : GameStore, optional
        Where every finished (and abandoned) game is written.
    boards : mapping of str to Board, optional
        The boards offered, by name (default: the built-in boards; the first
        is the default board).
    countdown : float, default 30
        Seconds an online player has to roll before the turn is skipped.
    ai_delay : float, default 1.2
        Seconds an AI seat waits before it rolls.
    max_rooms, idle_timeout : see :class:`~snlmarkov.web.rooms.RoomManager`
    rate, burst : float
        Messages per second a connection may send on average, and in a burst.
    seed : int, optional
        Reproducible dice (tests only).
    odds_wait : float, default 1.5
        Seconds a starting game waits for its live odds to be solved.

    Returns
    -------
    starlette.applications.Starlette
        With the room manager as ``app.state.rooms``.
    """
    if boards is None:
        boards = {name: Board.builtin(name) for name in Board.names()}
    manager = RoomManager(
        boards,
        store=store,
        countdown=countdown,
        ai_delay=ai_delay,
        max_rooms=max_rooms,
        idle_timeout=idle_timeout,
        seed=seed,
        odds_wait=odds_wait,
    )

    async def home(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def room_page(request: Request) -> Response:
        return FileResponse(STATIC / "room.html")

    async def config(request: Request) -> Response:
        return JSONResponse(
            {
                "boards": {name: _board_data(b, name) for name, b in manager.boards.items()},
                "rules_fields": rules_fields(),
                "presets": {k: dict(v) for k, v in PRESETS.items()},
                "colours": [{"name": c, "hex": TOKEN_COLOURS.get(c, "#888888")} for c in COLOURS],
                "limits": {"seats": MAX_SEATS, "name": MAX_NAME, "message_bytes": MAX_MESSAGE_BYTES},
                "countdown": manager.countdown,
            }
        )

    async def create_room(request: Request) -> Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return JSONResponse({"error": "too_big", "message": f"body over {MAX_BODY_BYTES} bytes"}, 413)
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or not set(data) <= {"kind", "seats", "board", "rules", "mode", "countdown"}:
                raise ProtocolError("a room is {kind, seats, board, rules, mode, countdown}")
            room = manager.create(
                data.get("kind"),
                data.get("seats"),
                board=data.get("board"),
                rules=data.get("rules"),
                mode=data.get("mode", "classic"),
                countdown=data.get("countdown"),
            )
        except ValueError as exc:  # bad JSON, ProtocolError
            code = getattr(exc, "code", "bad_json")
            return JSONResponse({"error": code, "message": str(exc)[:300]}, 503 if code == "server_full" else 400)
        if room.kind == "local":
            await room.start()
        return JSONResponse(
            {
                "room": room.id,
                "kind": room.kind,
                "host": room.host_secret,
                "seats": [s.secret if not s.ai else "" for s in room.seats],
                "url": f"/room/{room.id}",
            }
        )

    async def room_state(request: Request) -> Response:
        room = manager.rooms.get(request.path_params["room"])
        if room is None:
            return JSONResponse({"error": "no_room", "message": "no such room"}, 404)
        return JSONResponse({"seq": room.seq, **room.snapshot()})

    async def play(websocket: WebSocket) -> None:
        room = manager.rooms.get(websocket.path_params["room"])
        await websocket.accept()
        if room is None:
            await websocket.send_text(json.dumps({"type": "error", "code": "no_room", "message": "no such room"}))
            await websocket.close(4404)
            return
        conn = Connection()
        room.conns.add(conn)
        writer = asyncio.ensure_future(_drain(websocket, conn))
        bucket, strikes, last_warning = _Bucket(rate, burst), 0, 0.0
        try:
            while not conn.dropped and not writer.done():
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if not bucket.take():
                    strikes += 1
                    if strikes > MAX_STRIKES:
                        conn.push(_error(ProtocolError("too many messages: connection closed", "rate_limited")))
                        break
                    now = time.monotonic()
                    if now - last_warning > 1.0:  # one warning a second, not one per message
                        last_warning = now
                        conn.push(_error(ProtocolError(f"over {rate:g} messages a second", "rate_limited")))
                    continue
                strikes = 0
                try:
                    text = message.get("text")
                    if text is None:
                        raise ProtocolError("messages must be JSON text frames", "bad_message")
                    await room.handle(conn, parse_message(text))
                except ProtocolError as exc:
                    conn.push(_error(exc))
                except Exception:  # a bug must not take the room or the server down
                    log.exception("room %s: message failed", room.id)
                    conn.push({"type": "error", "code": "internal", "message": "the server could not do that"})
        except WebSocketDisconnect:
            pass
        finally:
            room.disconnect(conn)
            conn.close()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(writer, 2.0)
            writer.cancel()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        manager.start()
        try:
            yield
        finally:
            await manager.shutdown()

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/room/{room}", room_page),
            Route("/api/config", config),
            Route("/api/rooms", create_room, methods=["POST"]),
            Route("/api/rooms/{room}", room_state),
            WebSocketRoute("/ws/{room}", play),
            *game_routes(manager),  # the game pages (snlmarkov/web/games.py)
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        lifespan=lifespan,
    )
    app.state.rooms = manager
    return app


async def _drain(websocket: WebSocket, conn: Connection) -> None:
    """Send what the room queued for this connection, in order; close on None."""
    try:
        while True:
            text = await conn.outbox.get()
            if text is None:
                break
            await websocket.send_text(text)
    except Exception:  # the browser went away
        conn.dropped = True
        return
    with contextlib.suppress(Exception):
        await websocket.close(1000)
