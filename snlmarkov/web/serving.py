"""Serving the app under uvicorn with a bound on every connection: caps, a header timeout, quiet logs.

uvicorn has no timeout for a request's headers (a client that trickles a
header a byte at a time holds its connection for ever) and no cap on
connections per client. :func:`uvicorn_config` serves the app with
:class:`GuardedH11Protocol`, uvicorn's own h11 protocol with:

- a cap on open connections (``ServerLimits.max_connections``, kept under
  the process's open-file limit) and on those of one client address
  (``connections_per_address``): a connection past a cap is answered
  ``503`` and closed at once, before anything is read from it;
- a header timeout (``header_timeout``): a connection that has not sent a
  request's headers completely that many seconds after it opened (or after
  its first byte following a response) is closed.

:func:`quiet_resource_errors` keeps the log readable when the process runs
out of file descriptors: "Too many open files" and "out of system resource"
records are let through once every 10 seconds, without their traceback,
with a count of those left out. :func:`bind` opens the listening socket
(checking the host and the port) before anything else is done.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import time
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..errors import AddressError
from .limits import ServerLimits, client_key

__all__ = []

log = logging.getLogger("snlmarkov.web")

#: connections accepted in one go (asyncio accepts up to this many before any is refused) and the listen queue
BACKLOG = 64
#: open files kept free for the database, the pages' files, the log and one burst of accepted connections
_SPARE_FILES = 64 + BACKLOG
_RESOURCE_ERRNOS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def connection_cap(limits: ServerLimits) -> int:
    """``limits.max_connections``, lowered to the open-file limit less a reserve (raising the soft limit first).

    The reserve covers the files the server opens itself and one burst of
    :data:`BACKLOG` connections accepted before the cap refuses them.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return limits.max_connections
    return max(1, min(limits.max_connections, soft - _SPARE_FILES))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with connection caps and a header timeout (see the module).

    Use through :func:`uvicorn_config`, which sets the class attributes.
    """

    limits: ServerLimits = ServerLimits()
    cap: int = 1000
    #: client key -> the transports of its open connections (a WebSocket's included: it keeps its transport)
    open_by_client: dict[str, set[asyncio.BaseTransport]] = {}

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_timer: asyncio.TimerHandle | None = None
        self._header_scope: Any = None
        peer = transport.get_extra_info("peername")
        self._client_key = client_key(str(peer[0])) if isinstance(peer, tuple) and peer else "?"
        mine = self.open_by_client.setdefault(self._client_key, set())
        for t in [t for t in mine if t.is_closing()]:
            mine.discard(t)
        if len(self.connections) >= self.cap or len(mine) >= self.limits.connections_per_address:
            self.transport = transport
            _limited(
                "connection refused: %s open connections (%s from %s)",
                len(self.connections),
                len(mine),
                self._client_key,
            )
            transport.write(_BUSY)
            transport.close()
            return
        mine.add(transport)
        super().connection_made(transport)
        self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        self._header_scope = self.scope
        self._header_timer = self.loop.call_later(self.limits.header_timeout, self._headers_late)

    def _headers_late(self) -> None:
        self._header_timer = None
        if (
            self.transport.get_protocol() is self
            and self.scope is self._header_scope
            and not self.transport.is_closing()
        ):
            _limited(
                "closed a connection from %s: no complete request headers in %g s",
                self._client_key,
                self.limits.header_timeout,
            )
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm_header_timer()  # the first byte of a new request: its headers are now due
        super().data_received(data)
        if self._header_timer is not None and self.scope is not self._header_scope:
            self._header_timer.cancel()  # the headers are in
            self._header_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        mine = self.open_by_client.get(getattr(self, "_client_key", "?"))
        if mine is not None:
            mine.discard(self.transport)
            if not mine:
                self.open_by_client.pop(self._client_key, None)
        super().connection_lost(exc)


def uvicorn_config(
    app: Any, *, limits: ServerLimits | None = None, proxy: str | None = None, **options: Any
) -> uvicorn.Config:
    """A ``uvicorn.Config`` serving ``app`` with :class:`GuardedH11Protocol` and the limits.

    Parameters
    ----------
    app : ASGI app
        Its ``state.limits`` (set by :func:`~snlmarkov.web.app.create_app`) are used unless ``limits`` is given.
    limits : ServerLimits, optional
    proxy : str, optional
        The address of a reverse proxy whose ``X-Forwarded-For`` names the
        client; without it the header is ignored (a client could otherwise
        pick its own address and escape every per-address limit).
    **options
        Passed to ``uvicorn.Config`` (``host``, ``port``, ``log_level``...).
    """
    limits = limits or getattr(getattr(app, "state", None), "limits", None) or ServerLimits()
    cap = connection_cap(limits)
    protocol = type("GuardedH11", (GuardedH11Protocol,), {"limits": limits, "cap": cap, "open_by_client": {}})
    quiet_resource_errors()
    settings: dict[str, Any] = {
        "http": protocol,
        "ws_max_size": 16384,
        "ws_per_message_deflate": False,
        "ws_ping_interval": 20.0,
        "ws_ping_timeout": 20.0,
        "limit_concurrency": cap + 1,  # the protocol refuses first; this bounds uvicorn's tasks too
        "timeout_keep_alive": max(1, round(limits.keep_alive)),
        "h11_max_incomplete_event_size": 16384,
        "timeout_graceful_shutdown": 5,
        "backlog": BACKLOG,
        "proxy_headers": proxy is not None,
        "forwarded_allow_ips": proxy or "",
        "log_level": "warning",
        "lifespan": "on",
        "server_header": False,
    }
    settings.update(options)
    return uvicorn.Config(app, **settings)


class _Quiet(logging.Filter):
    """Lets one resource-exhaustion record through every ``every`` seconds, without its traceback."""

    def __init__(self, every: float = 10.0) -> None:
        super().__init__()
        self.every, self.last, self.dropped = every, -1e9, 0

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        text = record.getMessage()
        if not (
            (isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS)
            or "Too many open files" in text
            or "out of system resource" in text
        ):
            return True
        now = time.monotonic()
        if now - self.last < self.every:
            self.dropped += 1
            return False
        self.last = now
        record.msg = f"{text} ({exc}; {self.dropped} more like it in the last {self.every:g} s not logged)"
        record.args, record.exc_info, record.exc_text = (), None, None
        self.dropped = 0
        return True


_QUIET = _Quiet()


def _limited(message: str, *args: Any) -> None:
    """A warning about a refused client, at most one every 10 seconds."""
    now = time.monotonic()
    if now - _LIMITED[0] >= 10.0:
        _LIMITED[0] = now
        log.warning(message, *args)


_LIMITED = [-1e9]


def quiet_resource_errors() -> None:
    """Rate-limit the "Too many open files" records of asyncio, uvicorn and this package (idempotent)."""
    for name in ("asyncio", "uvicorn.error", "snlmarkov.web"):
        logger = logging.getLogger(name)
        if _QUIET not in logger.filters:
            logger.addFilter(_QUIET)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``, or an :class:`~snlmarkov.errors.AddressError` saying why not.

    Examples
    --------
    >>> s = bind("127.0.0.1", 0); s.getsockname()[0]
    '127.0.0.1'
    >>> bind("127.0.0.1", s.getsockname()[1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snlmarkov.errors.AddressError: cannot serve on 127.0.0.1:...: the port is in use (pick another with --port, or 0 for any free one)
    >>> s.close()
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise AddressError(f"--host {host[:80]!r} is not an address of this machine: {exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        why = (
            "the port is in use (pick another with --port, or 0 for any free one)"
            if exc.errno == errno.EADDRINUSE
            else exc.strerror
        )
        raise AddressError(f"cannot serve on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock
