"""Landings built lazily: the weighted pass equals the landings matrix, and analyze() defers both."""

import numpy as np
import pytest

from snlmarkov import Board, Rules, analyze, turn_model
from snlmarkov.chain.model import turn_landings


@pytest.mark.parametrize("rules", [Rules(), Rules.preset("family"), Rules(max_sixes=None, on_cap="forfeit")])
def test_weighted_pass_equals_the_matrix(rules):
    board = Board.random(500, rng=9)
    model = turn_model(board, rules)
    w = np.random.default_rng(0).random(board.size + 1)
    np.testing.assert_allclose(turn_landings(board, rules, w), model.landings.T @ w, rtol=1e-13, atol=1e-15)


def test_analysis_defers_landings_and_agrees_with_the_model():
    a = analyze(Board.builtin())
    assert "landings" not in a.__dict__ and callable(a.model._landings)  # nothing built yet
    want = a.model.landings.T @ a.occupancy
    np.testing.assert_allclose(a.landings, want, rtol=1e-13, atol=1e-15)
    assert a.jump_uses[47] == pytest.approx(want[47], rel=1e-13)
    with pytest.raises(ValueError):
        a.landings[0] = 1.0  # read-only
    with pytest.raises(ValueError, match="one entry per square"):
        turn_landings(a.board, a.rules, np.ones(3))
