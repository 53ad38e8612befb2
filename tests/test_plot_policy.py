"""plot_policy: the board coloured by the choice at a turn's start, paler where it matters less."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import snlmarkov as snl  # noqa: E402
from snlmarkov import plots  # noqa: E402
from snlmarkov.errors import PolicyError  # noqa: E402
from snlmarkov.plots.policy import _NO_TURN, _OPTION_COLOURS  # noqa: E402
from snlmarkov.policy import decision_shape  # noqa: E402

BOARD = snl.Board(30, {3: 16, 27: 5})
DICE = snl.Rules.preset("plain").replace(choose_die=(4, 6))


@pytest.fixture(scope="module")
def optimal():
    return snl.optimal_policy(BOARD, DICE)


def squares_of(ax, board):
    """Each square's face colour, read from the board's Rectangles (the legend's patches are not the axes')."""
    cells = {board.cell(s): s for s in range(1, board.size + 1)}
    out = {}
    for patch in ax.patches:
        if isinstance(patch, Rectangle):
            out[cells[(int(patch.get_y()), int(patch.get_x()))]] = patch.get_facecolor()
    return out


def test_the_axes_passed_in_is_drawn_on_and_returned(optimal):
    ax = Figure().subplots()
    assert plots.plot_policy(optimal, BOARD, ax=ax) is ax
    assert "plot_policy" in plots.__all__
    faces = squares_of(ax, BOARD)
    assert sorted(faces) == list(range(1, BOARD.size + 1))  # one Rectangle per square
    assert len([p for p in ax.patches if isinstance(p, Rectangle)]) == BOARD.size


def test_each_square_takes_its_choice_colour_paler_where_it_matters_less(optimal):
    ax = plots.plot_policy(optimal, BOARD, ax=Figure().subplots())
    faces = squares_of(ax, BOARD)
    table = optimal.table
    spread = snl.policy_gain(BOARD, DICE, policy=optimal).spread
    turns = [s for s in range(1, BOARD.size) if s not in BOARD.jumps]
    top = max(spread[s] for s in turns)
    for s in turns:
        die = table.die_index(s, 0, s)
        full = np.array(to_rgba(_OPTION_COLOURS[die])[:3])
        weight = 0.25 + 0.75 * spread[s] / top
        np.testing.assert_allclose(faces[s][:3], 1 - weight * (1 - full), atol=1e-12)
    for s in BOARD.jumps:  # no turn begins on a ladder's foot or a snake's head
        assert faces[s] == to_rgba(_NO_TURN)
    labels = [t.get_text() for t in ax.texts if t.get_text() in ("d4", "d6")]
    assert len(labels) == len(turns)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(legend) == ["d4", "d6"]


def test_a_fixed_policy_needs_the_rules_and_colours_one_die():
    with pytest.raises(PolicyError, match="needs the rules"):
        plots.plot_policy(snl.Policy.fixed(6), BOARD)
    ax = plots.plot_policy(snl.Policy.fixed(6), BOARD, DICE, Figure().subplots(), legend=False)
    d6 = np.array(to_rgba(_OPTION_COLOURS[1])[:3])
    for s, face in squares_of(ax, BOARD).items():
        if 0 < s < BOARD.size and s not in BOARD.jumps:
            rgb = np.array(face[:3])
            # on the line from white to the d6's colour
            t = (1 - rgb) / (1 - d6)
            assert np.allclose(t, t[0], atol=1e-9) and 0.24 <= t[0] <= 1 + 1e-12
    assert ax.get_legend() is None


def test_choose_move_on_a_long_die_uses_a_colour_map_and_a_short_legend():
    rules = snl.Rules.preset("plain").replace(choose_move=2, die=snl.Die(12))
    ax = plots.plot_policy(snl.Policy.greedy(), BOARD, rules, Figure().subplots())
    assert ax.get_title().startswith("Best value to move")
    assert 1 <= len(ax.get_legend().get_texts()) <= 12


def test_a_race_policy_is_shown_for_the_others_squares_at_full_colour():
    shape = decision_shape(BOARD, DICE, others=1)
    ranks = np.zeros(shape, dtype=np.int16)
    ranks[..., 0] = 1  # d6 first everywhere ...
    ranks[:, :, :, 10, :] = [0, 1]  # ... but d4 first when the other token is on square 10
    policy = snl.Policy.from_table(BOARD, DICE, ranks)
    ax = plots.plot_policy(policy, BOARD, ax=Figure().subplots(), others=(10,))
    faces = squares_of(ax, BOARD)
    assert faces[2][:3] == pytest.approx(to_rgba(_OPTION_COLOURS[0])[:3])
    faces = squares_of(plots.plot_policy(policy, BOARD, ax=Figure().subplots()), BOARD)
    assert faces[2][:3] == pytest.approx(to_rgba(_OPTION_COLOURS[1])[:3])
    with pytest.raises(PolicyError, match="others must be 1 square"):
        plots.plot_policy(policy, BOARD, ax=Figure().subplots(), others=(10, 11))


def test_refusals(optimal):
    with pytest.raises(PolicyError, match="takes a Policy"):
        plots.plot_policy("optimal", BOARD, DICE)
    other = snl.policy_gain(snl.Board(20), DICE)
    with pytest.raises(PolicyError, match="gain must be"):
        plots.plot_policy(optimal, BOARD, ax=Figure().subplots(), gain=other)
    with pytest.raises(PolicyError):
        plots.plot_policy(optimal, BOARD, snl.Rules.preset("plain"), Figure().subplots())
