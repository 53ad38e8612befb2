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
import math
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..board import Board
from ..errors import SnlError
from ..game.seats import COLOURS
from ..rules import PRESETS
from .collector import ServedCollector
from .connection import Connection, drain
from .games import game_routes
from .guard import Guard
from .limits import ServerLimits, Throttle
from .protocol import (
    BURST,
    MAX_MESSAGE_BYTES,
    MAX_NAME,
    MAX_SEATS,
    RATE,
    ProtocolError,
    load_json,
    parse_message,
)
from .rooms import RoomManager, _board_data, rules_fields
from .timing import Recorder

__all__ = ["create_app"]

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
#: WebSocket close codes: an idle connection, one that never said hello, one over its message limit
CLOSE_IDLE, CLOSE_NO_HELLO, CLOSE_RATE = 4408, 4401, 4429
_ROOM_FIELDS = {"kind", "seats", "board", "rules", "mode", "countdown"}


def _error(exc: ProtocolError) -> dict[str, Any]:
    return {"type": "error", "code": exc.code, "message": str(exc)}


def _refuse(status: int, code: str, message: str, retry_after: float | None = None) -> JSONResponse:
    headers = None if retry_after is None else {"Retry-After": str(max(1, math.ceil(retry_after)))}
    return JSONResponse({"error": code, "message": message[:300]}, status, headers=headers)


def _address(conn: Request | WebSocket) -> str:
    return conn.client.host if conn.client is not None else "?"


def create_app(
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
    limits: ServerLimits | None = None,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    freeze_gc: bool = False,
    full_gc_every: float = 0.0,
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
        Messages per second one connection may send on average, and in a burst.
    seed : int, optional
        Reproducible dice (tests only).
    odds_wait : float, default 1.5
        Seconds a starting game waits for its live odds to be solved.
    limits : ServerLimits, optional
        What one client address, and all of them, may cost (defaults: :class:`ServerLimits`).
    allowed_hosts, allowed_origins : iterable of str
        Host names and origins accepted besides IP addresses, ``localhost``
        and this server's own pages (:class:`~snlmarkov.web.guard.Guard`).
    freeze_gc : bool, default False
        Once started, move every object then alive (the modules, classes and
        functions imported, the boards, the restored rooms) out of the cyclic
        garbage collector's walks (:func:`gc.freeze`) until the app shuts
        down: a full collection then walks only what the games made since,
        and stops the event loop for less time. For a process that serves
        one app (``snlmarkov serve`` sets it); a test process that makes many
        apps leaves it off.
    full_gc_every : float, default 0
        With ``freeze_gc``: seconds between the full collections a loop
        timer runs, which then replace the collector's own trigger (every
        few seconds under load; ``snlmarkov serve`` sets 300); 0 leaves them
        to the collector (:class:`~snlmarkov.web.collector.ServedCollector`).

    Returns
    -------
    starlette.applications.Starlette
        With the room manager as ``app.state.rooms`` and the limits as ``app.state.limits``.
    """
    limits = limits or ServerLimits()
    collector = ServedCollector(full_gc_every)  # the number checked before anything starts
    if full_gc_every and not freeze_gc:
        raise SnlError("full_gc_every is the served app's policy: it needs freeze_gc=True")
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
        limits=limits,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        manager.start()
        if app.state.timing is not None:
            app.state.timing.watch_collector()
        if freeze_gc:
            collector.start()
        try:
            yield
        finally:
            collector.stop()
            await manager.shutdown()
            if app.state.timing is not None:  # the load benchmark's figures (snlmarkov/web/timing.py)
                app.state.timing.stop_watching_collector()
                app.state.timing.write()

    app = Starlette(
        routes=[
            Route("/", _home),
            Route("/room/{room}", _room_page),
            Route("/api/config", _config),
            Route("/api/rooms", _create_room, methods=["POST"]),
            Route("/api/rooms/{room}", _room_state),
            WebSocketRoute("/ws/{room}", _play),
            *game_routes(manager),  # the game pages (snlmarkov/web/games.py)
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[Middleware(Guard, allowed_hosts=tuple(allowed_hosts), allowed_origins=tuple(allowed_origins))],
        lifespan=lifespan,
    )
    app.state.rooms, app.state.limits, app.state.rate, app.state.burst = manager, limits, rate, burst
    app.state.room_throttle = Throttle(limits.room_rate, limits.room_burst)
    app.state.message_throttle = Throttle(limits.message_rate, limits.message_burst)
    app.state.timing = Recorder.from_environment()  # None unless $SNLMARKOV_WEB_TIMING names a file
    return app


async def _home(request: Request) -> Response:
    return FileResponse(STATIC / "index.html")


async def _room_page(request: Request) -> Response:
    return FileResponse(STATIC / "room.html")


async def _config(request: Request) -> Response:
    manager: RoomManager = request.app.state.rooms
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


async def _read_body(request: Request, timeout: float) -> bytes | Response:
    """The request body, or the refusal: over :data:`MAX_BODY_BYTES`, or not sent within ``timeout``."""

    async def read() -> bytes | Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return _refuse(413, "too_big", f"body over {MAX_BODY_BYTES} bytes")
        return body

    try:
        return await asyncio.wait_for(read(), timeout)
    except asyncio.TimeoutError:
        return _refuse(408, "too_slow", f"the body was not sent within {timeout:g} s")


async def _create_room(request: Request) -> Response:
    state, address = request.app.state, _address(request)
    manager: RoomManager = state.rooms
    wait = state.room_throttle.wait(address)
    if wait > 0:
        return _refuse(429, "rate_limited", f"at most {state.limits.room_burst:g} new rooms at once; try later", wait)
    body = await _read_body(request, state.limits.body_timeout)
    if isinstance(body, Response):
        return body
    try:
        data = load_json(body.decode("utf-8"), "a room")
        if not isinstance(data, dict) or not set(data) <= _ROOM_FIELDS:
            raise ProtocolError("a room is {kind, seats, board, rules, mode, countdown}")
        room = manager.create(
            data.get("kind"),
            data.get("seats"),
            board=data.get("board"),
            rules=data.get("rules"),
            mode=data.get("mode", "classic"),
            countdown=data.get("countdown"),
            owner=address,
        )
    except ValueError as exc:  # not UTF-8, bad JSON, ProtocolError
        code = getattr(exc, "code", "bad_json")
        status = {"server_full": 503, "too_many_rooms": 429}.get(code, 400)
        return _refuse(status, code, str(exc), 60.0 if status != 400 else None)
    if room.kind == "local":
        await room.start()
    else:
        await room.save()  # with a store: on disk, so that a restart keeps it
    return JSONResponse(
        {
            "room": room.id,
            "kind": room.kind,
            "host": room.host_secret,
            "seats": [s.secret if not s.ai else "" for s in room.seats],
            "url": f"/room/{room.id}",
        }
    )


async def _room_state(request: Request) -> Response:
    room = request.app.state.rooms.rooms.get(request.path_params["room"])
    if room is None:
        return _refuse(404, "no_room", "no such room")
    return JSONResponse({"seq": room.seq, **room.snapshot()})


async def _play(websocket: WebSocket) -> None:
    state = websocket.app.state
    room = state.rooms.rooms.get(websocket.path_params["room"])
    await websocket.accept()
    if room is None:
        await websocket.send_text(json.dumps({"type": "error", "code": "no_room", "message": "no such room"}))
        await websocket.close(4404)
        return
    conn = Connection()
    if state.timing is not None:
        state.timing.watch(conn)
    conn.sender = websocket.send_text  # what the room pushes goes out at once while nothing is queued
    room.conns.add(conn)
    writer = asyncio.ensure_future(_drain(websocket, conn))
    try:
        await _receive_all(websocket, room, conn, state)
    except WebSocketDisconnect:
        pass
    finally:
        conn.sender = None
        room.disconnect(conn)
        conn.close()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(writer, 2.0)
        writer.cancel()


def _over_limit(mine: Throttle, state: Any, address: str) -> str:
    """The limit a message from ``address`` is over ("" if within both): this connection's, or the address's."""
    if mine.wait(address) > 0:
        return f"over {state.rate:g} messages a second on this connection"
    if state.message_throttle.wait(address) > 0:
        limits: ServerLimits = state.limits
        return f"over {limits.message_rate:g} messages a second from your address (all its connections)"
    return ""


async def _receive_all(websocket: WebSocket, room: Any, conn: Connection, state: Any) -> None:
    """Read one connection's messages until it goes, within its limits (rate, hello, idleness)."""
    limits: ServerLimits = state.limits
    mine, address = Throttle(state.rate, state.burst), _address(websocket)
    strikes, last_warning = 0, 0.0
    started = last_in = time.monotonic()
    while not conn.dropped and not conn.closing:
        if conn.greeted:  # idle: nothing either way for idle_timeout
            timeout = limits.idle_timeout - (time.monotonic() - max(last_in, conn.last_sent))
        else:
            timeout = limits.hello_timeout - (time.monotonic() - started)
        try:
            message = await _receive(websocket, max(0.0, timeout))
        except asyncio.TimeoutError:
            if conn.greeted and time.monotonic() - conn.last_sent < limits.idle_timeout:
                continue  # the room spoke to it meanwhile: not idle
            why = (
                f"no hello within {limits.hello_timeout:g} s"
                if not conn.greeted
                else f"idle for {limits.idle_timeout:g} s"
            )
            conn.push(_error(ProtocolError(f"connection closed: {why}", "timeout")))
            conn.close_code = CLOSE_IDLE if conn.greeted else CLOSE_NO_HELLO
            return
        if message["type"] == "websocket.disconnect":
            return
        last_in = time.monotonic()
        over = _over_limit(mine, state, address)
        if over:
            strikes += 1
            if strikes > MAX_STRIKES:
                conn.push(_error(ProtocolError("too many messages: connection closed", "rate_limited")))
                conn.close_code = CLOSE_RATE
                return
            now = time.monotonic()
            if now - last_warning > 1.0:  # one warning a second, not one per message
                last_warning = now
                conn.push(_error(ProtocolError(over, "rate_limited")))
            continue
        strikes = 0
        if state.timing is None:
            await _handle_one(room, conn, message)
        else:  # the load benchmark: this message's time on the server, from its receipt (last_in)
            await state.timing.measure(_handle_one(room, conn, message), last_in)


if sys.version_info >= (3, 11):

    async def _receive(websocket: WebSocket, timeout: float) -> Mapping[str, Any]:
        """The next message within ``timeout`` seconds (asyncio.TimeoutError past it), in this task: no task
        a message (``asyncio.wait_for`` makes one before Python 3.12)."""
        async with asyncio.timeout(timeout):
            return await websocket.receive()

else:  # pragma: no cover - Python 3.10

    async def _receive(websocket: WebSocket, timeout: float) -> Mapping[str, Any]:
        """The next message within ``timeout`` seconds (asyncio.TimeoutError past it)."""
        return await asyncio.wait_for(websocket.receive(), timeout)


async def _handle_one(room: Any, conn: Connection, message: Mapping[str, Any]) -> str:
    """Apply one received message (a refusal or a failure is told to ``conn``); its kind, or "refused"/"failed"."""
    try:
        text = message.get("text")
        if text is None:
            raise ProtocolError("messages must be JSON text frames", "bad_message")
        msg = parse_message(text)
        await room.handle(conn, msg)
        return msg.type
    except ProtocolError as exc:
        conn.push(_error(exc))
        return "refused"
    except Exception:  # a bug must not take the room or the server down
        log.exception("room %s: message failed", room.id)
        conn.push({"type": "error", "code": "internal", "message": "the server could not do that"})
        return "failed"


async def _drain(websocket: WebSocket, conn: Connection) -> None:
    """Send what the room queued for this connection, in order; close it on None."""
    if await drain(conn, websocket.send_text):
        with contextlib.suppress(Exception):
            await websocket.close(conn.close_code)
