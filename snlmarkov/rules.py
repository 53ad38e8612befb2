"""Rule sets: which house rules are in play.

:class:`Rules` holds the toggles of ``docs/rules.md`` under the same names. It is
immutable and validated on construction; :meth:`Rules.preset` gives the three
named rule sets.
"""

from __future__ import annotations

import dataclasses
import numbers
import types
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any

from .dice import Die
from .errors import RuleError
from .limits import MAX_FACES, limit, show_value

__all__ = ["Rules", "Die", "PRESETS", "FINISH_RULES", "CAP_POLICIES", "MODES"]

#: What happens when a roll would carry the token past the finish.
FINISH_RULES = ("stay", "bounce", "none")
#: What happens on the roll after a turn holds ``max_sixes`` sixes.
CAP_POLICIES = ("redeal", "forfeit", "restart")
#: How a game of several players ends: at the first finish, or when all have finished.
MODES = ("classic", "last_one_standing")


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
        if "faces" in changes and "die" not in changes:
            changes["die"] = Die()  # faces= replaces the die
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
            if f.name == "die":
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
        if self.finish == "bounce" and board.size < self.die.top:
            raise RuleError(
                f"finish='bounce' needs a board of at least {self.die.top} squares "
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


def _is_int(value: Any) -> bool:
    """Python and numpy integers, not bools (as :class:`~snlmarkov.Board` takes them).

    ``numpy.bool_`` is no :class:`numbers.Integral`, so only ``bool`` needs
    excluding (and this module needs no numpy, for the command line's ``--help``).
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


#: The named rule sets of ``docs/rules.md``.
PRESETS: Mapping[str, Mapping[str, Any]] = types.MappingProxyType(
    {
        "app": types.MappingProxyType({}),
        "family": types.MappingProxyType(
            {
                "finish": "bounce",
                "bonus_on_six": False,
                "max_sixes": None,
                "start_on_six": True,
                "bump": True,
                "bump_to": 1,
            }
        ),
        "plain": types.MappingProxyType({"finish": "stay", "bonus_on_six": False, "max_sixes": None}),
    }
)
