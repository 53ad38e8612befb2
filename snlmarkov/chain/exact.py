"""Expected game length as an exact fraction, with no floating point in the arithmetic.

A turn is followed roll by roll from the exact kernel's outcomes (where each
roll leaves the token, :func:`~snlmarkov.chain.mechanics.roll_slots`), each
weighted by the die's exact probability, and the expected-turns equations are
solved by exact elimination. It shares the statement of a roll with the
floating-point models but none of their arithmetic; the tests check both
against brute force written from the rules.
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction

import numpy as np

from ..args import board_arg, rules_arg
from ..board import Board
from ..errors import LimitError, UnwinnableBoardError
from ..limits import MAX_EXACT_SQUARES
from ..rules import Rules
from .mechanics import exact_slot_probs, index_dtype, roll_slots

__all__ = ["exact_expected_turns", "exact_turn_row"]


def _outcomes(board: Board, rules: Rules, dest: np.ndarray, origin: int, cur: int, sixes: int):
    """Outcomes of one roll as ``(probability, continues, square)`` triples, the probability exact.

    The squares and whether the turn goes on come from the exact kernel
    (:func:`~snlmarkov.chain.mechanics.roll_slots`); the probabilities from
    the die's fractions (:func:`~snlmarkov.chain.mechanics.exact_slot_probs`).
    """
    s = roll_slots(board, rules, np.array([cur]), np.array([sixes]), np.array([origin]), dest=dest)
    probs = exact_slot_probs(rules.die, bool(s.capped[0]) and rules.on_cap == "redeal")
    return [(p, bool(s.cont[0, j]), int(s.square[0, j])) for j, p in enumerate(probs) if p > 0]


def exact_turn_row(board: Board, rules: Rules, start: int) -> dict[int, Fraction]:
    """Exact distribution of where a turn that begins on ``start`` ends.

    Without a cap a turn may roll sixes forever; the in-turn states then
    repeat with period ``L`` and the repeating part is summed exactly as a
    geometric series.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> exact_turn_row(Board(3), Rules(faces=2, max_sixes=None), 0)
    {1: Fraction(1, 2), 2: Fraction(1, 4), 3: Fraction(1, 4)}

    On this board a two from square 1 lands on the snake back to 1 and earns
    another roll, forever with probability 0: the series sums to 1.

    >>> exact_turn_row(Board(4, {3: 1}), Rules(faces=2, max_sixes=None), 1)
    {2: Fraction(1, 1)}
    """
    dest = board.destination().astype(index_dtype(board.size + 2 * rules.die.top))
    seen: dict[tuple[int, int], int] = {}
    weights: list[Fraction] = []  # probability of reaching each in-turn state
    ends: list[dict[int, Fraction]] = []  # where the turn ends from it, weighted
    cur, sixes, weight = start, 0, Fraction(1)
    cycle_from, ratio = len(weights), Fraction(0)
    while True:
        key = (cur, sixes if rules.max_sixes is not None else min(sixes, 1))
        if key in seen:  # only without a cap: the six run repeats from here
            cycle_from = seen[key]
            ratio = weight / weights[cycle_from]
            break
        seen[key] = len(weights)
        weights.append(weight)
        here: dict[int, Fraction] = {}
        nxt = None
        for p, cont, q in _outcomes(board, rules, dest, start, cur, sixes):
            if cont:
                nxt = (q, weight * p)
            else:
                here[q] = here.get(q, Fraction(0)) + weight * p
        ends.append(here)
        if nxt is None:
            cycle_from = len(weights)
            break
        cur, weight = nxt
        sixes += 1
    row: dict[int, Fraction] = {}
    for i, here in enumerate(ends):
        scale = 1 / (1 - ratio) if i >= cycle_from else Fraction(1)
        for q, p in here.items():
            row[q] = row.get(q, Fraction(0)) + p * scale
    return dict(sorted(row.items()))


def exact_expected_turns(board: Board | None = None, rules: Rules | None = None) -> Fraction:  # noqa: C901
    """Expected number of turns from square 0, as an exact fraction.

    Only rational arithmetic is used: the turn-level rows are built exactly
    and the expected-turns equations are solved by exact elimination (the
    unknowns are the squares a turn can move back to, so the system stays
    small on real boards).

    Cost: exact elimination over the squares a turn can move back to, about
    cubic in the board (``benchmarks/README.md`` has the measured times). Boards over
    :data:`snlmarkov.limits.MAX_EXACT_SQUARES` (1,000) are refused.

    Raises
    ------
    UnwinnableBoardError
        If finishing is impossible from a square reachable from 0.
    LimitError
        If the board has more than 1,000 squares (use
        :func:`~snlmarkov.expected_turns`, exact to floating point).

    Examples
    --------
    >>> from snlmarkov import Board, Rules, exact_expected_turns
    >>> exact_expected_turns(Board(3), Rules.preset("plain").replace(faces=2))
    Fraction(3, 1)
    >>> e = exact_expected_turns(Board.builtin("milton_bradley"), Rules.preset("plain"))
    >>> float(e)
    39.22512230823...
    """
    board, rules = board_arg(board), rules_arg(rules)
    rules.check_board(board)
    if board.size > MAX_EXACT_SQUARES:
        raise LimitError(
            f"exact_expected_turns works in exact fractions, about cubic in the board: {board.size:,} squares is "
            f"over its limit of {MAX_EXACT_SQUARES:,} (snlmarkov.limits.MAX_EXACT_SQUARES); "
            "use expected_turns() for a floating-point answer"
        )
    n = board.size
    rows: dict[int, dict[int, Fraction]] = {}
    queue = deque([0])
    while queue:  # the squares reachable from 0
        p = queue.popleft()
        if p in rows or p == n:
            continue
        rows[p] = exact_turn_row(board, rules, p)
        queue.extend(q for q in rows[p] if q not in rows)
    # which of them can finish?
    back: dict[int, set[int]] = {}
    for p, row in rows.items():
        for q in row:
            back.setdefault(q, set()).add(p)
    can_finish, queue = {n}, deque([n])
    while queue:
        q = queue.popleft()
        for p in back.get(q, ()):
            if p not in can_finish:
                can_finish.add(p)
                queue.append(p)
    stuck = sorted(set(rows) - can_finish)
    if stuck:
        raise UnwinnableBoardError(
            f"the finish {n} cannot be reached from square {stuck[0]}, which the token can reach from 0",
            stuck[0],
        )

    squares = sorted(rows, reverse=True)
    backward = sorted({q for p in squares for q in rows[p] if q < p and q != n})
    var = {b: i for i, b in enumerate(backward)}
    m = len(backward)
    # x_p = const + sum_b coef[b] x_b, built from the top square down
    expr: dict[int, list[Fraction]] = {}
    for p in squares:
        row = rows[p]
        acc = [Fraction(0)] * (m + 1)
        acc[m] = Fraction(1)
        for q, prob in row.items():
            if q == n or q == p:
                continue
            if q > p:
                for i, c in enumerate(expr[q]):
                    if c:
                        acc[i] += prob * c
            else:
                acc[var[q]] += prob
        stay = row.get(p, Fraction(0))
        expr[p] = [c / (1 - stay) for c in acc]
    # equations x_b = expr_b for the backward squares: (I - C) x = d
    a = [
        [(Fraction(1) if i == j else Fraction(0)) - expr[b][j] for j in range(m)] + [expr[b][m]]
        for i, b in enumerate(backward)
    ]
    for col in range(m):
        piv = next(r for r in range(col, m) if a[r][col] != 0)
        a[col], a[piv] = a[piv], a[col]
        inv = 1 / a[col][col]
        a[col] = [v * inv for v in a[col]]
        for r in range(m):
            if r != col and a[r][col] != 0:
                factor = a[r][col]
                a[r] = [v - factor * w for v, w in zip(a[r], a[col])]
    values = [a[i][m] for i in range(m)]
    x0 = expr[0]
    return x0[m] + sum((c * v for c, v in zip(x0[:m], values)), Fraction(0))
