"""The game pages in a real browser (headless Debian chromium, Selenium), at 1280 and 400 px.

The archive, a stored game's page (the replay shows ``record.states()[k]``,
the graph's values are ``Odds.timeline``), an uploaded record (a hostile file
is refused with a message), the end of a live game ("see the analysis",
rematch), and the rough edges of the room and home pages. Every page is
screenshotted under ``test-artifacts/`` and checked for controls whose
rectangles intersect. Waits are for conditions, each bounded.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("starlette")
from _browser import ARTIFACTS, all_css, body, by_id, need_browser, open_page, page_texts, ready, wait  # noqa: E402
from _webserver import Client, ServerThread, create_room, http  # noqa: E402

from snlmarkov import Board, Game, Odds, Rules  # noqa: E402
from snlmarkov.web.app import create_app  # noqa: E402
from snlmarkov.web.games import MAX_UPLOAD_BYTES  # noqa: E402
from snlmarkov.web.store import GameStore  # noqa: E402

TINY = Board(25, {3: 11, 17: 4, 20: 24, 22: 9}, name="tiny")
JUNGLE = Board.builtin()
WIDTHS = [1280, 400]
#: what a page shows as controls: none of these may cover another
CONTROLS = (
    "button, a.btn, a.nav-link, input, select, .verdict, .board-svg, .chart-svg, .seat-card, .game-row, .home-link"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    need_browser()
    store = GameStore(tmp_path_factory.mktemp("pages") / "games.sqlite")
    ids = [
        store.add(Game(JUNGLE, Rules(), players=["Ann", "Bob"], rng=29).play()),
        store.add(
            Game(JUNGLE, Rules(), players=["Player 1", "Player 2", "Cy"], mode="last_one_standing", rng=5).play()
        ),
        store.add(Game(TINY, Rules.preset("plain"), players=["Robot 1", "Robot 2"], rng=2).play()),
    ]
    srv = ServerThread(
        create_app(
            store=store, boards={"tiny": TINY, "jungle": JUNGLE}, countdown=20, ai_delay=0.02, rate=500, burst=500
        )
    ).start()
    srv.store = store
    srv.records = {gid: store.record(gid) for gid in ids}
    yield srv
    srv.stop()
    store.close()


def full_shot(d, name):
    """A screenshot of the whole page (the window grown to the page's height, at most 4000 px)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    width = d.execute_script("return window.innerWidth")
    height = min(4000, d.execute_script("return document.documentElement.scrollHeight"))
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    d.save_screenshot(str(ARTIFACTS / name))


def overlaps(d, css=CONTROLS):
    """Pairs of visible elements matching ``css`` (neither inside the other) whose rectangles intersect."""
    return d.execute_script(
        """
        const els = [...document.querySelectorAll(arguments[0])].filter((e) => {
          const r = e.getBoundingClientRect(), s = getComputedStyle(e);
          return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && !e.closest("[hidden]");
        });
        const out = [];
        for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
          const a = els[i], b = els[j];
          if (a.contains(b) || b.contains(a)) continue;
          const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
          const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
          const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
          if (w > 1 && h > 1) out.push([a.id || a.className || a.tagName, b.id || b.className || b.tagName]);
        }
        return out;""",
        css,
    )


def token_squares(d):
    """Each seat's square as the board draws it, in seat order (the moving token is drawn last)."""
    return d.execute_script(
        "return [...document.querySelectorAll('#board .token')]"
        ".sort((a, b) => a.dataset.seat - b.dataset.seat).map(t => Number(t.dataset.square))"
    )


# ------------------------------------------------------------------ archive
@pytest.mark.parametrize("width", WIDTHS)
def test_archive(site, browser, width):
    d = browser(width)
    d.get(site.base + "/games")
    ready(d)
    ids = [
        int(x) for x in d.execute_script("return [...document.querySelectorAll('#games li')].map(l => l.dataset.game)")
    ]
    assert ids == sorted(site.records, reverse=True)
    rows = page_texts(d, "#games li .gl-winner")
    assert rows[-1].endswith(site.records[ids[-1]].seats[site.records[ids[-1]].winner].name)
    assert overlaps(d) == []
    full_shot(d, f"pages-archive-{width}.png")
    by_id(d, "f-player").send_keys("cy")
    by_id(d, "f-apply").click()
    wait(lambda: len(all_css(d, "#games li")) == 1 and "cy" in d.current_url, 30, "the player filter")
    assert "Cy" in all_css(d, "#games li")[0].text
    all_css(d, "#f-mode option[value=classic]")[0].click()
    wait(lambda: body(d, "ready") == "1" and "No stored game" in by_id(d, "games-summary").text, 30, "no game")
    d.get(site.base + "/games?rules=plain")
    ready(d)
    assert [
        int(x) for x in d.execute_script("return [...document.querySelectorAll('#games li')].map(l => l.dataset.game)")
    ] == [3]
    all_css(d, "#games li a")[0].click()
    wait(lambda: d.current_url.split("#")[0].endswith("/games/3"), 30, "the game page")


# ------------------------------------------------------------------ a game's page
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("game_id", [1, 2])
def test_game_page(site, browser, width, game_id, tmp_path):
    record = site.records[game_id]
    states = record.states()
    n = len(record.turns())
    d = browser(width)
    d.get(site.base + f"/games/{game_id}")
    ready(d)
    assert int(body(d, "turn")) == n  # a game's page opens on the final position
    assert token_squares(d) == list(states[n].positions)
    # the graph draws Odds.timeline, seat by seat
    timeline = Odds(record.board, record.rules, players=len(record.seats), mode=record.mode).timeline(record)
    expected = timeline.win if record.mode == "classic" else timeline.expected_place
    drawn = d.execute_script("return [...document.querySelectorAll('#chart .chart-line')].map(p => p.dataset.values)")
    assert len(drawn) == len(record.seats)
    np.testing.assert_allclose(np.array([json.loads(v) for v in drawn]).T, expected, rtol=0, atol=1e-12)
    # the replay shows record.states()[k]: the slider, the arrow keys, the buttons
    for k in (0, 1, n // 2, n - 1, n):
        d.execute_script(
            "const s = document.getElementById('r-slider'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input', {bubbles: true}))",
            k,
        )
        wait(lambda k=k: body(d, "turn") == str(k), 10, f"turn {k}")
        assert token_squares(d) == list(states[k].positions), k
    from selenium.webdriver.common.keys import Keys

    by_id(d, "r-first").click()
    page = all_css(d, "body")[0]
    for k in (1, 2, 3):
        page.send_keys(Keys.ARROW_RIGHT)
        wait(lambda k=k: body(d, "turn") == str(k), 10, f"turn {k} by the arrow key")
        assert token_squares(d) == list(states[k].positions)
    page.send_keys(Keys.ARROW_LEFT)
    wait(lambda: body(d, "turn") == "2", 10, "back one turn")
    by_id(d, "r-next").click()
    wait(lambda: body(d, "turn") == "3", 10, "the next button")
    page.send_keys(Keys.END)
    wait(lambda: body(d, "turn") == str(n), 10, "the end")
    assert token_squares(d) == list(states[n].positions)
    # the swings, the luck, the verdict, the record, the notebook
    odds = Odds(record.board, record.rules, players=len(record.seats), mode=record.mode)
    stories = [s.story(record.mode) for s in odds.swings(record, top=3)]
    assert page_texts(d, "#swings li") == [f"{i + 1}{s}" for i, s in enumerate(stories)]
    all_css(d, "#swings li button")[0].click()
    first = odds.swings(record, top=1)[0]
    wait(lambda: body(d, "turn") == str(first.turn + 1), 10, "the swing's turn")
    assert len(all_css(d, "#luck tr[data-seat]")) == len(record.seats)
    assert by_id(d, "verdict").text == "✔ follows the rules"
    assert by_id(d, "signature").text == "✔ signed by this server"
    assert by_id(d, "download").get_attribute("href").endswith(f"/api/games/{game_id}/record")
    assert overlaps(d) == []
    full_shot(d, f"pages-game{game_id}-{width}.png")
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    by_id(d, "notebook-btn").click()
    code = wait(lambda: by_id(d, "notebook-code").text, 10, "the notebook snippet")
    assert "GameRecord.from_json" in code and f"snl-game-{game_id}.json" in code and "Odds(" in code
    assert overlaps(d, ".notebook-card button, .notebook-card pre") == []
    by_id(d, "notebook-close").click()
    # the snippet runs, on the downloaded record, and tells the same swings
    import contextlib
    import io
    import os

    import matplotlib

    matplotlib.use("Agg")
    here = os.getcwd()
    out = io.StringIO()
    try:
        os.chdir(tmp_path)
        (tmp_path / f"snl-game-{game_id}.json").write_text(record.to_json())
        with contextlib.redirect_stdout(out):
            exec(compile(code, "snippet", "exec"), {})  # noqa: S102 - the page's own text, run as a reader would
    finally:
        os.chdir(here)
        import matplotlib.pyplot as plt

        plt.close("all")
    assert [line for line in out.getvalue().splitlines() if " on turn " in line] == stories


def test_game_page_of_a_missing_game(site, browser):
    d = browser(1280)
    d.get(site.base + "/games/999")
    wait(lambda: by_id(d, "load-error").is_displayed(), 30, "the error")
    assert "no stored game" in by_id(d, "load-error").text


# ------------------------------------------------------------------ upload
@pytest.mark.parametrize("width", WIDTHS)
def test_upload(site, browser, width, tmp_path):
    d = browser(width)
    d.get(site.base + "/games/upload")
    wait(lambda: by_id(d, "upload").is_displayed(), 30, "the upload form")
    hostile = tmp_path / "hostile.json"
    hostile.write_text('{"format": 1, "board": {"size": 10}, "rules": {}, "seats": [], "mode": "classic"}')
    by_id(d, "upload-file").send_keys(str(hostile))
    wait(lambda: by_id(d, "upload-error").is_displayed(), 30, "the refusal")
    assert "game record" in by_id(d, "upload-error").text and not by_id(d, "analysis").is_displayed()
    full_shot(d, f"pages-upload-refused-{width}.png")
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (MAX_UPLOAD_BYTES + 1))
    by_id(d, "upload-file").send_keys(str(huge))
    wait(lambda: "over the limit" in by_id(d, "upload-error").text, 30, "the size refusal")
    record = Game(JUNGLE, Rules(), players=["Uma", "Vic"], rng=11).play()
    good = tmp_path / "uma.json"
    good.write_text(record.to_json())
    before = site.store.count()
    by_id(d, "upload-file").send_keys(str(good))
    wait(lambda: by_id(d, "analysis").is_displayed() and body(d, "ready") == "1", 60, "the analysis")
    assert not by_id(d, "upload-error").is_displayed()
    assert "not stored" in by_id(d, "gp-facts").text and site.store.count() == before
    assert token_squares(d) == list(record.states()[-1].positions)
    assert overlaps(d) == []
    full_shot(d, f"pages-upload-{width}.png")


# ------------------------------------------------------------------ the end of a live game
def _play_to_result(d, timeout=120.0):
    wait(lambda: body(d, "status") == "playing", 30, "the game to start")

    def step():
        if body(d, "result") == "shown":
            return True
        if body(d, "canRoll") == "1":
            by_id(d, "roll").click()
        return False

    wait(step, timeout, "the result screen")


@pytest.mark.parametrize("width", [1280, pytest.param(400, marks=pytest.mark.slow)])  # the phone width: -m slow
def test_analysis_link_and_rematch(site, browser, width):
    d = browser(width)
    open_page(d, site.base + "/?speed=fast")
    by_id(d, "mode-ai").click()
    by_id(d, "add-seat").click()
    all_css(d, "#board option[value=tiny]")[0].click()
    by_id(d, "start").click()
    _play_to_result(d)
    labels = page_texts(d, ".seat-card .seat-dot")
    assert labels == ["P1", "R1", "R2"]  # "Player 1", "Robot 1", "Robot 2": every token its own label
    tokens = d.execute_script(
        "return [...document.querySelectorAll('#board .token')]"
        ".sort((a, b) => a.dataset.seat - b.dataset.seat).map(t => t.textContent)"
    )
    assert tokens == labels
    link = wait(
        lambda: by_id(d, "see-analysis").is_displayed() and by_id(d, "see-analysis").get_attribute("href"),
        30,
        "the link",
    )
    game_id = site.store.games()[-1].id
    assert link.endswith(f"/games/{game_id}")
    assert overlaps(d, ".result-card .btn") == []
    full_shot(d, f"pages-result-{width}.png")
    old_room = d.current_url.split("/room/")[1].split("?")[0]
    by_id(d, "rematch").click()
    wait(lambda: "/room/" in d.current_url and old_room not in d.current_url, 30, "the rematch room")
    wait(lambda: body(d, "status") == "playing", 30, "the rematch to start")
    new_room = site.rooms.rooms[d.current_url.split("/room/")[1].split("?")[0].split("#")[0]]
    old = site.rooms.rooms[old_room]
    assert [(s.name, s.colour, s.ai) for s in new_room.seats] == [(s.name, s.colour, s.ai) for s in old.seats]
    assert (new_room.board_name, new_room.rules, new_room.mode) == ("tiny", old.rules, old.mode)
    wait(lambda: body(d, "canRoll") == "1", 30, "the rematch's first roll")  # the secrets came along
    d.get(link)
    ready(d)
    assert by_id(d, "gp-winner").text.endswith("wins")


# ------------------------------------------------------------------ the rough edges
@pytest.mark.parametrize("width", WIDTHS)
def test_house_rules_form(site, browser, width):
    d = browser(width)
    open_page(d, site.base + "/?mode=pass")
    wait(lambda: all_css(d, ".rules-grid .rule"), 30, "the rules form")
    parts = (
        ".rules-grid .rule > span:not(.switch), .rules-grid select, .rules-grid input[type=number], .rules-grid .switch"
    )
    assert overlaps(d, parts) == []
    assert overlaps(d, ".rules-grid .rule") == []
    assert (
        overlaps(d, "#setup button, #setup input:not([type=radio]):not([type=checkbox]), #setup select, #setup .pill")
        == []
    )
    full_shot(d, f"pages-home-rules-{width}.png")
    # every seat's token its own label, whatever the names
    for names, labels in (
        (["Robot 1", "Robot 2", "Player 1"], ["R1", "R2", "P1"]),
        (["Ann", "Amy", "Bob"], ["An", "Am", "B"]),
        (["Ann", "Ann", "A2"], None),  # records may repeat a name
        (["Mary Jane", "Mark Jones", "M"], None),
    ):
        got = d.execute_script("return SNL.tokenLabels(arguments[0].map((name) => ({name})))", names)
        assert len(set(got)) == len(got) and all(0 < len(t) <= 2 for t in got), (names, got)
        assert labels is None or got == labels, (names, got)
    room = create_room(site.base, kind="online", seats=[{"name": "Hosty", "colour": "#e53935", "ai": False}])
    d.get(site.base + f"/room/{room['room']}#h={room['host']}")  # the host's lobby: the same form, narrower
    wait(lambda: by_id(d, "host-panel").is_displayed(), 30, "the host's panel")
    d.execute_script("document.querySelector('#lobby details.house-rules').open = true")
    wait(lambda: all_css(d, "#lrules .rules-grid .rule")[0].is_displayed(), 10, "the house rules")
    assert overlaps(d, parts) == [] and overlaps(d, ".rules-grid .rule") == []
    assert overlaps(d, "#lobby button, #lobby input, #lobby select, #lobby .pill") == []


@pytest.mark.parametrize("width", WIDTHS)
def test_guests_see_the_rules_and_the_phone_layout(site, browser, width):
    room = create_room(site.base, kind="online", seats=[{"name": "Hosty", "colour": "#e53935", "ai": False}])
    host = Client(site.base, room["room"])
    host.hello(room["host"])
    host.send(
        type="configure",
        secret=room["host"],
        board="tiny",
        mode="last_one_standing",
        rules={"finish": "bounce", "bump": True},
    )
    host.until(lambda m: m["type"] == "room" and m["rules"]["bump"])
    d = browser(width)
    d.get(site.base + f"/room/{room['room']}")
    wait(lambda: by_id(d, "lobby-rules").is_displayed(), 30, "the table's rules")
    rules = by_id(d, "lobby-rules").text
    assert "Exact finish: bounce back" in rules and "Last One Standing" in rules and "tiny" in rules
    assert not by_id(d, "host-panel").is_displayed()
    full_shot(d, f"pages-lobby-guest-{width}.png")
    host.send(type="add_ai", secret=room["host"], name="Robot 1", colour="#1e88e5")
    host.send(type="start", secret=room["host"])
    wait(lambda: body(d, "status") == "playing", 30, "the game to start")
    header = d.execute_script("return document.querySelector('header').getBoundingClientRect().height")
    board = d.execute_script("return document.querySelector('#board svg').getBoundingClientRect().width")
    assert header < 90  # two lines at most
    assert board >= min(width - 24, 1280 * 0.5)  # a phone gives the board the width
    assert overlaps(d) == []
    full_shot(d, f"pages-room-{width}.png")
    host.close()


def test_online_rematch_needs_every_seat(site, browser):
    """The host rematches in the browser; the page waits for the guest, then moves to the new room."""
    d = browser(1280)
    open_page(d, site.base + "/?speed=fast")
    by_id(d, "mode-online").click()
    by_id(d, "start").click()  # "Create Room"
    link = wait(lambda: by_id(d, "share-link").get_attribute("value"), 30, "the invite link")
    room_id = link.rsplit("/", 1)[1]
    guest = Client(site.base, room_id)
    guest.hello()
    guest.send(type="join", name="Guest", colour="#1e88e5")
    secret = guest.until(lambda m: m["type"] == "joined")["secret"]
    wait(lambda: len(page_texts(d, "#lobby-seats li")) == 2, 30, "the guest in the lobby")
    all_css(d, "#lboard option[value=tiny]")[0].click()
    by_id(d, "start").click()
    wait(lambda: body(d, "status") == "playing", 30, "the game to start")

    sent: list[int] = []

    def step():  # the host clicks Roll; the guest rolls from Python
        if body(d, "result") == "shown":
            return True
        if body(d, "canRoll") == "1":
            by_id(d, "roll").click()
        room = site.rooms.rooms[room_id]
        if room.status == "playing" and room.game.current_seat == 1 and sent[-1:] != [room.game.total_turns]:
            sent.append(room.game.total_turns)  # one roll a turn
            guest.send(type="roll", seat=1, secret=secret)
        return False

    wait(step, 120, "the result screen")
    by_id(d, "rematch").click()
    wait(lambda: "Guest" in by_id(d, "rematch-note").text, 30, "waiting for the guest")
    assert "waiting for Guest" in by_id(d, "rematch-note").text and old_room_is(d, room_id)
    full_shot(d, "pages-rematch-waiting-1280.png")
    status, answer = http(site.base, f"/api/rooms/{room_id}/rematch", {"secret": secret})
    assert status == 200 and answer["waiting"] == []
    wait(lambda: answer["room"] in d.current_url, 30, "the host's page in the new room")
    wait(lambda: body(d, "status") == "playing", 30, "the rematch to start")
    assert page_texts(d, ".seat-card .seat-name") == ["Host", "Guest"]
    guest.close()


def old_room_is(d, room_id):
    return d.current_url.split("/room/")[1].split("?")[0].split("#")[0] == room_id
