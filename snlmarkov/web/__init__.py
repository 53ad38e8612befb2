"""Play in the browser: pass & play, AI seats and private online rooms, with live exact odds.

An ASGI app in the Starlette style: a list of routes (:mod:`.app`), one room
manager (:mod:`.rooms`) and the project's own engine (:class:`snlmarkov.Game`)
rolling every die on the server. :mod:`.protocol` checks every client
message, :mod:`.odds` gives the live win chances, :mod:`.store` keeps every
finished game in SQLite. Start it with ``snlmarkov serve``; the protocol is
described in ``docs/web.md``. Starlette and uvicorn come with the ``web``
extra and are imported only by :mod:`.app`.
"""

from __future__ import annotations

__all__ = ["create_app", "ServerLimits", "GameStore"]

_EXPORTS = {"create_app": ".app", "ServerLimits": ".limits", "GameStore": ".store"}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)
