"""Helpers for the browser tests: headless Debian chromium driven by Selenium, and bounded waits.

Chromium is Debian's (``apt-get install chromium chromium-driver``; ``.ci/run``
installs it). Without it the tests are skipped, except in CI (``CI=true``),
where they fail. Screenshots go under ``test-artifacts/`` (or ``$SNL_ARTIFACTS``).

Starting chromium and its driver is the dearest part of a browser test, so the
drivers are kept for the session (``ChromiumPool``, the ``browser`` fixture of
tests/conftest.py): a test asks for as many as it needs, each one a browser of
its own (its own profile, so two of them are two visitors), and gets them back
blank: no page, no cookies, no local or session storage, no window size or
device metrics left by the test before. A driver that cannot be made blank is
quit, not handed out again.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ARTIFACTS = Path(os.environ.get("SNL_ARTIFACTS", Path(__file__).resolve().parent.parent / "test-artifacts"))
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def need_browser() -> None:
    """Skip (fail in CI) without chromium, its driver or selenium."""
    missing = [p for p in (CHROMIUM, DRIVER) if not shutil.which(p)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the browser test: missing {', '.join(missing)}")
        pytest.skip(f"no browser: missing {', '.join(missing)}")


class ChromiumPool:
    """Headless chromium drivers kept between tests; ``take`` one, ``give_back`` it blank."""

    def __init__(self) -> None:
        self.idle: list[Any] = []
        self.profiles: dict[int, str] = {}

    def _launch(self) -> Any:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        profile = tempfile.mkdtemp(prefix="snl-chromium-")
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        d = webdriver.Chrome(service=Service(DRIVER), options=options)
        self.profiles[id(d)] = profile
        return d

    def take(self, width: int | None = None, height: int = 900) -> Any:
        """A blank browser; ``width`` emulates a screen that wide (a phone below 600 px), else a 1400 x 1000 window."""
        d = self.idle.pop() if self.idle else self._launch()
        d.set_page_load_timeout(30)
        if width is None:
            d.set_window_size(1400, 1000)
        else:
            d.set_window_size(width, height)
            d.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            )
        return d

    def give_back(self, d: Any) -> None:
        """Blank ``d`` and keep it, or quit it if it does not answer."""
        try:
            d.execute_cdp_cmd("Page.navigate", {"url": "about:blank"})
            d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            d.execute_cdp_cmd("Network.clearBrowserCookies", {})
            d.execute_cdp_cmd("Network.clearBrowserCache", {})
            d.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": "*", "storageTypes": "all"})
            for handle in d.window_handles[1:]:
                d.switch_to.window(handle)
                d.close()
            d.switch_to.window(d.window_handles[0])
            d.get("about:blank")
        except Exception:
            self.quit(d)
            return
        self.idle.append(d)

    def quit(self, d: Any) -> None:
        try:
            d.quit()
        finally:
            shutil.rmtree(self.profiles.pop(id(d), ""), ignore_errors=True)

    def close(self) -> None:
        while self.idle:
            self.quit(self.idle.pop())


def by_id(d, name):
    from selenium.webdriver.common.by import By

    return d.find_element(By.ID, name)


def all_css(d, css):
    from selenium.webdriver.common.by import By

    return d.find_elements(By.CSS_SELECTOR, css)


def wait(pred, timeout=60.0, what="the page"):
    """``pred()`` once it is truthy; an element not there yet (or replaced while the page loads) is "not yet"."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            value = pred()
        except (NoSuchElementException, StaleElementReferenceException):
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def body(d, key):
    """``document.body.dataset[key]``, or ``''`` while there is no body (between two pages of a navigation)."""
    return d.execute_script(f"return (document.body && document.body.dataset.{key}) || ''")


def ready(d):
    """Wait for the page's ``data-ready`` (its script has fetched what it needs and wired its buttons)."""
    wait(lambda: body(d, "ready") == "1", 60, "the page to load")


def open_page(d, url):
    """Load ``url`` and wait until the page is ready (a click before that would find no handler)."""
    d.get(url)
    ready(d)


def page_texts(d, css):
    """The text of every element matching ``css``, read by the page itself at one moment."""
    return d.execute_script("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", css)


def shot(d, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    d.save_screenshot(str(ARTIFACTS / name))
