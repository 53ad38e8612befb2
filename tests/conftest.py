"""Fixtures shared by the test modules."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def chromium_pool():
    """The session's headless chromium drivers (tests/_browser.py); quit at the end of the session."""
    from _browser import ChromiumPool

    pool = ChromiumPool()
    yield pool
    pool.close()


@pytest.fixture
def browser(chromium_pool):
    """``browser(width=None)``: a blank headless chromium of its own, given back blank after the test."""
    from _browser import need_browser

    need_browser()
    taken = []

    def make(width: int | None = None, height: int = 900):
        d = chromium_pool.take(width, height)
        taken.append(d)
        return d

    yield make
    for d in taken:
        chromium_pool.give_back(d)
