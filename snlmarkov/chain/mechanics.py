"""One die roll, vectorised: the rule mechanics shared by the exact models.

This module is private to the matrix code (``model``, ``analysis``). The
playable engine and the simulator apply the rules with code of their own, so
that cross-checking the two paths compares independent implementations.

:func:`roll_slots` is the one place the rules of a single roll live: it
returns a ``(states, values)`` table per outcome field, one column per value
of the die (:func:`die_columns`). :func:`one_roll` flattens that table to one entry per outcome.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..board import Board
from ..dice import Die
from ..limits import check_memory
from ..rules import Rules

__all__ = []


def index_dtype(*bounds: int) -> type[np.signedinteger[Any]]:
    """``numpy.int32`` when every bound fits in it with room to spare, else ``numpy.int64``.

    Examples
    --------
    >>> index_dtype(10**6, 2 * 10**7).__name__, index_dtype(2**31).__name__
    ('int32', 'int64')
    """
    return np.int32 if max(bounds, default=0) < 2**30 else np.int64


#: Without a cap a turn may hold any number of sixes. Runs of sixes whose
#: probability is below this are cut from the turn-level matrices (their mass
#: stays on the square where the turn began).
NO_CAP_MASS = 1e-20


@functools.lru_cache(maxsize=64)
def no_cap_depth(die: Die) -> int:
    """Rolls a turn follows without a cap: the first ``d`` with ``P(top) ** d < NO_CAP_MASS``.

    Compared exactly (in fractions), so the depth does not hang on rounding.

    Examples
    --------
    >>> from snlmarkov import Die
    >>> no_cap_depth(Die(6)), no_cap_depth(Die.weighted({1: 1, 6: 3}))
    (26, 161)
    """
    p, bound = die.top_prob, Fraction(NO_CAP_MASS)
    if p >= 1:
        raise ValueError("a die whose only value is its top earns a bonus on every roll")  # Rules refuses it
    depth = 1
    while p**depth >= bound:
        depth += 1
    return depth


@dataclass(frozen=True, eq=False)
class DieColumns:
    """A die as the columns of :func:`roll_slots`.

    Attributes
    ----------
    values : ndarray of int
        The die's values, increasing (column ``k`` is value ``values[k]``).
    probs : ndarray of float
        Their probabilities.
    capped : ndarray of float
        The probabilities of the capped roll under ``redeal``: the die
        without its top value, renormalised (the last entry 0). For a die
        with a single value, which no rule set redeals, the die itself (the
        capped states of a roll chain are then unreachable rows that still
        sum to 1).
    zero : bool
        Whether the first value is 0 (a move that moves nothing).
    """

    values: np.ndarray
    probs: np.ndarray
    capped: np.ndarray
    zero: bool


@functools.lru_cache(maxsize=64)
def die_columns(die: Die) -> DieColumns:
    """The columns of :func:`roll_slots` for ``die`` (cached; the arrays are read-only).

    Examples
    --------
    >>> from snlmarkov import Die
    >>> c = die_columns(Die.faces(0, 4, 4))
    >>> c.values.tolist(), c.probs.round(3).tolist(), c.capped.tolist(), c.zero
    ([0, 4], [0.333, 0.667], [1.0, 0.0], True)
    """
    values = np.array(die.values, dtype=np.int64)
    probs = np.array(die.probs)
    capped = probs.copy()  # a die of one value: no rule set redeals it (Rules refuses that), any row will do
    if values.size > 1:
        capped[:-1] = die.without_top().probs
        capped[-1] = 0.0
    for a in (values, probs, capped):
        a.setflags(write=False)
    return DieColumns(values, probs, capped, bool(values[0] == 0))


def exact_slot_probs(die: Die, redeal: bool) -> tuple[Fraction, ...]:
    """The exact probability of each column of :func:`roll_slots`: the die, or its capped roll.

    Examples
    --------
    >>> from snlmarkov import Die
    >>> [str(p) for p in exact_slot_probs(Die(3), True)]
    ['1/2', '1/2', '0']
    """
    if not redeal:
        return die.pmf
    return die.without_top().pmf + (Fraction(0),)


@dataclass(frozen=True)
class RollOutcomes:
    """Every outcome of one roll from a batch of in-turn states.

    All arrays have one entry per (state, outcome) pair, state by state.

    Attributes
    ----------
    index : ndarray of int
        Which state of the batch the outcome belongs to.
    prob : ndarray of float
        Its probability given that state (they sum to 1 per state).
    landing : ndarray of int
        The square the roll lands on before a jump acts, or -1 when the
        roll lands nowhere (failed or successful entry, overshoot under
        ``stay``, a six voided by ``forfeit`` or sent home by ``restart``).
        On a chained board the later squares of the chain where a jump acts
        are landed on too: :func:`all_landings` lists them.
    square : ndarray of int
        Where the token is after the roll (jump applied).
    cont : ndarray of bool
        True when the turn goes on (a six earned another roll, or the
        entering six); the next roll is then made with one more six.
    face : ndarray of int
        The value the die shows for this outcome.
    """

    index: np.ndarray
    prob: np.ndarray
    landing: np.ndarray
    square: np.ndarray
    cont: np.ndarray
    face: np.ndarray


@dataclass(frozen=True)
class RollSlots:
    """The outcomes of one roll as ``(states, values)`` tables.

    Column ``k`` holds the outcome of the die's ``k``-th value
    (:attr:`DieColumns.values`, increasing: the last column is the top
    value, "the six"). A slot whose ``prob`` is 0 is no outcome (the six
    under ``redeal`` at the cap). Other fields
    are as in :class:`RollOutcomes`. In each row only the last column (the
    six) can have ``cont`` set.

    The flags say which rule acted, for :func:`roll_story` (the event log a
    roll produces): ``capped`` and ``entering`` per state, ``overshoot``
    (``stay`` kept the token), ``bounced``, ``void`` (``forfeit``) and
    ``restarted`` (``restart``: back to square 0) per slot.
    """

    prob: np.ndarray
    landing: np.ndarray
    square: np.ndarray
    cont: np.ndarray
    capped: np.ndarray
    entering: np.ndarray
    overshoot: np.ndarray
    bounced: np.ndarray
    void: np.ndarray
    restarted: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        """Which slots are outcomes."""
        return self.prob > 0


def roll_slots(
    board: Board,
    rules: Rules,
    cur: np.ndarray,
    sixes: np.ndarray,
    origin: np.ndarray,
    *,
    dest: np.ndarray | None = None,
) -> RollSlots:
    """All outcomes of the next roll from the states ``(cur, sixes, origin)``, one column per die value.

    This is the one statement of a roll on the exact side: every exact
    consumer reads it (the turn and roll models, the fraction solver, the
    batched design evaluator through :func:`roll_slots_batch`, and the story
    of a logged roll that :func:`~snlmarkov.verify_game` checks).

    ``cur`` is the token's square, ``sixes`` how many sixes the turn holds so
    far (0 at the start of a turn) and ``origin`` where the turn began (used
    by ``forfeit``). Squares are ``0..N-1``; the finish is absorbing and never
    rolled from. ``dest`` is ``board.destination()`` (pass it to save
    recomputing it); the index arrays returned have its integer type.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> s = roll_slots(Board(4, {2: 4}), Rules(faces=3), np.array([0, 3]), np.array([0, 0]), np.array([0, 3]))
    >>> s.square.tolist(), s.landing.tolist(), s.cont.tolist()
    ([[1, 4, 3], [4, 3, 3]], [[1, 2, 3], [4, -1, -1]], [[False, False, True], [False, False, False]])
    """
    if dest is None:
        dest = board.destination().astype(index_dtype(board.size + 2 * rules.die.top))
    return _slots(board.size, rules, cur, sixes, origin, dest, None)


def roll_slots_batch(
    size: int, rules: Rules, cur: np.ndarray, sixes: np.ndarray, origin: np.ndarray, dest: np.ndarray, base: np.ndarray
) -> RollSlots:
    """:func:`roll_slots` for states of many boards of one size at once.

    ``dest`` holds the boards' destinations one after the other (``B * (size
    + 1)`` entries, :meth:`Board.destination` of each); state ``i`` is on the
    board whose destinations start at ``dest[base[i]]``. A destination past
    ``size`` is a second absorbing state: the turn ends there.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> dest = np.concatenate([Board(4, {2: 4}).destination(), Board(4).destination()])
    >>> s = roll_slots_batch(4, Rules(faces=3), np.array([0, 0]), np.array([0, 0]), np.array([0, 0]), dest, np.array([0, 5]))
    >>> s.square.tolist()
    [[1, 4, 3], [1, 2, 3]]
    """
    return _slots(size, rules, cur, sixes, origin, dest, np.asarray(base)[:, None])


def batchable(rules: Rules) -> bool:
    """Whether :func:`roll_slots_batch` rolls these rules: every roll decided by ``(square, sixes, origin)``.

    True for every rule of ``docs/rules.md`` that needs no decision: the
    batched design evaluator asks this, not the rule fields' names, to choose
    its fast path. A rule whose roll depends on more than the in-turn state
    (a choice made by a policy) answers False here until the kernel takes it.

    Examples
    --------
    >>> from snlmarkov import Rules
    >>> batchable(Rules.preset("family").replace(die="2d6")), batchable(Rules(choose_move=2))
    (True, False)
    """
    return isinstance(rules, Rules) and not rules.choice


def _slot_probs(cols: DieColumns, redeal: np.ndarray) -> np.ndarray:
    """The ``(values, states)`` table of probabilities: the die, or under ``redeal`` its capped roll."""
    b = redeal.size
    if redeal.all():  # the die without its top value, renormalised
        return np.repeat(cols.capped[:, None], b, axis=1)
    if redeal.any():
        return np.where(redeal[None, :], cols.capped[:, None], cols.probs[:, None])
    return np.repeat(cols.probs[:, None], b, axis=1)


def _slots(
    n_sq: int, rules: Rules, cur: Any, sixes: Any, origin: Any, dest: np.ndarray, base: np.ndarray | None
) -> RollSlots:
    """The body of :func:`roll_slots`: ``base`` offsets each state into ``dest`` (or None: one board).

    The tables are built as ``(values, states)`` arrays and handed out
    transposed (Fortran-ordered ``(states, values)`` views): every operation
    then runs along the states, not along a row of a handful of values.
    """
    rules.no_choice("the exact kernel rolls one die")  # a choice is made first (chain.choice), then rolled here
    cols = die_columns(rules.die)
    f = cols.values.size
    itype = dest.dtype
    cur = np.asarray(cur, dtype=itype)
    sixes = np.asarray(sixes)
    b = cur.size

    capped = np.zeros(b, dtype=bool) if rules.max_sixes is None else sixes >= rules.max_sixes
    redeal = capped & (rules.on_cap == "redeal")
    void = capped & (rules.on_cap == "forfeit")
    home = capped & (rules.on_cap == "restart")

    prob = _slot_probs(cols, redeal)
    t = cols.values.astype(itype)[:, None] + cur[None, :]
    stay = np.zeros((f, b), dtype=bool)
    over = t > n_sq
    bounced = over if rules.finish == "bounce" else np.zeros((f, b), dtype=bool)
    if rules.finish == "bounce":
        np.subtract(2 * n_sq, t, out=t, where=over)
    elif rules.finish == "none":
        np.minimum(t, n_sq, out=t)
    else:  # stay: the token keeps its square and the turn ends
        stay = over
        np.copyto(t, -1, where=stay)
    landing = t
    # -1 (no landing) reads dest[0], as any square below 0 would: it is overwritten below
    square = np.take(dest, t, mode="clip") if base is None else dest[base.reshape(1, -1) + np.maximum(t, 0)]
    if cols.zero:  # a move of 0 moves nothing and lands nowhere
        landing[0] = -1
        square[0] = cur
    if rules.finish == "bounce" and not rules.jump_after_bounce:
        np.copyto(square, t, where=over)  # the token stays on the bounce square, jump or not
    if rules.finish == "stay":
        np.copyto(square, cur[None, :], where=stay)
    cont = np.zeros((f, b), dtype=bool)
    if rules.bonus_on_six:
        cont[f - 1] = ~stay[f - 1] & (square[f - 1] < n_sq) & ~capped

    voided = np.zeros((f, b), dtype=bool)
    if void.any():  # forfeit: a six at the cap voids the turn, back to its origin
        landing[f - 1, void] = -1
        square[f - 1, void] = np.asarray(origin, dtype=itype)[void]
        cont[f - 1, void] = False
        voided[f - 1, void] = True
    restarted = np.zeros((f, b), dtype=bool)
    if home.any():  # restart: a six at the cap ends the turn, the token back on 0; it lands nowhere
        landing[f - 1, home] = -1
        square[f - 1, home] = 0
        cont[f - 1, home] = False
        restarted[f - 1, home] = True
    entering = np.zeros(b, dtype=bool)
    if rules.start_on_six:
        entering = (cur == 0) & (sixes == 0)
        if entering.any():
            # a six enters (the token stays on 0 and rolls again); anything else ends the turn
            landing[:, entering] = -1
            square[:, entering] = 0
            cont[:, entering] = False
            cont[f - 1, entering] = True
    return RollSlots(prob.T, landing.T, square.T, cont.T, capped, entering, stay.T, bounced.T, voided.T, restarted.T)


def one_roll(board: Board, rules: Rules, cur: np.ndarray, sixes: np.ndarray, origin: np.ndarray) -> RollOutcomes:
    """All outcomes of the next roll from the states ``(cur, sixes, origin)``.

    The flat form of :func:`roll_slots`: one entry per outcome, state by state.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> out = one_roll(Board(4), Rules(faces=3), np.array([3]), np.array([2]), np.array([3]))
    >>> out.face.tolist(), out.square.tolist(), out.prob.tolist()  # capped: a redeal of 1..2
    ([1, 2], [4, 3], [0.5, 0.5])
    """
    s = roll_slots(board, rules, cur, sixes, origin)
    valid = s.valid
    itype = s.square.dtype
    index = np.broadcast_to(np.arange(valid.shape[0], dtype=itype)[:, None], valid.shape)
    face = np.broadcast_to(die_columns(rules.die).values.astype(itype), valid.shape)
    return RollOutcomes(index[valid], s.prob[valid], s.landing[valid], s.square[valid], s.cont[valid], face[valid])


@dataclass(frozen=True)
class RollStory:
    """What one roll of a given face does, told as the game log tells it.

    Attributes
    ----------
    prob : float
        Probability of this face from this state; 0 when the rules cannot
        deal it (then ``steps`` is empty).
    steps : tuple of dict
        The events the roll produces, in order, as plain data without
        ``seat`` and ``turn`` (the vocabulary of ``snlmarkov.game.events``):
        ``cap_reached``, ``roll``, then ``enter`` / ``failed_enter`` /
        ``forfeit`` / ``restart`` / ``overshoot`` / ``bounce`` + ``move`` /
        ``move``, each jump taken (``ladder`` / ``snake``; every jump of a
        chain, none after a bounce when ``jump_after_bounce`` is off), and
        ``bonus_roll``.
    square : int
        Where the token is after the roll.
    cont : bool
        Whether the turn goes on with another roll.
    """

    prob: float
    steps: tuple
    square: int
    cont: bool


def roll_story(  # noqa: C901
    board: Board, rules: Rules, cur: int, sixes: int, origin: int, face: int, *, dest: np.ndarray | None = None
) -> RollStory:
    """The events one roll of ``face`` (a value of the die) produces from the in-turn state ``(cur, sixes, origin)``.

    A value the die cannot show, or one the rules cannot deal there (the
    six under ``redeal`` at the cap), has probability 0 and no steps. A roll
    of 0 produces only its ``roll`` step (nothing moves, nothing is landed).

    It reads everything from :func:`roll_slots`, so a record verified with
    it follows the same mechanics as the matrices. A new rule needs a flag
    in :class:`RollSlots` and a step here, nothing else.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> story = roll_story(Board(10, {5: 2}), Rules(), 3, 0, 3, 2)
    >>> [s["kind"] for s in story.steps], story.square, story.cont
    (['roll', 'move', 'snake'], 2, False)
    >>> roll_story(Board(10), Rules(), 4, 2, 4, 6).prob  # redeal: a capped six is never dealt
    0.0
    """
    values = rules.die.values
    j = _column_of(values, face)
    if j < 0:
        return RollStory(0.0, (), int(cur), False)
    s = roll_slots(board, rules, np.array([cur]), np.array([sixes]), np.array([origin]), dest=dest)
    prob = float(s.prob[0, j])
    if prob <= 0:
        return RollStory(0.0, (), int(cur), False)
    capped, landing, square, cont = bool(s.capped[0]), int(s.landing[0, j]), int(s.square[0, j]), bool(s.cont[0, j])
    steps: list[dict] = []
    if capped:
        steps.append({"kind": "cap_reached", "sixes": int(sixes)})
    steps.append({"kind": "roll", "value": int(face), "capped": capped})
    if s.entering[0]:
        steps.append({"kind": "enter"} if cont else {"kind": "failed_enter"})
        return RollStory(prob, tuple(steps), square, cont)
    if s.void[0, j]:
        steps.append({"kind": "forfeit", "back_to": square})
        return RollStory(prob, tuple(steps), square, cont)
    if s.restarted[0, j]:
        steps.append({"kind": "restart", "from_square": int(cur)})
        return RollStory(prob, tuple(steps), square, cont)
    if s.overshoot[0, j]:
        steps.append({"kind": "overshoot", "square": int(cur), "value": int(face)})
        return RollStory(prob, tuple(steps), square, cont)
    if face == 0:  # a move of 0: nothing moves, nothing is landed on
        return RollStory(prob, tuple(steps), square, cont)
    if s.bounced[0, j]:
        steps.append({"kind": "bounce", "target": landing})
    steps.append({"kind": "move", "start": int(cur), "end": landing})
    pos, jumps = landing, board.jumps
    while pos != square and pos in jumps:  # every jump taken, in order
        nxt = int(jumps[pos])
        steps.append({"kind": "ladder" if nxt > pos else "snake", "start": pos, "end": nxt})
        pos = nxt
    if pos != square:
        raise RuntimeError(f"roll mechanics: the jumps from {landing} do not lead to {square}")  # pragma: no cover
    if cont:
        steps.append({"kind": "bonus_roll"})
    return RollStory(prob, tuple(steps), square, cont)


def _column_of(values: tuple[int, ...], face: Any) -> int:
    """The column of ``face`` among the die's ``values``, or -1 when the die cannot show it."""
    if isinstance(face, bool) or not isinstance(face, (int, np.integer)):
        return -1
    lo, hi = 0, len(values)
    while lo < hi:  # bisect: values are increasing
        mid = (lo + hi) // 2
        if values[mid] < face:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(values) and values[lo] == face else -1


@dataclass(frozen=True)
class ChainSteps:
    """The chains of jumps of a board, each stored once (memory O(size)).

    Attributes
    ----------
    step : ndarray of int64
        ``step[t]`` is the next square where a jump acts when the chain
        starting on ``t`` is followed (the end of the jump from ``t``, when
        that end starts a jump too), or -1.
    depth : ndarray of int64
        ``depth[t]`` counts the later squares of that chain where a jump
        acts: how many landings a roll that lands on ``t`` adds.
    order : ndarray of int64
        The squares with ``step >= 0``, each before its ``step`` (deepest
        first): summing along the chains in this order visits every
        square once.

    A board without chains gives an empty, false value.
    """

    step: np.ndarray
    depth: np.ndarray
    order: np.ndarray

    def __bool__(self) -> bool:
        return bool(self.order.size)

    def spread(self, mass: np.ndarray) -> np.ndarray:
        """The landings that ``mass`` landed on jump starts adds further down their chains.

        ``mass[t]`` is the weight of rolls that landed on ``t`` and took its
        jump; the result holds, on every square, the weight that reached it
        along a chain from an earlier square (not counting ``mass`` itself).
        One pass over the chained squares: cost O(size).

        Examples
        --------
        >>> from snlmarkov import Board
        >>> c = chain_landings(Board(6, {1: 3, 3: 5, 5: 2}, chain=True))
        >>> c.spread(np.array([0, 1.0, 0, 0.5, 0, 0, 0])).tolist()
        [0.0, 0.0, 0.0, 1.0, 0.0, 1.5, 0.0]
        """
        acc = np.array(mass, dtype=float)  # a copy: acc[t] is everything that reaches t, own mass included
        step = self.step.tolist()
        values = acc.tolist()
        for t in self.order.tolist():  # every square before the one it leads to
            values[step[t]] += values[t]
        return np.asarray(values) - np.asarray(mass, dtype=float)

    def pairs(self, landings: np.ndarray) -> int:
        """How many later landings the chains from ``landings`` (jump starts, each a roll) add."""
        return int(self.depth[landings].sum())


def chain_landings(board: Board) -> ChainSteps:
    """The chains of jumps of ``board``: the squares landed on after the first when one is followed.

    On a chained board a roll that lands on ``t`` lands, as each jump of the
    chain acts, on ``step[t]``, ``step[step[t]]``, ... (each counts as landed
    on). The chains are stored once, as a next-square array
    (:class:`ChainSteps`), so memory is O(size) however long they are; the
    depths come from pointer doubling (O(size log length)). False unless the
    board chains and some jump ends on another jump's start.

    Examples
    --------
    >>> from snlmarkov import Board
    >>> c = chain_landings(Board(6, {1: 3, 3: 5, 5: 2}, chain=True))
    >>> c.step.tolist(), c.depth.tolist(), c.order.tolist()
    ([-1, 3, -1, 5, -1, -1, -1], [0, 2, 0, 1, 0, 0, 0], [1, 3])
    >>> bool(chain_landings(Board(6, {1: 3, 4: 5})))
    False
    """
    step = np.full(board.size + 1, -1, dtype=np.int64)  # the next jump start along a chain, or -1
    if board.chain and board.jumps:
        starts = np.fromiter(board.jumps.keys(), dtype=np.int64, count=len(board.jumps))
        ends = np.fromiter(board.jumps.values(), dtype=np.int64, count=len(board.jumps))
        is_start = np.zeros(board.size + 1, dtype=bool)
        is_start[starts] = True
        chained = is_start[ends]
        step[starts[chained]] = ends[chained]
    depth = (step >= 0).astype(np.int64)
    ptr = step.copy()
    while True:  # pointer doubling: depth[t] = links from t to the end of its chain
        live = ptr >= 0
        if not live.any():
            break
        depth = depth + np.where(live, depth[np.maximum(ptr, 0)], 0)
        ptr = np.where(live, ptr[np.maximum(ptr, 0)], -1)
    linked = np.flatnonzero(step >= 0)
    order = linked[np.argsort(-depth[linked], kind="stable")]  # a square's step is one shallower
    return ChainSteps(step, depth, order)


def all_landings(
    board: Board, landing: np.ndarray, square: np.ndarray, extra: ChainSteps | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every square each roll outcome lands on: ``(outcome index, square)`` pairs.

    ``landing`` and ``square`` are flat arrays of outcomes (as in
    :class:`RollOutcomes`). An outcome lands on its ``landing`` (when it is
    not -1) and, when a jump acted there on a chained board, on every later
    square of the chain where a jump acts. ``extra`` is
    :func:`chain_landings` (pass it to save recomputing it). The pairs are
    counted before they are made, and refused by
    :func:`~snlmarkov.limits.check_memory` when they would pass the memory
    limit (long chains landed on often make many); a weighted sum over them
    needs no pairs (:meth:`ChainSteps.spread`).

    Examples
    --------
    >>> from snlmarkov import Board
    >>> b = Board(6, {1: 3, 3: 5}, chain=True)
    >>> idx, sq = all_landings(b, np.array([1, 3, -1, 1]), np.array([5, 5, 0, 1]))
    >>> idx.tolist(), sq.tolist()   # the last outcome landed on 1 but no jump acted
    ([0, 1, 3, 0], [1, 3, 1, 3])
    """
    landing = np.asarray(landing)
    square = np.asarray(square)
    hit = np.flatnonzero(landing >= 0)
    idx, sq = [hit], [landing[hit]]
    extra = chain_landings(board) if extra is None else extra
    if extra:
        jumped = hit[square[hit] != landing[hit]]  # a jump acted: the chain was followed
        check_memory(
            16.0 * (extra.pairs(landing[jumped]) + hit.size),
            f"the landings of {hit.size:,} rolls on a board with chains of up to {int(extra.depth.max()) + 1:,} jumps",
        )
        more = extra.step[landing[jumped]]
        while jumped.size:
            keep = more >= 0
            jumped, more = jumped[keep], more[keep]
            if not jumped.size:
                break
            idx.append(jumped)
            sq.append(more)
            more = extra.step[more]
    return np.concatenate(idx), np.concatenate(sq).astype(landing.dtype, copy=False)
