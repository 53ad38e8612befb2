"""Single-player analysis: everything about one token's race to the finish.

:func:`analyze` turns a board and rules into an :class:`Analysis`, a frozen
result holding exact figures (to floating point): expected length, its
variance and whole distribution, occupancy, landings, jump uses, hitting
probabilities, and the effect of every jump.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from ..args import board_arg, rules_arg
from ..board import Board
from ..chain.choice import policy_hit_probabilities, policy_model, resolve
from ..chain.model import TransitionModel, check_model_memory, turn_landings, turn_model
from ..chain.solve import AbsorbingSystem
from ..chain.threads import single_blas_thread
from ..errors import LimitError, ModelError, SnlError
from ..limits import check_memory, show_value
from ..policy import Policy
from ..rules import Rules
from .distribution import (
    DEFAULT_TAIL,
    DENSE_STEP_STATES,
    LENGTH_TAIL_STATES,
    GeometricTail,
    LengthDistribution,
    absorption_times,
    geometric_tail,
)
from .hitting import hit_probabilities

__all__ = ["Analysis", "JumpEffect", "analyze", "expected_turns"]


@dataclass(frozen=True)
class JumpEffect:
    """What one ladder or snake is worth.

    Attributes
    ----------
    start, end : int
        The jump.
    kind : {"ladder", "snake"}
    expected_turns_without : float
        Expected turns from 0 on the board without this jump.
    difference : float
        ``expected_turns_with - expected_turns_without``: negative for a jump
        that shortens the game (most ladders), positive for one that
        lengthens it (most snakes).
    uses : float
        Expected number of times the jump is used in one game.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> e = snl.analyze(snl.Board.builtin()).jump_effects()[0]
    >>> e.start, e.end, e.kind, e.difference < 0
    (1, 38, 'ladder', True)
    """

    start: int
    end: int
    kind: str
    expected_turns_without: float
    difference: float
    uses: float


@dataclass(frozen=True, eq=False)
class Analysis:
    """Exact single-player figures for one board and rule set.

    Build it with :func:`analyze`. Figures that take longer to compute
    (``length``, ``hit_probability``) are computed on first access and kept.
    The ``bump`` rule has nothing to act on with one token and is ignored.

    Attributes
    ----------
    board, rules : Board, Rules
    model : TransitionModel
        The turn-level model the figures come from.
    expected_turns : float
        Expected number of turns from square 0 to the finish.
    expected_turns_from : numpy.ndarray
        The same from every square ``0..N`` (0 on the finish; ``inf`` on
        squares from which finishing is not certain).
    var_turns, std_turns : float
        Variance and standard deviation of the number of turns from 0.
    expected_rolls : float
        Expected number of die throws (an entering six counts as a roll).
    occupancy : numpy.ndarray
        Expected number of turns begun on each square (square 0 at the start
        counts); it sums to ``expected_turns``.
    landings : numpy.ndarray
        Expected number of rolls landing on each square (before a jump acts;
        mid-turn landings and bounce targets included; on a chained board
        every square of the chain where a jump acts). Computed on first
        access.
    jump_uses : Mapping[int, float]
        Expected uses of each jump per game, by jump start (every jump of a
        chain taken counts; computed on first access).
    tail : float
        Tail mass bound used for ``length``.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> a = snl.analyze(snl.Board.builtin("milton_bradley"), snl.Rules.preset("plain"))
    >>> round(a.expected_turns, 6), round(a.std_turns, 4)
    (39.225122, 25.225)
    >>> bool(abs(a.occupancy.sum() - a.expected_turns) < 1e-9)
    True
    >>> a.length.minimum, a.length.mode
    (7, 22)
    """

    board: Board
    rules: Rules
    model: TransitionModel = field(repr=False)
    expected_turns: float
    expected_turns_from: np.ndarray = field(repr=False)
    var_turns: float
    expected_rolls: float
    occupancy: np.ndarray = field(repr=False)
    _system: AbsorbingSystem = field(repr=False)
    tail: float = DEFAULT_TAIL
    policy: Any = field(default=(), repr=False)  # the Policy played under a choice rule, else ()

    @cached_property
    @single_blas_thread
    def landings(self) -> np.ndarray:
        """Expected rolls landing on each square per game (computed on first access).

        One pass over the paths of rolls of every turn, weighted by the
        occupancy (:func:`~snlmarkov.chain.model.turn_landings`): no landings
        matrix is built.
        """
        if self.policy:
            out = np.asarray(self.model.landings.T @ self.occupancy)
        else:
            out = turn_landings(self.board, self.rules, self.occupancy)
        out.setflags(write=False)
        return out

    @cached_property
    def jump_uses(self) -> Mapping[int, float]:
        """Expected uses of each jump per game, by jump start (computed on first access)."""
        return MappingProxyType({s: float(self.landings[s]) for s in self.board.jumps})

    @property
    def std_turns(self) -> float:
        """Standard deviation of the number of turns from 0."""
        return float(np.sqrt(self.var_turns))

    @cached_property
    @single_blas_thread
    def length(self) -> LengthDistribution:
        """Exact distribution of the number of turns, to a tail mass below ``tail``.

        Computed on first use. Cost: one sparse product per turn of the
        horizon, so it grows with the square of the board: milliseconds at
        100 squares, minutes at 10^5 (:meth:`compute_length` reports
        progress).
        """
        return self.compute_length()

    def compute_length(self, progress: Any = None) -> LengthDistribution:
        """:attr:`length`, calling ``progress(turns, mass_left)`` as it goes (every 64 turns).

        The result is kept: :attr:`length` then returns it at once.

        Examples
        --------
        >>> import snlmarkov as snl
        >>> seen = []
        >>> d = snl.analyze().compute_length(progress=lambda k, left: seen.append(k))
        >>> seen[:2], d is snl.analyze().length or True
        ([64, 128], True)
        """
        if "length" in self.__dict__:
            return self.__dict__["length"]
        sysm = self._system
        start = self._start
        exit = np.asarray(self.model.matrix[sysm.states, self.model.absorbing].todense()).ravel()
        d = absorption_times(sysm.q, start, exit, tail=self.tail, unit="turns", progress=progress)
        g = None
        if sysm.states.size <= LENGTH_TAIL_STATES:  # larger: tail_rate on request only
            try:
                g = self._tail
            except (ModelError, LimitError):  # no decay rate: beyond the horizon sf stays at the tail mass
                g = None
        if g is not None and g.simple:  # else the tail is not C rho^k either
            d = dataclasses.replace(d, tail_rate=g.rate, tail_constant=g.constant)
        self.__dict__["length"] = d
        return d

    @property
    def _start(self) -> np.ndarray:
        """The start as a distribution over the system's states."""
        start = np.zeros(self._system.states.size)
        start[self._system.position(self.model.start)] = 1.0
        return start

    @cached_property
    def _tail(self) -> GeometricTail:
        return geometric_tail(self._system.q, self._start)

    @property
    def tail_rate(self) -> float:
        """The decay rate of the game's length: ``P(T > t) ~ C * tail_rate ** t``.

        The spectral radius of the turn chain's transient block (the Perron
        root, from a dense eigen-solve: no stepping), for chains of at most
        :data:`~snlmarkov.analysis.distribution.DENSE_EIG_STATES` states (a
        :class:`~snlmarkov.LimitError` beyond). ``length.tail_constant`` is
        ``C``: :attr:`length` carries the tail for chains of at most
        :data:`~snlmarkov.analysis.distribution.LENGTH_TAIL_STATES` states
        (the eigen-solve is cubic); larger chains answer here, on request.

        Examples
        --------
        >>> import snlmarkov as snl
        >>> a = snl.analyze()
        >>> round(a.tail_rate, 6), bool(abs(a.length.sf(300) / a.length.sf(299) - a.tail_rate) < 1e-9)
        (0.977705, True)
        """
        return self._tail.rate

    @property
    def quasi_stationary(self) -> np.ndarray:
        """Where a token that has not finished is in the long run: the quasi-stationary distribution.

        One entry per square ``0..N`` (0 on the finish and on squares the
        token cannot reach), summing to 1: the limit of the position
        distribution at the start of turn ``t`` given ``T > t``.

        Raises
        ------
        ModelError
            When two classes of squares share the decay rate (the long run
            then depends on more than the rate).
        """
        if not self._tail.simple:
            raise ModelError(
                f"the decay rate {self._tail.rate} is shared by two classes of squares: "
                "the long-run position is not one distribution"
            )
        out = np.zeros(self.board.size + 1)
        out[self.model.squares[self._system.states]] = self._tail.quasi_stationary
        out.setflags(write=False)
        return out

    @cached_property
    @single_blas_thread
    def hit_probability(self) -> np.ndarray:
        """Probability that a roll ever lands on each square ``0..N`` in one game."""
        if self.policy:
            return policy_hit_probabilities(self.board, self.rules, self.policy)
        return hit_probabilities(self.board, self.rules)

    @single_blas_thread
    def position_distributions(self, turns: int) -> np.ndarray:
        """Where the token is after ``0..turns`` turns.

        Returns
        -------
        numpy.ndarray
            Shape ``(turns + 1, N + 1)``; row ``t`` is the distribution of the
            token's square after ``t`` turns (the finish column accumulates).

        Examples
        --------
        >>> import snlmarkov as snl
        >>> a = snl.analyze(snl.Board.builtin())
        >>> d = a.position_distributions(3)
        >>> d.shape, float(d[0, 0]), bool(np.allclose(d.sum(axis=1), 1))
        ((4, 101), 1.0, True)
        """
        if isinstance(turns, (bool, np.bool_)) or not isinstance(turns, (int, np.integer)) or turns < 0:
            raise SnlError(f"turns must be a whole number >= 0, got {show_value(turns)}")
        turns = int(turns)
        check_memory(
            8.0 * min(turns + 1, 2**62) * self.model.n_states,
            f"the position distributions of {show_value(turns, commas=True)} turns",
        )
        out = np.zeros((turns + 1, self.model.n_states))
        out[0, self.model.start] = 1.0
        if self.model.n_states <= DENSE_STEP_STATES:  # a dense product costs less than a sparse call
            md = self.model.matrix.toarray()
            for t in range(turns):
                np.matmul(out[t], md, out=out[t + 1])
        else:
            mt = self.model.matrix.T.tocsr()
            for t in range(turns):
                out[t + 1] = mt @ out[t]
        return out

    def position_distribution(self, turns: int) -> np.ndarray:
        """Distribution of the token's square after ``turns`` turns (length ``N + 1``)."""
        return self.position_distributions(turns)[-1]

    @single_blas_thread
    def jump_effects(self) -> tuple[JumpEffect, ...]:
        """The effect of removing each ladder and snake, in board order.

        Examples
        --------
        >>> import snlmarkov as snl
        >>> fx = snl.analyze(snl.Board.builtin()).jump_effects()
        >>> best = min(fx, key=lambda e: e.difference)
        >>> best.kind, best.start, best.end
        ('ladder', 28, 84)
        """
        out = []
        ranks = resolve(self.policy, self.board, self.rules).ranks if self.policy else None
        for start, end in self.board.jumps.items():
            jumps = dict(self.board.jumps)
            del jumps[start]
            other = Board(self.board.size, jumps, chain=self.board.chain)
            # under a policy: the same choices on the board without the jump
            policy = None if ranks is None else Policy.from_table(other, self.rules, ranks, name=self.policy.name)
            without = expected_turns(other, self.rules, policy=policy)
            out.append(
                JumpEffect(
                    start=start,
                    end=end,
                    kind="ladder" if end > start else "snake",
                    expected_turns_without=without,
                    difference=self.expected_turns - without,
                    uses=float(self.jump_uses[start]),
                )
            )
        return tuple(out)

    def summary(self) -> dict:
        """Headline figures as plain data (for JSON and reports)."""
        d = self.length
        return {
            "board": self.board.name or "custom",
            "board_size": self.board.size,
            "rules": self.rules.to_dict(),
            "preset": self.rules.preset_name,
            "expected_turns": self.expected_turns,
            "std_turns": self.std_turns,
            "median_turns": d.median(),
            "mode_turns": d.mode,
            "min_turns": d.minimum,
            "p90_turns": d.ppf(0.9),
            "expected_rolls": self.expected_rolls,
            "length_tail_mass": d.tail_mass,
            "length_horizon": d.horizon,
        }


@single_blas_thread
def expected_turns(board: Board, rules: Rules | None = None, *, policy: Policy | None = None) -> float:
    """Expected number of turns from square 0 (the fast path for large boards).

    The rows of ``I - M`` are built a block at a time from the finish down,
    each block cut at its lowest clean point, factorised by SuperLU, solved
    by block back substitution and dropped
    (:func:`~snlmarkov.chain.solve.solve_by_row_blocks`): the whole matrix
    is never held. When some square has no move to a higher one (then some
    square may be unable to finish) or a stretch without a clean point is
    longer than :data:`~snlmarkov.chain.solve.CUT_ROWS` rows, the whole
    ``I - M`` is built instead, checked for squares that cannot finish (only
    the squares the token can reach from 0 are kept when some square
    elsewhere cannot finish) and solved by
    :func:`~snlmarkov.chain.solve.solve_blocks`.

    Cost: linear in the board size on boards whose snakes are short (the
    matrix is then block upper triangular with small blocks): time
    O(nnz(I - M)), about 15 entries a square under the app rules, memory
    O(N) for the solution plus one block of rows (measured: 10^7 squares,
    see ``benchmarks/bench_scale.py``). A board whose snakes cover it end to
    end is one block, factorised by SuperLU as a whole or cut by
    :class:`~snlmarkov.chain.solve.BlockLU`.

    Raises
    ------
    UnwinnableBoardError
        If finishing is impossible from a square reachable from 0.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> round(expected_turns(snl.Board.builtin("milton_bradley"), snl.Rules.preset("plain")), 9)
    39.225122308
    """
    from ..chain.model import _turn_system, _turn_system_states
    from ..chain.solve import _expected_turns_by_blocks, solve_blocks

    board, rules = board_arg(board), rules_arg(rules)
    if policy is not None:
        return analyze(board, rules, policy=policy).expected_turns
    found = _expected_turns_by_blocks(board, rules)
    if found is not None:
        return found
    a = _turn_system(board, rules)
    states = _turn_system_states(board, a)
    if states.size < a.shape[0]:
        a = a[states][:, states]
        a.sort_indices()
    b = np.ones(states.size)
    b[-1] = 0.0  # the finish (the last state kept)
    return float(solve_blocks(a, b)[0])  # square 0 is the first state kept


@single_blas_thread
def analyze(
    board: Board | None = None, rules: Rules | None = None, *, tail: float = DEFAULT_TAIL, policy: Policy | None = None
) -> Analysis:
    """Analyse one token's game on ``board`` under ``rules``.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    rules : Rules, optional
        Defaults to ``Rules()`` (the ``app`` preset).
    tail : float, default 1e-13
        The length distribution is computed until less than this much
        probability is left beyond its horizon.
    policy : Policy, optional
        Under a rule set with a choice (``docs/rules.md``, "Choices"), the
        choices the token makes (:class:`~snlmarkov.Policy`, or the solved
        :func:`~snlmarkov.optimal_policy`); every figure assumes it. Rules
        with a choice need one; rules without refuse one.

    Returns
    -------
    Analysis

    Raises
    ------
    UnwinnableBoardError
        If finishing is impossible from a square reachable from 0.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> a = snl.analyze()
    >>> round(a.expected_turns, 4), round(a.expected_rolls, 4)
    (55.6148, 65.2966)
    >>> max(a.jump_uses, key=a.jump_uses.get)  # the snake 47->26 is used most
    47
    """
    board, rules = board_arg(board), rules_arg(rules)
    rules.check_board(board)
    if policy is not None:
        model = policy_model(board, rules, policy)
    else:
        rules.no_choice("analyze()")
        check_model_memory(board, rules, "analyze()", per_entry=100)
        model = turn_model(board, rules)
    sysm = AbsorbingSystem.of(model)
    ones = np.ones(sysm.states.size)
    m = sysm.solve(ones)  # expected turns from each square
    second = sysm.solve(m)  # (I - Q)^-1 m
    var_from = 2.0 * second - m - m * m
    x0 = sysm.position(model.start)
    e0 = np.zeros(sysm.states.size)
    e0[x0] = 1.0
    occ_states = sysm.solve_transposed(e0)
    occupancy = np.zeros(model.n_states)
    occupancy[sysm.states] = occ_states
    rolls = float(occupancy @ model.rolls)
    occupancy.setflags(write=False)
    from_sq = sysm.expand(m)
    from_sq.setflags(write=False)
    return Analysis(
        board=board,
        rules=rules,
        model=model,
        expected_turns=float(m[x0]),
        expected_turns_from=from_sq,
        var_turns=float(var_from[x0]),
        expected_rolls=rolls,
        occupancy=occupancy,
        tail=float(tail),
        _system=sysm,
        policy=() if policy is None else policy,
    )
