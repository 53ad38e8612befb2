"""A tiny brute-force solver for one token's expected turns, written from docs/rules.md alone.

It shares no code with ``snlmarkov.chain`` or the engine: it reads the die's
values and probabilities (``Die.values``, ``Die.pmf``, ``Die.top``,
``Die.without_top()``), the board's jumps and the rule fields, and follows the
rules page roll by roll with :class:`fractions.Fraction`:

- one roll of ``v`` from ``p`` (docs/rules.md, "One roll"): ``0`` moves nothing
  and lands nowhere; past the finish, ``stay`` keeps the token on ``p`` and
  ends the turn at once, ``bounce`` counts back from ``N`` (a jump there acts
  unless ``jump_after_bounce`` is off), ``none`` finishes; a jump's start
  moves the token to its end (along the whole chain on a chained board);
- one turn ("One turn", "Dice"): the top value is "the six"; a six moved earns
  another roll (``bonus_on_six``) unless it finished or overshot under
  ``stay``; once the turn holds ``max_sixes`` sixes the next roll is capped
  (``redeal``: drawn from the die without its top value, no bonus;
  ``forfeit``: a top value sends the token back to the square the turn began
  on; ``restart``: a top value sends it to 0); six to start: on square 0 the
  token needs the top value to enter, that six counts towards the cap and
  the player rolls again from 0 (a token back on 0 needs a six again).

With a cap every bonus roll raises the sixes of the turn, so a turn is a finite
tree of rolls, enumerated with memoisation; without a cap the sixes do not
matter and the roll states form one small linear system. The expected number
of turns solves ``E[s] = 1 + sum_q P(turn from s ends on q) E[q]``, by exact
Gaussian elimination.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from functools import cache

__all__ = ["brute_expected_turns", "Unwinnable"]


class Unwinnable(Exception):
    """Some square the token can reach cannot reach the finish."""


def _solve(unknowns: list, rows: dict) -> dict:
    """Solve ``x_i = b_i + sum_j a_ij x_j`` exactly; ``rows[i] = (b_i, {j: a_ij})``."""
    index = {u: k for k, u in enumerate(unknowns)}
    n = len(unknowns)
    m = [[Fraction(0)] * (n + 1) for _ in range(n)]
    for u in unknowns:
        b, coef = rows[u]
        i = index[u]
        m[i][i] += 1
        for v, a in coef.items():
            m[i][index[v]] -= a
        m[i][n] += b
    for col in range(n):
        piv = next(r for r in range(col, n) if m[r][col] != 0)
        m[col], m[piv] = m[piv], m[col]
        inv = 1 / m[col][col]
        m[col] = [x * inv for x in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return {u: m[index[u]][n] for u in unknowns}


def brute_expected_turns(board, rules) -> Fraction:
    """Expected turns from square 0 for one token (bump never acts alone), as a Fraction.

    Raises
    ------
    Unwinnable
        When a square the token can reach cannot reach the finish.
    """
    n, jumps = board.size, dict(board.jumps)
    die = rules.die
    top, cap = die.top, rules.max_sixes
    law = list(zip(die.values, die.pmf))

    def land(t: int) -> int:
        while t in jumps:  # without chain no jump ends on another's start: one step
            t = jumps[t]
        return t

    def move(p: int, v: int) -> tuple[int, bool]:
        """Where a roll of ``v`` from ``p`` leaves the token, and whether it overshot under stay."""
        if v == 0:
            return p, False
        t = p + v
        if t <= n:
            return land(t), False
        if rules.finish == "stay":
            return p, True
        if rules.finish == "none":
            return n, False
        t = 2 * n - t
        return (land(t) if rules.jump_after_bounce else t), False

    def rolls(p: int, entered: bool, sixes: int, start: int):
        """Outcomes of the next roll: (probability, ('end', q) or ('roll', p, entered, sixes))."""
        capped = cap is not None and sixes >= cap
        if not entered:  # six to start, on square 0
            for v, pr in law:
                yield pr, ("roll", 0, True, sixes + 1) if v == top else ("end", 0)
            return
        if capped and rules.on_cap == "redeal":
            low = die.without_top()
            for v, pr in zip(low.values, low.pmf):
                yield pr, ("end", move(p, v)[0])
            return
        for v, pr in zip(die.values, die.pmf):
            if capped and v == top:
                yield pr, ("end", start if rules.on_cap == "forfeit" else 0)
                continue
            q, over = move(p, v)
            if over or q == n or v != top or not rules.bonus_on_six or capped:
                yield pr, ("end", q)
            else:
                yield pr, ("roll", q, True, sixes + 1)

    def fresh(s: int) -> tuple[int, bool]:
        return s, s != 0 or not rules.start_on_six

    if cap is not None:  # every bonus roll raises the sixes: a finite tree per turn

        @cache
        def turn_from(p: int, entered: bool, sixes: int, start: int) -> dict[int, Fraction]:
            out: dict[int, Fraction] = defaultdict(Fraction)
            for pr, what in rolls(p, entered, sixes, start):
                if what[0] == "end":
                    out[what[1]] += pr
                else:
                    for q, pq in turn_from(*what[1:], start).items():
                        out[q] += pr * pq
            return dict(out)

        def turn(s: int) -> dict[int, Fraction]:
            return turn_from(*fresh(s), 0, s)

    else:  # no cap: the sixes do not matter; roll states (p, entered) form one linear system per end square
        states, todo = [], [fresh(s) for s in range(n)]
        seen = set(todo)
        edges: dict = {}
        while todo:
            st = todo.pop()
            states.append(st)
            edges[st] = list(rolls(*st, 0, st[0]))
            for _, what in edges[st]:
                if what[0] == "roll" and (what[1], what[2]) not in seen:
                    seen.add((what[1], what[2]))
                    todo.append((what[1], what[2]))
        ends: dict = {st: defaultdict(Fraction) for st in states}
        for st in states:
            for pr, what in edges[st]:
                if what[0] == "end":
                    ends[st][what[1]] += pr
        targets = sorted({q for st in states for q in ends[st]})
        cols = {}
        for q in targets:
            rows = {}
            for st in states:
                coef: dict = defaultdict(Fraction)
                for pr, what in edges[st]:
                    if what[0] == "roll":
                        coef[(what[1], what[2])] += pr
                rows[st] = (ends[st].get(q, Fraction(0)), dict(coef))
            cols[q] = _solve(states, rows)

        def turn(s: int) -> dict[int, Fraction]:
            return {q: cols[q][fresh(s)] for q in targets if cols[q][fresh(s)] != 0}

    # the turn-level chain: squares a turn can start on, from 0
    reach, todo, table = {0}, [0], {}
    while todo:
        s = todo.pop()
        table[s] = turn(s)
        for q in table[s]:
            if q != n and q not in reach:
                reach.add(q)
                todo.append(q)
    good, changed = {n}, True  # squares that can reach the finish
    while changed:
        changed = False
        for s in reach - good:
            if any(q in good for q in table[s]):
                good.add(s)
                changed = True
    if reach - good:
        raise Unwinnable(sorted(reach - good))
    unknowns = sorted(reach)
    rows = {s: (Fraction(1), {q: p for q, p in table[s].items() if q != n}) for s in unknowns}
    return _solve(unknowns, rows)[0]
