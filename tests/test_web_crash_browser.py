"""The room page when its server goes: killed under a page (the Roll button off, the countdown stopped, the
badge saying it reconnects), restarted on the same port and database (the page says the game is back, and
plays on); and a room that does not exist (said so, with the way back to the lobby). Headless chromium."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("websockets")

from _browser import body, by_id, need_browser, shot, wait  # noqa: E402
from _webserver import Client, create_room  # noqa: E402
from test_web_crash import Serve  # noqa: E402


@pytest.mark.slow  # about a minute of chromium: run in CI's slow step
def test_the_page_when_the_server_goes_and_comes_back(tmp_path, browser):
    need_browser()
    db = tmp_path / "games.sqlite"
    srv = Serve(db)
    try:
        room = create_room(srv.base, kind="online", seats=[{"name": "Ann", "colour": "#e53935", "ai": False}])
        host = Client(srv.base, room["room"])
        host.hello(room["host"])
        host.send(type="add_ai", secret=room["host"], name="Robot 1", colour="#1e88e5")
        host.until(lambda m: m["type"] == "room" and len(m["seats"]) == 2)
        host.send(type="start", secret=room["host"])
        host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
        host.close()
        d = browser()
        d.get(f"{srv.base}/room/{room['room']}?speed=fast#h={room['host']}")
        for _ in range(2):  # two turns played from the page
            wait(lambda: body(d, "canRoll") == "1", what="the Roll button")
            by_id(d, "roll").click()
            wait(lambda: body(d, "canRoll") == "0", what="the roll to be taken")
        wait(lambda: body(d, "canRoll") == "1", what="the Roll button")
        wait(lambda: not by_id(d, "countdown").get_attribute("hidden"), what="the countdown to run")
        srv.kill()
        wait(lambda: body(d, "conn") == "reconnecting", what="the page to see the server gone")
        assert by_id(d, "roll").get_attribute("disabled") and body(d, "canRoll") == "0"
        assert by_id(d, "conn").text.startswith("reconnecting")
        assert by_id(d, "countdown").get_attribute("hidden")  # no countdown ticking for a server that is gone
        assert "lost" in by_id(d, "turn-name").text
        shot(d, "crash-reconnecting.png")
        srv = Serve(db, port=srv.port)
        wait(lambda: "server restarted" in body(d, "notice"), timeout=30, what="the page to say the game is back")
        assert "your game is back" in by_id(d, "notice").text
        wait(lambda: body(d, "canRoll") == "1", what="the Roll button again")
        assert body(d, "conn") == "online"
        by_id(d, "roll").click()
        wait(lambda: body(d, "canRoll") == "0", what="a roll after the restart")
        shot(d, "crash-back.png")
        # a room that is not there: said so, a way back to the lobby, nothing that looks alive
        d.get(f"{srv.base}/room/no-such-room")
        wait(lambda: body(d, "status") == "no_room", what="the page to say the room is gone")
        assert by_id(d, "gone").is_displayed() and by_id(d, "to-lobby").get_attribute("href").endswith("/")
        assert by_id(d, "roll").get_attribute("disabled") and by_id(d, "conn").text == "room closed"
        assert by_id(d, "countdown").get_attribute("hidden")
        shot(d, "crash-no-room.png")
    finally:
        srv.stop()
