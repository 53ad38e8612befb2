"""The report: every headline figure of one board, as PNG/SVG figures and tables.

:func:`write_report` analyses a board under every rule preset and writes,
deterministically (the same bytes on every run of the same code):

============================  =====================================================
``board.png``, ``.svg``       the board as the real game looks
``occupancy.png``             heat map: expected turns begun on each square
``landings.png``              heat map: expected landings on each square
``lengths.png``, ``.svg``     game-length pmf and cdf for every preset
``toggles.png``, ``.svg``     expected turns +/- std for the 12 rule combinations
                              and each house rule (restart, no jump after a bounce,
                              a chained jump)
``jump_effects.png``, ``.svg`` the value of each ladder and snake
``race_wins.png``, ``.svg``   win chance by seat for 2..6 players
``race_places.png``           finishing-place heat maps (last one standing)
``crosscheck.png``, ``.svg``  simulated versus exact game length, with the verdict
``odds.png``                  one seeded game: each seat's exact chance after every turn
``spinner.png``, ``.svg``     expected turns for each spinner range 1..n (n = 2..30), app rules
``summary.json``, ``.md``     every headline figure, as data and as tables
============================  =====================================================

Nothing in the files depends on the time, the machine or the output path:
PNGs carry no software tag, SVGs no date and a fixed hash salt, floats in
``summary.json`` are rounded to 12 significant digits (a jump's difference
to the precision of the length it is taken from, :func:`_round_like`) and
the Monte Carlo cross-check uses a fixed seed.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from .._version import __version__
from ..analysis.single import Analysis, analyze
from ..args import board_arg, rules_arg
from ..board import Board
from ..errors import GameError, InputFileError, SeedError, SnlError
from ..limits import clean_text, show_value
from ..plots._common import board_label
from ..rules import FINISH_RULES, MODES, Rules
from .defaults import DEFAULT_GAMES, DEFAULT_SEED, DPI, MIN_GAMES
from .spinner import spinner_markdown

__all__ = [
    "ToggleCase",
    "compare_toggles",
    "compare_house_rules",
    "PUZZLE_CHAIN",
    "Report",
    "write_report",
    "headline_table",
    "STAGES",
    "DEFAULT_GAMES",
    "MIN_GAMES",
    "DEFAULT_SEED",
    "DPI",
]


#: The stages of :func:`write_report`, in order (each reported to ``progress``).
STAGES = (
    "analysing every rule preset",
    "drawing the board",
    "heat maps of occupancy and landings",
    "game-length distributions",
    "rule toggles compared",
    "value of each ladder and snake",
    "multi-player races",
    "cross-check by simulation",
    "spinner ranges compared",
    "summary tables",
)

_STYLE: dict[str, Any] = {
    "font.size": 10.0,
    "axes.titlesize": 12.0,
    "axes.labelsize": 10.5,
    "legend.fontsize": 9.5,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "figure.dpi": 100,
    "savefig.dpi": DPI,
    "svg.hashsalt": "snlmarkov",
    "svg.fonttype": "path",
    "path.simplify": True,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
}


# ----------------------------------------------------------------- toggles
@dataclass(frozen=True)
class ToggleCase:
    """Game length under one combination of the three main house rules.

    Attributes
    ----------
    finish : {"stay", "bounce", "none"}
    bonus_on_six, start_on_six : bool
    rules : Rules
        The full rule set (the other fields as in the base rules).
    expected_turns, std_turns : float
        Mean and standard deviation of the number of turns (exact).
    median_turns : int
        Median number of turns (exact).
    variant : str, default ""
        For a case of :func:`compare_house_rules`: which house rule it
        shows, in words (its label); empty for the 12 combinations.
    """

    finish: str
    bonus_on_six: bool
    start_on_six: bool
    rules: Rules
    expected_turns: float
    std_turns: float
    median_turns: int
    variant: str = ""

    def __post_init__(self) -> None:
        if self.finish not in FINISH_RULES:
            raise SnlError(f"finish must be one of {', '.join(FINISH_RULES)}; got {self.finish!r}")
        if not (math.isfinite(self.expected_turns) and self.expected_turns >= 0 and self.std_turns >= 0):
            raise SnlError("expected_turns and std_turns must be finite and non-negative")

    @property
    def label(self) -> str:
        """A short description, e.g. ``"stay, bonus on, six to start off"`` (or the variant)."""
        if self.variant:
            return self.variant
        return (
            f"{self.finish}, bonus {'on' if self.bonus_on_six else 'off'}, "
            f"six to start {'on' if self.start_on_six else 'off'}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The case as plain data (the rules as their fields; the variant when there is one)."""
        out: dict[str, Any] = {"variant": self.variant} if self.variant else {}
        out.update(
            {
                "finish": self.finish,
                "bonus_on_six": self.bonus_on_six,
                "start_on_six": self.start_on_six,
                "rules": self.rules.to_dict(),
                "expected_turns": self.expected_turns,
                "std_turns": self.std_turns,
                "median_turns": self.median_turns,
            }
        )
        return out


#: The published puzzle chain (``83 -> 84 -> 97``) that :func:`compare_house_rules` adds to a board.
PUZZLE_CHAIN: Mapping[int, int] = MappingProxyType({83: 84, 84: 97})


def _case(board: Board, rules: Rules, variant: str) -> ToggleCase:
    a = analyze(board, rules)
    return ToggleCase(
        finish=rules.finish,
        bonus_on_six=rules.bonus_on_six,
        start_on_six=rules.start_on_six,
        rules=rules,
        expected_turns=a.expected_turns,
        std_turns=a.std_turns,
        median_turns=int(a.length.median()),
        variant=variant,
    )


def compare_house_rules(board: Board | None = None, base: Rules | None = None) -> tuple[ToggleCase, ...]:
    """Exact game length under each house rule of ``docs/rules.md`` that goes beyond the 12 combinations.

    The cases, each against its reference: the base rules; ``on_cap="restart"``
    (a six after the cap sends the token back to square 0); ``bounce``, and
    ``bounce`` with ``jump_after_bounce`` off; the base rules on the board
    with the puzzle chain :data:`PUZZLE_CHAIN` added (``83 -> 84 -> 97``,
    ``chain=True``; on the jungle board the ladder ``28 -> 84`` then chains
    on to 97 too), when no jump starts on 83 or 84 already; and all three
    together.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    base : Rules, optional
        Defaults to the ``app`` preset.

    Returns
    -------
    tuple of ToggleCase
        Each with its ``variant`` label.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> cases = compare_house_rules(snl.Board.builtin())
    >>> [c.label for c in cases][:2]
    ['app rules', 'restart after the cap']
    >>> round(cases[1].expected_turns - cases[0].expected_turns, 3)
    2.388
    """
    board, base = board_arg(board), rules_arg(base, "base")
    name = base.preset_name
    label = f"{name} rules" if name != "custom" else "base rules"
    restart = base.replace(on_cap="restart")
    cases = [_case(board, base, label)]
    if base.max_sixes is not None:
        cases.append(_case(board, restart, "restart after the cap"))
    bounce = base.replace(finish="bounce")
    bounce_ok = board.size >= base.die.top
    if bounce_ok:
        cases.append(_case(board, bounce, "bounce (jump after it)"))
        cases.append(_case(board, bounce.replace(jump_after_bounce=False), "bounce, no jump after it"))
    chained = _with_puzzle_chain(board)
    if chained is not None:
        text = "->".join(str(s) for s in (*PUZZLE_CHAIN, PUZZLE_CHAIN[max(PUZZLE_CHAIN)]))
        cases.append(_case(chained, base, f"chain {text} added"))
        if bounce_ok:
            every = restart.replace(finish="bounce", jump_after_bounce=False)
            cases.append(_case(chained, every, "chain, restart, bounce, no jump"))
    return tuple(cases)


def _with_puzzle_chain(board: Board) -> Board | None:
    """``board`` with :data:`PUZZLE_CHAIN` added as a chained board, or None when it does not fit."""
    if board.size <= max(PUZZLE_CHAIN.values()) or set(PUZZLE_CHAIN) & set(board.jumps):
        return None
    name = f"{board.name or 'custom'} + chain"
    try:  # a jump of the board may join the chain (on the jungle board 28 -> 84 -> 97)
        return Board(board.size, {**board.jumps, **PUZZLE_CHAIN}, name=name, chain=True)
    except SnlError:  # a cycle
        return None


def compare_toggles(board: Board | None = None, base: Rules | None = None) -> tuple[ToggleCase, ...]:
    """Exact game length for each finish rule x bonus on six x six to start.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    base : Rules, optional
        The other rule fields (cap, bump, die); defaults to the ``app`` preset.

    Returns
    -------
    tuple of ToggleCase
        12 cases, ordered by finish rule (stay, bounce, none), then bonus on
        before off, then six to start off before on.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> cases = compare_toggles(snl.Board.builtin())
    >>> len(cases), cases[0].label, round(cases[0].expected_turns, 6)
    (12, 'stay, bonus on, six to start off', 55.614784)
    """
    board, base = board_arg(board), rules_arg(base, "base")
    out = []
    for finish, bonus, six in itertools.product(FINISH_RULES, (True, False), (False, True)):
        rules = base.replace(finish=finish, bonus_on_six=bonus, start_on_six=six)
        a = analyze(board, rules)
        out.append(
            ToggleCase(
                finish=finish,
                bonus_on_six=bonus,
                start_on_six=six,
                rules=rules,
                expected_turns=a.expected_turns,
                std_turns=a.std_turns,
                median_turns=int(a.length.median()),
            )
        )
    return tuple(out)


# ------------------------------------------------------------------ result
@dataclass(frozen=True)
class Report:
    """What :func:`write_report` wrote.

    Attributes
    ----------
    out : pathlib.Path
        The output folder.
    files : tuple of str
        The files written, by name, in the order written.
    summary : Mapping
        The content of ``summary.json`` (read-only at the top level).
    """

    out: Path
    files: tuple[str, ...]
    summary: Mapping[str, Any] = field(repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "files", tuple(str(f) for f in self.files))
        object.__setattr__(self, "summary", MappingProxyType(dict(self.summary)))

    def paths(self) -> tuple[Path, ...]:
        """The files written, as paths under :attr:`out`."""
        return tuple(self.out / name for name in self.files)

    def table(self) -> str:
        """The headline figures as a short text table (see :func:`headline_table`)."""
        return headline_table(self.summary)


def headline_table(summary: Mapping[str, Any]) -> str:
    """Expected turns, spread and median per preset, as aligned text.

    Examples
    --------
    >>> print(headline_table({"board": {"name": "tiny"}, "presets": {"plain": {
    ...     "expected_turns": 3.5, "std_turns": 1.25, "median_turns": 3, "p90_turns": 6, "expected_rolls": 3.5}}}))
    board tiny
    preset  expected turns   std  median  90th pct  expected rolls
    plain             3.50  1.25       3         6            3.50
    """
    lines = [f"board {clean_text(summary['board'].get('name', 'custom'))}"]
    lines.append(
        f"{'preset':<7} {'expected turns':>14} {'std':>5} {'median':>7} {'90th pct':>9} {'expected rolls':>15}"
    )
    for name, s in summary["presets"].items():
        lines.append(
            f"{name:<7} {s['expected_turns']:>14.2f} {s['std_turns']:>5.2f} {s['median_turns']:>7} "
            f"{s['p90_turns']:>9} {s['expected_rolls']:>15.2f}"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------ writing
def _round(value: Any) -> Any:
    """Plain JSON data with floats to 12 significant digits (stable across machines)."""
    if isinstance(value, Mapping):
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v) for v in value]
    if isinstance(value, np.ndarray):
        return _round(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return str(value)
        rounded = float(f"{value:.12g}")
        return 0.0 if rounded == 0 else rounded
    return value


def _round_like(value: float, scale: float) -> float:
    """``value`` to the absolute precision of 12 significant digits of ``scale`` (a difference of two such figures).

    The difference of two figures near ``scale`` carries their rounding
    error, about ``1e-16 * scale``, so its own 12 significant digits would
    change from one machine to the next; rounded at the precision of
    ``scale`` it keeps what the figures themselves hold.

    Examples
    --------
    >>> _round_like(0.09305635943562152, 55.52172771439192), _round_like(0.09305635943565, 55.52)
    (0.0930563594, 0.0930563594)
    """
    if not (math.isfinite(value) and math.isfinite(scale)) or scale == 0:
        return value
    digits = 11 - math.floor(math.log10(abs(scale)))
    return round(value, digits) + 0.0


class _Writer:
    """Saves figures deterministically into one folder and lists what it wrote."""

    def __init__(self, out: Path):
        self.out = out
        self.files: list[str] = []

    def figure(self, fig: Any, name: str, *, svg: bool = False) -> None:
        fig.savefig(self.out / f"{name}.png", dpi=DPI, metadata={"Software": None})
        self.files.append(f"{name}.png")
        if svg:
            fig.savefig(self.out / f"{name}.svg", metadata={"Date": None, "Creator": None})
            self.files.append(f"{name}.svg")

    def text(self, name: str, content: str) -> None:
        (self.out / name).write_text(content, encoding="utf-8", newline="\n")
        self.files.append(name)


def _figure(width: float, height: float, **kwargs: Any) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained", **kwargs)


def write_report(
    board: Board | None = None,
    out: str | Path = "figures",
    *,
    games: int = DEFAULT_GAMES,
    seed: int = DEFAULT_SEED,
    max_players: int = 6,
    progress: Callable[[int, str], Any] | None = None,
) -> Report:
    """Analyse ``board`` and write every figure and the summary tables into ``out``.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    out : str or Path, default "figures"
        The output folder (created if needed); files of the same names are
        overwritten, other files are left alone.
    games : int, default 100000
        Games simulated for the cross-check.
    seed : int, default 20240601
        Seed of the cross-check simulation.
    max_players : int, default 6
        Races are computed for 2..max_players players (2..6).
    progress : callable, optional
        Called as ``progress(stage_number, stage_name)`` (1-based, see
        :data:`STAGES`) as each stage begins.

    Returns
    -------
    Report

    Raises
    ------
    SnlError
        For invalid arguments, or when the board cannot be finished.

    Examples
    --------
    >>> import tempfile, matplotlib
    >>> matplotlib.use("Agg")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     report = write_report(Board(30, {3: 22, 27: 1}, name="small"), tmp, games=1000, max_players=2)
    ...     print(report.table())
    ...     report.files[:3], report.summary["crosscheck"]["passed"]
    board small
    preset  expected turns   std  median  90th pct  expected rolls
    app              13.57  7.85      12        24           15.06
    family           25.33 16.51      21        47           26.33
    plain            15.03  8.36      13        26           15.03
    (('board.png', 'board.svg', 'occupancy.png'), True)
    """
    board = board_arg(board)
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < MIN_GAMES:
        raise GameError(f"games must be an integer >= {MIN_GAMES}, got {show_value(games)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SeedError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(max_players, bool) or not isinstance(max_players, (int, np.integer)) or not 2 <= max_players <= 6:
        raise GameError(f"max_players must be an integer in 2..6, got {show_value(max_players)}")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputFileError(f"cannot create the output folder {out}: {exc.strerror or exc}") from None

    import matplotlib

    def stage(i: int) -> None:
        if progress is not None:
            progress(i, STAGES[i - 1])

    writer = _Writer(out)
    with matplotlib.rc_context(_STYLE):  # type: ignore[arg-type]
        stage(1)
        runs = {name: analyze(board, Rules.preset(name)) for name in Rules.presets()}
        main = runs["app"]
        summary: dict[str, Any] = {
            "snlmarkov_version": __version__,
            "board": {"name": board.name or "custom", **board.to_dict()},
            "presets": {name: a.summary() for name, a in runs.items()},
        }
        stage(2)
        _board_figure(writer, board)
        stage(3)
        _heatmaps(writer, main)
        stage(4)
        _lengths(writer, runs, summary)
        stage(5)
        _toggles(writer, board, summary)
        stage(6)
        _jumps(writer, runs, summary)
        stage(7)
        _races(writer, board, max_players, summary)
        stage(8)
        _crosscheck(writer, main, games, seed, summary)
        stage(9)
        _spinners(writer, board, summary)
        stage(10)
        summary["files"] = sorted(writer.files + ["summary.json", "summary.md"])
        summary = _round(summary)
        writer.text("summary.json", json.dumps(summary, indent=2, sort_keys=False) + "\n")
        writer.text("summary.md", _markdown(summary))
    return Report(out=out, files=tuple(writer.files), summary=summary)


# ------------------------------------------------------------------ stages
def _board_figure(writer: _Writer, board: Board) -> None:
    from ..plots import draw_board

    fig = _figure(7.0, 7.5)
    draw_board(board, fig.subplots())
    writer.figure(fig, "board", svg=True)


def _heatmaps(writer: _Writer, analysis: Analysis) -> None:
    from ..plots import plot_landings, plot_occupancy

    for name, plot in (("occupancy", plot_occupancy), ("landings", plot_landings)):
        fig = _figure(7.0, 6.6)
        plot(analysis, fig.subplots())
        writer.figure(fig, name)


def _lengths(writer: _Writer, runs: Mapping[str, Analysis], summary: dict) -> None:
    from ..plots import plot_length_cdf, plot_length_pmf

    fig = _figure(7.0, 7.4)
    top, bottom = fig.subplots(2, 1, sharex=True)
    plot_length_pmf(runs, top)
    plot_length_cdf(runs, bottom)
    top.set_xlabel("")
    writer.figure(fig, "lengths", svg=True)


def _toggles(writer: _Writer, board: Board, summary: dict) -> None:
    from ..plots import plot_toggles

    cases = compare_toggles(board)
    house = compare_house_rules(board)
    fig = _figure(7.0, 5.6 + 0.32 * len(house))
    plot_toggles(cases + house, fig.subplots())
    writer.figure(fig, "toggles", svg=True)
    summary["toggles"] = {
        "base_rules": "app",
        "cases": [{k: v for k, v in c.to_dict().items() if k != "rules"} for c in cases],
        "house_rules": [
            {
                "variant": c.variant,
                "rules": {k: v for k, v in c.rules.to_dict().items() if k in ("finish", "on_cap", "jump_after_bounce")},
                "expected_turns": c.expected_turns,
                "std_turns": c.std_turns,
                "median_turns": c.median_turns,
            }
            for c in house
        ],
    }


def _jumps(writer: _Writer, runs: Mapping[str, Analysis], summary: dict) -> None:
    from ..plots import plot_jump_effects

    effects = {name: a.jump_effects() for name, a in runs.items()}
    if effects["app"]:
        fig = _figure(7.0, 0.3 * len(effects["app"]) + 1.6)
        plot_jump_effects(runs["app"], fig.subplots())
        writer.figure(fig, "jump_effects", svg=True)
    summary["jump_effects"] = {
        name: [
            {
                "start": e.start,
                "end": e.end,
                "kind": e.kind,
                "difference": _round_like(e.difference, e.expected_turns_without),
                "expected_turns_without": e.expected_turns_without,
                "uses": e.uses,
            }
            for e in sorted(fx, key=lambda e: e.difference)
        ]
        for name, fx in effects.items()
    }


def _race_entry(result: Any) -> dict[str, Any]:
    entry = {
        "method": result.method,
        "win_probability": result.win_probability,
        "expected_rounds": result.expected_rounds,
        "expected_total_turns": result.expected_total_turns,
        "median_rounds": result.rounds_distribution.median(),
    }
    if result.mode == "last_one_standing":
        entry["place_probability"] = result.place_probability
        entry["expected_place"] = result.expected_place
    return entry


def _races(writer: _Writer, board: Board, max_players: int, summary: dict) -> None:
    from ..plots import plot_places, plot_win_chances
    from ..plots.race import add_place_colorbar
    from ..races.core import race

    rules = Rules.preset("app")
    counts = range(2, max_players + 1)
    results = {mode: {k: race(board, rules, players=k, mode=mode) for k in counts} for mode in MODES}
    fig = _figure(7.0, 4.6)
    plot_win_chances(
        results["classic"],
        fig.subplots(),
        title=f"How much the first seat gains ({board_label(board)} board, app rules)",
    )
    writer.figure(fig, "race_wins", svg=True)

    cols = min(3, len(counts))
    rows = math.ceil(len(counts) / cols)
    fig = _figure(7.0, 2.5 * rows + 0.6)
    axes = np.atleast_1d(fig.subplots(rows, cols)).ravel()
    standing = results["last_one_standing"]
    limit = max(float(np.abs(k * r.place_probability - 1.0).max()) for k, r in standing.items())
    for ax, k in zip(axes, counts):
        plot_places(
            standing[k],
            ax,
            title=f"{k} players",
            colorbar=False,
            fontsize=_place_font(k),
            limit=limit,
            short_labels=True,
        )
    for ax in axes[len(counts) :]:
        ax.set_axis_off()
    add_place_colorbar(axes[0].images[0], list(axes), shrink=0.8)
    fig.suptitle(
        f"Finishing places in last one standing: chance of each place by seat\n"
        f"({board_label(board)} board, app rules; seat 1 moves first)"
    )
    writer.figure(fig, "race_places")

    summary["race"] = {
        "rules": "app",
        **{mode: {str(k): _race_entry(r) for k, r in by_k.items()} for mode, by_k in results.items()},
    }
    family = Rules.preset("family")
    family_results = {mode: race(board, family, players=2, mode=mode) for mode in MODES}
    summary["race_family_two_players"] = {mode: _race_entry(r) for mode, r in family_results.items()}
    _odds_game(writer, board, summary)


#: The game shown in ``odds.png``: two players, app rules, this seed.
ODDS_GAME_SEED = 29


def _odds_game(writer: _Writer, board: Board, summary: dict) -> None:
    """One seeded game and each seat's exact chance after every turn (``odds.png``)."""
    from ..game.engine import Game
    from ..plots import plot_odds
    from ..races.odds import Odds

    rules = Rules.preset("app")
    record = Game(board, rules, players=["Ann", "Bob"], rng=ODDS_GAME_SEED).play()
    odds = Odds(board, rules, players=2)
    timeline = odds.timeline(record)
    swings = odds.swings(record, top=3, timeline=timeline)
    fig = _figure(7.0, 4.0)
    plot_odds(
        timeline,
        fig.subplots(),
        swings=swings,
        title=f"One game, the exact odds after every turn ({board_label(board)} board, app rules, seed {ODDS_GAME_SEED})",
    )
    writer.figure(fig, "odds")
    summary["odds_game"] = {
        "seed": ODDS_GAME_SEED,
        "rules": "app",
        "players": ["Ann", "Bob"],
        "turns": len(record.turns()),
        "winner": record.seats[record.winner].name,
        "start": timeline.win[0].tolist(),
        "swings": [s.story() for s in swings],
    }


def _place_font(players: int) -> float:
    return 8.0 if players <= 3 else 7.0 if players == 4 else 6.0 if players == 5 else 5.0


def _crosscheck(writer: _Writer, analysis: Analysis, games: int, seed: int, summary: dict) -> None:
    from ..checks.crosschecking import crosscheck
    from ..plots import plot_crosscheck
    from ..sim.core import simulate

    board, rules = analysis.board, analysis.rules
    check = crosscheck(board, rules, games, rng=seed, exact=analysis)
    # the histogram: games played by the public simulator (the cross-check keeps no per-game turns)
    shown = simulate(board, rules, games, rng=seed)
    verdict = (
        f"{'PASSED' if check.passed else 'FAILED'} at overall alpha {check.alpha:g} "
        f"({len(check.checks)} tests on {check.games:,} simulated games, seed {seed})"
    )
    tests = "; ".join(f"{c.name} p = {c.p_value:.2g}" for c in check.checks)
    caption = f"Cross-check verdict: {verdict}\n{tests}"
    fig = _figure(7.0, 4.9)
    plot_crosscheck(
        analysis,
        shown.turns,
        fig.subplots(),
        caption=caption,
        title=f"Simulated versus exact game length ({board_label(board)} board, app rules)",
    )
    writer.figure(fig, "crosscheck", svg=True)
    summary["crosscheck"] = {
        "rules": "app",
        "games": check.games,
        "seed": seed,
        "alpha": check.alpha,
        "passed": check.passed,
        "verdict": verdict,
        "n_truncated": check.n_truncated,
        "mean_turns": check.mean_turns,
        "exact_mean_turns": check.exact_mean_turns,
        "std_turns": check.std_turns,
        "exact_std_turns": check.exact_std_turns,
        "mean_rolls": check.mean_rolls,
        "exact_mean_rolls": check.exact_mean_rolls,
        "checks": [c.to_dict() for c in check.checks],
        "histogram": {"games": shown.games, "seed": seed, "mean_turns": shown.mean_turns()},
    }


def _spinners(writer: _Writer, board: Board, summary: dict) -> None:
    from ..plots import plot_spinner_ranges
    from .spinner import compare_spinners, spinner_summary

    sweep = compare_spinners(board, Rules.preset("app"))
    fig = _figure(7.0, 4.6)
    plot_spinner_ranges(sweep, fig.subplots())
    writer.figure(fig, "spinner", svg=True)
    summary["spinner"] = spinner_summary(sweep, "app")


# ------------------------------------------------------------------ markdown
def _markdown(summary: Mapping[str, Any]) -> str:
    board = summary["board"]
    lines = [
        f"# snlmarkov report: {board['name']} board",
        "",
        f"Generated by `snlmarkov report` (snlmarkov {summary['snlmarkov_version']}). "
        f"Board of {board['size']} squares, {len(board['ladders'])} ladders, {len(board['snakes'])} snakes. "
        "All figures are exact (from the Markov chain) except the cross-check simulation.",
        "",
        "## Game length by rule preset (one player, turns)",
        "",
        "| preset | expected turns | std | median | mode | minimum | 90th percentile | expected rolls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in summary["presets"].items():
        lines.append(
            f"| {name} | {s['expected_turns']:.4f} | {s['std_turns']:.4f} | {s['median_turns']} | {s['mode_turns']} "
            f"| {s['min_turns']} | {s['p90_turns']} | {s['expected_rolls']:.4f} |"
        )
    lines += [
        "",
        "Presets: " + "; ".join(f"**{n}** = " + _rules_words(s["rules"]) for n, s in summary["presets"].items()) + ".",
        "",
        "## House rules compared (other rules as in `app`)",
        "",
        "| finish | bonus on six | six to start | expected turns | std | median |",
        "|---|---|---|---:|---:|---:|",
    ]
    for c in summary["toggles"]["cases"]:
        lines.append(
            f"| {c['finish']} | {_yes(c['bonus_on_six'])} | {_yes(c['start_on_six'])} | {c['expected_turns']:.4f} "
            f"| {c['std_turns']:.4f} | {c['median_turns']} |"
        )
    if summary["toggles"].get("house_rules"):
        lines += [
            "",
            "## Each house rule on its own (other rules as in `app`)",
            "",
            "| house rule | expected turns | std | median |",
            "|---|---:|---:|---:|",
        ]
        for c in summary["toggles"]["house_rules"]:
            lines.append(f"| {c['variant']} | {c['expected_turns']:.4f} | {c['std_turns']:.4f} | {c['median_turns']} |")
    lines += [
        "",
        "## Value of each ladder and snake (`app` rules)",
        "",
        "Difference = expected turns with the jump minus without it; uses = expected uses per game.",
        "",
        "| jump | difference (turns) | expected turns without | uses per game |",
        "|---|---:|---:|---:|",
    ]
    for e in summary["jump_effects"]["app"]:
        lines.append(
            f"| {e['kind']} {e['start']}\u2192{e['end']} | {e['difference']:+.4f} | {e['expected_turns_without']:.4f} "
            f"| {e['uses']:.4f} |"
        )
    lines += _race_markdown(summary["race"])
    lines += _family_markdown(summary["race_family_two_players"])
    lines += _crosscheck_markdown(summary["crosscheck"])
    if "odds_game" in summary:
        game = summary["odds_game"]
        lines += [
            "",
            f"## One game, the odds after every turn (`app` rules, seed {game['seed']})",
            "",
            f"{' and '.join(game['players'])}; {game['winner']} won after {game['turns']} turns. "
            "The biggest swings of the exact odds ([odds.png](odds.png)):",
            "",
        ]
        lines += [f"- {story}" for story in game["swings"]]
    if "spinner" in summary:
        lines += spinner_markdown(summary["spinner"])
    lines += ["", "## Files", ""]
    lines += [f"- [{name}]({name})" for name in summary["files"]]
    return "\n".join(lines) + "\n"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _rules_words(rules: Mapping[str, Any]) -> str:
    parts = [f"finish {rules['finish']}"]
    if rules["bonus_on_six"]:
        cap = "no cap" if rules["max_sixes"] is None else f"at most {rules['max_sixes']} sixes, then {rules['on_cap']}"
        parts.append(f"bonus roll on a six ({cap})")
    else:
        parts.append("no bonus roll")
    if rules["start_on_six"]:
        parts.append("six to start")
    if rules["bump"]:
        parts.append(f"bump to {rules['bump_to']}")
    return ", ".join(parts)


def _race_markdown(race: Mapping[str, Any]) -> list[str]:
    lines = [
        "",
        "## Races (`app` rules; seat 1 moves first in every round)",
        "",
        f"Method: {next(iter(race['classic'].values()))['method']}.",
        "",
        "### Classic: chance of winning by seat",
        "",
        "| players | " + " | ".join(f"seat {s}" for s in range(1, 7)) + " | expected rounds | median rounds |",
        "|---|" + "---:|" * 8,
    ]
    for k, r in race["classic"].items():
        wins = [f"{100 * p:.2f}%" for p in r["win_probability"]] + [""] * (6 - int(k))
        lines.append(f"| {k} | " + " | ".join(wins) + f" | {r['expected_rounds']:.3f} | {r['median_rounds']} |")
    lines += [
        "",
        "Without bump the first to finish is the same in both modes, so these are also the chances of finishing "
        "first in last one standing.",
        "",
        "### Last one standing: chance of each place by seat",
        "",
    ]
    for k, r in race["last_one_standing"].items():
        n = int(k)
        lines += [
            f"{n} players (expected rounds until all finish: {r['expected_rounds']:.3f}):",
            "",
            "| seat | " + " | ".join(f"place {j}" for j in range(1, n + 1)) + " | expected place |",
            "|---|" + "---:|" * (n + 1),
        ]
        for seat, row in enumerate(r["place_probability"]):
            cells = " | ".join(f"{100 * p:.2f}%" for p in row)
            lines.append(f"| {seat + 1} | {cells} | {r['expected_place'][seat]:.4f} |")
        lines.append("")
    return lines


def _family_markdown(family: Mapping[str, Any]) -> list[str]:
    lines = ["### Two players under the `family` rules (bump)", ""]
    for mode, r in family.items():
        wins = ", ".join(f"seat {s + 1} {100 * p:.2f}%" for s, p in enumerate(r["win_probability"]))
        lines.append(f"- {mode}: {r['method']}; first to finish: {wins}; expected rounds {r['expected_rounds']:.3f}")
    return lines


def _crosscheck_markdown(check: Mapping[str, Any]) -> list[str]:
    lines = [
        "",
        "## Cross-check by simulation (`app` rules)",
        "",
        f"Verdict: **{check['verdict']}**.",
        "",
        "| test | statistic | p-value | alpha | result | detail |",
        "|---|---:|---:|---:|---|---|",
    ]
    for c in check["checks"]:
        stat = c["statistic"] if isinstance(c["statistic"], str) else f"{c['statistic']:.4g}"
        lines.append(
            f"| {c['name']} | {stat} | {c['p_value']:.4g} | {c['alpha']:.2g} | {'pass' if c['passed'] else 'FAIL'} "
            f"| {c['detail']} |"
        )
    lines += [
        "",
        f"Mean turns simulated {check['mean_turns']:.4f} (exact {check['exact_mean_turns']:.4f}); "
        f"std {check['std_turns']:.4f} (exact {check['exact_std_turns']:.4f}); "
        f"mean rolls {check['mean_rolls']:.4f} (exact {check['exact_mean_rolls']:.4f}).",
    ]
    return lines
