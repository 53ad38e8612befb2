"""``snlmarkov play`` in a real terminal: tmux runs it, keys are sent and the screen is read back.

Skipped only when tmux is missing outside CI (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and not os.environ.get("CI"), reason="tmux is not installed (CI installs it)"
)


class Pane:
    """A detached tmux session of a given size running one command."""

    def __init__(self, command: str, width: int = 80, height: int = 24, env: dict | None = None) -> None:
        self.name = f"snl-{uuid.uuid4().hex[:8]}"
        settings = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        shell = f"cd {os.getcwd()} && env {settings} {command}; sleep 60"
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell], check=True
        )

    def screen(self, escapes: bool = False) -> str:
        args = ["tmux", "capture-pane", "-p", "-t", self.name] + (["-e"] if escapes else [])
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False, capture_output=True)


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


def test_play_redraws_in_place_and_fits_80x24(pane):
    p = pane(PLAY, env={"TERM": "xterm-256color"})
    first = p.wait_for("press Enter to roll")
    lines = first.rstrip("\n").splitlines()
    assert len(lines) <= 24 and max(len(x) for x in lines) <= 80
    assert lines[0].startswith("Snakes & Ladders on jungle")
    # the compact board: one line per row, square 100 top-left and the 99 snake marked
    assert any(line.lstrip().startswith("100") and "99v27" in line for line in lines)
    assert "Ann (red), off  win  50.5%  <- to move" in first
    p.keys("Enter")
    second = p.wait_for("Turn 3, round 2")
    # redrawn in place: the title is still the first line, and the last events are on screen
    assert second.splitlines()[0].startswith("Snakes & Ladders on jungle")
    assert "Bob climbs the ladder from 4 to 14." in second
    assert "win  51.0%" in second
    p.keys("q", "Enter")
    p.wait_for("Ann quits: game abandoned after 2 turns.")


def test_colours_and_no_color(pane):
    coloured = pane(PLAY, env={"TERM": "xterm-256color"})
    coloured.wait_for("press Enter to roll")
    assert "\x1b[" in coloured.screen(escapes=True)
    plain = pane(PLAY, env={"TERM": "xterm-256color", "NO_COLOR": "1"})
    plain.wait_for("press Enter to roll")
    shown = plain.screen(escapes=True)
    assert "\x1b[3" not in shown and "\x1b[1;3" not in shown  # no foreground colours


def test_a_whole_game_ends_with_its_story(pane):
    p = pane(f"{sys.executable} -m snlmarkov play --names Ann Bob --ai 2 --seed 29 --delay 0", height=30)
    end = p.wait_for("Finishing order: 1. Bob (blue)")
    assert "Story: the 99 snake on turn 27 cost Ann 29 points (63% -> 34%)." in end
    assert "Bob (blue) wins after 16 turns." in end
