"""Step tables for the Monte Carlo simulator: the play kernel applied to every roll code.

The simulator rolls real dice, but several at once. A die is dealt from its
*slots*: its whole weights (:meth:`Die.integer_weights
<snlmarkov.dice.Die.integer_weights>`) laid out in order of value, so that a
uniform slot is a roll of the die (the fair die ``Die(6)`` has six slots,
one per face; ``Die.weighted({1: 1, 2: 1, 6: 4})`` six too, four of them
sixes). A *code* is one uniform random integer in ``0..codes-1``, decoded
digit by digit into the slots of the die rolls of one *step*. Each digit has
the radix of the die it stands for: the die's slots, or those of the die
without its top value for a roll redealt after the cap
(``on_cap="redeal"``; roll tables deal that one by rejection instead, see
:func:`roll_table`). Which die comes next may depend on the rolls before it,
but ``codes`` is a multiple of the product of the radices along every
possible sequence, so given the digits before it each digit is uniform:
drawing one code *is* rolling those dice.

A :class:`StepTable` holds, for every state and every code, what those rolls
do: the state after the step, the turns it completed, the rolls it threw and
the squares it landed on. It is built by asking the play kernel
(:class:`~snlmarkov.playkernel.PlayKernel`) about all (state, code) pairs at
once, roll by roll; the builder itself only decodes digits and counts turns
and rolls. No transition probability is computed anywhere.

Three kinds of table:

- :func:`turn_table`: a step is one turn, or the next few rolls of a long
  one (used for races, where the bump rule acts between turns).
- :func:`roll_table`: a step is ``rolls`` rolls, running on from one turn
  into the next (used for solo games: fewer, bigger steps).
- :func:`mixed_roll_table`: roll tables of ``rolls`` rolls and fewer side by
  side, in a power of two of codes (drawn from random bits with nothing
  rejected; used for solo games).

A *state* is ``phase * (size + 1) + square``: phase 0 is the start of a turn,
phase ``s >= 1`` the middle of a turn after ``s`` sixes (without a cap the
phase stops at 1: only "mid-turn" matters then). Square ``size`` at phase 0
(finished) is absorbing: no roll, no turn, no landing.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..board import Board
from ..dice import Die
from ..errors import LimitError
from ..limits import check_memory
from ..playkernel import is_capped, kernel, landing_rows, law
from ..rules import Rules

__all__ = []

#: most codes per state a turn table may use
CODE_BUDGET = 8192
#: most (state, code) entries a turn table may have
ENTRY_BUDGET = 1 << 22
#: most slots a die is dealt from (the sum of its whole weights)
MAX_SLOTS = 1 << 16


@dataclass(frozen=True, eq=False)
class StepTable:
    """What one step of play does, for every state and every roll code.

    Entries are indexed ``state * codes + code``.

    Attributes
    ----------
    size : int
        The board's finishing square ``N``.
    phases : int
        Number of phases.
    codes : int
        Codes per state; a step draws one code uniform on ``0..codes-1``.
    rolls_per_step : int
        The most rolls a step throws.
    across_turns : bool
        True for a :func:`roll_table` (steps run on into the next turn).
    next : numpy.ndarray
        State after the step; meaningless where ``void``.
    turns : numpy.ndarray
        Turns completed in the step (uint8).
    rolls : numpy.ndarray
        Die throws in the step (uint8).
    void : numpy.ndarray
        True where a forfeit voided a turn that began before the step: the
        token goes back to the square where that turn began (the simulator
        knows it; the table does not) and the step stops there. Empty when
        no entry is void.
    carry : numpy.ndarray
        Where the step ends mid-turn: the square that turn began on if it
        began in the step, else -1; where it ends at the start of a turn, the
        token's square. Empty when no entry is void (it is needed only to
        undo a forfeit).
    land : numpy.ndarray
        ``land[j, e]``: the square roll ``j`` of entry ``e`` landed on, or
        ``size + 1`` if it landed nowhere. On a chained board whose longest
        chain has ``c`` jumps, each roll has ``c`` rows: ``land[j * c + d]``
        is the square where jump ``d + 1`` of the chain acted (``d = 0``:
        the square the roll reached), so read in order a column lists every
        square the step landed on.
    """

    size: int
    phases: int
    codes: int
    rolls_per_step: int
    across_turns: bool
    next: np.ndarray
    turns: np.ndarray
    rolls: np.ndarray
    void: np.ndarray
    carry: np.ndarray
    land: np.ndarray

    @property
    def states(self) -> int:
        """Number of states: ``phases * (size + 1)``."""
        return self.phases * (self.size + 1)

    @property
    def entries(self) -> int:
        """Number of table entries: ``states * codes``."""
        return self.states * self.codes

    @property
    def finished(self) -> int:
        """The absorbing state: square ``size`` at phase 0."""
        return self.size

    def landings(self, hist: np.ndarray) -> np.ndarray:
        """Landing counts per square from how often each entry was used.

        Parameters
        ----------
        hist : numpy.ndarray
            Integer array of length :attr:`entries` (counts below 2**53).

        Returns
        -------
        numpy.ndarray
            int64 array of length ``size + 1``.

        Examples
        --------
        >>> from snlmarkov import Board, Rules
        >>> t = turn_table(Board(3), Rules.preset("plain"))
        >>> hist = np.zeros(t.entries, dtype=np.int64)
        >>> hist[0 * t.codes + 1] = 5   # five times: from square 0, code 1 (a roll of 2)
        >>> t.landings(hist).tolist()
        [0, 0, 5, 0]
        """
        weights = np.asarray(hist, dtype=np.float64)
        out = np.zeros(self.size + 2, dtype=np.float64)
        for row in self.land:
            out += np.bincount(row, weights=weights, minlength=self.size + 2)
        return np.rint(out[: self.size + 1]).astype(np.int64)


def max_rolls_per_turn(rules: Rules) -> float:
    """The most die throws one turn can hold (``inf`` without a cap on bonus rolls).

    Examples
    --------
    >>> from snlmarkov import Rules
    >>> [max_rolls_per_turn(Rules.preset(p)) for p in ("app", "family", "plain")]
    [3, 2, 1]
    >>> max_rolls_per_turn(Rules(max_sixes=None))
    inf
    """
    if not rules.bonus_on_six:
        return 2 if rules.start_on_six else 1
    if rules.max_sixes is None:
        return math.inf
    return rules.max_sixes + 1


def _top_phase(rules: Rules) -> int:
    """The highest phase a turn can be in between two rolls."""
    if not (rules.bonus_on_six or rules.start_on_six):
        return 0
    return rules.max_sixes if rules.max_sixes is not None else 1


@functools.lru_cache(maxsize=32)
def slots(die: Die) -> np.ndarray:
    """The die's values, each repeated by its whole weight: a uniform slot is a roll.

    Raises
    ------
    LimitError
        If the whole weights sum past :data:`MAX_SLOTS`.

    Examples
    --------
    >>> from snlmarkov import Die
    >>> slots(Die(6)).tolist(), slots(Die.weighted({1: 1, 2: 1, 6: 4})).tolist()
    ([1, 2, 3, 4, 5, 6], [1, 2, 6, 6, 6, 6])
    """
    weights = die.integer_weights()
    if sum(weights) > MAX_SLOTS:
        raise LimitError(
            f"the simulator deals a die from at most {MAX_SLOTS:,} equally likely slots (its whole weights "
            f"summed, snlmarkov.sim.tables.MAX_SLOTS); {die!r} needs {sum(weights):,}"
        )
    out = np.repeat(np.array(die.values, dtype=np.int64), weights)
    out.flags.writeable = False  # shared by every caller
    return out


def _radix(rules: Rules, phase: int, across: bool) -> int:
    """Radix of the digit of a roll thrown after ``phase`` sixes in the turn:
    the slots of the die it is drawn from (roll tables redeal by rejection:
    their digits all deal the whole die)."""
    return int(slots(law(rules, is_capped(rules, phase) and not across)).size)


def _codes(rules: Rules, rolls: int, phases: int, across: bool) -> int:
    """A common multiple of the radix products of every roll sequence a step can throw.

    ``need(r, s)``: for the next ``r`` rolls from phase ``s`` (``s`` sixes so
    far in the turn). A roll either ends the turn (phase 0: a new turn if
    ``across``, else the step stops) or, on a six that is not capped, leads
    to phase ``s + 1``.
    """
    top = _top_phase(rules)

    @functools.cache
    def need(r: int, s: int) -> int:
        if r == 0:
            return 1
        after = need(r - 1, 0) if across else 1
        if not is_capped(rules, s) and top > 0:
            after = math.lcm(after, need(r - 1, min(s + 1, top)))
        return _radix(rules, s, across) * after

    codes = 1
    for s in range(phases):
        codes = math.lcm(codes, need(rolls, s))
    return codes


def turn_table(board: Board, rules: Rules, *, rolls: int | None = None) -> StepTable:
    """The table whose steps are single turns (or the next rolls of a long one).

    Parameters
    ----------
    board : Board
    rules : Rules
    rolls : int, optional
        Most rolls per step. By default a whole turn when that fits the
        budgets (``CODE_BUDGET`` codes per state, ``ENTRY_BUDGET`` entries),
        else as many rolls as fit (at least one); steps then stop mid-turn
        and the table has a phase for every count of sixes.

    Examples
    --------
    The app rules on the jungle board: a whole turn (up to three rolls, the
    third redealt on 1..5) is one of 6 * 6 * 5 = 180 codes.

    >>> from snlmarkov import Board, Rules
    >>> t = turn_table(Board.builtin(), Rules())
    >>> t.phases, t.codes, t.entries
    (1, 180, 18180)
    >>> int(t.next[0 * t.codes + 0]), int(t.next[0 * t.codes + 3])   # from 0: a 1 climbs to 38, a 4 to 14
    (38, 14)
    """
    rules.check_board(board)
    most = max_rolls_per_turn(rules)

    def shape(r: int) -> tuple[int, int]:
        phases = 1 if r >= most else _top_phase(rules) + 1
        return phases, _codes(rules, r, phases, across=False)

    if rolls is None:
        rolls = 1
        while rolls < most:
            phases, codes = shape(rolls + 1)
            if codes > CODE_BUDGET or codes * phases * (board.size + 1) > ENTRY_BUDGET:
                break
            rolls += 1
    rolls = int(min(_positive(rolls), most))
    phases, codes = shape(rolls)
    return _build(board, rules, rolls, phases, codes, across=False)


def roll_table(board: Board, rules: Rules, rolls: int) -> StepTable:
    """The table whose steps are ``rolls`` rolls, running on from turn to turn.

    Every digit is a fair die: a roll redealt after the cap (``on_cap="redeal"``)
    is dealt by rejection, a six there being "never dealt": it is no roll, and
    the step stops so that the next one rolls again. A step also stops early
    when the token finishes, or when a forfeit voids a turn that began before
    the step.

    Examples
    --------
    Plain rules: every roll is a turn, so four rolls are four turns.

    >>> from snlmarkov import Board, Rules
    >>> t = roll_table(Board(3), Rules.preset("plain"), 4)
    >>> t.codes, int(t.next[0 * t.codes + 0 + 6 * 0])   # from 0 roll 1, 1 (then 1, 1): 1, 2, 3 home
    (1296, 3)
    >>> int(t.turns[0]), int(t.rolls[0])
    (3, 3)
    >>> t = roll_table(Board.builtin(), Rules(), 3)   # app: sixes carry a turn across steps
    >>> t.phases, t.codes
    (3, 216)
    """
    rules.check_board(board)
    rolls = _positive(rolls)
    phases = _top_phase(rules) + 1
    return _build(board, rules, rolls, phases, _codes(rules, rolls, phases, across=True), across=True)


def roll_table_codes(rules: Rules, rolls: int) -> tuple[int, int]:
    """``(phases, codes)`` of ``roll_table(board, rules, rolls)``, without building it.

    Examples
    --------
    >>> from snlmarkov import Rules
    >>> roll_table_codes(Rules(), 4), roll_table_codes(Rules.preset("plain"), 4)
    ((3, 1296), (1, 1296))
    """
    phases = _top_phase(rules) + 1
    return phases, _codes(rules, _positive(rolls), phases, across=True)


def mixed_parts(rules: Rules, rolls: int) -> tuple[int, tuple[tuple[int, int], ...]]:
    """``(codes, parts)`` of ``mixed_roll_table(board, rules, rolls)``, without building it.

    ``codes`` is the smallest power of two at least the codes of ``rolls``
    rolls; ``parts`` lists ``(r, copies)``: code ranges of ``r``-roll steps,
    longest first, each as many copies of the ``r``-roll codes as fit in
    what is left. The codes that are left over do nothing.

    Examples
    --------
    >>> from snlmarkov import Rules
    >>> mixed_parts(Rules.preset("plain"), 3)   # 256 = 216 + 36 + 4 codes that do nothing
    (256, ((3, 1), (2, 1)))
    >>> mixed_parts(Rules(faces=4), 4)
    (256, ((4, 1),))
    """
    phases = _top_phase(rules) + 1
    rolls = _positive(rolls)
    codes = 1 << (_codes(rules, rolls, phases, across=True) - 1).bit_length()
    parts, left = [], codes
    for r in range(rolls, 0, -1):
        per = _codes(rules, r, phases, across=True)
        copies = left // per
        if copies:
            parts.append((r, copies))
            left -= copies * per
    return codes, tuple(parts)


def mixed_roll_table(board: Board, rules: Rules, rolls: int) -> StepTable:
    """A roll table whose codes are a power of two: steps of ``rolls`` rolls, or fewer, or none.

    The codes (:func:`mixed_parts`) are split into ranges: the first deals
    the ``rolls``-roll steps of :func:`roll_table`, the next (as many copies
    as fit) shorter steps, and the few codes left over leave the token where
    it is (no roll, no turn, no landing). Which range a uniform code falls in
    does not depend on the dice, and within its range the code is uniform,
    so the rolls a step throws are fair and independent, as in a roll
    table; only their number per step varies. A power of two of codes is
    drawn from random bits with nothing rejected.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> t = mixed_roll_table(Board(3), Rules.preset("plain"), 3)
    >>> t.codes, t.rolls_per_step, t.land.shape
    (256, 3, (3, 1024))
    >>> e = 0 * t.codes + 216   # from square 0, code 216: the two-roll step of codes 0 (a 1, then a 1)
    >>> int(t.next[e]), int(t.rolls[e]), t.land[:, e].tolist()
    (2, 2, [1, 2, 4])
    >>> int(t.next[0 * t.codes + 255]), int(t.rolls[0 * t.codes + 255])   # a code that does nothing
    (0, 0)
    """
    codes, parts = mixed_parts(rules, rolls)
    n = (_top_phase(rules) + 1) * (board.size + 1) * codes
    check_memory(
        _table_bytes(n, rolls, landing_rows(board), board.size + 1),
        f"building a simulator table of {n:,} (state, code) entries",
    )
    tables = [(roll_table(board, rules, r), copies) for r, copies in parts]
    first = tables[0][0]
    states, none = first.states, first.size + 1
    state = np.repeat(np.arange(states, dtype=np.int64), codes)
    code = np.tile(np.arange(codes, dtype=np.int64), states)
    source = np.full(state.size, -1, dtype=np.int64)  # the entry of ``part``'s table an entry takes
    part = np.full(state.size, -1, dtype=np.int64)
    base = 0
    for k, (t, copies) in enumerate(tables):
        mine = (code >= base) & (code < base + copies * t.codes)
        source[mine] = state[mine] * t.codes + (code[mine] - base) % t.codes
        part[mine] = k
        base += copies * t.codes
    square = state % (first.size + 1)
    next_state = state.astype(first.next.dtype)
    turns = np.zeros(state.size, dtype=np.uint8)
    rolls_ = np.zeros(state.size, dtype=np.uint8)
    land = np.full((first.land.shape[0], state.size), none, dtype=first.land.dtype)
    has_void = any(t.void.size for t, _ in tables)
    if has_void and not all(t.void.size for t, _ in tables):  # voids come from a step's first roll: all or none
        raise ValueError("the parts of a mixed roll table disagree on voids")
    void = np.zeros(state.size if has_void else 0, dtype=bool)
    # an idle step ends where it began: at the start of a turn on the token's square, mid-turn on -1
    carry = np.where(state < first.size + 1, square, -1).astype(np.int32) if has_void else np.zeros(0, np.int32)
    for k, (t, _) in enumerate(tables):
        mine = part == k
        src = source[mine]
        next_state[mine] = t.next[src]
        turns[mine] = t.turns[src]
        rolls_[mine] = t.rolls[src]
        land[: t.land.shape[0], mine] = t.land[:, src]
        if has_void:
            void[mine] = t.void[src]
            carry[mine] = t.carry[src]
    return StepTable(
        size=first.size,
        phases=first.phases,
        codes=codes,
        rolls_per_step=first.rolls_per_step,
        across_turns=True,
        next=next_state,
        turns=turns,
        rolls=rolls_,
        void=void,
        carry=carry,
        land=land,
    )


def _positive(rolls: int) -> int:
    if int(rolls) < 1:
        raise ValueError(f"rolls per step must be at least 1, got {rolls}")
    return int(rolls)


def _table_bytes(n: int, rolls: int, per_roll: int, none: int) -> float:
    """Memory a table of ``n`` entries takes while it is built: about 160 bytes an entry, and per landing
    row the kernel's answer and its masked copy (int64) besides the stored row."""
    return float(n) * (160 + per_roll * (16 + rolls * (2 if none < 2**15 else 4)))


def check_table_memory(board: Board, rules: Rules) -> None:
    """Refuse a simulation whose smallest table (one roll a step) is over the memory limit, before other work.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> check_table_memory(Board(10**7), Rules())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snlmarkov.errors.LimitError: simulating on a 10,000,000-square board (a table of 180,000,018 (state, code) entries) would need about ...
    """
    phases, codes = roll_table_codes(rules, 1)
    n = phases * (board.size + 1) * codes
    check_memory(
        _table_bytes(n, 1, landing_rows(board), board.size + 1),
        f"simulating on a {board.size:,}-square board (a table of {n:,} (state, code) entries)",
    )


def _build(board: Board, rules: Rules, rolls: int, phases: int, codes: int, *, across: bool) -> StepTable:
    """Ask the play kernel about every (state, code) pair at once, roll by roll."""
    kern = kernel(board, rules)
    size, none, per_roll = board.size, board.size + 1, kern.chain_rows
    n = phases * (size + 1) * codes
    check_memory(_table_bytes(n, rolls, per_roll, none), f"building a simulator table of {n:,} (state, code) entries")
    full = slots(rules.die)
    # a capped roll's digit deals the die without its top value (roll tables: by rejection)
    redeal = rules.max_sixes is not None and rules.on_cap == "redeal" and not across and _top_phase(rules) > 0
    capped_slots = slots(law(rules, True)) if redeal else full
    top = phases - 1

    entry = np.arange(n, dtype=np.int64)
    code = entry % codes
    state = entry // codes
    phase = state // (size + 1)
    square = state % (size + 1)

    pos = square.copy()
    sixes = phase.copy()
    known = phase == 0  # the square the current turn began on is known (it began in the step)
    begun = square.copy()  # ... and it is this one
    alive = square != size  # still rolling in this step
    midturn = phase > 0  # the last roll left the turn going
    halted = np.zeros(n, dtype=bool)
    n_turns = np.zeros(n, dtype=np.uint8)
    n_rolls = np.zeros(n, dtype=np.uint8)
    land = np.full((rolls * per_roll, n), none, dtype=np.int16 if none < 2**15 else np.int32)

    radix: np.ndarray | int
    for j in range(rolls):
        if redeal:
            capped_now = is_capped(rules, sixes)
            radix = np.where(capped_now, capped_slots.size, full.size)
            digit = code % radix
            value = np.where(capped_now, capped_slots[digit % capped_slots.size], full[digit])
        else:
            radix = full.size
            value = full[code % radix]
        code //= radix
        r = kern.roll(pos, sixes, np.where(known, begun, -1), value)
        if across:  # a six after the cap is never dealt: the step stops, to roll again
            alive = alive & r.dealt
        n_rolls += alive
        late = alive & r.forfeit & ~known  # a void only the simulator can undo
        land[j * per_roll : (j + 1) * per_roll] = np.where(alive, r.land, none)
        pos = np.where(alive & ~late, r.square, pos)
        home = pos == size
        goes_on = alive & r.more
        turn_over = alive & ~goes_on  # a late void ends its turn too (and the step)
        n_turns += turn_over
        halted |= late
        sixes = np.where(alive, r.sixes, sixes)
        begun = np.where(turn_over, pos, begun)
        known |= turn_over
        midturn = np.where(alive, goes_on, midturn)
        alive = goes_on if not across else alive & ~late & ~home

    next_state = np.where(midturn & ~halted, np.minimum(sixes, top) * (size + 1), 0) + pos
    n_states = phases * (size + 1)
    dtype = np.uint8 if n_states <= 2**8 else np.uint16 if n_states <= 2**16 else np.int32
    has_void = bool(halted.any())
    carry = np.where(midturn & ~halted, np.where(known, begun, -1), np.where(halted, -1, pos))
    return StepTable(
        size=size,
        phases=phases,
        codes=codes,
        rolls_per_step=rolls,
        across_turns=across,
        next=next_state.astype(dtype),
        turns=n_turns,
        rolls=n_rolls,
        void=halted if has_void else np.zeros(0, dtype=bool),
        carry=carry.astype(np.int32) if has_void else np.zeros(0, dtype=np.int32),
        land=land,
    )
