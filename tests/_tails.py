"""Shared by the tests of the bump races' geometric tails: a race under a given ``SETTLE_TOL``, compared."""

from __future__ import annotations

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.races import bump


def race_counting(monkeypatch, settle, *args, mode="last_one_standing", **kwargs):
    """``race(*args, mode=mode, **kwargs)`` under ``SETTLE_TOL = settle``, and how many full-tensor turns it moved."""
    players = kwargs["players"] - len(kwargs["state"].places) if "state" in kwargs else kwargs["players"]
    monkeypatch.setattr(bump, "SETTLE_TOL", settle)
    calls = []
    move = bump.JointMover.move

    def counted(self, x, m):
        calls.append(m)
        return move(self, x, m)

    monkeypatch.setattr(bump.JointMover, "move", counted)
    r = snl.race(*args, mode=mode, **kwargs)
    monkeypatch.undo()
    return r, sum(1 for m in calls if m == players)


def assert_same_race(fast, slow):
    """Figures to 1e-10 (probabilities absolute, expectations relative), each pmf entry to 1e-14."""
    np.testing.assert_allclose(fast.place_probability, slow.place_probability, rtol=0, atol=1e-10)
    for order, p in slow.order_probability.items():
        assert fast.order_probability[order] == pytest.approx(p, abs=1e-10), order
    assert fast.expected_rounds == pytest.approx(slow.expected_rounds, rel=1e-10)
    assert fast.expected_total_turns == pytest.approx(slow.expected_total_turns, rel=1e-10)
    for a, b in (
        (fast.rounds_distribution, slow.rounds_distribution),
        (fast.turns_distribution, slow.turns_distribution),
    ):
        assert a.horizon == b.horizon
        k = np.arange(b.horizon + 1)
        np.testing.assert_allclose(a.pmf(k), b.pmf(k), rtol=0, atol=1e-14)
        assert a.tail_mass == pytest.approx(b.tail_mass, rel=1e-6)
