"""The routes of the game pages: the archive, one page per stored game, uploads, rematch.

Routes
------
``GET /games``                        the archive page (newest first, paged, filtered)
``GET /games/{id}``                   a stored game's page: replay, odds graph, swings, luck, verdict
``GET /games/upload``                 the same page for a record file, not stored
``GET /api/games``                    one page of the archive as JSON (:func:`.archive.list_games`)
``GET /api/games/{id}/analysis``      the game's analysis as JSON (:func:`.analysis.analyse`)
``GET /api/games/{id}/record``        the game's record (JSON, as a download)
``POST /api/games/analysis``          the analysis of an uploaded record (at most :data:`MAX_UPLOAD_BYTES`)
``POST /api/rooms/{id}/rematch``      a rematch of a finished room (:func:`.rematch.rematch`)

Analyses are computed in a worker thread (one at a time) and kept per game id
(stored records never change) and per uploaded text: at most
:data:`ANALYSES_KEPT` of them, holding :data:`TURNS_KEPT` turns in all.

Examples
--------
>>> from snlmarkov.web.rooms import RoomManager
>>> [r.path for r in game_routes(RoomManager({}))][:3]
['/games', '/games/upload', '/games/{game:int}']
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from ..errors import GameError, LimitError, SnlError
from ..game.record import GameRecord
from ..limits import format_bytes, limit
from .analysis import analyse
from .archive import check_filters, list_games
from .protocol import ProtocolError
from .rematch import rematch
from .rooms import RoomManager
from .store import load_key

__all__ = []

#: largest record file the upload page takes (and never more than ``limits.MAX_RECORD_BYTES``);
#: ``static/game.html`` says the same in ``data-max-bytes``
MAX_UPLOAD_BYTES = 2 * 2**20
#: analyses kept in memory, and the turns they may hold in all (a long game's analysis is large)
ANALYSES_KEPT = 64
TURNS_KEPT = 100_000
_REMATCH_BODY = 1024

_STATIC = Path(__file__).parent / "static"


def _error(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": code, "message": message[:400]}, status)


async def _body(request: Request, cap: int) -> bytes:
    """The request body, refused with LimitError past ``cap`` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise LimitError(f"the file holds {format_bytes(int(declared))}, over the limit of {format_bytes(cap)}")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise LimitError(f"the file is over the limit of {format_bytes(cap)}")
    return body


class _GamePages:
    """The handlers of the game pages, over one room manager (its store may be None)."""

    def __init__(self, manager: RoomManager) -> None:
        self.manager = manager
        self.kept: OrderedDict[Any, dict] = OrderedDict()

    def _signing_key(self) -> bytes | None:
        """The key the store signs with (read, never made here), or None without a store."""
        store = self.manager.store
        return None if store is None else load_key(store.path)

    async def _analysis(self, key: Any, record: GameRecord) -> dict:
        found = self.kept.get(key)
        if found is None:
            found = await asyncio.to_thread(lambda: analyse(record, key=self._signing_key()))
            self.kept[key] = found
            while len(self.kept) > ANALYSES_KEPT or (
                len(self.kept) > 1 and sum(a["turns_played"] for a in self.kept.values()) > TURNS_KEPT
            ):
                self.kept.popitem(last=False)
        self.kept.move_to_end(key)
        return found

    def _stored_text(self, game_id: int) -> str:
        store = self.manager.store
        if store is None:
            raise KeyError(game_id)
        return store.record(game_id).to_json()

    async def _one(self, request: Request) -> tuple[int, GameRecord | None, str]:
        game_id = request.path_params["game"]
        try:
            text = await asyncio.to_thread(self._stored_text, game_id)
        except (KeyError, SnlError):
            return game_id, None, ""
        return game_id, GameRecord.from_json(text), text

    async def page(self, request: Request) -> Response:
        name = "games.html" if request.url.path.rstrip("/") == "/games" else "game.html"
        return FileResponse(_STATIC / name)

    async def games(self, request: Request) -> Response:
        store = self.manager.store
        if store is None:
            return JSONResponse({"games": [], "total": 0, "page": 1, "pages": 1, "stored": False})
        try:
            filters = check_filters(dict(request.query_params))
            found = await asyncio.to_thread(list_games, store.path, filters)
        except SnlError as exc:
            return _error("bad_filter", str(exc), 400)
        return JSONResponse({**found, "stored": True})

    async def game_analysis(self, request: Request) -> Response:
        game_id, record, _ = await self._one(request)
        if record is None:
            return _error("no_game", f"no stored game with id {game_id}", 404)
        try:
            data = await self._analysis(("id", game_id), record)
        except SnlError as exc:
            return _error("too_big" if isinstance(exc, LimitError) else "bad_record", str(exc), 422)
        return JSONResponse({"id": game_id, "stored": True, **data})

    async def game_record(self, request: Request) -> Response:
        game_id, record, text = await self._one(request)
        if record is None:
            return _error("no_game", f"no stored game with id {game_id}", 404)
        disposition = f'attachment; filename="snl-game-{game_id}.json"'
        return Response(text, media_type="application/json", headers={"Content-Disposition": disposition})

    async def upload(self, request: Request) -> Response:
        cap = min(MAX_UPLOAD_BYTES, limit("record_bytes"))
        try:
            raw = await _body(request, cap)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise GameError("a game record must be UTF-8 JSON text") from None
            record = GameRecord.from_json(text)
            data = await self._analysis(("upload", hashlib.sha256(raw).hexdigest()), record)
        except LimitError as exc:
            return _error("too_big", str(exc), 413)
        except SnlError as exc:
            return _error("bad_record", str(exc), 400)
        return JSONResponse({"id": 0, "stored": False, **data})

    async def ask_rematch(self, request: Request) -> Response:
        try:
            data = json.loads(await _body(request, _REMATCH_BODY) or b"null")
            if not isinstance(data, dict) or set(data) != {"secret"}:
                raise ProtocolError("a rematch request is {secret}", "bad_message")
            answer = await rematch(self.manager, request.path_params["room"], data["secret"])
        except ProtocolError as exc:
            status = {"no_room": 404, "bad_secret": 403, "not_over": 409, "server_full": 503}.get(exc.code, 400)
            return _error(exc.code, str(exc), status)
        except ValueError as exc:  # bad JSON, a body over the limit
            return _error("bad_message", str(exc), 400)
        return JSONResponse(answer)


def game_routes(manager: RoomManager) -> list[Route]:
    """The game pages' routes, reading ``manager.store`` (a GameStore or None)."""
    pages = _GamePages(manager)
    return [
        Route("/games", pages.page),
        Route("/games/upload", pages.page),
        Route("/games/{game:int}", pages.page),
        Route("/api/games", pages.games),
        Route("/api/games/analysis", pages.upload, methods=["POST"]),
        Route("/api/games/{game:int}/analysis", pages.game_analysis),
        Route("/api/games/{game:int}/record", pages.game_record),
        Route("/api/rooms/{room}/rematch", pages.ask_rematch, methods=["POST"]),
    ]
