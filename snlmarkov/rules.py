"""Rule sets: which house rules are in play.

:class:`Rules` holds the toggles of ``docs/rules.md`` under the same names. It is
immutable and validated on construction; :meth:`Rules.preset` gives the three
named rule sets.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import InitVar, dataclass, field
from typing import Any

from .dice import Die
from .errors import RuleError
from .limits import MAX_CHOICES, MAX_FACES, limit, show_value
from .vocab import CAP_POLICIES, FINISH_RULES, MODES, PRESETS

__all__ = ["Rules", "Die", "PRESETS", "FINISH_RULES", "CAP_POLICIES", "MODES"]


@dataclass(frozen=True)
class Rules:
    """A rule set for one game (see ``docs/rules.md`` for what each rule means).

    Parameters
    ----------
    finish : {"stay", "bounce", "none"}, default "stay"
        Overshooting the finish: stay put and end the turn, bounce back from
        the finish, or finish anyway (exact finish off).
    bonus_on_six : bool, default True
        A six earns another roll in the same turn.
    max_sixes : int or None, default 2
        At most this many sixes in one turn; ``None`` means no cap.
    on_cap : {"redeal", "forfeit", "restart"}, default "redeal"
        The roll after the cap is reached: drawn from ``1..faces-1``
        (``redeal``), or a fair roll where a six voids the whole turn
        (``forfeit``: back to the square the turn began on) or sends the
        token back to square 0 (``restart``: "three sixes and you go back
        to the start"). Irrelevant when ``max_sixes`` is None.
    start_on_six : bool, default False
        A token on square 0 needs a six to enter; that six does not move it
        and the player rolls again at once.
    bump : bool, default False
        A token that ends its turn on a square ``1..N-1`` where another
        player's token stands goes back to ``bump_to``.
    bump_to : int, default 1
        Where a bumped token is placed (no jump there acts).
    die : Die, int or str, default ``Die(6)``
        The die (:class:`~snlmarkov.Die`): any finite law of moves. "Six"
        in every rule means its top value (``docs/rules.md``, "Dice"). A
        whole number ``n`` means ``Die(n)``, a string a text form such as
        ``"2d6"`` (:meth:`Die.parse`).
    faces : int, optional
        Deprecated shorthand for ``die=Die(faces)``, kept so that older code
        and rule files keep working. Read back, ``rules.faces`` is the
        number of faces of a fair die (a :class:`RuleError` for any other).
    jump_after_bounce : bool, default True
        Under ``finish="bounce"``, whether a jump at the square a bounce
        lands on acts. When False the token stays on that square (it still
        counts as landed on, and a six there still earns its bonus).
        Irrelevant under the other finish rules: the value is kept but
        changes nothing.
    choose_die : tuple of Die, default ()
        A choice rule (``docs/rules.md``, "Choices"): before every roll
        (bonus and entering rolls too) the mover picks one of these dice
        (2 to ``MAX_CHOICES``, distinct; ints and text forms as for ``die``).
        ``die`` is then the first of them.
    choose_move : int, optional
        A choice rule: the mover rolls this many of ``die`` (2 to
        ``MAX_CHOICES``) and moves by one value rolled, of its choosing; "six"
        is the value chosen. Not with ``choose_die``.

    A rule set with a choice is played and analysed with a policy
    (:class:`~snlmarkov.Policy`, :func:`~snlmarkov.optimal_policy`); code
    that needs none refuses it with a :class:`RuleError` saying so.

    Integer fields take Python or numpy integers (not bools). ``max_sixes``
    is at most 1000.

    Raises
    ------
    RuleError
        For a value outside the choices above, or a die these rules cannot
        roll: a single-valued die (every roll a six) with ``bonus_on_six``,
        or entering with it under ``redeal`` and ``max_sixes=1`` (nothing
        left to redeal from).

    Examples
    --------
    >>> from snlmarkov import Rules
    >>> Rules()
    Rules(finish='stay', bonus_on_six=True, max_sixes=2, on_cap='redeal', start_on_six=False, bump=False, bump_to=1, die=Die(6), jump_after_bounce=True)
    >>> Rules.preset("family").finish
    'bounce'
    >>> Rules(die="2d6").die.top, Rules(faces=4) == Rules(die=Die(4))
    (12, True)
    >>> Rules(finish="exact")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.RuleError: finish must be one of 'stay', 'bounce', 'none'; got 'exact'
    """

    finish: str = "stay"
    bonus_on_six: bool = True
    max_sixes: int | None = 2
    on_cap: str = "redeal"
    start_on_six: bool = False
    bump: bool = False
    bump_to: int = 1
    die: Die = field(default_factory=Die)
    jump_after_bounce: bool = True
    choose_die: tuple[Die, ...] = ()
    choose_move: int | None = None
    faces: InitVar[int | None] = None

    def __post_init__(self, faces: int | None) -> None:  # noqa: C901
        if not isinstance(self.finish, str) or self.finish not in FINISH_RULES:
            raise RuleError(f"finish must be one of {', '.join(map(repr, FINISH_RULES))}; got {self.finish!r}")
        if not isinstance(self.on_cap, str) or self.on_cap not in CAP_POLICIES:
            raise RuleError(f"on_cap must be one of {', '.join(map(repr, CAP_POLICIES))}; got {self.on_cap!r}")
        for name in ("bonus_on_six", "start_on_six", "bump", "jump_after_bounce"):
            if not isinstance(getattr(self, name), bool):
                raise RuleError(f"{name} must be True or False; got {show_value(getattr(self, name))}")
        if self.max_sixes is not None and (not _is_int(self.max_sixes) or not 1 <= self.max_sixes <= MAX_FACES):
            raise RuleError(f"max_sixes must be an integer 1..{MAX_FACES} or None; got {show_value(self.max_sixes)}")
        try:
            die = Die.coerce(self.die)
        except RuleError as exc:
            raise RuleError(f"die: {exc}") from None
        if faces is not None:
            if not _is_int(faces) or not 2 <= faces <= MAX_FACES:
                raise RuleError(
                    f"faces must be an integer 2..{MAX_FACES} (snlmarkov.limits.MAX_FACES); got {show_value(faces)}"
                )
            if die != Die() and die != Die(int(faces)):
                raise RuleError(f"give the die once: faces={faces!r} and die={die!r} disagree")
            die = Die(int(faces))
        object.__setattr__(self, "die", die)
        if len(die.values) == 1 and self.bonus_on_six:
            raise RuleError(
                f"die={die!r} has a single value, so every roll is a six: with bonus_on_six every turn "
                "would be sixes to the cap (or never end without one); use bonus_on_six=False"
            )
        if len(die.values) == 1 and self.start_on_six and self.max_sixes == 1 and self.on_cap == "redeal":
            raise RuleError(
                f"die={die!r} has a single value, so the capped roll after entering has nothing to be "
                "redealt from under on_cap='redeal': use max_sixes=None, another on_cap, or a die with two values"
            )
        if not _is_int(self.bump_to) or not 1 <= self.bump_to <= limit("board_size"):
            raise RuleError(f"bump_to must be an integer >= 1 (a square on the board); got {show_value(self.bump_to)}")
        for name in ("max_sixes", "bump_to"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, int(value))
        _check_choices(self)

    def __repr__(self) -> str:
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if not (f.name == "choose_die" and not self.choose_die)
            and not (f.name == "choose_move" and self.choose_move is None)
        ]
        return f"Rules({', '.join(shown)})"

    # ------------------------------------------------------------ choices
    @property
    def choice(self) -> str:
        """Which choice the rules give the mover: ``"die"``, ``"move"``, or ``""`` (none).

        Examples
        --------
        >>> Rules().choice, Rules(choose_die=(4, 6)).choice, Rules(choose_move=2).choice
        ('', 'die', 'move')
        """
        return "die" if self.choose_die else ("move" if self.choose_move is not None else "")

    @property
    def options(self) -> tuple[Any, ...]:
        """What the mover chooses between: the dice (``choose_die``), the die's values (``choose_move``), or ``()``.

        Examples
        --------
        >>> Rules(choose_die=(4, 6)).options
        (Die(4), Die(6))
        >>> Rules(choose_move=2, die=4).options
        (1, 2, 3, 4)
        """
        if self.choose_die:
            return self.choose_die
        if self.choose_move is not None:
            return self.die.values
        return ()

    def option_rules(self, option: int = 0) -> Rules:
        """The rules without their choice: rolling the ``option``-th die of ``choose_die`` (or the die, for ``choose_move``).

        Every rule but the choice is kept; a roll after the choice is made is
        a roll of these rules (``docs/rules.md``, "Choices").

        Examples
        --------
        >>> Rules(choose_die=(4, 6), finish="bounce").option_rules(1)
        Rules(finish='bounce', bonus_on_six=True, max_sixes=2, on_cap='redeal', start_on_six=False, bump=False, bump_to=1, die=Die(6), jump_after_bounce=True)
        """
        if not self.choose_die:
            return dataclasses.replace(self, choose_move=None, faces=None) if self.choose_move is not None else self
        if not _is_int(option) or not 0 <= option < len(self.choose_die):
            raise RuleError(f"option must be 0..{len(self.choose_die) - 1} (one of the dice); got {show_value(option)}")
        return dataclasses.replace(self, die=self.choose_die[int(option)], choose_die=(), faces=None)

    def no_choice(self, what: str) -> None:
        """Refuse these rules for ``what`` if they hold a choice (``RuleError`` naming the way out).

        Examples
        --------
        >>> Rules(choose_move=2).no_choice("the turn matrix")
        Traceback (most recent call last):
        ...
        snlmarkov.errors.RuleError: the turn matrix: the rules let the mover choose the move, so a choice rule needs a policy: pass policy=, or solve one with snlmarkov.optimal_policy (docs/rules.md, "Choices")
        """
        if self.choice:
            raise RuleError(
                f"{what}: the rules let the mover choose the {self.choice}, so a choice rule needs a policy: "
                'pass policy=, or solve one with snlmarkov.optimal_policy (docs/rules.md, "Choices")'
            )

    # ----------------------------------------------------------- factories
    @classmethod
    def preset(cls, name: str | None = None) -> Rules:
        """A named rule set: ``"app"`` (the default), ``"family"`` or ``"plain"``.

        Examples
        --------
        >>> Rules.preset() == Rules()
        True
        >>> Rules.preset("plain").bonus_on_six
        False
        """
        key = "app" if name is None else str(name)
        if key not in PRESETS:
            raise RuleError(f"unknown rule preset {name!r}; presets: {', '.join(PRESETS)}")
        return cls(**PRESETS[key])

    @classmethod
    def presets(cls) -> list[str]:
        """Names of the presets, the default first."""
        return list(PRESETS)

    def replace(self, **changes: Any) -> Rules:
        """A copy with some fields changed (validated again).

        Examples
        --------
        >>> Rules().replace(finish="bounce").finish
        'bounce'
        """
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)} - {"faces"}
        if unknown:
            raise RuleError(f"unknown rule field(s): {', '.join(sorted(unknown))}")
        if ("faces" in changes or "choose_die" in changes) and "die" not in changes:
            changes["die"] = Die()  # faces= replaces the die; under choose_die the die is the first of the dice
        changes.setdefault("faces", None)  # dataclasses.replace would pass the property's value on
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The rules as plain data (round-trips through ``Rules(**d)``).

        A fair die is written as ``faces`` (as rule files and records always
        have), any other as ``die``, its text form (:attr:`Die.spec`).

        Examples
        --------
        >>> Rules().to_dict()["faces"], Rules(die="faces:2,2,6").to_dict()["die"]
        (6, 'weights:2=2,6=1')
        >>> Rules(**Rules(die="2d6").to_dict()) == Rules(die="2d6")
        True
        """
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "choose_die":
                if value:
                    out[f.name] = [d.spec for d in value]
            elif f.name == "choose_move":
                if value is not None:
                    out[f.name] = value
            elif f.name == "die":
                if value.is_fair:
                    out["faces"] = len(value.values)
                else:
                    out["die"] = value.spec
            else:
                out[f.name] = value
        return out

    @property
    def preset_name(self) -> str:
        """The preset these rules equal, or ``"custom"``.

        Examples
        --------
        >>> Rules(finish="bounce").preset_name
        'custom'
        """
        for key, values in PRESETS.items():
            if self == Rules(**values):
                return key
        return "custom"

    def check_board(self, board: Any) -> None:
        """Refuse a rule set that cannot be played on ``board``.

        ``bounce`` needs a board at least as large as the die (otherwise a
        bounce could fall below square 1), and ``bump_to`` must be a square
        ``1..size-1`` (whether ``bump`` is on or not: a setting that points
        off the board is a mistake either way).

        Raises
        ------
        RuleError
            Naming the board size and the rule.
        """
        top = max(d.top for d in (self.choose_die or (self.die,)))
        if self.finish == "bounce" and board.size < top:
            raise RuleError(
                f"finish='bounce' needs a board of at least {top} squares "
                f"(the die's top value); this board has {board.size}"
            )
        if not 1 <= self.bump_to <= board.size - 1:
            raise RuleError(f"bump_to={show_value(self.bump_to)} is not a square 1..{board.size - 1} of this board")


def _faces(self: Rules) -> int:
    """The number of faces of the fair die ``Die(n)`` (deprecated: read ``rules.die``)."""
    if not self.die.is_fair:
        raise RuleError(f"rules.faces is defined for a fair die only; this die is {self.die!r} (read rules.die)")
    return len(self.die.values)


setattr(Rules, "faces", property(_faces, doc=_faces.__doc__))  # noqa: B010 (after the dataclass read its InitVar)


def _check_choices(rules: Rules) -> None:
    """Validate ``choose_die`` and ``choose_move`` (and make ``die`` the first of the dice)."""
    dice = rules.choose_die
    if isinstance(dice, (str, bytes)) or not isinstance(dice, (tuple, list)):
        raise RuleError(f"choose_die must be a tuple of dice (Die, int or text form); got {show_value(dice)}")
    if dice:
        _check_dice(rules, dice)
    elif rules.choose_move is not None:
        k = rules.choose_move
        if not _is_int(k) or not 2 <= k <= MAX_CHOICES:
            raise RuleError(
                f"choose_move must be an integer 2..{MAX_CHOICES} (dice rolled; snlmarkov.limits.MAX_CHOICES) "
                f"or None; got {show_value(k)}"
            )
        object.__setattr__(rules, "choose_move", int(k))
        if len(rules.die.values) == 1:
            raise RuleError(f"choose_move needs a die with two values at least; die={rules.die!r} leaves no choice")
    else:
        object.__setattr__(rules, "choose_die", ())


def _check_dice(rules: Rules, dice: Any) -> None:
    """Validate a non-empty ``choose_die``: 2..MAX_CHOICES distinct dice, each one these rules can roll."""
    if not 2 <= len(dice) <= MAX_CHOICES:
        raise RuleError(f"choose_die takes 2..{MAX_CHOICES} dice (snlmarkov.limits.MAX_CHOICES); got {len(dice)}")
    coerced = []
    for k, d in enumerate(dice):
        try:
            coerced.append(Die.coerce(d))
        except RuleError as exc:
            raise RuleError(f"choose_die[{k}]: {exc}") from None
    if len(set(coerced)) < len(coerced):
        raise RuleError(f"choose_die holds the same die twice: {tuple(coerced)!r}")
    if rules.choose_move is not None:
        raise RuleError("choose one choice rule: choose_die and choose_move cannot both be set")
    if rules.die != Die() and rules.die != coerced[0]:
        raise RuleError(f"under choose_die the die is the first of the dice; die={rules.die!r} disagrees")
    object.__setattr__(rules, "choose_die", tuple(coerced))
    object.__setattr__(rules, "die", coerced[0])
    for k in range(len(coerced)):
        try:
            rules.option_rules(k)  # each die must be one these rules can roll
        except RuleError as exc:
            raise RuleError(f"choose_die[{k}]: {exc}") from None


def _is_int(value: Any) -> bool:
    """Python and numpy integers, not bools (as :class:`~snlmarkov.Board` takes them).

    ``numpy.bool_`` is no :class:`numbers.Integral`, so only ``bool`` needs
    excluding (and this module needs no numpy, for the command line's ``--help``).
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
