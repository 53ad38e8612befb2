"""Last one standing: the settled joint tensor extrapolated equals the fully iterated chain.

Once the full tensor's rounds are geometric (:class:`snlmarkov.races.bump.SettleWatch`)
the race stops moving it and injects its outflows times ``ratio**j`` into the
smaller chains. ``SETTLE_TOL = -1`` never settles, so every round is iterated:
the two runs must agree to 1e-10, and on the tiny boards both must agree with
the brute force of ``tests/test_race_bump.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from _tails import assert_same_race, race_counting
from test_race_bump import CASES, assert_matches_brute_force

import snlmarkov as snl
from snlmarkov import Board, GameState, Rules
from snlmarkov.races import bump

FAMILY = Rules.preset("family")
JUNGLE = Board.builtin()
SMALL = Board(40, {3: 21, 12: 30, 38: 9, 27: 2, 35: 16})
# two tokens, a two-faced die and an exact finish: the joint chain's per-round
# ratio creeps towards its limit like 1/round (a defective leading eigenvalue),
# so it never settles to 1e-12 before the tail
NEVER_SETTLES = (Board(6, {4: 3}), Rules.preset("plain").replace(faces=2, finish="stay", bump=True))


@pytest.mark.parametrize(("board", "players"), [(JUNGLE, 2), (SMALL, 3)], ids=["jungle-2", "small-3"])
def test_extrapolated_tail_agrees_with_iterating_every_round(monkeypatch, board, players):
    fast, n_fast = race_counting(monkeypatch, 1e-12, board, FAMILY, players=players)
    slow, n_slow = race_counting(monkeypatch, -1.0, board, FAMILY, players=players)
    assert n_fast < 0.5 * n_slow  # the full tensor stopped moving long before it was dropped
    assert_same_race(fast, slow)


@pytest.mark.parametrize(
    ("board", "players", "state"),
    [(JUNGLE, 2, GameState((37, 12), to_move=1)), (SMALL, 3, GameState((30, 18, 21), to_move=1))],
    ids=["jungle-2", "small-3"],
)
def test_race_from_a_state_extrapolates_too(monkeypatch, board, players, state):
    fast, n_fast = race_counting(monkeypatch, 1e-12, board, FAMILY, players=players, state=state)
    slow, n_slow = race_counting(monkeypatch, -1.0, board, FAMILY, players=players, state=state)
    assert n_fast < 0.5 * n_slow
    assert_same_race(fast, slow)


@pytest.mark.parametrize("players", [2, 3])
def test_shortcut_triggers_and_matches_brute_force(monkeypatch, players):
    board, rules = CASES["redeal-bonus"]
    _, n_fast = race_counting(monkeypatch, 1e-12, board, rules, players=players, method="exact", tail=1e-15)
    _, n_slow = race_counting(monkeypatch, -1.0, board, rules, players=players, method="exact", tail=1e-15)
    assert n_fast < 0.7 * n_slow
    assert_matches_brute_force(board, rules, players, "last_one_standing")


def test_chain_that_never_settles_is_iterated_to_the_end(monkeypatch):
    board, rules = NEVER_SETTLES
    _, n_fast = race_counting(monkeypatch, 1e-12, board, rules, players=2, method="exact", tail=1e-15)
    _, n_slow = race_counting(monkeypatch, -1.0, board, rules, players=2, method="exact", tail=1e-15)
    assert n_fast == n_slow > 100
    assert_matches_brute_force(board, rules, 2, "last_one_standing")


def test_watch_reads_the_outflow_vectors_not_their_sums():
    w = bump.SettleWatch()
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    # sums and mass exactly geometric, but the mass alternates between two squares
    seen = [w.feed({0: (a if r % 2 else b) * 0.5**r, 1: (b if r % 2 else a) * 0.5**r}, 0.5**r) for r in range(20)]
    assert all(s is None for s in seen)
    w = bump.SettleWatch()
    seen = [w.feed({0: (a + b) * 0.5**r, 1: a * 0.5**r}, 0.5**r) for r in range(4)]
    assert [s is not None for s in seen] == [False, False, True, True]
    assert seen[2].ratio == 0.5


def test_watch_never_settles_on_rounds_where_nobody_can_finish():
    w = bump.SettleWatch()
    zero = np.zeros(3)
    assert all(w.feed({0: zero, 1: zero}, 1.0 - 1e-16 * r) is None for r in range(10))


def test_settled_tensor_counts_its_mass_in_end_of_round():
    tensor = bump.SettledTensor({0: np.array([0.5])}, ratio=0.1, mass=2e-3)
    live, dropped, tail_of = (
        {"rounds": True, "turns": True},
        {"rounds": 0.0, "turns": 0.0},
        {"rounds": 0.0, "turns": 0.0},
    )
    tensor.next_round()  # 2e-4 in play
    full, in_play = bump.end_of_round(tensor, {}, {}, live, dropped, tail_of, 1e-6, 1e-5)
    assert full is tensor and in_play == pytest.approx(2e-4) and live == {"rounds": True, "turns": True}
    for _ in range(3):
        tensor.next_round()  # 2e-7, below the drop: dropped, and both clocks stop with it as their tail
    full, in_play = bump.end_of_round(tensor, {}, {}, live, dropped, tail_of, 1e-6, 1e-5)
    assert full is None and in_play == 0.0 and live == {"rounds": False, "turns": False}
    assert tail_of["rounds"] == pytest.approx(2e-7) and tail_of["turns"] == pytest.approx(2e-7)


# recorded from the code before the extrapolation (every round iterated), jungle board, family rules
RECORDED_PLACES = [
    [0.33714309717342317, 0.33158615186529283],
    [0.3333176327037831, 0.33336438243385536],
    [0.3295392701226777, 0.33504946570073574],
]
RECORDED_ORDERS = {
    (0, 1, 2): 0.16957168832702826,
    (1, 2, 0): 0.16747805685434083,
    (0, 2, 1): 0.1675714088463949,
    (2, 0, 1): 0.16574657601585058,
    (1, 0, 2): 0.16583957584944228,
    (2, 1, 0): 0.16379269410682712,
}
RECORDED_STATE = GameState((30, 5, 66), to_move=2)
RECORDED_STATE_PLACES = [
    [0.27617863000648685, 0.36690076522597914, 0.35692060476741916],
    [0.2454990241392221, 0.3720924753454562, 0.3824085005152069],
    [0.4783223458541762, 0.26100675942844986, 0.26067089471725907],
]


def test_recorded_three_player_jungle_figures():
    r = snl.race(JUNGLE, FAMILY, players=3, mode="last_one_standing")
    np.testing.assert_allclose(r.place_probability[:, :2], RECORDED_PLACES, rtol=0, atol=1e-10)
    for order, p in RECORDED_ORDERS.items():
        assert r.order_probability[order] == pytest.approx(p, abs=1e-10)
    assert r.expected_rounds == pytest.approx(171.2584752133954, rel=1e-10)
    assert r.expected_total_turns == pytest.approx(312.5681657400684, rel=1e-10)
    s = snl.race(JUNGLE, FAMILY, players=3, mode="last_one_standing", state=RECORDED_STATE)
    np.testing.assert_allclose(s.place_probability, RECORDED_STATE_PLACES, rtol=0, atol=1e-10)
    assert s.expected_rounds == pytest.approx(158.78729180515197, rel=1e-10)
    assert s.expected_total_turns == pytest.approx(272.9342855124592, rel=1e-10)
