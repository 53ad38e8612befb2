"""Shared pieces of the fuzz suite (tests/test_fuzz_*.py): settings profiles, a per-example time limit,
hostile values, and the contract every input must meet: a result or an SnlError subclass, never another
exception, never a hang.

Profiles (``SNL_FUZZ_PROFILE``): ``ci`` (the default; the whole fuzz suite in about two minutes on two
cores) and ``deep`` (ten times the examples, for a local hunt).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

settings.register_profile(
    "snl-fuzz-ci",
    max_examples=100,
    deadline=None,  # the time limit below is a hard wall-clock limit instead
    derandomize=True,  # the same examples every run: CI never fails by luck
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    database=None,
)
settings.register_profile(
    "snl-fuzz-deep",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    database=None,
)
PROFILE = settings.get_profile("snl-fuzz-" + os.environ.get("SNL_FUZZ_PROFILE", "ci"))


def fuzz(scale: float = 1.0) -> settings:
    """The active profile, with ``scale`` times its examples."""
    return settings(PROFILE, max_examples=max(5, int(PROFILE.max_examples * scale)))


class Hang(Exception):
    """An example ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail with Hang when the block runs longer than ``seconds`` (SIGALRM; main thread only)."""

    def alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


#: Values a hostile user types: signs, exotic digits, huge numbers, control characters, paths.
HOSTILE_TEXT = [
    "",
    " ",
    "0",
    "1",
    "2",
    "-1",
    "7",
    "100",
    "1e12",
    "1e300",
    "10.5",
    "nan",
    "inf",
    "-0",
    "3_0",
    "\u0663",
    "\uff13",
    "9" * 30,
    "abc",
    "none",
    "true",
    "\x1b[2J",
    "\x00",
    "\ud800",
    "/dev/zero",
    "/dev/null",
    "/proc",
    "/sys",
    "a.toml",
    "b.json",
    "../../etc/passwd",
    "%s%n",
    "💥",
]

hostile_text = st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=12))
hostile_number = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.sampled_from([0, 1, 2, -1, 10**12, 10**30, 2**63, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
hostile_value = st.one_of(hostile_number, hostile_text, st.lists(st.integers(-5, 200), max_size=3))

#: Integers past every limit, some past Python's 4,300-digit limit for writing them out (not in
#: ``hostile_number``: JSON and TOML writers refuse them, so file fuzzers cannot carry them).
huge_integer = st.sampled_from([2**64, 10**30 + 7, 10**400, 10**5000, -(10**5000), -(2**70)])
