"""Helpers for the web tests: a real uvicorn server on a loopback port, and a WebSocket client.

The server runs in a thread of the test process (``ServerThread``) or as a
``snlmarkov serve`` subprocess (``free_port``); clients are the ``websockets``
package's synchronous client (uvicorn already needs ``websockets`` for its
WebSocket protocol, so the tests add no dependency).
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
import urllib.request
from typing import Any

import uvicorn
from websockets.sync.client import connect

from snlmarkov.web.limits import ServerLimits
from snlmarkov.web.serving import uvicorn_config

#: limits loose enough for tests that play fast from one address (the limits have their own tests)
ROOMY = ServerLimits(message_rate=5000, message_burst=5000, room_rate=1000, room_burst=1000, rooms_per_address=1000)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """``uvicorn`` serving ``app`` on 127.0.0.1 and an ephemeral port, in a thread (as ``snlmarkov serve`` does)."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.app = app
        self.server = uvicorn.Server(uvicorn_config(app))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def rooms(self) -> Any:
        return self.app.state.rooms

    def start(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        self.sock.close()


def http(base: str, path: str, body: Any = None, *, raw: bytes | None = None) -> tuple[int, Any]:
    """GET (or POST ``body`` as JSON) and return (status, decoded JSON or text)."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method="POST" if data is not None else "GET")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def create_room(base: str, **body: Any) -> dict:
    status, data = http(base, "/api/rooms", body)
    assert status == 200, data
    return data


class Client:
    """One browser's WebSocket: sends messages, reads them, checks the sequence numbers."""

    def __init__(self, base: str, room: str) -> None:
        self._cm = connect(base.replace("http", "ws") + f"/ws/{room}", open_timeout=10, max_size=2**22)
        self.ws = self._cm.__enter__()
        self.seqs: list[int] = []
        self.messages: list[dict] = []
        self.errors: list[dict] = []

    def send(self, **msg: Any) -> None:
        self.ws.send(json.dumps(msg))

    def send_raw(self, data: str | bytes) -> None:
        self.ws.send(data)

    def recv(self, timeout: float = 10.0) -> dict:
        msg = json.loads(self.ws.recv(timeout=timeout))
        if "seq" in msg and msg["type"] != "welcome":
            self.seqs.append(msg["seq"])
        if msg["type"] == "welcome":
            self.seqs = [msg["seq"]]
        if msg["type"] == "error":
            self.errors.append(msg)
        self.messages.append(msg)
        return msg

    def until(self, pred: Any, timeout: float = 20.0) -> dict:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching message")
            msg = self.recv(left)
            if pred(msg):
                return msg

    def hello(self, secret: str | None = None) -> dict:
        self.send(**({"type": "hello"} if secret is None else {"type": "hello", "secret": secret}))
        return self.until(lambda m: m["type"] in ("welcome", "error"))

    def error(self, timeout: float = 10.0) -> dict:
        return self.until(lambda m: m["type"] == "error", timeout)

    def seq_ok(self) -> bool:
        """Every broadcast arrived once, in order."""
        return self.seqs == list(range(self.seqs[0], self.seqs[0] + len(self.seqs)))

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


#: seconds a server may take to start: generous, as it only guards against a hang (on two cores at a load
#: of 9 a start took 25 s of wall time for 2.6 s of CPU)
START_WAIT = 120


def wait_started(base: str, proc: subprocess.Popen) -> None:
    """Wait for ``snlmarkov serve`` run as ``proc`` to answer on ``base`` (an error if it exits or hangs)."""
    deadline = time.monotonic() + START_WAIT
    while True:
        try:
            if http(base, "/api/config")[0] == 200:
                return
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError(f"the server did not start (exit status {proc.poll()})")
        time.sleep(0.05)
