"""The simulator under a rule set with a choice: every seat chooses by its policy, games in lock-step.

Under ``choose_die`` or ``choose_move`` (``docs/rules.md``, "Choices") a
roll depends on the mover's choice, so the step tables of the plain
simulator (:mod:`snlmarkov.sim.tables`) do not apply. Here games are played
in chunks of :data:`CHUNK`, round by round and seat by seat as in
:mod:`snlmarkov.sim.multi`, and each turn roll by roll, vectorised over the
games: the seat's policy table (resolved on the play side, a greedy one from
the play kernel) gives each game's choice from its decision state (square,
sixes so far, origin, and for a race policy the other seats' squares in seat
order); the die chosen (or the ``k`` dice, of which the policy's first
choice among those thrown is moved) is drawn exactly from its whole weights
as :func:`~snlmarkov.playkernel.draw` draws, and the play kernel of the
option (:func:`~snlmarkov.playkernel.option_kernels`), asked once about
every roll a turn can meet, says what the roll does.

Examples
--------
>>> import numpy as np
>>> from snlmarkov import Board, Policy, Rules
>>> from snlmarkov.playkernel import resolve_policy
>>> board, rules = Board(20, {3: 15}), Rules(choose_die=(4, 6))
>>> ranks = (resolve_policy(Policy.fixed(4), board, rules).ranks,)
>>> out = play_choosing(board, rules, 200, 1, "classic", 1000, np.random.default_rng(0), ranks)
>>> int(out.truncated.sum()), bool((out.turns >= 2).all())   # a d4 needs two turns at least
(0, True)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..board import Board
from ..errors import LimitError, UnwinnableBoardError
from ..limits import check_memory
from ..playkernel import is_capped, option_kernels
from ..rules import Rules
from ..state import GameState
from .multi import MultiOutcome, play_rounds

__all__ = []

#: games played together
CHUNK = 1 << 16


class _Turns:
    """One seat's turns, roll by roll, for many games at once.

    The play kernel of each option is asked once about every (sixes,
    square, value) a roll can meet; a roll is then a choice read from the
    seat's policy table, one exact draw (a uniform whole number below the
    law's total weight, located among its cumulative weights) and a few
    look-ups. Where a forfeit acts the table holds -1: the token goes back
    to where the turn began.
    """

    def __init__(self, board: Board, rules: Rules, ranks: np.ndarray, rng: np.random.Generator) -> None:
        self.rules, self.ranks, self.rng = rules, ranks, rng
        self.levels, n, self.n_o = ranks.shape[:3]
        self.race = ranks.ndim > 4
        self.k = int(rules.choose_move or 1) if rules.choice == "move" else 1
        kernels = option_kernels(board, rules)
        width = max(len(kern.die.values) for kern in kernels)
        rows = kernels[0].chain_rows
        check_memory(
            8.0 * len(kernels) * self.levels * n * width * (rows + 3), "the roll tables of a choice rule's simulation"
        )
        shape = (len(kernels), self.levels, n, width)
        self.after = np.zeros(shape, dtype=np.int64)
        self.more = np.zeros(shape, dtype=bool)
        self.sixes = np.zeros(shape, dtype=np.int64)
        self.land = np.full((rows, *shape), n + 1, dtype=np.int64)
        # the law of each (option, capped): cumulative whole weights (padded) and the die's column of each value
        self.cum = np.full((2 * len(kernels), width), np.iinfo(np.int64).max, dtype=np.int64)
        self.total = np.zeros(2 * len(kernels), dtype=np.int64)
        self.column = np.zeros((2 * len(kernels), width), dtype=np.int64)
        lv, sq = np.meshgrid(np.arange(self.levels), np.arange(n), indexing="ij")
        for o, kern in enumerate(kernels):
            values = np.array(kern.die.values, dtype=np.int64)
            r = kern.roll(sq[..., None], lv[..., None], -1, values)  # square, sixes, origin unknown (-1), value
            f = values.size
            self.after[o, ..., :f] = r.square
            self.more[o, ..., :f] = r.more
            self.sixes[o, ..., :f] = np.minimum(r.sixes, self.levels - 1)
            self.land[:, o, ..., :f] = r.land
            for capped in (0, 1) if rules.max_sixes is not None else (0,):
                law = kern.law(bool(capped))
                weights = np.array(law.integer_weights(), dtype=object)
                cum = np.cumsum(weights)
                if cum[-1] > 1 << 62:
                    raise LimitError(f"the die {law.spec} has whole weights past 2**62: too fine to simulate")
                self.cum[2 * o + capped, : cum.size] = cum.astype(np.int64)
                self.total[2 * o + capped] = int(cum[-1])
                self.column[2 * o + capped, : cum.size] = np.searchsorted(values, law.values)
        self.landings = np.zeros(n + 2, dtype=np.int64)

    def play(self, start: np.ndarray, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One turn from each square of ``start`` (``others``: the other seats' squares, one row per game).

        Returns the squares where the turns end (before any bump) and the rolls they took.
        """
        m = start.size
        end = np.empty(m, dtype=np.int64)
        rolls = np.zeros(m, dtype=np.int64)
        square, level = start.astype(np.int64), np.zeros(m, dtype=np.int64)
        rows = np.arange(m)
        cap = self.rules.max_sixes
        while rows.size:
            cur, lvl, org = square[rows], level[rows], start[rows]
            key = (lvl, cur, org if self.n_o > 1 else np.zeros_like(cur))
            if self.race:
                key += tuple(others[rows].T)
            order = self.ranks[key]
            capped = (lvl >= cap).astype(np.int64) if cap is not None else np.zeros_like(lvl)
            option = np.argmin(order, axis=1) if self.rules.choice == "die" else np.zeros_like(lvl)
            law = 2 * option + capped
            col = self._draw(law, order)
            at = (option, lvl, cur, col)
            after = self.after[at]
            after = np.where(after < 0, org, after)  # a forfeit: back to where the turn began
            more = self.more[at]
            self.landings += np.bincount(self.land[(slice(None),) + at].ravel(), minlength=self.landings.size)
            rolls[rows] += 1
            square[rows], level[rows] = after, self.sixes[at]
            end[rows[~more]] = after[~more]
            rows = rows[more]
        return end, rolls

    def _draw(self, law: np.ndarray, order: np.ndarray) -> np.ndarray:
        """The die's column rolled in each game: one exact draw of its law, or the policy's pick among ``k``."""
        m, k = law.size, self.k
        u = self.rng.integers(0, self.total[law][:, None], size=(m, k))
        index = (u[..., None] >= self.cum[law][:, None, :]).sum(axis=-1)  # the value whose slots hold u
        thrown = self.column[law[:, None], index]
        if k == 1:
            return thrown[:, 0]
        first = np.argmin(np.take_along_axis(order, thrown, axis=1), axis=1)  # the policy's first among them
        return thrown[np.arange(m), first]


def play_choosing(
    board: Board,
    rules: Rules,
    games: int,
    players: int,
    mode: str,
    max_turns: int,
    rng: np.random.Generator,
    ranks: tuple[np.ndarray, ...],
    *,
    progress: Any = None,
    start: GameState | None = None,
) -> MultiOutcome:
    """Play ``games`` games of ``players`` seats under ``mode``, each seat choosing by its policy table.

    ``ranks`` holds one policy table per seat (:attr:`PolicyTable.ranks
    <snlmarkov.policy.PolicyTable.ranks>`: of one token, or of a race reading
    the other ``players - 1`` seats). Turns, rolls, rounds, places and
    landings count as in :func:`~snlmarkov.sim.multi.play_multi` (with one
    player, rounds are turns); ``start`` is where every game begins (checked
    by the caller).
    """
    turners = [_Turns(board, rules, r, rng) for r in ranks]
    other_seats = [[s for s in range(players) if s != seat] for seat in range(players)]

    def turn(seat: int, pos: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        squares = pos[rows]
        return turners[seat].play(squares[:, seat], squares[:, other_seats[seat]])

    out = play_rounds(
        turn, rules, board.size, games, players, mode, max_turns, progress=progress, start=start, chunk=CHUNK
    )
    landings = np.sum([t.landings[: board.size + 1] for t in turners], axis=0)
    return dataclasses.replace(out, landings=landings)


def check_policy_finishes(board: Board, rules: Rules, ranks: np.ndarray) -> None:
    """Refuse a ``choose_die`` policy of one token that can lead it where it never finishes.

    The graph of the decision states under the policy (each state's chosen
    die, every value it can deal, read from the play kernel) is searched from
    the first roll of the game and back from the finish; a state reached that
    cannot reach the finish is a trap, and simulating would only stop at
    ``max_turns``. Under ``choose_move`` every value can be the one moved
    (all the dice may show it), so the plain check of the board
    (:func:`~snlmarkov.reach.check_winnable`) covers every policy; race
    policies (which read other tokens) are not checked here.

    Raises
    ------
    UnwinnableBoardError
        Naming the lowest square of a trap.

    Examples
    --------
    >>> from snlmarkov import Board, Die, Policy, Rules
    >>> from snlmarkov.playkernel import resolve_policy
    >>> rules = Rules(choose_die=(Die.faces(0, 0, 4, 4, 4, 4), 6))
    >>> check_policy_finishes(Board(10), rules, resolve_policy(Policy.fixed(6), Board(10), rules).ranks)
    >>> check_policy_finishes(Board(10), rules, resolve_policy(Policy.fixed("weights:0=1,4=2"), Board(10), rules).ranks)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.UnwinnableBoardError: under this policy a token can be caught where it never finishes: squares 0, 4, 8 (the games would only stop at max_turns)
    """
    if rules.choice != "die" or ranks.ndim > 4:
        return
    n = board.size
    levels, _, n_o = ranks.shape[:3]
    lv, sq, org = (a.ravel() for a in np.meshgrid(np.arange(levels), np.arange(n), np.arange(n_o), indexing="ij"))
    origin = org if n_o > 1 else sq
    state = (lv * n + sq) * n_o + (org if n_o > 1 else 0)
    option = np.argmin(ranks.reshape(-1, ranks.shape[-1]), axis=1)
    src, dst = [], []
    for o, kern in enumerate(option_kernels(board, rules)):
        rows = np.flatnonzero(option == o)
        for at_cap in (False, True):
            here = rows[is_capped(rules, lv[rows]) == at_cap] if rules.max_sixes is not None else rows
            if not here.size or (at_cap and rules.max_sixes is None):
                continue
            values = np.array(kern.law(at_cap).values, dtype=np.int64)
            r = kern.roll(sq[here, None], lv[here, None], origin[here, None], values[None, :])
            nxt_lv = np.minimum(lv[here, None] + 1, levels - 1)
            go_on = (nxt_lv * n + r.square) * n_o + (org[here, None] if n_o > 1 else 0)
            begin = r.square * n_o + (r.square if n_o > 1 else 0)  # a new turn: 0 sixes, its own origin
            to = np.where(r.more, go_on, begin)
            to = np.where(r.square >= n, state.size, to)  # the finish
            src.append(np.repeat(state[here], values.size))
            dst.append(to.ravel())
    a, b = np.concatenate(src), np.concatenate(dst)
    import scipy.sparse as sp  # here, not above: simulation workers import this module and never call this
    from scipy.sparse.csgraph import breadth_first_order

    graph = sp.csr_matrix((np.ones(a.size, dtype=np.int8), (a, b)), shape=(state.size + 1, state.size + 1))
    reach = breadth_first_order(graph, 0, directed=True, return_predecessors=False)
    back = breadth_first_order(graph.T.tocsr(), state.size, directed=True, return_predecessors=False)
    home = np.zeros(state.size + 1, dtype=bool)
    home[back] = True
    stuck = reach[~home[reach]]
    if stuck.size:
        squares = np.unique((stuck // n_o) % n)
        shown = ", ".join(map(str, squares[:10].tolist())) + (" ..." if squares.size > 10 else "")
        raise UnwinnableBoardError(
            f"under this policy a token can be caught where it never finishes: squares {shown} "
            "(the games would only stop at max_turns)",
            int(squares[0]),
        )
