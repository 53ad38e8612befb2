"""The games people played, pooled, against the exact model.

:func:`check_stored` takes many :class:`~snlmarkov.GameRecord` objects (the
games a server stored) and tests them together against the exact turn-level
chain, per board and rule set:

- **turn counts**: how many turns each seat needed to reach the finish. A
  seat still racing when its game ended (every seat but the winner under
  ``classic``, every seat of an abandoned game) is *censored*: it needed more
  turns than it had. Without the bump rule a seat's token moves as if alone,
  and the end of its game depends only on the other seats, so the censoring
  is independent of its own length; the one-sample log-rank test applies:
  in each turn ``t`` a seat still racing finishes with the model's hazard
  ``h(t) = P(K = t) / P(K >= t)`` (from the seat's starting square), the
  observed finishes in bins of ``t`` are compared with the summed hazards
  (each bin's expected count at least 5), and the statistic
  ``sum (O - E)^2 / V`` is chi-square with one degree of freedom per bin. A
  finish at a turn count the model calls impossible fails outright. Skipped
  turns are not steps of the chain and are not counted. Under the bump rule
  tokens interact and this test does not apply (it is reported so).
- **landings**: for every played turn from square ``s``, the model's
  expected number of landings on each square (``turn_model(...).landings``)
  is summed; the observed landings (the squares the rolls landed on, before
  a jump) are compared square by square with a z statistic (the deviations
  of each turn sum to a martingale; their squares give its variance, taken
  never below the model's own ``sum p (1 - p)``, so that a square landed on
  too rarely cannot shrink its own spread), squares with an expected count
  of at least 5 tested, Holm's
  correction over the squares; a landing the model calls impossible fails
  outright. This holds under every rule, bump included (landings happen
  before the bump).

Under a rule set with a choice (``docs/rules.md``, "Choices") how a seat
moves depends on its choices, which the exact model does not know, so the
two tests do not apply (they are reported so); what does hold is that every
die thrown is a draw of its law, whatever was chosen:

- **dice**: for each law (each die of ``choose_die``, or the die, and its
  capped roll under ``redeal``, the die without its top value), the values
  thrown are pooled (under ``choose_move`` all ``k`` dice of every throw)
  and tested with a chi-square goodness of fit (each value's expected count
  at least 5, else the law is left out), Holm's correction over the laws.

The overall ``alpha`` is split evenly over the groups and the two tests
(Bonferroni).

Examples
--------
>>> from snlmarkov import Board, Game, Rules
>>> records = [Game(Board(20, {3: 12, 17: 5}), Rules(), players=3, mode="last_one_standing", rng=i).play()
...            for i in range(300)]
>>> report = check_stored(records, alpha=1e-6)
>>> report.passed, report.games
(True, 300)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..board import Board
from ..chain.model import turn_model
from ..errors import GameError, SnlError
from ..game.events import Bounce, ChooseDie, Ladder, Move, Roll, RolledDice, Snake
from ..limits import clean_text
from ..rules import Rules
from ..state import GameState
from .crosschecking import Check, _holm

__all__ = ["check_stored", "StoredCheckReport"]

#: survival mass below which the single-token length's tail is dropped
_TAIL = 1e-13
#: expected count each bin / square needs before it is tested
_MIN_EXPECTED = 5.0


@dataclass(frozen=True)
class GroupCheck:
    """The tests of the games played on one board under one rule set."""

    board: Board
    rules: Rules
    games: int
    seats: int
    finished_seats: int
    turns: int
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


@dataclass(frozen=True)
class StoredCheckReport:
    """The verdict of :func:`check_stored` on all the games together."""

    games: int
    alpha: float
    groups: tuple[GroupCheck, ...]

    @property
    def passed(self) -> bool:
        """Every test of every group passed (True when there was nothing to test)."""
        return all(g.passed for g in self.groups)

    def __str__(self) -> str:
        head = "PASSED" if self.passed else "FAILED"
        lines = [f"{head}: {self.games} stored games pooled against the exact model (alpha {self.alpha:g})"]
        for g in self.groups:
            where = clean_text(g.board.name) if g.board.name else f"{g.board.size}-square board"
            lines.append(
                f"  {where}, rules {g.rules.preset_name}: {g.games} games, {g.turns} turns, "
                f"{g.finished_seats}/{g.seats} seats finished"
            )
            for c in g.checks:
                lines.append(f"    [{'ok' if c.passed else 'FAIL'}] {c.name}: {c.detail}")
        return "\n".join(lines)


def _survival(board: Board, rules: Rules) -> np.ndarray:
    """``S[s, t] = P(a token on s needs more than t turns)``, ``t = 0..T``."""
    m = turn_model(board, rules).matrix.tocsr()
    n = board.size
    u = np.ones(n + 1)
    u[n] = 0.0
    cols = [u]
    for _ in range(100_000):
        u = m @ u
        u[n] = 0.0
        cols.append(u)
        if u.max() < _TAIL:
            break
    return np.stack(cols, axis=1)


def _landed(log) -> list[int]:
    """Squares landed on by the rolls of one turn's events (chained jump squares included)."""
    out: list[int] = []
    counted = -1  # the square last counted as landed on
    for e in log:
        if isinstance(e, Move):
            out.append(e.end)
            counted = e.end
        elif isinstance(e, (Ladder, Snake)):
            if e.start != counted:  # a chained jump: the square where it starts was landed on too
                out.append(e.start)
                counted = e.start
        elif isinstance(e, Bounce):
            continue
    return out


def _turn_counts(records, surv: np.ndarray, alpha: float) -> tuple[Check, int, int]:  # noqa: C901
    """The censored log-rank test of the seats' turn counts."""
    horizon = surv.shape[1] - 1
    at_risk: list[tuple[int, int, bool]] = []  # (start square, turns played, finished)
    for r in records:
        begin = GameState.initial(len(r.seats)) if r.start is None else r.start
        played = [0] * len(r.seats)
        for t in r.turns():
            if not t.skipped:
                played[t.seat] += 1
        done = set(r.finishing_order) - set(begin.places)
        for seat, count in enumerate(played):
            if begin.positions[seat] < r.board.size and seat not in begin.places and (count > 0 or seat in done):
                at_risk.append((begin.positions[seat], count, seat in done))
    finished = sum(f for _, _, f in at_risk)
    # hazards h(t) = (S(t-1) - S(t)) / S(t-1), per start square, t = 1..T
    with np.errstate(invalid="ignore", divide="ignore"):
        hazard = np.where(surv[:, :-1] > 0, (surv[:, :-1] - surv[:, 1:]) / surv[:, :-1], 0.0)
    e_t = np.zeros(horizon + 2)
    v_t = np.zeros(horizon + 2)
    o_t = np.zeros(horizon + 2)
    impossible = 0
    for start, count, fin in at_risk:
        k = min(count, horizon)
        h = hazard[start, :k]
        e_t[1 : k + 1] += h
        v_t[1 : k + 1] += h * (1 - h)
        if fin:
            if count > horizon or hazard[start, count - 1] <= 0:
                impossible += 1
            o_t[min(count, horizon + 1)] += 1
    if impossible:
        return (
            Check("turn counts", math.inf, 0.0, alpha, False, f"{impossible} seats finished in an impossible turn"),
            len(at_risk),
            finished,
        )
    stat, bins, e_bin, v_bin, o_bin = 0.0, 0, 0.0, 0.0, 0.0
    for t in range(1, horizon + 2):
        e_bin, v_bin, o_bin = e_bin + e_t[t], v_bin + v_t[t], o_bin + o_t[t]
        if e_bin >= _MIN_EXPECTED and v_bin > 0:
            stat += (o_bin - e_bin) ** 2 / v_bin
            bins += 1
            e_bin = v_bin = o_bin = 0.0
    if v_bin > 0 and bins:  # the remainder joins the test as a last bin
        stat += (o_bin - e_bin) ** 2 / v_bin
        bins += 1
    if bins == 0:
        return Check("turn counts", 0.0, 1.0, alpha, True, "too few seat-turns to test"), len(at_risk), finished
    p = float(stats.chi2.sf(stat, bins))
    detail = f"log-rank chi2 {stat:.1f} on {bins} bins (p={p:.3g}), {finished} of {len(at_risk)} seats finished"
    return Check("turn counts", float(stat), p, alpha, p > alpha, detail), len(at_risk), finished


def _landings(records, board: Board, rules: Rules, alpha: float) -> tuple[Check, int]:
    """Observed landings per square against the model's expectation given each turn's start."""
    model = turn_model(board, rules)
    land = model.landings.tocsr()
    n = board.size
    expected = np.zeros(n + 1)
    observed = np.zeros(n + 1)
    sq_dev = np.zeros(n + 1)
    bern = np.zeros(n + 1)  # the model's variance of a 0/1 landing count, summed over turns
    turns = 0
    for r in records:
        log_by_turn: dict[int, list] = {}
        for e in r.log:
            log_by_turn.setdefault(e.turn, []).append(e)
        for t in r.turns():
            if t.skipped:
                continue
            turns += 1
            row = land.getrow(t.start).toarray().ravel()
            got = np.bincount(_landed(log_by_turn.get(t.turn, ())), minlength=n + 1)[: n + 1].astype(float)
            expected += row
            observed += got
            sq_dev += (got - row) ** 2
            bern += row * (1.0 - row)
    impossible = np.flatnonzero((expected <= 0) & (observed > 0))
    if impossible.size:
        detail = f"landed on square(s) {impossible.tolist()[:5]} the model never lands on"
        return Check("landings", math.inf, 0.0, alpha, False, detail), turns
    tested = np.flatnonzero((expected >= _MIN_EXPECTED) & (sq_dev > 0))
    if tested.size == 0:
        return Check("landings", 0.0, 1.0, alpha, True, "too few turns to test"), turns
    # The spread observed in the sample, but never below the model's own: a
    # square landed on less often than expected has a small observed spread,
    # which alone would inflate |z| (a self-normalised statistic collapses).
    var = np.maximum(sq_dev[tested], bern[tested])
    z = (observed[tested] - expected[tested]) / np.sqrt(var)
    p = _holm(2 * stats.norm.sf(np.abs(z)))
    worst = int(np.argmin(p))
    detail = (
        f"{tested.size} squares tested, largest |z| {np.abs(z).max():.2f} on square {int(tested[worst])} "
        f"(Holm p={p[worst]:.3g})"
    )
    return Check("landings", float(np.abs(z).max()), float(p.min()), alpha, bool(p.min() > alpha), detail), turns


def _dice(records, rules: Rules, alpha: float) -> tuple[Check, int]:
    """The chi-square test of every die thrown against its law, under a choice rule; and the turns played."""
    dice = rules.choose_die or (rules.die,)
    counts: dict[tuple[int, bool], dict[int, int]] = {}
    turns = 0
    for r in records:
        die, seen = 0, set()
        for e in r.log:
            seen.add(e.turn)
            if isinstance(e, ChooseDie):
                die = e.die
            elif isinstance(e, RolledDice) or (isinstance(e, Roll) and rules.choice == "die"):
                key = (die, bool(e.capped) and rules.on_cap == "redeal")
                values = e.values if isinstance(e, RolledDice) else (e.value,)
                tally = counts.setdefault(key, {})
                for v in values:
                    tally[v] = tally.get(v, 0) + 1
        turns += len(seen)
    p_raw, tested, worst = [], [], ""
    for (die, redealt), tally in sorted(counts.items()):
        law = dice[die].without_top() if redealt else dice[die]
        n = sum(tally.values())
        expected = np.array([float(p) * n for p in law.pmf])
        observed = np.array([tally.get(v, 0) for v in law.values])
        if sum(tally.get(v, 0) for v in tally if v not in law.values):
            p_raw.append(0.0)  # a value the law cannot show: fails outright
        elif expected.min() >= _MIN_EXPECTED:
            p_raw.append(float(stats.chisquare(observed, expected).pvalue))
        else:
            continue
        tested.append(f"{law.spec}{' capped' if redealt else ''} ({n} thrown)")
    if not p_raw:
        return Check("dice", 0.0, 1.0, alpha, True, "too few dice thrown to test"), turns
    p_holm = _holm(np.array(p_raw))
    worst = tested[int(np.argmin(p_holm))]
    detail = f"{len(tested)} laws tested: {', '.join(tested)}; smallest adjusted p = {p_holm.min():.3g} ({worst})"
    return Check("dice", 0.0, float(p_holm.min()), alpha, bool(p_holm.min() > alpha), detail), turns


def check_stored(records: Iterable, *, alpha: float = 1e-4) -> StoredCheckReport:
    """Test many played games together against the exact model.

    Parameters
    ----------
    records : iterable of GameRecord
        Finished or abandoned games, on any boards and rules (grouped by both).
    alpha : float, default 1e-4
        Overall significance level, split evenly over the groups and tests.

    Returns
    -------
    StoredCheckReport
        ``passed`` is True when every test of every group passes.

    Examples
    --------
    >>> from snlmarkov import Board, Game, Rules
    >>> import numpy as np
    >>> board, rng = Board(20, {3: 12, 17: 5}), np.random.default_rng(1)
    >>> loaded = lambda: iter(lambda: int(rng.choice(6, p=[.1, .1, .1, .1, .1, .5])) + 1, 0)  # sixes half the time
    >>> games = [Game(board, Rules.preset("plain"), players=2, dice=loaded()).play() for _ in range(300)]
    >>> check_stored(games, alpha=1e-6).passed  # a loaded die is caught
    False
    """
    from ..game.record import GameRecord

    groups: dict[tuple[Board, Rules], list] = {}
    count = 0
    for r in records:
        if not isinstance(r, GameRecord):
            raise GameError(f"check_stored takes GameRecords, got {type(r).__name__}")
        groups.setdefault((r.board, r.rules), []).append(r)
        count += 1
    if not 0 < alpha < 1:
        raise SnlError(f"alpha must be in (0, 1); got {alpha!r}")
    each = alpha / max(1, 2 * len(groups))
    out = []
    for (board, rules), recs in groups.items():
        checks = []
        if rules.choice:
            seats = sum(len(r.seats) for r in recs)
            fin = sum(len(r.finishing_order) for r in recs)
            why = "not applicable: a choice rule (how a seat moves depends on its choices)"
            checks += [Check("turn counts", 0.0, 1.0, each, True, why), Check("landings", 0.0, 1.0, each, True, why)]
            dice, turns = _dice(recs, rules, each)
            checks.append(dice)
            out.append(GroupCheck(board, rules, len(recs), seats, fin, turns, tuple(checks)))
            continue
        if rules.bump:
            seats = sum(len(r.seats) for r in recs)
            fin = sum(len(r.finishing_order) for r in recs)
            checks.append(Check("turn counts", 0.0, 1.0, each, True, "not applicable: tokens interact (bump)"))
        else:
            check, seats, fin = _turn_counts(recs, _survival(board, rules), each)
            checks.append(check)
        land, turns = _landings(recs, board, rules, each)
        checks.append(land)
        out.append(GroupCheck(board, rules, len(recs), seats, fin, turns, tuple(checks)))
    return StoredCheckReport(count, alpha, tuple(out))
