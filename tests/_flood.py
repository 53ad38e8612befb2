"""A hostile client for the abuse tests, run as its own process: ``python tests/_flood.py PORT SOURCE SECONDS``.

From the loopback address ``SOURCE`` (e.g. 127.0.0.2, so the server counts it
apart from the test's own client on 127.0.0.1) it floods the server on
127.0.0.1:PORT for ``SECONDS`` seconds, then stops by itself and prints one
JSON line of counts:

- room creation: ``POST /api/rooms`` as fast as it can (``rooms``: answers by status);
- messages: a WebSocket sending ``ping`` without pause, reconnecting when
  closed (``sent``, ``rate_limited`` errors, ``closed`` by the server);
- slow headers: ``SLOW`` sockets (default 60) that send a request line and
  then one header byte a second (``slow_open`` at the end, ``slow_refused``).

Loopback only, bounded in time and in sockets.
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import threading
import time
from collections import Counter

from websockets.sync.client import connect

SEATS = [{"name": "A", "colour": "#e53935"}, {"name": "B", "colour": "#1e88e5"}]


def post_room(port: int, source: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(source, 0))
    try:
        body = json.dumps({"kind": "local", "seats": SEATS})
        conn.request("POST", "/api/rooms", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"{}")
    finally:
        conn.close()


def flood_rooms(port: int, source: str, until: float, out: Counter) -> None:
    while time.monotonic() < until:
        try:
            status, _ = post_room(port, source)
            out[f"rooms_{status}"] += 1
        except OSError:
            out["rooms_error"] += 1
            time.sleep(0.01)


def flood_messages(port: int, source: str, room: str, until: float, out: Counter) -> None:
    while time.monotonic() < until:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
        try:
            with connect(f"ws://127.0.0.1:{port}/ws/{room}", sock=sock, open_timeout=5) as ws:
                ws.send(json.dumps({"type": "hello"}))
                while time.monotonic() < until:
                    for _ in range(50):
                        ws.send('{"type": "ping"}')
                        out["sent"] += 1
                    try:
                        while True:
                            m = json.loads(ws.recv(timeout=0))
                            if m.get("code") == "rate_limited":
                                out["rate_limited"] += 1
                    except TimeoutError:
                        pass
        except Exception:  # closed by the server (too many messages) or refused
            out["closed"] += 1
            time.sleep(0.05)
        finally:
            sock.close()


def slow_headers(port: int, source: str, until: float, count: int, out: Counter) -> None:
    socks = []
    for _ in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            s.setblocking(False)
            socks.append(s)
        except OSError:
            out["slow_refused"] += 1
    while time.monotonic() < until:
        for s in list(socks):
            try:
                data = s.recv(4096)
                if data == b"" or data.startswith(b"HTTP/1.1 503"):
                    raise ConnectionResetError
            except BlockingIOError:
                try:
                    s.send(b"X")
                except OSError:
                    socks.remove(s)
                    s.close()
                    out["slow_closed"] += 1
                continue
            except OSError:
                pass
            socks.remove(s)
            s.close()
            out["slow_closed"] += 1
        time.sleep(1.0)
    out["slow_open"] = len(socks)
    for s in socks:
        s.close()


def main() -> None:
    port, source, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    slow = int(sys.argv[4]) if len(sys.argv) > 4 else 60
    until = time.monotonic() + seconds
    out: Counter = Counter()
    status, room = post_room(port, source)
    out[f"rooms_{status}"] += 1
    threads = [
        threading.Thread(target=flood_rooms, args=(port, source, until, out)),
        threading.Thread(target=flood_messages, args=(port, source, room.get("room", "none"), until, out)),
        threading.Thread(target=slow_headers, args=(port, source, until, slow, out)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    print(json.dumps(dict(out)), flush=True)


if __name__ == "__main__":
    main()
