"""Cross-check: do simulated games agree with the exact single-player analysis?

The simulator (:mod:`snlmarkov.sim.core`) rolls dice; the analysis
(:mod:`snlmarkov.analysis.single`) solves the Markov chain. They share no probability
code, so agreement tests both. :func:`crosscheck` simulates solo games and
runs four tests against the exact figures:

- **mean turns**: z-score of the mean number of turns, using the exact variance;
- **mean rolls**: z-score of the mean number of die throws (sample variance);
- **turn distribution**: chi-square goodness of fit of the number of turns,
  adjacent counts pooled so every expected count is at least 5; a count with
  exact probability 0 that was observed fails the test outright;
- **landings**: for each square, a t-test of the mean landings per game. The
  landings of one game on one square are not independent events, so the
  games are played in ``batches`` independent batches and the spread of the
  batch means gives the standard error (t with ``batches - 1`` degrees of
  freedom). Squares are corrected for multiple testing by Holm's method; a
  square the model never lands on but the simulation did fails outright.

The overall ``alpha`` (default 1e-5: a correct model fails less than once in
10^5 runs) is split evenly over the four tests (Bonferroni), so the report
passes only when every test does.

Under a rule set with a choice (``docs/rules.md``, "Choices") the games are
simulated with the seat choosing by ``policy`` (resolved on the play side)
and tested against ``analyze(board, rules, policy=policy)`` (resolved on the
exact side); ``exact_policy`` plants another policy in the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ..analysis.single import Analysis, analyze
from ..board import Board
from ..errors import BoardError, GameError, SnlError
from ..limits import check_memory, check_rng, clean_text
from ..rules import Rules
from ..sim.core import _checked, play, policy_ranks, progress_bar

__all__ = ["crosscheck", "CrosscheckReport", "Check"]

#: the tests, in the order they are reported
TESTS = ("mean turns", "mean rolls", "turn distribution", "landings")


@dataclass(frozen=True)
class Check:
    """One statistical test of a cross-check.

    Attributes
    ----------
    name : str
        One of ``"mean turns"``, ``"mean rolls"``, ``"turn distribution"``,
        ``"landings"``.
    statistic : float
        ``|z|`` for the means, the chi-square statistic for the distribution, the
        largest ``|t|`` over the squares for the landings (``inf`` for an outcome
        the model calls impossible).
    p_value : float
        Two-sided p-value; for the landings, the smallest Holm-adjusted one.
    alpha : float
        The significance level this test was given.
    passed : bool
        ``p_value > alpha``.
    detail : str
        A short human-readable account.
    """

    name: str
    statistic: float
    p_value: float
    alpha: float
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """The check as plain data."""
        return {
            "name": self.name,
            "statistic": _finite_or_str(self.statistic),
            "p_value": self.p_value,
            "alpha": self.alpha,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass(frozen=True, eq=False)
class CrosscheckReport:
    """The result of :func:`crosscheck`.

    Attributes
    ----------
    board, rules : Board, Rules
        What was simulated.
    exact_board, exact_rules : Board, Rules
        What the exact model describes (the same unless a difference was
        planted on purpose).
    games : int
        Games simulated (``batches`` equal batches).
    batches : int
        Independent batches (for the landing standard errors).
    alpha : float
        Overall significance level, split evenly over the tests.
    n_truncated : int
        Simulated games stopped at the turn limit (any makes the check fail:
        their lengths are unknown).
    mean_turns, exact_mean_turns : float
    std_turns, exact_std_turns : float
    mean_rolls, exact_mean_rolls : float
    landings, exact_landings : numpy.ndarray
        Mean landings per game on each square ``0..N``: simulated and exact.
    landing_t : numpy.ndarray
        Per square, the t statistic of the simulated mean against the exact
        one (0 where both are 0: nothing to test; ``inf`` where the model
        never lands but the simulation did).
    landing_p : numpy.ndarray
        Per square, the Holm-adjusted p-value (1 where nothing was tested).
    flagged_squares : tuple of int
        Squares whose landings disagree at the landing test's level.
    checks : tuple of Check
        The four tests.
    """

    board: Board
    rules: Rules
    exact_board: Board
    exact_rules: Rules
    games: int
    batches: int
    alpha: float
    n_truncated: int
    mean_turns: float
    exact_mean_turns: float
    std_turns: float
    exact_std_turns: float
    mean_rolls: float
    exact_mean_rolls: float
    landings: np.ndarray = field(repr=False)
    exact_landings: np.ndarray = field(repr=False)
    landing_t: np.ndarray = field(repr=False)
    landing_p: np.ndarray = field(repr=False)
    flagged_squares: tuple[int, ...]
    checks: tuple[Check, ...]

    def __post_init__(self) -> None:
        if tuple(c.name for c in self.checks) != TESTS:
            raise SnlError(f"a cross-check report holds the tests {TESTS}")
        size = self.board.size + 1
        for name in ("landings", "exact_landings", "landing_t", "landing_p"):
            value = np.array(getattr(self, name), dtype=float)
            if value.shape != (size,):
                raise SnlError(f"{name} must have one value per square 0..{size - 1}")
            value.flags.writeable = False
            object.__setattr__(self, name, value)

    @property
    def passed(self) -> bool:
        """Every test passed and no game was truncated."""
        return self.n_truncated == 0 and all(c.passed for c in self.checks)

    def check(self, name: str) -> Check:
        """The test called ``name`` (see :data:`TESTS`)."""
        for c in self.checks:
            if c.name == name:
                return c
        raise SnlError(f"no test called {name!r}; the tests are {', '.join(TESTS)}")

    def summary(self) -> str:
        """A readable account of the comparison."""
        same = self.exact_board == self.board and self.exact_rules == self.rules
        model = "" if same else "  (the exact model describes a different board or rules)"
        lines = [
            f"cross-check: {self.games:,} simulated games ({self.batches} batches) against the exact analysis{model}",
            f"board {clean_text(self.board.name) or 'custom'} ({self.board.size}), rules {self.rules.preset_name}",
            f"  mean turns  {self.mean_turns:12.4f}   exact {self.exact_mean_turns:12.4f}",
            f"  std turns   {self.std_turns:12.4f}   exact {self.exact_std_turns:12.4f}",
            f"  mean rolls  {self.mean_rolls:12.4f}   exact {self.exact_mean_rolls:12.4f}",
        ]
        for c in self.checks:
            lines.append(
                f"  [{'pass' if c.passed else 'FAIL'}] {c.name:18s} p = {c.p_value:.3g} (alpha {c.alpha:.2g}): {c.detail}"
            )
        if self.n_truncated:
            lines.append(f"  [FAIL] {self.n_truncated} games reached the turn limit")
        lines.append(f"verdict: {'PASSED' if self.passed else 'FAILED'} at overall alpha {self.alpha:g}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (JSON-ready)."""
        return {
            "board": self.board.to_dict(),
            "rules": self.rules.to_dict(),
            "exact_board": self.exact_board.to_dict(),
            "exact_rules": self.exact_rules.to_dict(),
            "games": self.games,
            "batches": self.batches,
            "alpha": self.alpha,
            "passed": self.passed,
            "n_truncated": self.n_truncated,
            "mean_turns": self.mean_turns,
            "exact_mean_turns": self.exact_mean_turns,
            "std_turns": self.std_turns,
            "exact_std_turns": self.exact_std_turns,
            "mean_rolls": self.mean_rolls,
            "exact_mean_rolls": self.exact_mean_rolls,
            "landings": self.landings.tolist(),
            "exact_landings": self.exact_landings.tolist(),
            "landing_t": [_finite_or_str(t) for t in self.landing_t],
            "landing_p": self.landing_p.tolist(),
            "flagged_squares": list(self.flagged_squares),
            "checks": [c.to_dict() for c in self.checks],
        }


def _finite_or_str(x: float) -> float | str:
    return float(x) if math.isfinite(x) else str(x)


def crosscheck(
    board: Board | None = None,
    rules: Rules | None = None,
    games: int = 200_000,
    *,
    rng: Any = None,
    alpha: float = 1e-5,
    exact: Analysis | None = None,
    exact_board: Board | None = None,
    exact_rules: Rules | None = None,
    batches: int = 40,
    progress: bool = False,
    max_turns: int = 100_000,
    policy: Any = None,
    exact_policy: Any = None,
) -> CrosscheckReport:
    """Simulate solo games and test them against the exact analysis.

    Parameters
    ----------
    board, rules : Board, Rules, optional
        What to simulate (default: the jungle board, the app rules).
    games : int, default 200000
        Games to simulate; rounded down to a multiple of ``batches``.
    rng : None, int or numpy.random.Generator
        Seed or generator for the simulation.
    alpha : float, default 1e-5
        Overall significance level, split evenly over the four tests.
    exact : Analysis, optional
        The exact model to test against; by default
        ``analyze(exact_board or board, exact_rules or rules)``. Give a
        different analysis, board or rules to see that a wrong model is caught.
    exact_board, exact_rules : Board, Rules, optional
        Build the exact model for these instead (not together with ``exact``).
    batches : int, default 40
        Independent batches the games are played in (at least 10).
    progress : bool, default False
        Show a progress bar while simulating.
    max_turns : int, default 100000
        The simulator's turn limit. A game that reaches it is not a whole
        game: its length would bias every test, so the cross-check refuses
        to judge (GameError) rather than report a meaningless z.
    policy : Policy, optional
        Under a rule set with a choice: what the token chooses, in the
        simulation and (unless ``exact_policy`` is given) in the model.
    exact_policy : Policy, optional
        Build the exact model for this policy instead (a planted difference).

    Returns
    -------
    CrosscheckReport

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.checks.crosschecking import crosscheck
    >>> report = crosscheck(Board.builtin(), Rules.preset("plain"), 40_000, rng=1)
    >>> report.passed, [c.name for c in report.checks]
    (True, ['mean turns', 'mean rolls', 'turn distribution', 'landings'])

    A model built for the bounce finish does not describe games played with
    the stay finish:

    >>> crosscheck(Board.builtin(), Rules.preset("plain"), 40_000, rng=1,
    ...            exact_rules=Rules.preset("plain").replace(finish="bounce")).passed
    False

    Choosing the die by the greedy policy:

    >>> from snlmarkov import Policy
    >>> crosscheck(Board.builtin(), Rules(choose_die=(4, 6)), 20_000, rng=1, policy=Policy.greedy()).passed
    True
    """
    board, rules, _, _, max_turns = _checked(board, rules, 1, 1, "classic", max_turns, policy=policy)
    ranks = () if policy is None else policy_ranks(board, rules, policy, 1)
    if not isinstance(batches, (int, np.integer)) or isinstance(batches, bool) or batches < 10:
        raise GameError(f"batches must be an integer >= 10, got {batches!r}")
    if not isinstance(games, (int, np.integer)) or isinstance(games, bool) or games < 10 * batches:
        raise GameError(f"games must be an integer >= 10 * batches = {10 * batches}, got {games!r}")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise SnlError(f"alpha must be a number in (0, 1), got {alpha!r}")
    exact = _exact_model(
        board, rules, exact, exact_board, exact_rules, policy if exact_policy is None else exact_policy
    )

    check_memory(int(games) * 48, f"cross-checking {int(games):,} games", hint="use fewer games")
    gen = check_rng(rng)
    per_batch = int(games) // int(batches)
    turns, rolls, batch_landings, truncated = [], [], [], 0
    bar = progress_bar(per_batch * batches) if progress else None
    try:
        for _ in range(batches):
            result = play(board, rules, per_batch, 1, "classic", gen, max_turns, bar, ranks=ranks)
            turns.append(result.turns)
            rolls.append(result.rolls)
            batch_landings.append(result.landings / per_batch)
            truncated += result.n_truncated
    finally:
        if bar is not None:
            bar.close()
    if truncated:
        raise GameError(
            f"{truncated:,} of {per_batch * batches:,} simulated games reached max_turns={max_turns} without "
            "finishing (the guard was hit); a cross-check needs whole games: raise max_turns"
        )
    turns_all = np.concatenate(turns).astype(np.int64)
    rolls_all = np.concatenate(rolls).astype(np.int64)
    n = turns_all.size
    share = alpha / len(TESTS)

    # ---- mean turns (exact variance)
    mean_turns = float(turns_all.mean())
    z_turns = (
        (mean_turns - exact.expected_turns) / math.sqrt(exact.var_turns / n)
        if exact.var_turns > 0
        else (0.0 if mean_turns == exact.expected_turns else math.inf)
    )
    p = _two_sided_normal(z_turns)
    mean_check = Check("mean turns", abs(z_turns), p, share, p > share, f"z = {z_turns:+.2f}")

    # ---- mean rolls (sample variance)
    mean_rolls = float(rolls_all.mean())
    sd_rolls = float(rolls_all.std(ddof=1))
    diff = mean_rolls - exact.expected_rolls
    z_rolls = diff / (sd_rolls / math.sqrt(n)) if sd_rolls > 0 else (0.0 if abs(diff) < 1e-9 else math.inf)
    p = _two_sided_normal(z_rolls)
    rolls_check = Check("mean rolls", abs(z_rolls), p, share, p > share, f"z = {z_rolls:+.2f}")

    # ---- distribution of the number of turns
    dist_check = _turn_distribution(turns_all, exact, share)

    # ---- landings per square, by batch means
    landings_by_batch = np.array(batch_landings)
    means = landings_by_batch.mean(axis=0)
    se = landings_by_batch.std(axis=0, ddof=1) / math.sqrt(batches)
    t_stat, p_raw = _landing_tests(means, se, exact.landings, batches - 1)
    tested_mask = ~((means == 0) & (exact.landings == 0))
    p_holm = np.ones(means.size)
    p_holm[tested_mask] = _holm(p_raw[tested_mask])
    flagged = tuple(int(s) for s in np.flatnonzero(p_holm <= share))
    worst = int(np.argmax(np.abs(t_stat)))
    tested = int(np.count_nonzero(tested_mask))
    land_detail = f"{tested} squares tested; largest |t| = {np.max(np.abs(t_stat)):.2f} on square {worst}" + (
        f"; disagree on {list(flagged)}" if flagged else ""
    )
    land_check = Check("landings", float(np.max(np.abs(t_stat))), float(p_holm.min()), share, not flagged, land_detail)

    return CrosscheckReport(
        board=board,
        rules=rules,
        exact_board=exact.board,
        exact_rules=exact.rules,
        games=n,
        batches=int(batches),
        alpha=float(alpha),
        n_truncated=int(truncated),
        mean_turns=mean_turns,
        exact_mean_turns=float(exact.expected_turns),
        std_turns=float(turns_all.std(ddof=1)),
        exact_std_turns=float(exact.std_turns),
        mean_rolls=mean_rolls,
        exact_mean_rolls=float(exact.expected_rolls),
        landings=means,
        exact_landings=np.asarray(exact.landings, dtype=float),
        landing_t=t_stat,
        landing_p=p_holm,
        flagged_squares=flagged,
        checks=(mean_check, rolls_check, dist_check, land_check),
    )


def _exact_model(board: Board, rules: Rules, exact: Any, exact_board: Any, exact_rules: Any, policy: Any) -> Analysis:
    """The exact analysis a cross-check tests against (given, or built for the board, rules and policy)."""
    if exact is not None and (exact_board is not None or exact_rules is not None):
        raise SnlError("give either exact (an analysis) or exact_board/exact_rules, not both")
    if exact is None:
        exact = analyze(
            board if exact_board is None else exact_board,
            rules if exact_rules is None else exact_rules,
            policy=policy,
        )
    elif not isinstance(exact, Analysis):
        raise SnlError(f"exact must be an Analysis (from snlmarkov.analyze), got {type(exact).__name__}")
    if exact.board.size != board.size:
        raise BoardError(f"the exact model's board has {exact.board.size} squares, the simulated one {board.size}")
    return exact


def _two_sided_normal(z: float) -> float:
    return float(2 * stats.norm.sf(abs(z))) if math.isfinite(z) else 0.0


def _turn_distribution(turns: np.ndarray, exact: Analysis, alpha: float) -> Check:
    """Chi-square goodness of fit of the turn counts, cells pooled to expected >= 5."""
    n = turns.size
    length = exact.length
    horizon = length.horizon
    observed = np.bincount(turns, minlength=horizon + 2)
    inside = observed[: horizon + 1]
    impossible = np.flatnonzero((inside > 0) & (length.probabilities == 0))
    if impossible.size:
        k = int(impossible[0])
        return Check(
            "turn distribution",
            math.inf,
            0.0,
            alpha,
            False,
            f"{int(inside[impossible].sum())} games took a number of turns the model calls impossible (e.g. {k})",
        )
    expected = n * length.probabilities
    # cells start at these counts; each runs to the next start, the last is open-ended
    starts, acc = [0], 0.0
    for k in range(horizon + 1):
        acc += expected[k]
        if acc >= 5:
            starts.append(k + 1)
            acc = 0.0
    if n * length.sf(starts[-1] - 1) < 5:
        starts.pop()  # the open tail joins the last cell
    if len(starts) < 2:
        return Check("turn distribution", 0.0, 1.0, alpha, True, "too few games for a chi-square test")
    below = np.concatenate([[0.0], np.cumsum(length.probabilities)])  # below[k] = P(K < k)
    probs = np.append(np.diff(below[starts]), 1.0 - below[starts[-1]])
    obs = np.append(np.add.reduceat(observed, starts)[:-1], observed[starts[-1] :].sum()).astype(float)
    exp = n * probs
    stat = float(((obs - exp) ** 2 / exp).sum())
    dof = obs.size - 1
    p = float(stats.chi2.sf(stat, dof))
    return Check("turn distribution", stat, p, alpha, p > alpha, f"chi2 = {stat:.1f} on {dof} degrees of freedom")


def _landing_tests(means: np.ndarray, se: np.ndarray, exact: np.ndarray, df: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-square t statistics and two-sided p-values (1 where nothing is tested)."""
    t = np.zeros(means.size)
    p = np.ones(means.size)
    for sq in range(means.size):
        if means[sq] == 0 and exact[sq] == 0:
            continue
        diff = means[sq] - exact[sq]
        if se[sq] > 0:
            t[sq] = diff / se[sq]
            p[sq] = 2 * stats.t.sf(abs(t[sq]), df)
        elif abs(diff) > 1e-9 * max(1.0, abs(exact[sq])):
            t[sq], p[sq] = math.copysign(math.inf, diff), 0.0
    return t, p


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (monotone, capped at 1)."""
    m = p.size
    order = np.argsort(p)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out
