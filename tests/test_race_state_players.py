"""``race(state=)``: the number of players comes from the state, and the answer is the one ``Odds`` gives."""

from __future__ import annotations

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.errors import GameError

JUNGLE = snl.Board.builtin()
SMALL = snl.Board(30, {3: 12, 8: 20, 17: 4, 26: 9, 22: 28})


def test_players_are_taken_from_the_state():
    state = snl.GameState(positions=(81, 30, 5))
    r = snl.race(JUNGLE, snl.Rules(), state=state)
    assert r.players == 3 and r.win_probability.shape == (3,)
    same = snl.race(JUNGLE, snl.Rules(), players=3, state=state)
    np.testing.assert_array_equal(r.win_probability, same.win_probability)
    assert snl.race(JUNGLE, snl.Rules()).players == 2  # without a state, two seats


def test_players_that_disagree_with_the_state_are_refused_naming_both():
    with pytest.raises(GameError, match=r"3 seats' squares for players=2"):
        snl.race(JUNGLE, snl.Rules(), players=2, state=snl.GameState(positions=(81, 30, 5)))


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
@pytest.mark.parametrize("rules", [snl.Rules(), snl.Rules.preset("family")], ids=["app", "family"])
def test_race_from_a_state_and_odds_share_their_code(rules, mode):
    state = snl.GameState((20, 25, 9), to_move=2)
    r = snl.race(SMALL, rules, mode=mode, state=state)
    o = snl.Odds(SMALL, rules, players=3, mode=mode)(state)
    assert r.method == o.method
    # the length distributions come from the same computation, to the last bit
    for a, b in ((r.rounds_distribution, o.rounds_distribution), (r.turns_distribution, o.turns_distribution)):
        np.testing.assert_array_equal(a.probabilities, b.probabilities)
        assert a.tail_mass == b.tail_mass
    if not rules.bump:  # and so do the chances (with bump, Odds reads them from its value table)
        np.testing.assert_array_equal(r.place_probability, o.place_probability)
        assert dict(r.order_probability) == dict(o.order_probability)
    else:
        np.testing.assert_allclose(r.place_probability, o.place_probability, rtol=0, atol=1e-12)
