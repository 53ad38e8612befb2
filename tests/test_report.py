"""The report: its figures and tables hold the exact figures, and it writes the same bytes every time."""

import json
import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from snlmarkov import Board, Rules, analyze  # noqa: E402
from snlmarkov.errors import SnlError  # noqa: E402
from snlmarkov.races.core import race  # noqa: E402
from snlmarkov.report.core import (  # noqa: E402
    DPI,
    STAGES,
    Report,
    ToggleCase,
    _round,
    compare_toggles,
    headline_table,
    write_report,
)

JUNGLE = Board.builtin()
GAMES = 20_000  # the cross-check of the report under test (the default is larger)
SEED = 11

FIGURES = [
    "board",
    "occupancy",
    "landings",
    "lengths",
    "toggles",
    "jump_effects",
    "race_wins",
    "race_places",
    "crosscheck",
    "odds",
    "spinner",
]
SVGS = ["board", "lengths", "toggles", "jump_effects", "race_wins", "crosscheck", "spinner"]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The same report written twice into two folders, with the progress calls of the first."""
    calls = []
    first = write_report(
        JUNGLE, tmp_path_factory.mktemp("a"), games=GAMES, seed=SEED, progress=lambda *a: calls.append(a)
    )
    second = write_report(JUNGLE, tmp_path_factory.mktemp("b"), games=GAMES, seed=SEED)
    return first, second, calls


# ------------------------------------------------------------------ toggles
def test_toggle_cases_are_the_twelve_combinations():
    cases = compare_toggles(JUNGLE)
    assert len(cases) == 12
    assert [(c.finish, c.bonus_on_six, c.start_on_six) for c in cases] == [
        (f, b, s) for f in ("stay", "bounce", "none") for b in (True, False) for s in (False, True)
    ]
    for c in cases:
        assert c.rules == Rules.preset("app").replace(
            finish=c.finish, bonus_on_six=c.bonus_on_six, start_on_six=c.start_on_six
        )
    # the corners that are presets (bump plays no part for one token)
    assert cases[0].expected_turns == pytest.approx(55.614784073828, abs=1e-9)
    family = analyze(JUNGLE, Rules.preset("family"))
    assert cases[7].label == "bounce, bonus off, six to start on"
    assert cases[7].expected_turns == pytest.approx(family.expected_turns, abs=1e-9)
    assert cases[7].std_turns == pytest.approx(family.std_turns, abs=1e-9)
    assert cases[7].median_turns == family.length.median() == 70
    plain = analyze(JUNGLE, Rules.preset("plain"))
    assert cases[2].expected_turns == pytest.approx(plain.expected_turns, abs=1e-9)


def test_toggle_cases_follow_hand_derived_values():
    # a board of 2 squares, plain two-faced die: a 2 finishes from 0, a 1 needs a 1 next (stay)
    base = Rules.preset("plain").replace(faces=2)
    cases = {(c.finish, c.bonus_on_six, c.start_on_six): c for c in compare_toggles(Board(2), base)}
    # stay: from 1 a 1 finishes and a 2 overshoots, so E1 = 2; E0 = 1 + E1 / 2 = 2
    assert cases[("stay", False, False)].expected_turns == pytest.approx(2.0, abs=1e-12)
    # none: from 1 any roll finishes, E1 = 1; E0 = 1 + E1 / 2 = 1.5
    assert cases[("none", False, False)].expected_turns == pytest.approx(1.5, abs=1e-12)
    # six to start, the top face (2) enters and one more roll moves from 0: the turn from 0 stays
    # on 0 w.p. 1/2, ends on 1 w.p. 1/4, finishes w.p. 1/4, so E0 = 1 + E0 / 2 + E1 / 4, E0 = 3
    assert cases[("stay", False, True)].expected_turns == pytest.approx(3.0, abs=1e-12)


def test_house_rule_cases_show_each_new_rule():
    from fractions import Fraction

    from snlmarkov import exact_expected_turns
    from snlmarkov.report.core import PUZZLE_CHAIN, compare_house_rules

    cases = compare_house_rules(JUNGLE)
    assert len(cases) == 6 and all(c.variant for c in cases)
    app = Rules.preset("app")
    chained = Board(100, {**JUNGLE.jumps, **PUZZLE_CHAIN}, chain=True)
    want = [
        (JUNGLE, app),
        (JUNGLE, app.replace(on_cap="restart")),
        (JUNGLE, app.replace(finish="bounce")),
        (JUNGLE, app.replace(finish="bounce", jump_after_bounce=False)),
        (chained, app),
        (chained, app.replace(on_cap="restart", finish="bounce", jump_after_bounce=False)),
    ]
    for case, (board, rules) in zip(cases, want):
        assert case.rules == rules
        exact = exact_expected_turns(board, rules)
        assert isinstance(exact, Fraction)
        assert case.expected_turns == pytest.approx(float(exact), rel=1e-12), case.label
    assert cases[0].expected_turns == pytest.approx(55.614784073828, abs=1e-9)
    # on a board of 2 squares only the base case and (with a cap) the restart fit
    small = compare_house_rules(Board(2), Rules.preset("plain").replace(faces=2, bonus_on_six=True, max_sixes=1))
    assert [c.rules.on_cap for c in small][:2] == ["redeal", "restart"] and len(small) == 4
    assert ToggleCase("stay", True, False, Rules(), 1.0, 1.0, 1, variant="x").to_dict()["variant"] == "x"


def test_toggle_case_validates():
    with pytest.raises(SnlError):
        ToggleCase("exact", True, False, Rules(), 1.0, 1.0, 1)
    with pytest.raises(SnlError):
        ToggleCase("stay", True, False, Rules(), math.inf, 1.0, 1)


# ------------------------------------------------------------------ helpers
def test_rounding_for_stable_json():
    assert _round(1 / 3) == 0.333333333333
    assert _round({"a": np.float64(2.0) / 3, "b": [np.int64(3), True, math.inf], 4: None}) == {
        "a": 0.666666666667,
        "b": [3, True, "inf"],
        "4": None,
    }
    assert _round(np.array([1e-20, -0.0])) == [1e-20, 0.0]


def test_headline_table():
    text = headline_table(
        {
            "board": {"name": "b"},
            "presets": {
                "app": {
                    "expected_turns": 55.6148,
                    "std_turns": 44.5133,
                    "median_turns": 42,
                    "p90_turns": 114,
                    "expected_rolls": 65.29,
                }
            },
        }
    )
    assert text.splitlines()[2].split() == ["app", "55.61", "44.51", "42", "114", "65.29"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"games": 399}, "games must be an integer >= 400"),
        ({"games": 1000.0}, "games must be an integer"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"max_players": 7}, "max_players must be an integer in 2..6"),
        ({"max_players": 1}, "max_players must be an integer in 2..6"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, message):
    with pytest.raises(SnlError, match=message):
        write_report(JUNGLE, tmp_path, **kwargs)


def test_bad_board_and_folder(tmp_path):
    with pytest.raises(SnlError, match="board must be a Board"):
        write_report("jungle", tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SnlError, match="cannot create the output folder"):
        write_report(JUNGLE, blocker / "sub")


# ------------------------------------------------------------------ the report
def test_report_is_byte_for_byte_deterministic(two_runs):
    first, second, _ = two_runs
    assert first.files == second.files
    for a, b in zip(first.paths(), second.paths()):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_report_writes_every_file(two_runs):
    report, _, _ = two_runs
    expected = [f"{n}.png" for n in FIGURES] + [f"{n}.svg" for n in SVGS] + ["summary.json", "summary.md"]
    assert sorted(report.files) == sorted(expected)
    assert sorted(p.name for p in report.out.iterdir()) == sorted(expected)
    assert isinstance(report, Report)
    for path in report.paths():
        assert path.stat().st_size > 0


def test_progress_reports_every_stage_in_order(two_runs):
    _, _, calls = two_runs
    assert calls == [(i, name) for i, name in enumerate(STAGES, start=1)]


def test_pngs_are_readable_at_readme_size_and_untagged(two_runs):
    report, _, _ = two_runs
    for path in report.paths():
        if path.suffix != ".png":
            continue
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width = int.from_bytes(data[16:20], "big")
        assert width == round(7.0 * DPI), path.name  # every figure is 7 inches wide
        assert b"tEXtSoftware" not in data and b"matplotlib" not in data.lower()


def test_svgs_carry_no_date_or_path(two_runs):
    report, _, _ = two_runs
    for path in report.paths():
        if path.suffix == ".svg":
            text = path.read_text()
            assert text.startswith("<?xml")
            assert "<dc:date>" not in text
            assert str(report.out) not in text


def test_summary_json_holds_the_exact_figures(two_runs):
    report, _, _ = two_runs
    data = json.loads((report.out / "summary.json").read_text())
    assert data == dict(report.summary)
    assert str(report.out) not in (report.out / "summary.json").read_text()
    assert data["board"]["name"] == "jungle" and data["board"]["size"] == 100
    assert list(data["presets"]) == ["app", "family", "plain"]
    for name, s in data["presets"].items():
        a = analyze(JUNGLE, Rules.preset(name))
        assert s["expected_turns"] == pytest.approx(a.expected_turns, rel=1e-11)
        assert s["std_turns"] == pytest.approx(a.std_turns, rel=1e-11)
        assert s["median_turns"] == a.length.median()
        assert s["p90_turns"] == a.length.ppf(0.9)
    assert data["presets"]["app"]["expected_turns"] == pytest.approx(55.614784073828, abs=1e-9)
    assert len(data["toggles"]["cases"]) == 12
    assert [c["rules"]["on_cap"] for c in data["toggles"]["house_rules"]][:2] == ["redeal", "restart"]
    effects = data["jump_effects"]["app"]
    assert [e["difference"] for e in effects] == sorted(e["difference"] for e in effects)
    assert (effects[0]["start"], effects[0]["end"]) == (28, 84)
    assert (effects[-1]["start"], effects[-1]["end"]) == (99, 27)
    assert sorted(data["files"]) == sorted(report.files)


def test_summary_json_race_figures(two_runs):
    report, _, _ = two_runs
    figures = report.summary["race"]
    assert figures["rules"] == "app"
    for k in range(2, 7):
        exact = race(JUNGLE, Rules(), players=k, mode="classic")
        got = figures["classic"][str(k)]
        np.testing.assert_allclose(got["win_probability"], exact.win_probability, rtol=1e-11, atol=1e-15)
        assert got["expected_rounds"] == pytest.approx(exact.expected_rounds, rel=1e-11)
        los = race(JUNGLE, Rules(), players=k, mode="last_one_standing")
        places = np.asarray(figures["last_one_standing"][str(k)]["place_probability"])
        np.testing.assert_allclose(places, los.place_probability, rtol=1e-11, atol=1e-15)
        np.testing.assert_allclose(places.sum(axis=0), 1.0, atol=1e-9)
        np.testing.assert_allclose(places.sum(axis=1), 1.0, atol=1e-9)
    # seat 1 moving first is an advantage
    wins = figures["classic"]["2"]["win_probability"]
    assert wins[0] > 0.5 > wins[1]


def test_summary_json_crosscheck(two_runs):
    report, _, _ = two_runs
    check = report.summary["crosscheck"]
    assert check["games"] == GAMES and check["seed"] == SEED
    assert check["passed"] is True  # a correct model at the report's alpha, with this fixed seed
    assert check["verdict"].startswith("PASSED")
    assert [c["name"] for c in check["checks"]] == ["mean turns", "mean rolls", "turn distribution", "landings"]
    assert check["exact_mean_turns"] == pytest.approx(55.614784073828, abs=1e-9)
    # the exact model is right, so at the report's alpha it passes with this seed
    assert check["passed"] is True


def test_summary_markdown_tables(two_runs):
    report, _, _ = two_runs
    text = (report.out / "summary.md").read_text()
    assert text.startswith("# snlmarkov report: jungle board")
    for name in Rules.presets():
        a = analyze(JUNGLE, Rules.preset(name))
        d = a.length
        row = (
            f"| {name} | {a.expected_turns:.4f} | {a.std_turns:.4f} | {d.median()} | {d.mode} | {d.minimum} "
            f"| {d.ppf(0.9)} | {a.expected_rolls:.4f} |"
        )
        assert row in text
    assert "| ladder 28\u219284 | -17.6" in text
    for name in report.files:
        assert f"({name})" in text
    assert "## Races" in text and "## Cross-check" in text


def test_table_of_headline_figures(two_runs):
    report, _, _ = two_runs
    lines = report.table().splitlines()
    assert lines[0] == "board jungle"
    assert lines[2].split()[:4] == ["app", "55.61", "44.51", "42"]
    assert [line.split()[0] for line in lines[2:]] == ["app", "family", "plain"]


def assert_close(got, want, where):
    """Nested JSON data equal, floats to a relative 1e-9."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for key in want:
            assert_close(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), where
    else:
        assert got == want, where


def test_committed_figures_match_the_code(two_runs):
    """figures/ holds what `snlmarkov report` writes today (exact sections compared to 1e-9)."""
    from pathlib import Path

    committed_dir = Path(__file__).resolve().parent.parent / "figures"
    committed = json.loads((committed_dir / "summary.json").read_text())
    fresh = json.loads(json.dumps(dict(two_runs[0].summary)))
    assert sorted(committed["files"]) == sorted(fresh["files"])
    assert sorted(p.name for p in committed_dir.iterdir()) == sorted(fresh["files"])
    for section in ("board", "presets", "toggles", "jump_effects", "race", "race_family_two_players", "odds_game"):
        assert_close(committed[section], fresh[section], section)
    assert committed["crosscheck"]["passed"] is True
    assert committed["crosscheck"]["games"] == 100_000


def test_committed_crosscheck_matches_the_simulator():
    """The simulated figures in figures/ are what the current simulator draws with the recorded seed."""
    from pathlib import Path

    from snlmarkov import Board, Rules, crosscheck, simulate

    committed = json.loads((Path(__file__).resolve().parent.parent / "figures" / "summary.json").read_text())[
        "crosscheck"
    ]
    board, rules = Board.builtin(), Rules()
    check = crosscheck(board, rules, committed["games"], rng=committed["seed"])
    assert check.mean_turns == pytest.approx(committed["mean_turns"], rel=1e-9)
    assert check.mean_rolls == pytest.approx(committed["mean_rolls"], rel=1e-9)
    assert [c.p_value for c in check.checks] == pytest.approx([c["p_value"] for c in committed["checks"]], rel=1e-6)
    shown = simulate(board, rules, committed["histogram"]["games"], rng=committed["histogram"]["seed"])
    assert shown.mean_turns() == pytest.approx(committed["histogram"]["mean_turns"], rel=1e-9)
