"""What one client, and all clients together, may cost the web server: the limits and their checks.

:class:`ServerLimits` holds every limit of the server with its default (each
is listed in ``docs/web.md``); :func:`~snlmarkov.web.app.create_app` takes
one as ``limits=``. :class:`Throttle` counts what each client address spends
(a token bucket per address and kind of action), so that one address cannot
crowd out the others; an IPv6 client is counted by its ``/64`` network,
which one machine usually holds whole.

Examples
--------
>>> t = Throttle(rate=1.0, burst=2.0)
>>> [t.wait("10.0.0.1") for _ in range(3)][:2], t.wait("10.0.0.2")
([0.0, 0.0], 0.0)
>>> 0 < t.wait("10.0.0.1") <= 1.0
True
>>> client_key("2001:db8::1") == client_key("2001:db8::ffff")
True
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import time
from dataclasses import dataclass
from typing import Any

from ..errors import LimitError

__all__ = ["ServerLimits"]

#: addresses a throttle tracks at once; past this the full buckets are forgotten first
_TRACKED = 10_000


@dataclass(frozen=True)
class ServerLimits:
    """Every limit of the web server, with its default.

    Attributes
    ----------
    room_rate, room_burst : float
        Rooms one client address may create a second on average (0.5: 30 a
        minute), and at once (20). Past that ``POST /api/rooms`` answers 429
        with ``Retry-After``.
    rooms_per_address : int
        Rooms not yet over that one address may hold at once (20); 429 past it.
    message_rate, message_burst : float
        WebSocket messages a second all the connections of one address may
        send together on average (40), and in a burst (80); each connection
        also has its own limit (``rate``/``burst`` of ``create_app``).
    connections_per_address : int
        Open TCP connections (pages, API calls and WebSockets) of one address (32).
    max_connections : int
        Open connections of all clients (1000, and never more than the
        process's open-file limit less 64).
    header_timeout : float
        Seconds a connection has to send a request's headers completely (10),
        counted from the connection or from its first byte after a response.
    body_timeout : float
        Seconds to send the body of ``POST /api/rooms`` (10).
    keep_alive : float
        Seconds an idle kept-alive HTTP connection stays open (5).
    hello_timeout : float
        Seconds a new WebSocket has to send its ``hello`` (10).
    idle_timeout : float
        Seconds a WebSocket may go without a message either way (600).
    odds_workers : int
        Threads that solve live odds (1), apart from the ones writing games.
    odds_queue : int
        Different odds tables waiting to be solved at once (4); a game
        started past that plays without odds (``method: "busy"``).
    odds_cache_bytes : int
        Memory the solved odds tables may hold together (256 MiB); the least
        recently used go first.
    """

    room_rate: float = 0.5
    room_burst: float = 20.0
    rooms_per_address: int = 20
    message_rate: float = 40.0
    message_burst: float = 80.0
    connections_per_address: int = 32
    max_connections: int = 1000
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    keep_alive: float = 5.0
    hello_timeout: float = 10.0
    idle_timeout: float = 600.0
    odds_workers: int = 1
    odds_queue: int = 4
    odds_cache_bytes: int = 256 * 2**20

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kind = int if f.type in ("int", int) else float
            if type(value) is bool or not isinstance(value, (int, float)) or not value > 0:
                raise LimitError(f"ServerLimits.{f.name} must be a positive number; got {value!r}")
            if kind is int and not isinstance(value, int):
                raise LimitError(f"ServerLimits.{f.name} must be an integer; got {value!r}")
            if value > 10**12:
                raise LimitError(f"ServerLimits.{f.name} must be at most 10**12; got {value!r}")

    def replace(self, **changes: Any) -> ServerLimits:
        """A copy with some limits changed (checked again)."""
        return dataclasses.replace(self, **changes)


@functools.lru_cache(maxsize=4096)  # asked at every message a connection sends: parsed once an address
def client_key(address: str) -> str:
    """The key a client address is counted under: the address itself, or its ``/64`` for IPv6."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class Throttle:
    """One token bucket per client address: ``rate`` actions a second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = float(rate), float(burst)
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def wait(self, address: str) -> float:
        """Take one token for ``address``: 0.0 if it had one, else the seconds until it will."""
        key, now = client_key(address), time.monotonic()
        tokens, at = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if tokens >= 1:
            self._buckets[key] = (tokens - 1, now)
            if len(self._buckets) > _TRACKED:
                self._forget(now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1 - tokens) / self.rate

    def _forget(self, now: float) -> None:
        """Drop the buckets that have filled up again (they hold nothing an absent entry does not)."""
        full = [k for k, (t, at) in self._buckets.items() if t + (now - at) * self.rate >= self.burst]
        for k in full:
            del self._buckets[k]
        while len(self._buckets) > _TRACKED:  # still too many: the oldest go
            del self._buckets[next(iter(self._buckets))]
