"""The figures draw what the analysis says: geometry, values, labels."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Circle, Rectangle  # noqa: E402

from snlmarkov import Board, Rules, analyze, plots  # noqa: E402
from snlmarkov.errors import SnlError  # noqa: E402
from snlmarkov.plots.board import ladder_lines, snake_curve, square_centre  # noqa: E402
from snlmarkov.plots.lengths import length_cutoff  # noqa: E402
from snlmarkov.races.core import race  # noqa: E402
from snlmarkov.report.core import compare_toggles  # noqa: E402

JUNGLE = Board.builtin()


@pytest.fixture(scope="module")
def runs():
    return {name: analyze(JUNGLE, Rules.preset(name)) for name in Rules.presets()}


def new_ax():
    return Figure(figsize=(7, 7)).subplots()


def test_public_names():
    for name in plots.__all__:
        assert callable(getattr(plots, name)), name
    assert {
        "draw_board",
        "plot_occupancy",
        "plot_landings",
        "plot_length_pmf",
        "plot_length_cdf",
        "plot_toggles",
        "plot_jump_effects",
    } <= set(plots.__all__)


# ------------------------------------------------------------------ board
def test_square_centres_follow_the_boustrophedon_layout():
    assert square_centre(JUNGLE, 1) == (0.5, 0.5)
    assert square_centre(JUNGLE, 10) == (9.5, 0.5)
    assert square_centre(JUNGLE, 11) == (9.5, 1.5)
    assert square_centre(JUNGLE, 20) == (0.5, 1.5)
    assert square_centre(JUNGLE, 100) == (0.5, 9.5)


def test_every_square_is_numbered_in_its_own_cell():
    ax = plots.draw_board(JUNGLE, new_ax())
    numbers = {int(t.get_text()): t.get_position() for t in ax.texts if t.get_text().isdigit()}
    assert sorted(numbers) == list(range(1, 101))
    for square, (x, y) in numbers.items():
        row, col = JUNGLE.cell(square)
        assert col < x < col + 1 and row < y < row + 1, square
    cells = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(cells) == 100
    assert {(p.get_x(), p.get_y()) for p in cells} == {(c, r) for r in range(10) for c in range(10)}


def test_ladders_and_snakes_are_drawn_between_their_squares():
    ax = plots.draw_board(JUNGLE, new_ax())
    segments = [
        np.asarray(s) for coll in ax.collections if isinstance(coll, LineCollection) for s in coll.get_segments()
    ]
    for start, end in JUNGLE.ladders.items():
        rails = ladder_lines(square_centre(JUNGLE, start), square_centre(JUNGLE, end))[:2]
        for rail in rails:
            assert any(s.shape == rail.shape and np.allclose(s, rail) for s in segments), (start, end)
    heads = {tuple(np.round(p.center, 9)) for p in ax.patches if isinstance(p, Circle) and p.radius > 0.1}
    assert heads == {tuple(np.round(square_centre(JUNGLE, s), 9)) for s in JUNGLE.snakes}
    for head, tail in JUNGLE.snakes.items():
        body = snake_curve(square_centre(JUNGLE, head), square_centre(JUNGLE, tail))
        assert any(s.shape == (2, 2) and np.allclose(s[0], body[0]) and np.allclose(s[1], body[1]) for s in segments)
    assert ax.get_legend() is not None
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "ladder: foot \u2192 top (up)",
        "snake: head \u2192 tail (down)",
    ]


def test_ladder_geometry():
    rails_and_rungs = ladder_lines((1.5, 0.5), (4.5, 4.5), half_width=0.1)
    left, right = rails_and_rungs[:2]
    direction = np.array([3.0, 4.0]) / 5.0
    # rails are parallel to the jump, 0.1 either side of it
    for rail in (left, right):
        np.testing.assert_allclose((rail[1] - rail[0]) / 5.0, direction, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(left[0] - right[0]), 0.2, atol=1e-12)
    # rungs join the rails at right angles
    for rung in rails_and_rungs[2:]:
        np.testing.assert_allclose(np.dot(rung[1] - rung[0], direction), 0.0, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(rung[1] - rung[0]), 0.2, atol=1e-12)
    assert len(rails_and_rungs) == 2 + int(5.0 / 0.32)


def test_snake_geometry():
    head, tail = np.array([0.5, 9.5]), np.array([6.5, 1.5])
    body = snake_curve(head, tail, amplitude=0.2)
    np.testing.assert_allclose(body[0], head, atol=1e-12)
    np.testing.assert_allclose(body[-1], tail, atol=1e-12)
    d = (tail - head) / np.linalg.norm(tail - head)
    off = (body - head) @ np.array([-d[1], d[0]])
    assert np.abs(off).max() <= 0.2 + 1e-12
    assert np.abs(off).max() > 0.1  # it does wiggle
    assert np.count_nonzero(np.diff(np.sign(off[1:-1])) != 0) >= 2


def test_board_of_other_sizes():
    b = Board(30, {3: 22, 27: 1})
    ax = plots.draw_board(b, new_ax(), title="small")
    assert ax.get_title() == "small"
    assert sorted(int(t.get_text()) for t in ax.texts if t.get_text().isdigit()) == list(range(1, 31))
    assert ax.get_xlim() == pytest.approx((-0.05, b.width + 0.05))
    assert ax.get_ylim() == pytest.approx((-0.05, 5.05))  # 30 squares in rows of 6
    ax = plots.draw_board(Board(9), new_ax())  # no jumps: no legend
    assert ax.get_legend() is None


def test_new_figure_when_no_axes_given():
    before = plt.get_fignums()
    ax = plots.draw_board(JUNGLE)
    try:
        assert ax.figure.number not in before
    finally:
        plt.close(ax.figure)


# ------------------------------------------------------------------ heat maps
def test_heatmap_colours_each_square_by_its_value():
    b = Board(9, {2: 7, 8: 4})
    values = np.arange(10.0)
    ax = plots.plot_board_heatmap(b, values, new_ax(), label="value (units)", cmap="viridis")
    cmap = matplotlib.colormaps["viridis"]
    for patch in ax.patches:
        if not isinstance(patch, Rectangle):
            continue
        x, y = patch.get_x(), patch.get_y()
        square = next(s for s in range(1, 10) if b.cell(s) == (int(y), int(x)))
        np.testing.assert_allclose(patch.get_facecolor(), cmap(values[square] / 9.0), atol=1e-12)
    assert ax.figure.axes[-1].get_ylabel() == "value (units)"


def test_heatmap_refuses_the_wrong_number_of_values():
    with pytest.raises(SnlError, match="one number per square 0..9"):
        plots.plot_board_heatmap(Board(9), np.ones(9), new_ax())


def test_occupancy_and_landings_draw_the_analysis(runs):
    a = runs["app"]
    cmap = matplotlib.colormaps["viridis"]
    for plot, values in ((plots.plot_occupancy, a.occupancy), (plots.plot_landings, a.landings)):
        ax = plot(a, new_ax())
        top = int(np.argmax(values[1:])) + 1
        row, col = JUNGLE.cell(top)
        cell = next(p for p in ax.patches if isinstance(p, Rectangle) and (p.get_x(), p.get_y()) == (col, row))
        np.testing.assert_allclose(cell.get_facecolor(), cmap(1.0), atol=1e-12)
        assert "per game" in ax.figure.axes[-1].get_ylabel()
    assert plots.plot_occupancy(a, new_ax()).get_title() == "Where turns begin (jungle board, app rules)"
    note = [t.get_text() for t in plots.plot_landings(a, new_ax()).texts if t.get_text().startswith("Busiest")]
    busiest = int(np.argmax(a.landings[1:100])) + 1
    assert note == [f"Busiest square: {busiest}, landed on {a.landings[busiest]:.2f} times per game"]


# ------------------------------------------------------------------ lengths
def test_length_curves_are_the_exact_distributions(runs):
    ax = plots.plot_length_pmf(runs, new_ax())
    top = length_cutoff(runs)
    assert top == max(a.length.ppf(0.99) for a in runs.values())
    curves = [line for line in ax.lines if len(line.get_xdata()) > 2]
    assert len(curves) == 3
    for line, a in zip(curves, runs.values()):
        k = np.asarray(line.get_xdata())
        np.testing.assert_array_equal(k, np.arange(top + 1))
        np.testing.assert_allclose(line.get_ydata(), a.length.pmf(k), rtol=0, atol=1e-15)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[:3] == [f"{name}: mean {a.expected_turns:.1f}, median {a.length.median()}" for name, a in runs.items()]
    assert texts[3:] == ["mean", "median"]
    assert ax.get_xlabel() == "game length (turns)" and ax.get_ylabel() == "probability"
    # the median is marked where the cdf first reaches one half
    ax = plots.plot_length_cdf(runs, new_ax())
    medians = [line for line in ax.lines if line.get_marker() == "o" and len(line.get_xdata()) == 1]
    for line, a in zip(medians, runs.values()):
        m = a.length.median()
        assert line.get_xdata()[0] == m
        assert line.get_ydata()[0] == pytest.approx(float(a.length.cdf(m)), abs=1e-15)
        assert a.length.cdf(m - 1) < 0.5 <= a.length.cdf(m)


def test_length_plot_accepts_distributions_and_sequences(runs):
    ax = plots.plot_length_cdf([runs["plain"]], new_ax(), max_turns=50)
    assert ax.get_xlim() == (0, 50)
    assert ax.get_legend().get_texts()[0].get_text().startswith("plain: ")
    ax = plots.plot_length_pmf({"only": runs["app"].length}, new_ax())
    assert ax.get_legend().get_texts()[0].get_text() == f"only: mean {runs['app'].length.mean():.1f}, median 42"
    with pytest.raises(SnlError):
        plots.plot_length_pmf({}, new_ax())


# ------------------------------------------------------------------ toggles
def test_toggle_chart_places_each_case(runs):
    cases = compare_toggles(JUNGLE)
    ax = plots.plot_toggles(cases, new_ax())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 12
    assert labels[-1] == "bonus on, six to start off"  # the first case is drawn at the top
    dots = [line for line in ax.lines if line.get_marker() == "o" and len(line.get_xdata()) == 1]
    assert len(dots) == 12
    for line, case, y in zip(dots, cases, range(11, -1, -1)):
        assert line.get_xdata()[0] == case.expected_turns and line.get_ydata()[0] == y
    assert dots[0].get_xdata()[0] == pytest.approx(runs["app"].expected_turns, abs=1e-9)
    groups = [t.get_text() for t in ax.texts if t.get_text().startswith("finish:")]
    assert groups == ["finish: exact finish, stay", "finish: exact finish, bounce", "finish: no exact finish"]
    with pytest.raises(SnlError):
        plots.plot_toggles([], new_ax())
    from snlmarkov.report.core import compare_house_rules

    house = compare_house_rules(JUNGLE)
    ax = plots.plot_toggles(cases + house, new_ax())
    labels = [t.get_text() for t in ax.get_yticklabels()][::-1]
    assert labels[12:] == [c.label for c in house] and len(labels) == 18
    assert [t.get_text() for t in ax.texts if t.get_text() == "house rules"] == ["house rules"]


# ------------------------------------------------------------------ jumps
def test_jump_bars_are_sorted_and_tell_ladders_from_snakes(runs):
    a = runs["app"]
    ax = plots.plot_jump_effects(a, new_ax())
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    widths = [b.get_width() for b in bars]
    effects = sorted(a.jump_effects(), key=lambda e: -e.difference)
    np.testing.assert_allclose(widths, [e.difference for e in effects], rtol=0, atol=1e-12)
    for bar, e in zip(bars, effects):
        assert (bar.get_hatch() or "") == ("" if e.kind == "ladder" else "///")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"{e.kind} {e.start}\u2192{e.end}" for e in effects]
    assert labels[-1] == "ladder 28\u219284" and labels[0] == "snake 99\u219227"
    assert ax.get_xlabel().endswith("(turns)")


def test_jump_chart_of_a_board_without_jumps():
    with pytest.raises(SnlError, match="no ladders or snakes"):
        plots.plot_jump_effects(analyze(Board(9), Rules.preset("plain")), new_ax())


# ------------------------------------------------------------------ races
@pytest.fixture(scope="module")
def races():
    return {k: race(JUNGLE, Rules(), players=k, mode="last_one_standing") for k in (2, 3, 4)}


def test_win_chances_are_drawn_relative_to_a_fair_share(races):
    ax = plots.plot_win_chances(races, new_ax())
    lines = [line for line in ax.lines if line.get_label().endswith("players")]
    assert [line.get_label() for line in lines] == ["2 players", "3 players", "4 players"]
    for line, (k, r) in zip(lines, races.items()):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, k + 1))
        np.testing.assert_allclose(line.get_ydata(), k * r.win_probability, rtol=0, atol=1e-15)
    assert ax.get_ylabel() == "win chance / fair share (1 = fair)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["seat 1", "seat 2", "seat 3", "seat 4"]
    with pytest.raises(SnlError):
        plots.plot_win_chances({}, new_ax())


def test_place_heat_map_writes_every_probability(races):
    r = races[4]
    ax = plots.plot_places(r, new_ax())
    image = ax.images[0].get_array()
    np.testing.assert_allclose(image, 4 * r.place_probability - 1, rtol=0, atol=1e-15)
    texts = [t.get_text() for t in ax.texts]
    assert texts == [f"{100 * p:.1f}%" for p in r.place_probability.ravel()]
    low, high = ax.images[0].get_clim()
    assert low == -high == -np.abs(4 * r.place_probability - 1).max()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1st", "2nd", "3rd", "4th"]
    ax = plots.plot_places(r, new_ax(), limit=0.5, short_labels=True, colorbar=False)
    assert ax.images[0].get_clim() == (-0.5, 0.5) and ax.get_xlabel() == "place"


def test_place_heat_map_needs_every_place():
    classic = race(JUNGLE, Rules(), players=3, mode="classic")
    with pytest.raises(SnlError, match="must be square"):
        plots.plot_places(classic, new_ax())


# ------------------------------------------------------------------ cross-check
def test_crosscheck_bins_hold_the_exact_and_simulated_mass(runs):
    from snlmarkov.plots.crosscheck import length_bins

    a = runs["plain"]
    sims = np.array([7, 7, 8, 30, 30, 30, 10_000])
    ax = plots.plot_crosscheck(a, sims, new_ax(), caption="a verdict")
    cutoff = a.length.ppf(0.995)
    edges = length_bins(cutoff)
    width = edges[1] - edges[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    counts, _ = np.histogram(sims, bins=edges)
    np.testing.assert_allclose([b.get_height() for b in bars], counts / sims.size / width, rtol=0, atol=1e-15)
    exact = next(line for line in ax.lines if line.get_label() == "exact (Markov chain)")
    want = [a.length.probabilities[lo:hi].sum() / width for lo, hi in zip(edges[:-1], edges[1:])]
    np.testing.assert_allclose(exact.get_ydata(), want, rtol=1e-12, atol=1e-15)
    assert "1 longer game not shown" in ax.get_xlabel()
    assert ax.texts[-1].get_text() == "a verdict"
    with pytest.raises(SnlError):
        plots.plot_crosscheck(a, np.array([], dtype=int), new_ax())


def test_length_bins_cover_the_range():
    from snlmarkov.plots.crosscheck import length_bins

    for cutoff in (1, 39, 40, 41, 250, 1000):
        edges = length_bins(cutoff)
        assert edges[0] == 0 and edges[-1] > cutoff
        assert len(set(np.diff(edges))) == 1 and len(edges) - 1 <= 41
