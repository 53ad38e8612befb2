"""The checks every request passes before it reaches a route: Host, Origin, content type, security headers.

:class:`Guard` is a plain ASGI middleware around the app:

- the ``Host`` header must name this server: an IP address (which cannot be
  rebound), ``localhost``, or one of the names given (``allowed_hosts``,
  ``snlmarkov serve --allowed-host``); anything else is answered 400
  ``bad_host``, so a page on another domain that re-points its name at this
  machine (DNS rebinding) is not served;
- a WebSocket, and any request that is not ``GET``/``HEAD``, that carries an
  ``Origin`` must come from this server's own pages (the origin's host equals
  the ``Host`` header) or from ``allowed_origins``; others are refused (403
  ``bad_origin``; a refused WebSocket is never accepted);
- a ``POST`` must say ``Content-Type: application/json`` (415
  ``bad_content_type``), which no cross-site form can send without the
  browser asking first;
- every HTTP answer carries a Content-Security-Policy (scripts and styles
  from this server only, no frames, no plug-ins), ``X-Frame-Options: DENY``,
  ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer``.

Examples
--------
>>> host_allowed("127.0.0.1:8000", ()), host_allowed("[::1]:8000", ()), host_allowed("localhost", ())
(True, True, True)
>>> host_allowed("evil.example:8000", ()), host_allowed("snl.example.org", ("snl.example.org",))
(False, True)
>>> host_allowed("127.0.0.1:80; script-src *", ())
False
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

__all__ = []

_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _hostname(host: str) -> str:
    """The name part of a ``Host`` header (no port, no IPv6 brackets), lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, port = host[1:].partition("]")
        port = port[1:] if port.startswith(":") else port
    elif host.count(":") == 1:
        name, port = host.split(":")
    else:
        name, port = host, ""
    return name if port == "" or (port.isascii() and port.isdigit() and len(port) <= 5) else ""


def host_allowed(host: str, names: Iterable[str]) -> bool:
    """Whether a ``Host`` header names this server: an IP address, ``localhost`` or one of ``names``."""
    name = _hostname(host).rstrip(".")
    if not name:
        return False
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    return name == "localhost" or name in {n.lower().rstrip(".") for n in names}


def security_headers(host: str) -> list[tuple[bytes, bytes]]:
    """The headers every HTTP answer carries (the policy lets the pages reach this host's WebSocket only)."""
    csp = (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        f"connect-src 'self' ws://{host} wss://{host}; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    )
    return [
        (b"content-security-policy", csp.encode("latin-1")),
        (b"x-frame-options", b"DENY"),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    ]


class Guard:
    """ASGI middleware: Host and Origin checks, JSON-only POSTs and security headers (see the module).

    Parameters
    ----------
    app : ASGI app
    allowed_hosts : iterable of str
        Host names this server answers to besides IP addresses and
        ``localhost`` (the public name behind a proxy).
    allowed_origins : iterable of str
        Origins (``https://name[:port]``) accepted besides this server's own,
        e.g. when a proxy rewrites the ``Host`` header.
    """

    def __init__(self, app: Any, *, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed_hosts = tuple(allowed_hosts)
        self.allowed_origins = {o.lower().rstrip("/") for o in allowed_origins}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        refusal = self._refusal(scope, headers, host)
        if refusal is not None:
            status, code, message = refusal
            if scope["type"] == "websocket":  # closed before it is accepted: the client sees HTTP 403
                await send({"type": "websocket.close", "code": 1008, "reason": message})
                return
            await _send_json(send, status, {"error": code, "message": message}, security_headers("invalid"))
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        extra = security_headers(host)

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _refusal(self, scope: dict, headers: dict[str, str], host: str) -> tuple[int, str, str] | None:
        if not host_allowed(host, self.allowed_hosts):
            return 400, "bad_host", "this server does not answer to that host name"
        method = scope.get("method", "GET")
        origin = headers.get("origin")
        if origin is not None and (scope["type"] == "websocket" or method not in _SAFE_METHODS):
            if (
                urlsplit(origin).netloc.lower() != host.lower()
                and origin.lower().rstrip("/") not in self.allowed_origins
            ):
                return 403, "bad_origin", "requests from another site's pages are refused"
        if scope["type"] == "http" and method not in _SAFE_METHODS:
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                return 415, "bad_content_type", "send JSON with Content-Type: application/json"
        return None


async def _send_json(send: Any, status: int, body: dict, headers: list[tuple[bytes, bytes]]) -> None:
    data = json.dumps(body).encode()
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": data})
