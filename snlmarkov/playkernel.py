"""The play kernel: what one roll does, stated once for the game engine and the simulator.

``docs/rules.md`` ("One roll", "Dice", "One turn") read as code, written
from the rules text alone: it shares nothing with the exact kernel
(:mod:`snlmarkov.chain`), so comparing played or simulated games with the
exact figures tests both statements.

:class:`PlayKernel` takes a roll in the middle of a turn: the token's
square, the sixes the turn holds so far (the entering six included), the
square the turn began on, and the value the die showed. It says what the
roll does: whether it was made at the cap and could be dealt there, an entry
or a failed entry (six to start), a forfeit or a restart (a six at the cap),
an overshoot or a bounce, the move and the jumps it took (every jump of a
chain), the squares it landed on, where the token stands after it, whether
it earns a bonus roll and whether the turn goes on.

:meth:`PlayKernel.roll` works on arrays (the simulator applies it to every
state and roll code of its tables at once); :meth:`PlayKernel.story` is the
same roll for one token, as plain Python values (the game engine logs its
events from it). :meth:`PlayKernel.law` is the die a roll is drawn from (the
die without its top value for a capped roll under ``redeal``) and
:func:`draw` draws one value from a die exactly.

Examples
--------
>>> from snlmarkov import Board, Die, Rules
>>> k = kernel(Board(10, {5: 2}), Rules())
>>> s = k.story(3, 0, 3, 2)
>>> s.moved, s.target, s.jumps, s.square, s.more
(True, 5, ((5, 2),), 2, False)
>>> k.story(4, 2, 4, 6).dealt   # a capped six under redeal is never dealt
False
>>> k = kernel(Board(10), Rules(die=Die.faces(0, 1, 2, 3, 4, 5)))
>>> s = k.story(4, 0, 4, 0)     # a 0 moves nothing, lands nowhere, ends the turn
>>> s.moved, s.landed, s.square, s.more
(False, (), 4, False)
"""

from __future__ import annotations

import bisect
import functools
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .board import Board
from .dice import Die
from .errors import RuleError
from .limits import check_memory
from .rules import Rules

__all__ = [
    "PlayKernel",
    "RollArrays",
    "RollStory",
    "kernel",
    "is_capped",
    "law",
    "draw",
    "draw_many",
    "describe_values",
    "option_kernels",
    "furthest",
    "resolve_policy",
]

#: most scalar roll stories a kernel keeps (a game meets few distinct ones)
STORY_CACHE = 1 << 16


@dataclass(frozen=True, eq=False)
class RollArrays:
    """What a roll does, element by element (every array has the inputs' broadcast shape).

    Attributes
    ----------
    capped : numpy.ndarray
        The roll was made once the turn held ``max_sixes`` sixes.
    dealt : numpy.ndarray
        The value can be dealt here: a value of the die, and not the top
        value at the cap under ``redeal``. Where False nothing else holds.
    six : numpy.ndarray
        The value is the die's top value.
    enter, failed_enter : numpy.ndarray
        Six to start: the token on 0 rolled the six that enters it, or failed to.
    forfeit, restart : numpy.ndarray
        A six at the cap under ``on_cap="forfeit"`` (the token goes back to
        the square the turn began on) or ``"restart"`` (back to square 0).
    overshoot : numpy.ndarray
        ``finish="stay"``: the roll would pass the finish; the token stays.
    bounce : numpy.ndarray
        ``finish="bounce"``: the roll counted up to the finish and back.
    moved : numpy.ndarray
        The token moved to :attr:`target` (a roll of 0 moves nothing).
    target : numpy.ndarray
        The square the move reached (after a bounce; the finish under
        ``finish="none"``); meaningless where not ``moved``.
    jumped : numpy.ndarray
        A jump acted at :attr:`target` (and every later jump of its chain).
    land : numpy.ndarray
        ``land[d]``, ``d = 0 .. chain``: the squares landed on, in order:
        the target, then each later square of a chain where a jump acts;
        ``size + 1`` for none.
    square : numpy.ndarray
        Where the token stands after the roll (before any bump); where a
        forfeit acts, the ``origin`` given.
    bonus : numpy.ndarray
        A six that moved earned a bonus roll.
    more : numpy.ndarray
        The turn goes on with another roll (an entry or a bonus).
    sixes : numpy.ndarray
        The sixes the turn holds after the roll; 0 where the turn ended.
    """

    capped: np.ndarray
    dealt: np.ndarray
    six: np.ndarray
    enter: np.ndarray
    failed_enter: np.ndarray
    forfeit: np.ndarray
    restart: np.ndarray
    overshoot: np.ndarray
    bounce: np.ndarray
    moved: np.ndarray
    target: np.ndarray
    jumped: np.ndarray
    land: np.ndarray
    square: np.ndarray
    bonus: np.ndarray
    more: np.ndarray
    sixes: np.ndarray


@dataclass(frozen=True)
class RollStory:
    """One token's roll, as :meth:`PlayKernel.story` tells it (see :class:`RollArrays`).

    ``start`` is the square the roll was made from, ``jumps`` the jumps
    taken as ``(start, end)`` pairs in order and ``landed`` the squares
    landed on.
    """

    value: int
    start: int
    capped: bool
    dealt: bool
    six: bool
    enter: bool
    failed_enter: bool
    forfeit: bool
    restart: bool
    overshoot: bool
    bounce: bool
    moved: bool
    target: int
    jumps: tuple[tuple[int, int], ...]
    landed: tuple[int, ...]
    square: int
    bonus: bool
    more: bool
    sixes: int


class PlayKernel:
    """The rules of one roll on a board, under a rule set (see the module docstring).

    Parameters
    ----------
    board : Board
    rules : Rules

    Raises
    ------
    RuleError
        If the rules cannot be played on the board (``rules.check_board``).

    Examples
    --------
    >>> import numpy as np
    >>> from snlmarkov import Board, Rules
    >>> k = PlayKernel(Board(10, {3: 8}), Rules.preset("plain"))
    >>> r = k.roll(np.array([0, 0, 7]), 0, np.array([0, 0, 7]), np.array([3, 2, 5]))
    >>> r.square.tolist(), r.overshoot.tolist(), r.land.tolist()
    ([8, 2, 7], [False, False, True], [[3, 2, 11]])
    """

    def __init__(self, board: Board, rules: Rules) -> None:
        if not isinstance(board, Board):
            raise RuleError(f"board must be a Board; got {type(board).__name__}")
        if not isinstance(rules, Rules):
            raise RuleError(f"rules must be a Rules; got {type(rules).__name__}")
        rules.check_board(board)
        rules.no_choice("the play kernel rolls one die")  # the mover's choice is made first (policy), then rolled here
        self.board, self.rules, self.die = board, rules, rules.die
        self.size = board.size
        self.none = board.size + 1
        self._values = np.array(self.die.values, dtype=np.int64)
        self.dest, self.later = _chains(board)
        self._stories: dict[tuple[int, int, int, int], RollStory] = {}

    @property
    def top(self) -> int:
        """The die's top value: what every rule means by "a six"."""
        return self.die.top

    @property
    def chain_rows(self) -> int:
        """Rows of :attr:`RollArrays.land`: 1 plus the longest chain's later jumps."""
        return 1 + self.later.shape[0]

    def is_capped(self, sixes: Any) -> Any:
        """Whether a roll after ``sixes`` sixes in the turn is made at the cap (array or bool)."""
        return is_capped(self.rules, sixes)

    def law(self, capped: bool) -> Die:
        """The die a roll is drawn from (:func:`law`)."""
        return law(self.rules, capped)

    def roll(self, square: Any, sixes: Any, origin: Any, value: Any) -> RollArrays:
        """What a roll of ``value`` does from ``square`` after ``sixes`` sixes in a
        turn that began on ``origin``, element by element (inputs broadcast).

        ``origin`` is read only where a forfeit acts (it may be -1 where the
        caller does not know it; :attr:`RollArrays.square` is then -1 there).
        """
        rules, size = self.rules, self.size
        square, sixes, origin, value = np.broadcast_arrays(
            *(np.asarray(a, dtype=np.int64) for a in (square, sixes, origin, value))
        )
        capped = self.is_capped(sixes)
        six = value == self.top
        dealt = np.isin(value, self._values)
        if rules.on_cap == "redeal":
            dealt &= ~(capped & six)  # "a third six is never dealt"
        capped_six = dealt & capped & six
        forfeit = capped_six & (rules.on_cap == "forfeit")
        restart = capped_six & (rules.on_cap == "restart")
        live = dealt & ~capped_six
        entering = live & (square == 0) & (sixes == 0) if rules.start_on_six else np.zeros_like(live)
        enter, failed_enter = entering & six, entering & ~six
        moving = live & ~entering & (value > 0)  # a move of 0 moves nothing and lands nowhere
        target = square + value
        over = target > size
        bounce = np.zeros_like(moving)
        if rules.finish == "stay":
            overshoot = moving & over
            moved = moving & ~over
        else:
            overshoot = np.zeros_like(moving)
            moved = moving
            if rules.finish == "bounce":
                target = np.where(over, 2 * size - target, target)
                bounce = moving & over
            else:  # "none": the token reaches the finish
                target = np.minimum(target, size)
        acts = moved & ~bounce if rules.finish == "bounce" and not rules.jump_after_bounce else moved
        hit = np.clip(target, 0, self.none)
        jumped = acts & (self.dest[hit] != hit)
        land = np.full((self.chain_rows, *square.shape), self.none, dtype=np.int64)
        land[0] = np.where(moved, target, self.none)
        for d in range(self.later.shape[0]):
            land[1 + d] = np.where(jumped, self.later[d][hit], self.none)
        after = np.where(moved, np.where(acts, self.dest[hit], target), square)
        after = np.where(forfeit, origin, np.where(restart, 0, after))
        bonus = moved & six & rules.bonus_on_six & (after != size)
        more = enter | bonus
        return RollArrays(
            capped=capped,
            dealt=dealt,
            six=six,
            enter=enter,
            failed_enter=failed_enter,
            forfeit=forfeit,
            restart=restart,
            overshoot=overshoot,
            bounce=bounce,
            moved=moved,
            target=target,
            jumped=jumped,
            land=land,
            square=after,
            bonus=bonus,
            more=more,
            sixes=np.where(more, sixes + 1, 0),
        )

    def story(self, square: int, sixes: int, origin: int, value: int) -> RollStory:
        """:meth:`roll` for one token, as plain values (kept for the next time it is asked).

        Examples
        --------
        >>> from snlmarkov import Board, Rules
        >>> k = kernel(Board(100, {83: 84, 84: 97}, chain=True), Rules.preset("plain"))
        >>> s = k.story(80, 0, 80, 3)
        >>> s.jumps, s.landed, s.square
        (((83, 84), (84, 97)), (83, 84), 97)
        """
        key = (int(square), int(sixes), int(origin), int(value))
        found = self._stories.get(key)
        if found is not None:
            return found
        r = self.roll(*key)
        landed = tuple(int(s) for s in r.land.ravel() if s != self.none)
        jumps = tuple((s, self.board.jumps[s]) for s in landed) if bool(r.jumped) else ()
        out = RollStory(
            value=key[3],
            start=key[0],
            **{name: bool(getattr(r, name)) for name in _FLAGS},
            target=int(r.target) if bool(r.moved) else key[0],
            jumps=jumps,
            landed=landed,
            square=int(r.square),
            sixes=int(r.sixes),
        )
        if len(self._stories) >= STORY_CACHE:
            self._stories.clear()
        self._stories[key] = out
        return out


_FLAGS = (
    "capped", "dealt", "six", "enter", "failed_enter", "forfeit", "restart",
    "overshoot", "bounce", "moved", "bonus", "more",
)  # fmt: skip


def is_capped(rules: Rules, sixes: Any) -> Any:
    """Whether a roll after ``sixes`` sixes in the turn is made at the cap
    (``sixes >= max_sixes``; never without a cap), for a number or an array.

    Examples
    --------
    >>> from snlmarkov import Rules
    >>> is_capped(Rules(), 2), is_capped(Rules(max_sixes=None), 5)
    (True, False)
    """
    cap = rules.max_sixes
    if np.ndim(sixes):
        return np.zeros(np.shape(sixes), dtype=bool) if cap is None else np.asarray(sixes) >= cap
    return cap is not None and bool(sixes >= cap)


def law(rules: Rules, capped: bool) -> Die:
    """The die a roll is drawn from: the die without its top value for a
    capped roll under ``on_cap="redeal"``, else the rules' die.

    Examples
    --------
    >>> from snlmarkov import Die, Rules
    >>> law(Rules(die=Die.weighted({1: 1, 3: 1, 6: 4})), True)
    Die.weighted({1: 1, 3: 1})
    >>> law(Rules(on_cap="forfeit"), True)
    Die(6)
    """
    if capped and rules.on_cap == "redeal":
        return rules.die.without_top()
    return rules.die


def _chains(board: Board) -> tuple[np.ndarray, np.ndarray]:
    """``(dest, later)``: where landing on each square ``0..size+1`` leaves the
    token (its jump, or every jump of its chain on a chained board), and
    ``later[d, s]``: the square where jump ``d + 2`` of the chain from ``s``
    acts (``size + 1`` for none; no rows unless some jump chains).

    Linear in the board but for ``later`` itself, whose size (the longest
    chain's later jumps times the squares) is checked against the memory
    limit before it is made: a chain of 10^5 jumps is refused at once.
    """
    size, jumps = board.size, board.jumps
    dest = np.arange(size + 2, dtype=np.int64)
    dest[: size + 1] = board.destination()
    longest = _longest_chain(jumps) if board.chain else 0
    check_memory(
        8.0 * longest * (size + 2),
        f"playing a board whose chains take up to {longest + 1:,} jumps in one roll ({size:,} squares)",
        hint="the exact models (analyze) take any chain in linear memory",
    )
    later = np.full((longest, size + 2), size + 1, dtype=np.int64)
    if longest:
        starts = np.fromiter(jumps.keys(), dtype=np.int64, count=len(jumps))
        square = np.fromiter(jumps.values(), dtype=np.int64, count=len(jumps))
        end = np.arange(size + 2, dtype=np.int64)
        end[starts] = square
        is_start = np.zeros(size + 2, dtype=bool)
        is_start[starts] = True
        for d in range(longest):  # row d: the square the (d + 2)-th jump of each chain starts on
            on = is_start[square]
            starts, square = starts[on], square[on]
            later[d, starts] = square
            square = end[square]
    return dest, later


def landing_rows(board: Board) -> int:
    """:attr:`PlayKernel.chain_rows` of a board, without building the kernel: 1 plus the longest chain's later jumps.

    Examples
    --------
    >>> landing_rows(Board(10, {2: 4, 4: 6, 6: 8}, chain=True)), landing_rows(Board(10, {2: 4}))
    (3, 1)
    """
    return 1 + (_longest_chain(board.jumps) if board.chain else 0)


def _longest_chain(jumps: Any) -> int:
    """The most jumps after the first that one landing takes (0 if no jump ends on a start), in one pass."""
    after: dict[int, int] = {}  # start -> jumps of its chain after its own
    for first in jumps:
        path, square = [], first
        while square in jumps and square not in after:
            path.append(square)
            square = jumps[square]
        count = after[square] if square in after else -1
        for s in reversed(path):
            count += 1
            after[s] = count
    return max(after.values(), default=0)


@functools.lru_cache(maxsize=16)
def kernel(board: Board, rules: Rules) -> PlayKernel:
    """The :class:`PlayKernel` of a board and rules (one kept per pair, shared by games)."""
    return PlayKernel(board, rules)


def draw(die: Die, rng: np.random.Generator) -> int:
    """One value of ``die``, drawn exactly from its rational weights.

    A uniform whole number below the sum of the die's whole weights
    (:meth:`Die.integer_weights`) picks the value whose slots hold it; the
    fair die ``Die(n)`` thus draws ``1 + rng.integers(0, n)``.

    Examples
    --------
    >>> from snlmarkov import Die
    >>> rng = np.random.default_rng(0)
    >>> sorted({draw(Die.faces(0, 0, 4, 4, 4, 4), rng) for _ in range(50)})
    [0, 4]
    """
    cum = _cumulative(die)
    total = cum[-1]
    if total <= 1 << 62:
        u = int(rng.integers(0, total))
    else:  # weights past 64 bits: whole random words, rejecting the excess
        bits = total.bit_length()
        while True:
            u = int.from_bytes(rng.bytes((bits + 7) // 8), "little") >> (-bits % 8)
            if u < total:
                break
    return die.values[bisect.bisect_right(cum, u)]


@functools.lru_cache(maxsize=64)
def _cumulative(die: Die) -> tuple[int, ...]:
    return tuple(itertools.accumulate(die.integer_weights()))


def draw_many(die: Die, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` values of ``die`` (an int64 array), drawn exactly as :func:`draw` draws one.

    Examples
    --------
    >>> from snlmarkov import Die
    >>> v = draw_many(Die.faces(0, 0, 4, 4, 4, 4), np.random.default_rng(0), 1000)
    >>> sorted(set(v.tolist())), 600 < int((v == 4).sum()) < 730
    ([0, 4], True)
    """
    cum = _cumulative(die)
    values = np.array(die.values, dtype=np.int64)
    if cum[-1] <= 1 << 62:
        u = rng.integers(0, cum[-1], size=size)
        return values[np.searchsorted(np.array(cum, dtype=np.int64), u, side="right")]
    return np.array([draw(die, rng) for _ in range(size)], dtype=np.int64)  # pragma: no cover - weights past 64 bits


def option_kernels(board: Board, rules: Rules) -> tuple[PlayKernel, ...]:
    """The kernel of each option a rule set with a choice offers: one per die of
    ``choose_die``, or the plain die's for ``choose_move`` (``rules.option_rules``).

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> [k.die.spec for k in option_kernels(Board(10), Rules(choose_die=(4, 6)))]
    ['d4', 'd6']
    >>> [k.die.spec for k in option_kernels(Board(10), Rules(choose_move=2))]
    ['d6']
    """
    if not rules.choice:
        return (kernel(board, rules),)
    return tuple(kernel(board, rules.option_rules(i)) for i in range(max(1, len(rules.choose_die))))


def furthest(board: Board, rules: Rules) -> np.ndarray:
    """How far each option takes the token from each decision state, read from the play kernel.

    The ``furthest=`` that :meth:`Policy.resolve <snlmarkov.policy.Policy.resolve>`
    needs to resolve a greedy policy on the play side, of shape
    ``(levels, squares, origins, options)`` (:func:`~snlmarkov.policy.decision_shape`
    without other tokens): decision state ``(level, square, origin)`` is the
    token on ``square`` after ``level`` sixes of a turn that began on
    ``origin`` (the square itself where the rules keep no origin). Under
    ``choose_die``: the mean square where a roll of each die leaves the token
    (jumps, forfeits, restarts applied; a capped roll under ``redeal`` drawn
    without the top value). Under ``choose_move``: where moving each value of
    the die leaves it (a value that cannot be dealt there leaves the token
    where it is).

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> far = furthest(Board(10, {5: 9}), Rules(choose_die=(4, 6)))
    >>> far.shape, far[0, 0, 0].tolist()   # from 0: a d4 rolls 1..4; a d6 also reaches 5 (-> 9) and 6
    ((3, 10, 1, 2), [2.5, 4.166666666666666])
    >>> furthest(Board(10, {5: 9}), Rules(choose_move=2))[0, 3, 0].tolist()
    [4.0, 9.0, 6.0, 7.0, 8.0, 9.0]
    """
    n = board.size
    levels = (rules.max_sixes or 1) + 1
    n_o = n if rules.on_cap == "forfeit" and rules.max_sixes is not None else 1
    lv, sq, org = np.meshgrid(np.arange(levels), np.arange(n), np.arange(n_o), indexing="ij")
    origin = org if n_o > 1 else sq
    outs = []
    for kern in option_kernels(board, rules):
        values = np.array(kern.die.values, dtype=np.int64)
        r = kern.roll(sq[..., None], lv[..., None], origin[..., None], values)
        where = np.minimum(r.square, n).astype(float)
        if rules.choice == "move":
            return where
        free, capped = (_on_columns(values, kern.law(c)) for c in (False, True))  # the kernel's laws
        p = np.where(kern.is_capped(lv)[..., None], capped, free)
        outs.append(np.sum(p * where, axis=-1))
    return np.stack(outs, axis=-1)


def _on_columns(values: np.ndarray, die: Die) -> np.ndarray:
    """``die``'s probabilities on the columns ``values`` (a value it cannot show: 0)."""
    out = np.zeros(values.size)
    out[np.searchsorted(values, die.values)] = die.probs
    return out


def resolve_policy(policy: Any, board: Board, rules: Rules) -> Any:
    """``policy.resolve(board, rules)`` on the play side: a greedy policy reads :func:`furthest`.

    Examples
    --------
    >>> from snlmarkov import Board, Policy, Rules
    >>> t = resolve_policy(Policy.greedy(), Board(10, {5: 9}), Rules(choose_die=(4, 6)))
    >>> t.die_index(0, 0, 0), t.die_index(8, 0, 8)   # the d6 from 0; near the finish the d4 (a 3 or 4 overshoots)
    (1, 0)
    """
    return policy.resolve(board, rules, furthest=functools.partial(furthest, board, rules))


def describe_values(die: Die) -> str:
    """The values of a die in words: ``1..6`` for a run, else a list.

    Examples
    --------
    >>> describe_values(Die(6)), describe_values(Die.faces(0, 0, 4, 4, 4, 4))
    ('1..6', '0, 4')
    """
    v = die.values
    if len(v) > 2 and v == tuple(range(v[0], v[-1] + 1)):
        return f"{v[0]}..{v[-1]}"
    return ", ".join(map(str, v))
