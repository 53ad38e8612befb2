"""Fuzz: rule sets and boards built in Python, each outcome asserted against an oracle written here.

Every field of :class:`~snlmarkov.Rules` has a strategy of good values and a validity test read from
docs/rules.md (``RULE_FIELDS``: add a field there and the fuzz covers it). Valid keyword sets must build
a rule set holding those values; invalid ones must be refused with a :class:`~snlmarkov.RuleError` that
names an offending field and no valid one. A valid rule set then runs through every model on a small
random board: the models refuse exactly the rule/board pairs that docs/rules.md forbids (a bounce on a
board smaller than the die, ``bump_to`` off the board) and the boards no token can finish (an
independent breadth-first search here), and give a result for everything else.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from _fuzz import fuzz, hostile_number, hostile_text, hostile_value, time_limit
from hypothesis import event, example, given
from hypothesis import strategies as st

import snlmarkov as snl
from snlmarkov import Board, Die, LimitError, RuleError, Rules, SnlError, UnwinnableBoardError
from snlmarkov.limits import MAX_CHOICES, MAX_FACES, limit


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _int_in(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda v: _is_int(v) and lo <= v <= hi


def _one_of(*choices: str) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and v in choices


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


class Field(NamedTuple):
    good: st.SearchStrategy  # values a player would choose (small dice, so the models stay quick)
    valid: Callable[[Any], bool | None]  # what docs/rules.md accepts (None: this oracle cannot say)
    names: tuple[str, ...] = ()  # other words a refusal of this field may name it by


def _valid_die(value: Any) -> bool | None:
    if isinstance(value, Die):
        return True
    if _is_int(value):
        return 2 <= value <= MAX_FACES
    if isinstance(value, str):
        return True if value in GOOD_DIE_TEXT else None  # any other text: built or refused, naming the die
    return False


GOOD_DIE_TEXT = ("d4", "6", "2d6", "spinner:5", "faces:2,2,2,2,6,6", "weights:1=1,2=1,6=4", "cowries:4")
small_die = st.one_of(
    st.builds(Die, st.integers(2, 12)),
    st.integers(2, 12),
    st.sampled_from(GOOD_DIE_TEXT),
    st.builds(Die.faces, st.lists(st.integers(0, 8), min_size=1, max_size=6).filter(any)),  # 0s, one value
)

#: Every field of Rules (and the ``faces`` keyword): its good values and its validity test (docs/rules.md).
RULE_FIELDS: dict[str, Field] = {
    "finish": Field(st.sampled_from(["stay", "bounce", "none"]), _one_of("stay", "bounce", "none")),
    "bonus_on_six": Field(st.booleans(), _is_bool),
    "max_sixes": Field(st.one_of(st.none(), st.integers(1, 4)), lambda v: v is None or _int_in(1, MAX_FACES)(v)),
    "on_cap": Field(st.sampled_from(["redeal", "forfeit", "restart"]), _one_of("redeal", "forfeit", "restart")),
    "start_on_six": Field(st.booleans(), _is_bool),
    "bump": Field(st.booleans(), _is_bool),
    "bump_to": Field(st.integers(1, 40), _int_in(1, limit("board_size"))),
    "die": Field(small_die, _valid_die, names=("faces",)),  # Die(n) refuses n naming its faces
    # None is the keyword's default: no shorthand given
    "faces": Field(st.integers(2, 12), lambda v: v is None or _int_in(2, MAX_FACES)(v)),
    "jump_after_bounce": Field(st.booleans(), _is_bool),
    # the choice rules (docs/rules.md, "Choices"): no choice, or one a player would pick
    "choose_die": Field(st.sampled_from([(), (4, 6)]), lambda v: _valid_dice(v)),
    "choose_move": Field(st.sampled_from([None, 2]), lambda v: v is None or _int_in(2, MAX_CHOICES)(v)),
}


def _valid_dice(value: Any) -> bool | None:
    """``choose_die``: a tuple or list of 2..MAX_CHOICES distinct dice, or empty; None where the oracle cannot say."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        return False
    if len(value) == 0:
        return True
    if not 2 <= len(value) <= MAX_CHOICES:
        return False
    verdicts = [_valid_die(d) for d in value]
    if False in verdicts:
        return False
    if None in verdicts:
        return None
    return True if len({Die.coerce(d) for d in value}) == len(value) else False


#: The fields of the combinations refused below.
CONFLICTING = {"die", "faces", "bonus_on_six", "max_sixes", "on_cap", "start_on_six", "choose_die", "choose_move"}


def _conflicts(kwargs: dict[str, Any]) -> set[str]:
    """Fields valid alone that docs/rules.md ("Refused dice and combinations") refuses together.

    Called when the fields of CONFLICTING in ``kwargs`` are valid.
    """
    die = Die.coerce(kwargs.get("die", Die()))
    out: set[str] = set()
    faces = kwargs.get("faces")
    if faces is not None and die not in (Die(), Die(faces)):
        out |= {"faces", "die"}  # the die given twice, two different ways
    if faces is not None:
        die = Die(faces)
    bonus, cap = kwargs.get("bonus_on_six", True), kwargs.get("max_sixes", 2)
    if len(die.values) == 1 and bonus:  # every roll a six: sixes to the cap, or a turn that never ends
        out |= {"die", "bonus_on_six", "max_sixes"}
    redeal = kwargs.get("on_cap", "redeal") == "redeal"
    if len(die.values) == 1 and kwargs.get("start_on_six", False) and cap == 1 and redeal:
        out |= {"die", "start_on_six", "max_sixes", "on_cap"}  # the capped roll after entering: nothing to redeal
    dice = kwargs.get("choose_die", ())
    if dice and kwargs.get("choose_move") is not None:
        out |= {"choose_die", "choose_move"}  # one choice rule at a time
    if dice and ("die" in kwargs or "faces" in kwargs) and die not in (Die(), Die.coerce(dice[0])):
        out |= {"choose_die", "die", "faces"}  # under choose_die the die is the first of the dice
    if kwargs.get("choose_move") is not None and len(die.values) == 1:
        out |= {"choose_move", "die", "faces"}  # nothing to choose between
    return out


#: Half the keyword sets hold only good values (no ``faces`` beside ``die``), half may hold hostile ones.
rule_kwargs = st.one_of(
    st.fixed_dictionaries({}, optional={name: f.good for name, f in RULE_FIELDS.items() if name != "faces"}),
    st.fixed_dictionaries({}, optional={name: st.one_of(f.good, hostile_value) for name, f in RULE_FIELDS.items()}),
)


@st.composite
def walled_board(draw):
    """A board whose last squares are snakes: with a small die, often one no token can finish."""
    size = draw(st.integers(3, 20))
    wall = draw(st.integers(1, min(size - 2, 7)))
    tails = draw(st.lists(st.integers(1, size - wall - 1), min_size=wall, max_size=wall))
    return Board(size, {size - 1 - i: tail for i, tail in enumerate(tails)})


small_board = st.one_of(
    st.builds(
        lambda size, jumps, seed: Board.random(size, jump_fraction=jumps, rng=seed),
        st.integers(2, 40),
        st.floats(0, 0.6),
        st.integers(0, 1000),
    ),
    walled_board(),
)


def _named_fields(message: str) -> set[str]:
    return {name for name in RULE_FIELDS if re.search(rf"\b{name}\b", message)}


def test_every_rule_field_is_fuzzed():
    assert set(RULE_FIELDS) == set(Rules.__dataclass_fields__)  # the faces keyword (an InitVar) too


def _finishable(board: Board, rules: Rules, bump_between_players: bool) -> bool:
    """Whether every square a token can reach can still reach the finish (docs/rules.md, one roll at a time).

    Bonus rolls, caps and forfeits only repeat rolls a first roll of a turn can make; a restart leads back
    to square 0, which cannot change the verdict (0 is reached first); a bump leads to ``bump_to``.
    """
    n, values = board.size, rules.die.values
    jumps = dict(board.jumps)

    def land(square: int) -> int:
        seen = set()
        while square in jumps and square not in seen:
            seen.add(square)
            square = jumps[square]
            if not board.chain:
                break
        return square

    def after(square: int) -> set[int]:
        out = set()
        for roll in values:
            t = square + roll
            if roll == 0:  # a move that does not move the token: no landing
                out.add(square)
            elif t == n or (t > n and rules.finish == "none"):
                out.add(n)
            elif t > n and rules.finish == "stay":
                out.add(square)
            elif t > n:  # bounce
                back = 2 * n - t
                out.add(land(back) if rules.jump_after_bounce else back)
            else:
                out.add(land(t))
        if bump_between_players and 1 <= square <= n - 1:
            out.add(rules.bump_to)
        return out

    graph = {s: after(s) for s in range(n)}
    reached, todo = {0}, [0]
    while todo:
        for t in graph[todo.pop()] - reached - {n}:
            reached.add(t)
            todo.append(t)
    back: dict[int, set[int]] = {}
    for s, targets in graph.items():
        for t in targets:
            back.setdefault(t, set()).add(s)
    finishing, todo = {n}, [n]
    while todo:
        for s in back.get(todo.pop(), set()) - finishing:
            finishing.add(s)
            todo.append(s)
    return reached <= finishing


def test_the_oracles_see_a_stuck_board_and_a_misnamed_field():
    plain2 = Rules.preset("plain").replace(faces=2)
    assert not _finishable(Board(9, {2: 9, 7: 5, 8: 6}), plain2, False)  # stuck on 3..6
    assert _finishable(Board(9, {2: 9, 7: 5}), plain2, False)
    assert not _finishable(Board(9, {2: 9, 7: 5, 8: 6}), plain2.replace(finish="none"), False)
    assert _named_fields("faces must be an integer 2..1000 (snlmarkov.limits.MAX_FACES)") == {"faces"}
    assert _named_fields("bump_to must be an integer >= 1") == {"bump_to"}


_MODELS: dict[str, Callable[[Board, Rules], object]] = {
    "analyze": lambda board, rules: snl.analyze(board, rules).length.mean(),
    "roll_model": lambda board, rules: snl.roll_model(board, rules),
    "simulate": lambda board, rules: snl.simulate(board, rules, 50, players=2, rng=1),
    "game": lambda board, rules: snl.Game(board, rules, players=2, rng=1).play(max_turns=5000),
    "race": lambda board, rules: snl.race(board, rules, players=2, method="monte_carlo", games=50, rng=1),
}


def test_a_one_valued_die_without_bonus_has_a_roll_model():
    """Valid rules the fuzz above met: a die of one value and no bonus roll (its capped rows were empty)."""
    m = snl.roll_model(Board(2), Rules(die=Die.faces(1), bonus_on_six=False))
    assert snl.analyze(Board(2), Rules(die=Die.faces(1), bonus_on_six=False)).expected_turns == 2.0
    assert m.matrix.shape[0] == m.n_states


@fuzz(3)
@given(kwargs=rule_kwargs, board=small_board)
@example(kwargs={"die": Die.faces(3)}, board=Board(10))  # one value and the bonus: refused
@example(kwargs={"die": Die.faces(3), "bonus_on_six": False, "start_on_six": True, "max_sixes": 1}, board=Board(10))
@example(kwargs={"die": Die.faces(3), "bonus_on_six": False, "start_on_six": True}, board=Board(10))  # built
@example(kwargs={"die": "2d6", "faces": 4}, board=Board(10))  # the die given twice
@example(kwargs={"die": "d1"}, board=Board(10))
@example(kwargs={"faces": None}, board=Board(2))  # the keyword's default
def test_rules_then_every_model(kwargs, board):
    verdicts = {name: RULE_FIELDS[name].valid(value) for name, value in kwargs.items()}
    invalid = {name for name, ok in verdicts.items() if ok is False}
    unsure = {name for name, ok in verdicts.items() if ok is None}
    conflicts = _conflicts(kwargs) if not (invalid | unsure) & CONFLICTING else set()
    culprits = invalid | unsure | conflicts
    allowed = culprits | {alias for name in culprits for alias in RULE_FIELDS[name].names}
    with time_limit(20):
        try:
            rules = Rules(**kwargs)
        except RuleError as exc:
            named = _named_fields(str(exc))
            assert culprits, f"Rules(**{kwargs!r}) refused valid fields: {exc}"
            assert named and named <= allowed, (str(exc), culprits)
            event("rules refused")
            return
        assert not invalid and not conflicts, f"Rules(**{kwargs!r}) accepted {sorted(invalid | conflicts)}"
        for name, value in kwargs.items():
            if name == "die" and rules.choose_die:
                assert rules.die == rules.choose_die[0]
            elif name == "die":
                want = value if isinstance(value, Die) else Die(value) if _is_int(value) else rules.die
                assert rules.die == want
            elif name == "faces":  # None: not given, the die stays as the other keywords say
                assert value is None or (rules.die == Die(value) and (rules.choose_die or rules.faces == value))
            elif name == "choose_die":
                assert rules.choose_die == tuple(Die.coerce(d) for d in value)
            else:
                assert getattr(rules, name) == value and type(getattr(rules, name)) is type(value), name
        refusal = None  # the field docs/rules.md forbids on this board, if any
        if rules.finish == "bounce" and board.size < rules.die.top:
            refusal = "finish"
        elif not 1 <= rules.bump_to <= board.size - 1:
            refusal = "bump_to"
        small = rules.die.top <= 12 and (rules.max_sixes is None or rules.max_sixes <= 12)
        if rules.choice:  # every model without a policy refuses a choice rule, saying how to give one
            for name, work in _MODELS.items():
                try:
                    work(board, rules)
                except (RuleError, snl.GameError) as exc:  # the engine: a seat with no policy cannot choose
                    assert "policy" in str(exc) or refusal in _named_fields(str(exc)), (name, str(exc))
                except UnwinnableBoardError:  # checked before the choice (no choice would finish)
                    pass
                else:
                    raise AssertionError(f"{name} played a choice rule without a policy")
            event("choice refused without a policy")
            return
        for name, work in _MODELS.items():
            players_bump = name in ("simulate", "game", "race")  # two tokens: the bump can act
            try:
                work(board, rules)
            except RuleError as exc:
                assert refusal is not None and refusal in _named_fields(str(exc)), (str(exc), refusal)
                event(f"refused for {refusal}")
                continue
            except UnwinnableBoardError:
                assert refusal is None and not _finishable(board, rules, players_bump and rules.bump)
                event("unfinishable")
                continue
            except SnlError as exc:  # a huge die: a named limit, or a game past its turn guard
                assert not small and isinstance(exc, (LimitError, snl.GameError)), repr(exc)
                event(f"huge die: {type(exc).__name__}")
                continue
            assert refusal is None, f"{refusal} should have been refused"
            assert _finishable(board, rules, players_bump and rules.bump), "an unfinishable board was played"
            event("played")


@fuzz(2)
@given(
    size=hostile_value,
    jumps=st.one_of(hostile_value, st.dictionaries(st.one_of(hostile_number, hostile_text), hostile_value, max_size=3)),
)
def test_board_constructor(size, jumps):
    plain = isinstance(size, int) and not isinstance(size, bool) and 2 <= size <= limit("board_size")
    with time_limit(5):
        try:
            board = Board(size, jumps)
        except SnlError as exc:
            assert not (plain and isinstance(jumps, dict) and not jumps), f"Board({size!r}, {{}}) refused: {exc}"
            return
        assert board.size >= 2 and board.size == size


@fuzz(2)
@given(name=st.sampled_from(["pmf", "cdf", "sf", "ppf"]), value=st.one_of(hostile_value, st.lists(hostile_value)))
def test_length_distribution_methods(name, value):
    d = snl.analyze(Board(12, {3: 9}), Rules.preset("plain")).length
    with time_limit(5):
        try:
            getattr(d, name)(value)
        except SnlError:
            pass


@fuzz(2)
@given(rng=st.one_of(hostile_value, st.lists(hostile_value, max_size=3)))
def test_every_rng(rng):
    """A seed limits.check_rng's rule accepts is used by every function; any other is a SeedError."""

    def seed_int(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    valid = rng is None or seed_int(rng) or (isinstance(rng, list) and bool(rng) and all(map(seed_int, rng)))
    with time_limit(5):
        for work in (
            lambda: snl.simulate(Board(10), Rules(), 20, rng=rng),
            lambda: snl.Game(Board(10), players=1, rng=rng).play(),
            lambda: Board.random(20, rng=rng),
        ):
            if valid:
                work()
            else:
                with pytest.raises(snl.SeedError):
                    work()
