"""An independent model of one token under a choice rule, written from docs/rules.md alone.

It shares no code with ``snlmarkov.chain`` (no ``roll_slots``, no
``DecisionProcess``): it reads the dice (``Die.values``, ``Die.pmf``,
``Die.top``, ``Die.without_top()``), the board's jumps and the rule fields,
and follows the rules page ("Dice", "Choices", the readings) roll by roll
with :class:`fractions.Fraction`.

A decision state is ``(square, level, origin)``: ``level`` the sixes of the
turn so far (capped at ``max_sixes``; without a cap 0 or 1 = "one or more"),
``origin`` the square the turn began on under ``on_cap="forfeit"`` (else 0).
An *action* is what a deterministic policy does in a state:

- ``choose_die``: the index of the die rolled;
- ``choose_move``, ``kind="order"``: an order of the die's values (the value
  moved is the first of the order among those rolled);
- ``choose_move``, ``kind="map"``: any mapping from the multiset of values
  rolled to one value of it (every deterministic rule, orders included).

Each (state, action) has a law over outcomes ``("end", q)`` (the turn ends
with the token on ``q``; ``q == N`` is the finish) and ``("go", state)`` (a
bonus or entering roll in the same turn). Under ``choose_move`` the law of
the value moved is found by enumerating every ordered roll of the ``k`` dice.

Policies are evaluated exactly (:func:`exact_values`, Fractions) or in
floats for a brute-force search over every deterministic policy
(:func:`brute_force`); the near-optimal ones of the float search are then
evaluated exactly, so the minimum found is exact.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction
from math import inf

import numpy as np
from _dice_brute import _solve  # exact Gauss-Jordan, written from the rules page too

__all__ = ["ChoiceModel", "exact_values", "float_values", "brute_force", "within_values", "hit_and_landings"]


class ChoiceModel:
    """The decision states, actions and outcome laws of one token (see the module docstring).

    ``roots="starts"`` keeps the states reachable (under any choice) from a
    turn begun on any square ``0..N-1``; ``roots="all"`` keeps every
    ``(square, level, origin)``.
    """

    def __init__(self, board, rules, *, kind: str = "order", roots: str = "starts") -> None:
        self.n = board.size
        self.jumps = dict(board.jumps)
        self.rules = rules
        self.cap = rules.max_sixes
        self.forfeit = self.cap is not None and rules.on_cap == "forfeit"
        self.levels = (self.cap if self.cap is not None else 1) + 1
        if rules.choose_die:
            self.choice = "die"
            self.dice = list(rules.choose_die)
        else:
            self.choice = "move"
            self.k = int(rules.choose_move)
            self.die = rules.die
            self.values = list(rules.die.values)
            if kind == "order":
                self.move_actions = list(itertools.permutations(self.values))
            else:
                self.move_actions = self._mappings()
        self.kind = kind
        n = self.n
        if roots == "all":
            todo = [(p, lv, o if self.forfeit else 0) for p in range(n) for lv in range(self.levels) for o in range(n)]
            todo = sorted(set(todo))
        else:
            todo = [self.start(p) for p in range(n)]
        self.laws: dict = {}
        seen = set(todo)
        while todo:
            st = todo.pop()
            self.laws[st] = [self._law(st, a) for a in range(self.n_actions(st))]
            for law in self.laws[st]:
                for (what, target), _ in law.items():
                    if what == "go" and target not in seen:
                        seen.add(target)
                        todo.append(target)
        self.states = sorted(self.laws)
        self.index = {s: i for i, s in enumerate(self.states)}

    # ------------------------------------------------------------ rules
    def start(self, p: int) -> tuple[int, int, int]:
        return (p, 0, p if self.forfeit else 0)

    def n_actions(self, st) -> int:
        return len(self.dice) if self.choice == "die" else len(self.move_actions)

    def _land(self, t: int) -> int:
        while t in self.jumps:  # along the whole chain on a chained board
            t = self.jumps[t]
        return t

    def _move(self, p: int, v: int):
        """Where moving ``v`` from ``p`` leaves the token, and whether it overshot under stay."""
        n, r = self.n, self.rules
        if v == 0:
            return p, False
        t = p + v
        if t <= n:
            return self._land(t), False
        if r.finish == "stay":
            return p, True
        if r.finish == "none":
            return n, False
        t = 2 * n - t
        return (self._land(t) if r.jump_after_bounce else t), False

    def _next_level(self, lv: int) -> int:
        return min(lv + 1, self.levels - 1)

    def outcome(self, st, v: int, top: int):
        """What showing (choosing) ``v`` does from ``st`` when "the six" is ``top``."""
        p, lv, o = st
        r = self.rules
        if r.start_on_six and p == 0 and lv == 0:  # entering: a six enters and rolls again
            return ("go", (0, self._next_level(lv), o)) if v == top else ("end", 0)
        capped = self.cap is not None and lv >= self.cap
        if capped:
            if v == top and r.on_cap == "forfeit":
                return ("end", o)
            if v == top and r.on_cap == "restart":
                return ("end", 0)
            assert not (v == top and r.on_cap == "redeal")
            return ("end", self._move(p, v)[0])
        q, over = self._move(p, v)
        if over:
            return ("end", p)
        if q == self.n:
            return ("end", q)
        if v == top and r.bonus_on_six:
            return ("go", (q, self._next_level(lv), o))
        return ("end", q)

    def landed(self, st, v: int, top: int) -> tuple:
        """The squares showing ``v`` from ``st`` lands on (docs/rules.md, reading 7 and "Chained jumps").

        The square a move brings the token to before a jump acts (a bounce
        target, the finish under ``none``), then every later square of the
        chain where a jump acts; a move of 0, an overshoot under ``stay``, an
        entering roll and a six voided by ``forfeit`` or sent home by
        ``restart`` land nowhere.
        """
        p, lv, _ = st
        r, n = self.rules, self.n
        if v == 0 or (r.start_on_six and p == 0 and lv == 0):
            return ()
        if self.cap is not None and lv >= self.cap and v == top and r.on_cap in ("forfeit", "restart"):
            return ()
        t = p + v
        bounced = False
        if t > n:
            if r.finish == "stay":
                return ()
            if r.finish == "none":
                return (n,)
            t, bounced = 2 * n - t, True
        out = [t]
        if bounced and not r.jump_after_bounce:
            return tuple(out)
        while t in self.jumps and self.jumps[t] in self.jumps:  # the chain goes on: its next jump acts too
            t = self.jumps[t]
            out.append(t)
        return tuple(out)

    def landing_law(self, st, a: int) -> dict:
        """``{(outcome, squares landed on): probability}`` of action ``a`` in ``st``."""
        out: dict = defaultdict(Fraction)
        if self.choice == "die":
            die = self.dice[a]
            for v, pr in self.die_law(die, st):
                out[(self.outcome(st, v, die.top), self.landed(st, v, die.top))] += pr
        else:
            action = self.move_actions[a]
            for roll in itertools.product(self.die_law(self.die, st), repeat=self.k):
                pr = Fraction(1)
                for _, q in roll:
                    pr *= q
                v = self.chosen(action, tuple(x for x, _ in roll))
                out[(self.outcome(st, v, self.die.top), self.landed(st, v, self.die.top))] += pr
        return dict(out)

    def die_law(self, die, st):
        """The pmf of one die rolled from ``st``: redealt without its top at the cap under redeal."""
        capped = (
            self.cap is not None and st[1] >= self.cap and not (self.rules.start_on_six and st[0] == 0 and st[1] == 0)
        )
        if capped and self.rules.on_cap == "redeal":
            low = die.without_top()
            return list(zip(low.values, low.pmf))
        return list(zip(die.values, die.pmf))

    def _mappings(self):
        """Every deterministic choice: a value for each multiset of ``k`` values that holds two or more values."""
        multis = [m for m in itertools.combinations_with_replacement(self.values, self.k) if len(set(m)) > 1]
        options = [sorted(set(m)) for m in multis]
        return [dict(zip(multis, pick)) for pick in itertools.product(*options)]

    def chosen(self, action, rolled: tuple) -> int:
        if len(set(rolled)) == 1:
            return rolled[0]
        if self.kind == "order":
            return next(v for v in action if v in rolled)
        return action[tuple(sorted(rolled))]

    def _law(self, st, a: int) -> dict:
        out: dict = defaultdict(Fraction)
        if self.choice == "die":
            die = self.dice[a]
            for v, pr in self.die_law(die, st):
                out[self.outcome(st, v, die.top)] += pr
        else:
            action = self.move_actions[a]
            law = self.die_law(self.die, st)
            for roll in itertools.product(law, repeat=self.k):
                pr = Fraction(1)
                for _, q in roll:
                    pr *= q
                v = self.chosen(action, tuple(x for x, _ in roll))
                out[self.outcome(st, v, self.die.top)] += pr
        return dict(out)

    # ---------------------------------------------------------- helpers
    def action_of_table(self, table, st) -> int:
        """The action the package's :class:`PolicyTable` takes in ``st`` (read through its public methods)."""
        p, lv, o = st
        if self.choice == "die":
            return int(table.die_index(p, lv, o))
        ranks = table.order(p, lv, o)
        order = tuple(self.values[i] for i in np.argsort(ranks, kind="stable"))
        if self.kind == "order":
            return self.move_actions.index(order)
        mapping = {m: next(v for v in order if v in m) for m in self.move_actions[0]}
        return self.move_actions.index(mapping)

    def policy_of_table(self, table) -> list[int]:
        return [self.action_of_table(table, st) for st in self.states]

    def row(self, st, a: int):
        """``(transitions {state index: prob}, chance the turn ends)`` of action ``a`` in ``st``."""
        out: dict = defaultdict(Fraction)
        end = Fraction(0)
        for (what, target), pr in self.laws[st][a].items():
            if what == "go":
                out[self.index[target]] += pr
            else:
                end += pr
                if target != self.n:
                    out[self.index[self.start(target)]] += pr
        return dict(out), end

    def rows(self, policy):
        """``(transition dict per state, end probability per state)`` under ``policy`` (one action per state)."""
        pairs = [self.row(st, a) for st, a in zip(self.states, policy)]
        return [t for t, _ in pairs], [c for _, c in pairs]


def _proper(trans, cost) -> list[bool]:
    """States from which the chain finishes surely: every state they reach can still reach the finish."""
    s = len(trans)
    back = [[] for _ in range(s)]
    for i, row in enumerate(trans):
        for j in row:
            back[j].append(i)
    can = [False] * s
    todo = [i for i in range(s) if sum(trans[i].values()) < 1]  # a row short of 1 reaches the finish
    for i in todo:
        can[i] = True
    while todo:
        j = todo.pop()
        for i in back[j]:
            if not can[i]:
                can[i] = True
                todo.append(i)
    doomed = [not c for c in can]
    todo = [i for i in range(s) if doomed[i]]
    while todo:
        j = todo.pop()
        for i in back[j]:
            if not doomed[i]:
                doomed[i] = True
                todo.append(i)
    return [not d for d in doomed]


def exact_values(model: ChoiceModel, policy) -> list:
    """Expected turns from every state under ``policy``, as Fractions (``inf`` where it does not finish surely)."""
    trans, cost = model.rows(policy)
    ok = _proper(trans, cost)
    keep = [i for i in range(len(trans)) if ok[i]]
    solved = _solve(keep, {i: (cost[i], trans[i]) for i in keep}) if keep else {}
    return [solved.get(i, inf) for i in range(len(trans))]


def float_values(model: ChoiceModel, policy) -> np.ndarray:
    """:func:`exact_values` in floats (a dense solve; ``inf`` where the policy does not finish surely)."""
    trans, cost = model.rows(policy)
    ok = np.array(_proper(trans, cost))
    s = len(trans)
    a = np.eye(s)
    b = np.array([float(c) for c in cost])
    for i, row in enumerate(trans):
        if ok[i]:
            for j, pr in row.items():
                a[i, j] -= float(pr)
        else:
            b[i] = 0.0
    v = np.linalg.solve(a, b)
    v[~ok] = inf
    return v


def _action_rows(model: ChoiceModel):
    """Float ``(S, A, S)`` transition rows and ``(S, A)`` end probabilities (``A`` the most actions; unused ones NaN)."""
    s = len(model.states)
    a_max = max(model.n_actions(st) for st in model.states)
    rows = np.zeros((s, a_max, s))
    ends = np.full((s, a_max), np.nan)
    for i, st in enumerate(model.states):
        for a in range(model.n_actions(st)):
            trans, cost = model.row(st, a)
            for j, pr in trans.items():
                rows[i, a, j] = float(pr)
            ends[i, a] = float(cost)
    return rows, ends


def _batch_values(rows, ends, policies: np.ndarray) -> np.ndarray:
    """Float values of a batch of policies (``(P, S)`` actions): ``inf`` where one does not finish surely."""
    p_n, s = policies.shape
    ids = np.arange(s)
    m = rows[ids[None, :], policies]  # (P, S, S)
    c = ends[ids[None, :], policies]  # (P, S)
    reach = (m > 0) | np.eye(s, dtype=bool)[None]
    for _ in range(max(1, int(np.ceil(np.log2(max(s, 2)))) + 1)):
        reach = (reach.astype(np.float32) @ reach.astype(np.float32)) > 0
    fin = m.sum(axis=2) < 1 - 1e-12  # a row short of 1: the finish
    can = np.any(reach & fin[:, None, :], axis=2)  # reaches a state that may finish
    ok = ~np.any(reach & ~can[:, None, :], axis=2)  # every state it reaches may still finish
    a = np.eye(s)[None] - np.where(ok[:, :, None], m, 0.0)
    b = np.where(ok, c, 0.0)
    v = np.linalg.solve(a, b[..., None])[..., 0]
    return np.where(ok, v, np.inf)


def brute_force(model: ChoiceModel, *, rtol: float = 1e-9, batch: int = 4096):
    """The least expected turns from every state over every deterministic policy, exactly.

    Every policy (one action per state) is evaluated in floats; every policy
    within ``rtol`` of the least value at some state is then evaluated
    exactly, and the exact minimum per state is returned with how many
    policies were searched.
    """
    sizes = [model.n_actions(st) for st in model.states]
    rows, ends = _action_rows(model)
    grids = np.array(list(itertools.product(*[range(k) for k in sizes])), dtype=np.int64)
    vals = np.concatenate([_batch_values(rows, ends, grids[i : i + batch]) for i in range(0, len(grids), batch)])
    best = vals.min(axis=0)
    # per state, one policy for each distinct value (to 1e-11) within rtol of the least: evaluated exactly
    picks = set()
    for i in np.flatnonzero(np.isfinite(best)):
        near = np.flatnonzero(vals[:, i] <= best[i] * (1 + rtol))
        _, first = np.unique(np.round(vals[near, i] * 1e11), return_index=True)
        picks.update(int(k) for k in near[first])
    exact_best: list = [inf] * len(model.states)
    for k in sorted(picks):
        ev = exact_values(model, [int(x) for x in grids[k]])
        exact_best = [min(x, y) for x, y in zip(exact_best, ev)]
    return exact_best, len(grids)


def within_values(model: ChoiceModel, turns: int) -> list[dict]:
    """The largest chance of finishing within ``t`` turns, ``t = 1..turns``, from every state, exactly.

    Needs a finite turn: every ``go`` raises the level (a cap, or no bonus).
    Returns one dict ``state -> Fraction`` per number of turns left.
    """
    order = sorted(model.states, key=lambda s: -s[1])  # a bonus roll goes one level up
    prev = dict.fromkeys(model.states, Fraction(0))
    out = []
    for _ in range(turns):
        cur: dict = {}
        for st in order:
            best = None
            for law in model.laws[st]:
                val = Fraction(0)
                for (what, target), pr in law.items():
                    if what == "go":
                        if target[1] <= st[1]:
                            raise ValueError("within_values needs every bonus roll to go one level up")
                        val += pr * cur[target]
                    elif target == model.n:
                        val += pr
                    else:
                        val += pr * prev[model.start(target)]
                best = val if best is None else max(best, val)
            cur[st] = best
        out.append(cur)
        prev = cur
    return out


def hit_and_landings(model: ChoiceModel, policy, square: int) -> tuple:
    """From the turn start on 0 under ``policy``: the chance of ever landing on ``square``, and the expected landings there.

    Exact: ``h(s) = sum p * (1 if the roll lands on square else h(next))``
    and ``L(s) = sum p * (landings of the roll on square + L(next))`` over
    the states the policy reaches from 0 (the finish: 0).
    """
    start = model.start(0)
    reach, todo, laws = {start}, [start], {}
    while todo:
        st = todo.pop()
        laws[st] = model.landing_law(st, policy[model.index[st]])
        for ((what, target), _), _pr in laws[st].items():
            nxt = target if what == "go" else (None if target == model.n else model.start(target))
            if nxt is not None and nxt not in reach:
                reach.add(nxt)
                todo.append(nxt)
    states = sorted(reach)
    hit_rows, land_rows = {}, {}
    for st in states:
        hb, lb = Fraction(0), Fraction(0)
        hc: dict = defaultdict(Fraction)
        lc: dict = defaultdict(Fraction)
        for ((what, target), landed), pr in laws[st].items():
            nxt = target if what == "go" else (None if target == model.n else model.start(target))
            lb += pr * landed.count(square)
            if nxt is not None:
                lc[nxt] += pr
            if square in landed:
                hb += pr
            elif nxt is not None:
                hc[nxt] += pr
        hit_rows[st] = (hb, dict(hc))
        land_rows[st] = (lb, dict(lc))
    return _solve(states, hit_rows)[start], _solve(states, land_rows)[start]
