"""The served app keeps its start-up objects out of the cyclic garbage collector's walks (docs/web.md)."""

from __future__ import annotations

import gc

import pytest

pytest.importorskip("starlette")
from _webserver import ServerThread, http  # noqa: E402

from snlmarkov.cli import main  # noqa: E402
from snlmarkov.web import app as web_app  # noqa: E402


def test_a_served_app_freezes_what_start_up_left_and_lets_go_at_shutdown():
    assert gc.get_freeze_count() == 0
    server = ServerThread(web_app.create_app(ai_delay=0.0, freeze_gc=True)).start()
    try:
        assert gc.get_freeze_count() > 10_000  # the modules, classes and functions imported: tens of thousands
        assert http(server.base, "/api/config")[0] == 200  # the app serves as before
        garbage: list = [[]]
        garbage[0].append(garbage)  # a cycle made after start-up is still collected
        del garbage
        assert gc.collect() >= 2
    finally:
        server.stop()
    assert gc.get_freeze_count() == 0  # unfrozen once the app has shut down


def test_an_app_leaves_the_collector_alone_by_default():
    server = ServerThread(web_app.create_app(ai_delay=0.0)).start()
    try:
        assert http(server.base, "/api/config")[0] == 200
        assert gc.get_freeze_count() == 0
    finally:
        server.stop()


def test_serve_asks_for_the_freeze(monkeypatch, tmp_path):
    seen = {}
    real = web_app.create_app

    def spy(**kwargs):
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(web_app, "create_app", spy)
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)  # served, and stopped at once
    assert main(["serve", "--port", "0", "--db", str(tmp_path / "g.sqlite")]) == 0
    assert seen["freeze_gc"] is True
