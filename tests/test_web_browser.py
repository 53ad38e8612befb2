"""The web game in a real browser: headless Debian chromium driven by Selenium.

One pass & play game and one two-browser online room are played to the result
screen by clicking the page's own buttons; the test checks what the page shows
(the seats, the odds bars, the finishing order) against the server's record,
and saves screenshots under ``test-artifacts/`` (or ``$SNL_ARTIFACTS``). The
browsers and the waits are tests/_browser.py's.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("starlette")
from _browser import all_css, body, by_id, need_browser, open_page, page_texts, shot, wait  # noqa: E402
from _webserver import ServerThread  # noqa: E402

from snlmarkov import Board, verify_game  # noqa: E402
from snlmarkov.web.app import create_app  # noqa: E402
from snlmarkov.web.store import GameStore  # noqa: E402

TINY = Board(25, {3: 11, 17: 4, 20: 24, 22: 9}, name="tiny")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_browser()
    store = GameStore(tmp_path_factory.mktemp("webb") / "games.sqlite")
    srv = ServerThread(create_app(store=store, boards={"tiny": TINY}, countdown=20, ai_delay=0.05)).start()
    srv.store = store
    yield srv
    srv.stop()
    store.close()


def play_until_result(drivers, timeout=180.0):
    """Click each page's Roll button whenever it is enabled, until every page shows the result."""
    end, odds_seen = time.monotonic() + timeout, []
    while time.monotonic() < end:
        if all(body(d, "result") == "shown" for d in drivers):
            return odds_seen
        for d in drivers:
            if body(d, "canRoll") == "1":
                texts = page_texts(d, ".seat-card .odds-text")  # read in one go: the page may redraw them
                if texts:
                    odds_seen.append(texts)
                by_id(d, "roll").click()
        time.sleep(0.03)
    raise AssertionError("the game did not reach the result screen")


def result_names(d):
    return page_texts(d, "#result-order li .seat-name")


def test_pass_and_play_in_the_browser(server, browser):
    d = browser()
    open_page(d, server.base + "/?speed=fast")
    by_id(d, "mode-pass").click()
    names = all_css(d, "input.seat-name")
    assert len(names) == 2
    for box, name in zip(names, ("Ann", "Bob")):
        box.clear()
        box.send_keys(name)
    by_id(d, "add-seat").click()
    third = all_css(d, "input.seat-name")[2]
    third.clear()
    third.send_keys("Cy")
    all_css(d, ".seat-row[data-seat='2'] .swatch")[4].click()  # purple
    all_css(d, "input[name=mode][value=last_one_standing]")[0].find_element("xpath", "..").click()
    shot(d, "pass-home.png")
    by_id(d, "start").click()
    wait(lambda: body(d, "status") == "playing", what="the game to start")
    cards = wait(lambda: page_texts(d, ".seat-card .seat-name"), what="the seat cards")
    assert cards == ["Ann", "Bob", "Cy"]
    odds = d.execute_script(
        "return [...document.querySelectorAll('.seat-card .odds-text')].map(e => Number(e.dataset.odds))"
    )
    assert len(odds) == 3 and abs(sum(odds) - 1) < 1e-9 and odds[0] > odds[2]  # the first seat is ahead
    # play a few turns, look at the board, then to the end
    for _ in range(4):
        wait(lambda: body(d, "canRoll") == "1" or body(d, "result") == "shown", what="a roll")
        if body(d, "result") == "shown":
            break
        by_id(d, "roll").click()
    time.sleep(0.3)
    shot(d, "pass-game.png")
    seen = play_until_result([d])
    assert all(len(texts) == 3 and all(t.endswith("%") for t in texts) for texts in seen)
    shot(d, "pass-result.png")
    # the page's finishing order is the server's
    game = server.store.games()[-1]
    record = server.store.record(game.id)
    assert record.mode == "last_one_standing" and verify_game(record).passed
    expected = [record.seats[i].name for i in record.finishing_order]
    assert result_names(d) == expected and sorted(expected) == ["Ann", "Bob", "Cy"]
    assert "wins" in by_id(d, "result-title").text and expected[0] in by_id(d, "result-title").text
    assert record.seats[2].colour == "#8e24aa"


def test_online_room_with_two_browsers(server, browser):
    host, guest = browser(), browser()
    open_page(host, server.base + "/?speed=fast")
    by_id(host, "mode-online").click()
    box = all_css(host, "input.seat-name")[0]
    box.clear()
    box.send_keys("Hosty")
    by_id(host, "start").click()  # "Create Room"
    link = wait(lambda: by_id(host, "share-link").get_attribute("value"), what="the invite link")
    assert "/room/" in link
    guest.get(link + "?speed=fast")
    wait(lambda: by_id(guest, "join").is_displayed(), what="the join form")
    by_id(guest, "join-name").send_keys("Guest")
    by_id(guest, "join-btn").click()
    wait(lambda: len(page_texts(host, "#lobby-seats li")) == 2, what="the guest in the host's lobby")
    assert page_texts(host, "#lobby-seats .seat-name") == ["Hosty", "Guest"]
    shot(host, "online-lobby.png")
    assert by_id(guest, "host-panel").is_displayed() is False  # only the host picks the rules
    all_css(host, "input[name=lmode][value=classic]")[0].find_element("xpath", "..").click()
    by_id(host, "start").click()
    for d in (host, guest):
        wait(lambda d=d: body(d, "status") == "playing", what="the online game to start")
    play_until_result([host, guest])
    shot(host, "online-result-host.png")
    shot(guest, "online-result-guest.png")
    record = server.store.record(server.store.games()[-1].id)
    assert [s.name for s in record.seats] == ["Hosty", "Guest"] and record.mode == "classic"
    winner = record.seats[record.winner].name
    for d in (host, guest):
        names = result_names(d)
        assert names[0] == winner and sorted(names) == ["Guest", "Hosty"]
    assert verify_game(record).passed


def test_the_house_rules_pick_a_die_and_the_room_shows_it(server, browser):
    """A named die and a custom text form, chosen in the form; the room's header names the die."""
    from selenium.webdriver.support.ui import Select

    d = browser()
    open_page(d, server.base + "/?speed=fast")
    by_id(d, "mode-pass").click()
    die = Select(all_css(d, "select[data-rule=die]")[0])
    labels = [o.text for o in die.options]
    assert labels[0] == "Fair die 1-6" and "Two dice summed, 2-12" in labels and labels[-1] == "Custom…"
    custom = all_css(d, "input[data-rule-custom=die]")[0]
    assert not custom.is_displayed()
    die.select_by_visible_text("Custom…")
    assert custom.is_displayed()
    custom.send_keys("faces:1,2,2")
    shot(d, "die-home.png")
    by_id(d, "start").click()
    wait(lambda: body(d, "status") == "playing", what="the game to start")
    assert wait(lambda: by_id(d, "room-info").text).endswith("die: weights:1=1,2=2")
    open_page(d, server.base + "/?speed=fast")
    by_id(d, "mode-pass").click()
    Select(all_css(d, "select[data-rule=die]")[0]).select_by_visible_text("Fair die 1-4")
    by_id(d, "start").click()
    wait(lambda: body(d, "status") == "playing", what="the game to start")
    assert wait(lambda: by_id(d, "room-info").text).endswith("die: Fair die 1-4")
    shot(d, "die-room.png")


def test_choose_the_die_against_an_optimal_ai_with_the_coach(server, browser):
    """House rules "choose the die" (d4 or d6) against an optimal AI seat: die buttons, the coach's line, its setting."""
    d = browser()
    open_page(d, server.base + "/?speed=fast")
    by_id(d, "mode-ai").click()
    assert all_css(d, "select.seat-strength")[0].get_attribute("value") == "optimal"
    for spec in ("d4", "d6"):
        all_css(d, f"input[data-rule-die=choose_die][value={spec}]")[0].click()
    by_id(d, "start").click()
    wait(lambda: body(d, "status") == "playing", what="the game to start")
    assert "choose the die: d6 or d4" in wait(lambda: by_id(d, "room-info").text)  # the form's order
    assert "AI · optimal" in page_texts(d, ".seat-card[data-seat='1'] .badge")
    # every roll of Ann's is a die button: the d4 first (the coach marks it), then by the keyboard
    picks = 0
    end = time.monotonic() + 180
    while body(d, "result") != "shown" and time.monotonic() < end:
        if body(d, "canChoose") == "1":
            buttons = all_css(d, "#choices button:not([disabled])")
            if buttons:
                assert [b.text for b in buttons] == ["Roll the d6", "Roll the d4"]
                if picks == 0:
                    buttons[1].click()
                else:
                    buttons[0].send_keys("1")  # key 1: the d6
                picks += 1
                if picks == 1:
                    line = wait(lambda: by_id(d, "coach").text, what="the coach's line")
                    assert line.startswith("Picking the d4") or "d4 on 0 was the best choice" in line
                    shot(d, "choice-coach.png")
        time.sleep(0.03)
    assert body(d, "result") == "shown" and picks >= 1
    record = server.store.record(server.store.games()[-1].id)
    assert record.rules.choice == "die" and verify_game(record).passed
    coach_lines = page_texts(d, "#log li.log-coach")
    assert any("Robot 1" in t and "best choice" in t for t in coach_lines)  # the optimal seat's choices
    # the setting hides the coach, and this browser keeps it
    by_id(d, "see-board").click()
    by_id(d, "coach-on").click()
    assert not by_id(d, "coach").is_displayed()
    assert d.execute_script("return localStorage.getItem('snl:coach')") == "off"
    assert not any(e.is_displayed() for e in all_css(d, "#log li.log-coach"))
