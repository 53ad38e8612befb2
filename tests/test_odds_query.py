"""The quick query of independent tokens from a state, against brute force over every outcome.

``independent_from`` computes places, orders and the expected rounds and
turns left by closed forms and recursions; here every combination of the
racing seats' turns to finish is enumerated instead (short pmfs, so the
enumeration is exact), and the lazy figures are checked to be computed only
when read.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from snlmarkov.errors import SnlError
from snlmarkov.races.independent import independent_from
from snlmarkov.races.order import play_order
from snlmarkov.races.passage import survival_rows
from snlmarkov.races.result import LazyLength, LazyOrders
from snlmarkov.state import GameState

TOL = 1e-13


def _pmfs(m: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    f = rng.random((m, width))
    f[:, 0] = 0.0
    f[rng.random((m, width)) < 0.3] = 0.0  # some gaps
    f[:, 1] += 0.01
    return f / f.sum(axis=1, keepdims=True)


def _brute(f: np.ndarray, state: GameState, mode: str) -> dict:
    """Every outcome ``(K_j)`` of the racing seats (rows of ``f`` in playing order), summed by hand."""
    order, wraps = play_order(state)
    m, width = f.shape
    k = state.players
    done = len(state.places)
    win, place = np.zeros(k), np.zeros((k, k))
    orders: dict[tuple[int, ...], float] = {}
    rounds = turns = 0.0
    for ks in itertools.product(range(1, width), repeat=m):
        p = float(np.prod([f[j, t] for j, t in enumerate(ks)]))
        if p == 0.0:
            continue
        finish = sorted(range(m), key=lambda j: (ks[j] - 1) * m + j)  # the turn each finishes on
        full = tuple(state.places) + tuple(order[j] for j in finish)
        if mode == "classic":
            first = finish[0]
            win[order[first]] += p
            rounds += p * (ks[first] + wraps[first])
            turns += p * ((ks[first] - 1) * m + first + 1)
        else:
            orders[full] = orders.get(full, 0.0) + p
            for pos, seat in enumerate(full[done:], start=done):
                place[seat, pos] += p
            rounds += p * max(ks[j] + wraps[j] for j in range(m))
            turns += p * sum(ks)
    if mode == "classic":
        return {"win": win, "rounds": rounds, "turns": turns}
    for i, seat in enumerate(state.places):
        place[seat, i] = 1.0
    return {"win": place[:, 0], "place": place, "orders": orders, "rounds": rounds, "turns": turns}


STATES = [
    GameState((3, 5, 7), to_move=0),
    GameState((3, 5, 7), to_move=2),
    GameState((3, 5, 7, 9), to_move=1),
    GameState((3, 100, 7, 9, 2), to_move=3, places=(1,)),
    GameState((100, 5, 100, 9, 2), to_move=4, places=(2, 0)),
]


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
@pytest.mark.parametrize("state", STATES, ids=range(len(STATES)))
def test_the_query_equals_every_outcome_summed(state: GameState, mode: str) -> None:
    if mode == "classic" and state.places:
        state = GameState(state.positions, to_move=state.to_move)
        if 100 in state.positions:
            pytest.skip("a classic state with a token home is over")
    m = len(state.racing)
    f = _pmfs(m, 6, seed=m + state.to_move)
    tails = np.zeros(m)
    out = independent_from(f, tails, survival_rows(f, tails), state, mode)
    want = _brute(f, state, mode)
    assert np.allclose(out["win_probability"], want["win"], atol=TOL, rtol=0)
    assert abs(out["rounds_distribution"].mean() - want["rounds"]) < 1e-12
    assert abs(out["turns_distribution"].mean() - want["turns"]) < 1e-12
    # the distributions, computed when read, have the same means as the closed forms
    assert (
        abs(
            float(np.dot(out["rounds_distribution"].support, out["rounds_distribution"].probabilities)) - want["rounds"]
        )
        < 1e-12
    )
    assert (
        abs(float(np.dot(out["turns_distribution"].support, out["turns_distribution"].probabilities)) - want["turns"])
        < 1e-12
    )
    if mode == "last_one_standing":
        assert np.allclose(out["place_probability"], want["place"], atol=TOL, rtol=0)
        orders = dict(out["order_probability"])
        assert len(orders) == len(list(itertools.permutations(range(state.players))))
        for o, p in orders.items():
            assert abs(p - want["orders"].get(o, 0.0)) < TOL, o
        quick = independent_from(f, tails, survival_rows(f, tails), state, mode, places_only=True)
        assert np.array_equal(quick["place_probability"], out["place_probability"])


def test_lazy_figures_are_computed_when_read_and_checked_then() -> None:
    calls: list[int] = []
    length = LazyLength(lambda: calls.append(1) or _pmfs_distribution(), "turns")
    assert calls == []
    assert length.horizon == 2 and calls == [1]
    assert length.mean() == 1.5 and calls == [1]  # computed once

    bad = LazyOrders(lambda: {(0, 0): 1.0}).checked_by(2, 2, "last_one_standing")
    with pytest.raises(SnlError, match="not a finishing order"):
        dict(bad)


def _pmfs_distribution():
    from snlmarkov.analysis.distribution import LengthDistribution

    return LengthDistribution(np.array([0.0, 0.5, 0.5]))
