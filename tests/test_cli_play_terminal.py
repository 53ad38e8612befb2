"""``snlmarkov play`` in a real terminal: tmux runs it, keys are sent and the screen is read back.

Each pane runs on its own tmux server (``-L``, a configuration file of its own that sets the size), so
other tmux users and other tests cannot disturb it; ``tmux new-session`` is retried once (it has failed
once under load), and the command starts once the terminal has its size (a fresh window was seen to be
80x24 for a moment). Every wait polls the screen until a condition holds, with a timeout; there are no
fixed sleeps. A screen is
checked as a player sees it: ``capture-pane -J`` joins a line the terminal wrapped, so a line longer
than the width shows up as one; the title on the first line shows that nothing scrolled off the top.

Skipped only when tmux is missing outside CI (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and not os.environ.get("CI"), reason="tmux is not installed (CI installs it)"
)

#: Longest wait for the screen to show something (the machine may be loaded).
WAIT = 90.0
TITLE = "Snakes & Ladders on jungle, rules: app, mode: classic"
SHORT_TITLE = "jungle, rules: app, mode: classic"


class Pane:
    """A detached tmux session of a given size, on a server of its own, running one command."""

    def __init__(self, command: str, width: int = 80, height: int = 24, env: dict | None = None) -> None:
        self.socket, self.name = f"snl-test-{uuid.uuid4().hex[:10]}", "play"
        self.width, self.height = width, height
        with tempfile.NamedTemporaryFile("w", prefix="snl-tmux-", suffix=".conf", delete=False) as conf:
            conf.write(f"set -g default-size {width}x{height}\n")
        self.conf = conf.name
        settings = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        sized = f'[ "$(stty size)" = "{height} {width}" ] && break'
        shell = (
            f"for i in $(seq 200); do {sized}; sleep 0.05; done; "  # at most 10 s for the terminal's size
            f"cd {shlex.quote(os.getcwd())} && env -u COLUMNS -u LINES {settings} {command}; sleep 120"
        )
        create = ["new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell]
        for attempt in (1, 2):
            done = subprocess.run(self._tmux(*create), capture_output=True, text=True, timeout=30)
            if done.returncode == 0:
                return
            self.close()
            if attempt == 2:
                raise AssertionError(f"tmux new-session failed twice: {done.stderr.strip()}")

    def _tmux(self, *args: str) -> list[str]:
        return ["tmux", "-f", self.conf, "-L", self.socket, *args]

    def run(self, *args: str) -> str:
        return subprocess.run(self._tmux(*args), check=True, capture_output=True, text=True, timeout=30).stdout

    def screen(self, escapes: bool = False) -> str:
        """The screen as shown, one line per terminal row (with the colour escapes if ``escapes``)."""
        return self.run("capture-pane", "-p", "-t", self.name, *(["-e"] if escapes else []))

    def lines(self) -> list[str]:
        """The screen's lines, wrapped lines joined back (``-J``), trailing blank lines dropped."""
        return [line.rstrip() for line in self.run("capture-pane", "-p", "-J", "-t", self.name).rstrip().split("\n")]

    def wait_until(self, holds, what: str, timeout: float = WAIT) -> str:
        end = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if holds(shown):
                return shown
            if time.monotonic() > end:
                raise AssertionError(f"{what} never appeared; the screen shows:\n{shown}")
            time.sleep(0.1)

    def wait_for(self, text: str, timeout: float = WAIT) -> str:
        return self.wait_until(lambda shown: text in _flat(shown), repr(text), timeout)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def resize(self, width: int, height: int) -> None:
        self.run("resize-window", "-t", self.name, "-x", str(width), "-y", str(height))
        self.width, self.height = width, height

    def close(self) -> None:
        subprocess.run(self._tmux("kill-server"), check=False, capture_output=True, timeout=30)
        if os.path.exists(self.conf):
            os.unlink(self.conf)


def _flat(text: str) -> str:
    """``text`` with every run of white space (line ends too) made one space: lines wrapped on purpose read whole."""
    return " ".join(text.split())


@pytest.fixture
def pane():
    made = []

    def make(*args, **kw):
        p = Pane(*args, **kw)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


PLAY = f"{sys.executable} -m snlmarkov play --names Ann Bob --ai 1 --seed 29 --delay 0"
COLOURS = {
    "colour": ("", {"TERM": "xterm-256color"}),
    "NO_COLOR": ("", {"TERM": "xterm-256color", "NO_COLOR": "1"}),
    "--no-color": (" --no-color", {"TERM": "xterm-256color"}),
}


def check_fits(p: Pane, prompt: str) -> list[str]:
    """The screen's lines, checked: none longer than the width, no more than the height, the prompt last."""
    lines = p.lines()
    assert len(lines) <= p.height, "\n".join(lines)
    assert all(len(line) <= p.width for line in lines), "\n".join(lines)
    assert lines[-1] == prompt.rstrip()  # the prompt, on the last line written, whole
    return lines


def check_tokens(p: Pane, lines: list[str], colour: bool) -> None:
    """Each token drawn once on the board as its bracketed label (never a bare seat digit), coloured or not."""
    board = [line for line in lines if not line.startswith("[")]  # the seats' lines start with their token
    drawn = re.findall(r"\[[^\]]*\]", "\n".join(board))
    assert sorted(drawn) == ["[A]", "[B]"], "\n".join(lines)
    assert [line.split()[0] for line in lines if line.startswith("[")] == ["[A]", "[B]"]
    painted = p.screen(escapes=True)
    if colour:
        assert "\x1b[31m[A]" in painted and "\x1b[34m[B]" in painted
    else:
        assert "\x1b[" not in painted  # not even bold


def started(pane, colour: str, width: int, height: int, prompt: str) -> tuple[Pane, list[str]]:
    """The game of ``PLAY`` in a ``width`` x ``height`` pane, up to Ann's first prompt; the pane and its lines."""
    flag, env = COLOURS[colour]
    p = pane(PLAY + flag, width, height, env=env)
    p.wait_for(prompt)
    return p, check_fits(p, prompt)


def second_turn_then_quit(p: Pane, prompt: str, colour: str, check) -> None:
    """Ann rolls; after Bob's turn the screen is checked (``check(lines)``), then Ann quits."""
    p.keys("Enter")
    p.wait_for("Turn 3, round 2")
    lines = check_fits(p, prompt)
    check(lines)
    check_tokens(p, lines, colour == "colour")
    p.keys("q", "Enter")
    p.wait_for("Ann quits: game abandoned after 2 turns.")


@pytest.mark.parametrize("colour", COLOURS)
def test_play_at_80x24(pane, colour):
    prompt = "Ann (red), press Enter to roll (q to quit):"
    p, lines = started(pane, colour, 80, 24, prompt)
    assert lines[0] == TITLE  # nothing scrolled off
    # the board one line per row: square 100 top-left and the 99 snake marked, square 1 with its ladder bottom-left
    assert lines[1].startswith("100 ") and "99v27" in lines[1] and lines[10].startswith("1^38 ")
    assert lines[11] == "^38 ladder up to 38, v27 snake down to 27"
    assert lines[12] == "[A] Ann (red), off  win  50.5%  <- to move"
    assert lines[13] == "[B] Bob (blue), off  win  49.5%"

    def check(lines):
        assert lines[0] == TITLE
        assert re.search(r"(^| )7\[A\]( |$)", lines[10]) and re.search(r"(^| )14\[B\]( |$)", lines[9])
        assert lines[12:14] == ["[A] Ann (red), on 7  win  49.0%  <- to move", "[B] Bob (blue), on 14  win  51.0%"]
        assert "  Bob climbs the ladder from 4 to 14." in lines

    second_turn_then_quit(p, prompt, colour, check)


@pytest.mark.parametrize("colour", COLOURS)
def test_play_at_40x12(pane, colour):
    prompt = "Ann: Enter to roll, q to quit:"
    p, lines = started(pane, colour, 40, 12, prompt)
    assert lines[:6] == [
        SHORT_TITLE,  # nothing scrolled off
        "1^38 2 3 4^14 5 6 7 8 9^31 10 11 12 >",  # the track: the squares ahead of Ann
        "^38: ladder to 38, v27: snake to 27",
        "[A] Ann, off win 50.5% <-",
        "[B] Bob, off win 49.5%",
        "Turn 1, round 1; last events:",
    ]

    def check(lines):
        assert lines[:5] == [
            SHORT_TITLE,
            "< 7[A] 8 9^31 10 11 12 13 14[B] 15 >",  # both tokens on the track
            "^38: ladder to 38, v27: snake to 27",
            "[A] Ann, on 7 win 49.0% <-",
            "[B] Bob, on 14 win 51.0%",
        ]

    second_turn_then_quit(p, prompt, colour, check)


def test_a_resized_terminal_is_followed_at_the_next_redraw(pane):
    # two automatic seats redraw the screen every half second; tmux tells the program its new size a moment
    # after resize-window returns, so the test waits for a redraw in the new layout rather than for a key
    command = PLAY.replace("--ai 1", "--ai 2").replace("--delay 0", "--delay 0.5")
    p = pane(command, 80, 24, env={"TERM": "xterm-256color", "NO_COLOR": "1"})

    def shows(title, first):
        def holds(_):
            lines = p.lines()
            return lines[0] == title and lines[1].startswith(first) and all(len(x) <= p.width for x in lines)

        return holds

    p.wait_until(shows(TITLE, "100 "), "the board one line per row")
    p.resize(40, 12)
    p.wait_until(shows(SHORT_TITLE, ("<", "1^38")), "the track at 40x12")
    lines = p.lines()
    assert len(lines) <= 12 and lines[2] == "^38: ladder to 38, v27: snake to 27"
    assert [x.split()[0] for x in lines[3:5]] == ["[A]", "[B]"]
    p.resize(80, 24)
    p.wait_until(shows(TITLE, "100 "), "the board one line per row again")
    assert len(p.lines()) <= 24


@pytest.mark.parametrize("width, height", [(80, 24), (40, 12)])
def test_a_whole_game_ends_with_its_story_on_screen(pane, width, height):
    p = pane(PLAY.replace("--ai 1", "--ai 2"), width, height, env={"TERM": "xterm-256color", "NO_COLOR": "1"})
    p.wait_for("Finishing order: 1. Bob (blue)")
    lines = p.lines()
    assert len(lines) <= height and all(len(line) <= width for line in lines)
    flat = _flat("\n".join(lines))
    assert "Story: the 99 snake on turn 27 cost Ann 29 points (63% -> 34%)." in flat
    assert lines[-2:] == ["Bob (blue) wins after 16 turns.", "Finishing order: 1. Bob (blue)"]
    assert "[B] Bob (blue), home  win 100.0%" in lines  # the seats' lines are still there
    assert any("100[B]" in line for line in lines)  # and the board, with Bob home


def test_a_bump_game_of_four_says_why_it_has_no_odds_at_40x12(pane):
    p = pane(
        f"{sys.executable} -m snlmarkov play --players 4 --ai 3 --set bump=on --seed 29 --delay 0",
        40,
        12,
        env={"TERM": "xterm-256color", "NO_COLOR": "1"},
    )
    prompt = "Player 1: Enter to roll, q to quit:"
    p.wait_for(prompt)
    lines = check_fits(p, prompt)
    assert lines[0].startswith("1^38 ")  # the track, then the legend, then the reason
    assert _flat("\n".join(lines[2:5])) == (
        "No live odds: with the bump rule exact odds are solved for up to 3 players (this game has 4)."
    )
    assert [line.split()[0] for line in lines[5:9]] == ["[P1]", "[P2]", "[P3]", "[P4]"]


def test_a_bump_game_of_two_shows_odds_at_40x12(pane):
    p = pane(PLAY + " --set bump=on", 40, 12, env={"TERM": "xterm-256color", "NO_COLOR": "1"})
    prompt = "Ann: Enter to roll, q to quit:"
    p.wait_for(prompt)
    lines = check_fits(p, prompt)
    assert lines[0] == "jungle, rules: custom, mode: classic"
    assert re.fullmatch(r"\[A\] Ann, off win \d+\.\d% <-", lines[3]) and re.fullmatch(
        r"\[B\] Bob, off win \d+\.\d%", lines[4]
    )
