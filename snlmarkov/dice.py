"""Dice of any shape: a finite law of whole moves with exact rational weights.

A :class:`Die` is data: its values (the moves it can show, ``0, 1, 2, ...``)
and their probabilities as :class:`fractions.Fraction`. Every rule that
speaks of "a six" means the die's :attr:`~Die.top` value (``docs/rules.md``,
"Dice"). The exact kernel and the play kernel read a die through
:attr:`Die.values`, :attr:`Die.pmf` and :meth:`Die.without_top`; nothing else
in the package needs to know how a die was made.

This module imports no numpy, so the command line's ``--help`` stays cheap.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .errors import RuleError
from .limits import MAX_DIE_VALUE, MAX_FACES, show_value
from .vocab import NAMED_DICE

__all__ = ["Die", "NAMED_DICE"]

#: Most digits of one weight's numerator or denominator.
_MAX_WEIGHT_DIGITS = 60


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _count(value: Any, name: str, low: int, high: int) -> int:
    if not _is_int(value) or not low <= value <= high:
        shown = show_value(value)
        raise RuleError(f"{name} must be an integer {low}..{high}; got {shown}")
    return int(value)


def _weight(value: Any, where: str) -> Fraction:
    """A positive rational weight (int, Fraction or finite float, converted exactly)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise RuleError(f"die weight for {where} must be a positive number; got {value!r}")
    try:
        if isinstance(value, numbers.Rational):
            w = Fraction(int(value.numerator), int(value.denominator))
        else:
            w = Fraction(float(value))  # exact: a float is a rational
    except (ValueError, OverflowError):
        raise RuleError(f"die weight for {where} must be a finite positive number; got {value!r}") from None
    if w <= 0:
        raise RuleError(f"die weight for {where} must be positive; got {value!r}")
    if max(len(str(w.numerator)), len(str(w.denominator))) > _MAX_WEIGHT_DIGITS:
        raise RuleError(f"die weight for {where} has more than {_MAX_WEIGHT_DIGITS} digits")
    return w


@dataclass(frozen=True, init=False)
class Die:
    """A die: the moves it shows and their exact probabilities.

    ``Die(n)`` is the fair die with faces ``1..n`` (``Die()`` is the
    six-faced die, the default everywhere). The class methods build every
    other shape; two dice are equal when they have the same law, whatever
    way they were made.

    Parameters
    ----------
    faces : int, default 6
        Faces of a fair die, ``2..MAX_FACES`` (:data:`snlmarkov.limits.MAX_FACES`).

    Attributes
    ----------
    values : tuple of int
        The moves the die can show, increasing; 0 is a move that does not
        move the token.
    pmf : tuple of Fraction
        Their probabilities, positive, summing to exactly 1.

    Raises
    ------
    RuleError
        For a die no rule set can use: no values, only the value 0, a
        negative value or weight, more than ``MAX_FACES`` distinct values or
        a value over :data:`snlmarkov.limits.MAX_DIE_VALUE`.

    Examples
    --------
    >>> from snlmarkov import Die
    >>> Die()
    Die(6)
    >>> d = Die.faces(2, 2, 2, 2, 6, 6)   # one of Efron's dice
    >>> d.values, [str(p) for p in d.pmf], d.top, str(d.mean)
    ((2, 6), ['2/3', '1/3'], 6, '10/3')
    >>> d
    Die.weighted({2: 2, 6: 1})
    >>> Die.sum_of(2, 6).pmf[5]        # a seven with two dice
    Fraction(1, 6)
    >>> Die.parse("2d6") == Die.sum_of(2, 6), Die.parse("spinner:15") == Die(15)
    (True, True)
    """

    values: tuple[int, ...]
    pmf: tuple[Fraction, ...]

    def __init__(self, faces: int = 6) -> None:
        n = _count(faces, "faces", 2, MAX_FACES)
        self._set(tuple(range(1, n + 1)), (Fraction(1, n),) * n)

    def _set(self, values: tuple[int, ...], pmf: tuple[Fraction, ...]) -> None:
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "pmf", pmf)

    # ------------------------------------------------------------ factories
    @classmethod
    def weighted(cls, weights: Mapping[int, Any]) -> Die:
        """A die with the given weight for each value (normalised exactly).

        Examples
        --------
        >>> Die.weighted({1: 1, 2: 1, 6: 4}).pmf
        (Fraction(1, 6), Fraction(1, 6), Fraction(2, 3))
        """
        if not isinstance(weights, Mapping):
            raise RuleError(f"Die.weighted takes a mapping value -> weight; got {type(weights).__name__}")
        if len(weights) > MAX_FACES:
            raise RuleError(f"a die has at most {MAX_FACES} values (snlmarkov.limits.MAX_FACES); got {len(weights)}")
        pairs: dict[int, Fraction] = {}
        for value, w in weights.items():
            v = _count(value, "a die value", 0, MAX_DIE_VALUE)
            pairs[v] = pairs.get(v, Fraction(0)) + _weight(w, f"value {v}")
        return cls._from_pairs(pairs)

    @classmethod
    def faces(cls, *faces: int) -> Die:
        """A die with these faces, equally likely; a repeated face weighs more.

        Examples
        --------
        >>> Die.faces(0, 0, 4, 4, 4, 4)
        Die.weighted({0: 1, 4: 2})
        >>> Die.faces(1, 2, 3, 4) == Die(4)
        True
        """
        if len(faces) == 1 and isinstance(faces[0], Iterable) and not isinstance(faces[0], str):
            faces = tuple(faces[0])
        if not faces:
            raise RuleError("Die.faces needs at least one face")
        if len(faces) > MAX_FACES:
            raise RuleError(f"a die has at most {MAX_FACES} faces (snlmarkov.limits.MAX_FACES); got {len(faces)}")
        counts: dict[int, int] = {}
        for face in faces:
            v = _count(face, "a die face", 0, MAX_DIE_VALUE)
            counts[v] = counts.get(v, 0) + 1
        return cls._from_pairs({v: Fraction(c) for v, c in counts.items()})

    @classmethod
    def spinner(cls, n: int) -> Die:
        """A spinner ``1..n``, every value equally likely (the fair die with ``n`` faces).

        Examples
        --------
        >>> Die.spinner(15).top
        15
        """
        return cls(_count(n, "a spinner's range", 2, MAX_FACES))

    @classmethod
    def sum_of(cls, count: int, faces: int = 6) -> Die:
        """The sum of ``count`` fair dice of ``faces`` faces (``Die.sum_of(2, 6)``: 2..12).

        Examples
        --------
        >>> d = Die.sum_of(2, 6)
        >>> d.values[0], d.top, [int(p * 36) for p in d.pmf]
        (2, 12, [1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1])
        """
        k = _count(count, "the number of dice summed", 1, MAX_FACES)
        f = _count(faces, "faces", 2, MAX_FACES)
        if k * (f - 1) + 1 > MAX_FACES:
            raise RuleError(
                f"the sum of {k} dice of {f} faces has {k * (f - 1) + 1} values; "
                f"at most {MAX_FACES} (snlmarkov.limits.MAX_FACES)"
            )
        counts = [1]  # ways to make each total, by polynomial multiplication
        for _ in range(k):
            nxt = [0] * (len(counts) + f - 1)
            for i, c in enumerate(counts):
                for j in range(f):
                    nxt[i + j] += c
            counts = nxt
        return cls._from_pairs({k + i: Fraction(c) for i, c in enumerate(counts)})

    @classmethod
    def cowries(cls, shells: int = 4, *, zero: int | None = None) -> Die:
        """Cowrie shells: the number of ``shells`` that land mouth up, each with chance 1/2.

        In the cowrie games of India (Chowka bhara, Ashta chamma, the throws
        of Gyan chaupar) a throw with *no* shell mouth up is not a zero but
        the best throw: it scores twice the number of shells (8 with four
        shells). That is the default reading; ``zero=0`` counts it as a move
        of 0 (the plain binomial count), and any other ``zero`` value scores
        it as that many squares.

        Examples
        --------
        >>> d = Die.cowries(4)
        >>> d.values, [int(p * 16) for p in d.pmf]
        ((1, 2, 3, 4, 8), [4, 6, 4, 1, 1])
        >>> Die.cowries(4, zero=0).values
        (0, 1, 2, 3, 4)
        """
        n = _count(shells, "the number of shells", 1, MAX_FACES - 1)
        z = 2 * n if zero is None else _count(zero, "the score of no shell mouth up", 0, MAX_DIE_VALUE)
        pairs: dict[int, Fraction] = {}
        for up in range(n + 1):
            v = z if up == 0 else up
            pairs[v] = pairs.get(v, Fraction(0)) + Fraction(math.comb(n, up), 2**n)
        return cls._from_pairs(pairs)

    @classmethod
    def _from_pairs(cls, pairs: Mapping[int, Fraction], *, zero_only: bool = False) -> Die:
        if not pairs:
            raise RuleError("a die needs at least one value")
        if set(pairs) == {0} and not zero_only:
            raise RuleError("a die whose only value is 0 never moves a token")
        total = sum(pairs.values(), Fraction(0))
        values = tuple(sorted(pairs))
        die = object.__new__(cls)
        die._set(values, tuple(pairs[v] / total for v in values))
        return die

    @classmethod
    def parse(cls, text: str) -> Die:
        """A die from its text form, as the command line and the files write it.

        ``"6"`` or ``"d6"`` (a fair die), ``"2d6"`` (two dice summed),
        ``"spinner:15"``, ``"faces:2,2,2,2,6,6"``, ``"weights:1=1,2=1,6=4"``
        (weights may be fractions, ``1/3``), ``"cowries:4"`` (and
        ``"cowries:4:0"`` for a zero that scores 0), or a name from
        :data:`NAMED_DICE`. Digits are ASCII only.

        Examples
        --------
        >>> Die.parse("weights:1=1,2=1,6=4") == Die.weighted({1: 1, 2: 1, 6: 4})
        True
        >>> Die.parse("efron-a")
        Die.weighted({0: 1, 4: 2})
        >>> Die.parse("d1")
        Traceback (most recent call last):
        ...
        snlmarkov.errors.RuleError: faces must be an integer 2..1000; got 1
        """
        if not isinstance(text, str):
            raise RuleError(f"a die's text form must be a string; got {type(text).__name__}")
        if len(text) > 20 * MAX_FACES:
            raise RuleError(f"a die's text form is at most {20 * MAX_FACES} characters; got {len(text)}")
        s = text.strip().lower()
        if s in NAMED_DICE:
            return cls.parse(NAMED_DICE[s])
        m = re.fullmatch(r"([0-9]{1,4})?d([0-9]{1,4})|([0-9]{1,4})", s)
        if m:  # "6", "d6", "2d6"
            count, faces = int(m.group(1) or 1), int(m.group(2) or m.group(3))
            return cls(faces) if count == 1 else cls.sum_of(count, faces)
        kind, _, rest = s.partition(":")
        form = _FORMS.get(kind)
        if form is not None and re.fullmatch(form[0], rest):
            try:
                return form[1](rest)
            except ZeroDivisionError:
                raise RuleError(f"cannot read the die {text[:40]!r}: a weight has denominator 0") from None
            except ValueError as exc:
                if isinstance(exc, RuleError):
                    raise
                raise RuleError(f"cannot read the die {text[:40]!r}: {exc}") from None
        raise RuleError(
            f"cannot read the die {text[:40]!r}: use 6, d6, 2d6, spinner:N, faces:A,B,..., "
            f"weights:V=W,..., cowries:N or one of {', '.join(NAMED_DICE)}"
        )

    @classmethod
    def coerce(cls, value: Any) -> Die:
        """A :class:`Die` from a die, a whole number of faces, or a text form (:meth:`parse`).

        Examples
        --------
        >>> Die.coerce(4) == Die(4) == Die.coerce("d4")
        True
        """
        if isinstance(value, Die):
            return value
        if _is_int(value):
            return cls(value)
        if isinstance(value, str):
            return cls.parse(value)
        raise RuleError(f"die must be a Die, a number of faces or a text form such as '2d6'; got {value!r}")

    # ------------------------------------------------------------ properties
    @property
    def top(self) -> int:
        """The largest value: what every rule means by "a six"."""
        return self.values[-1]

    @property
    def probs(self) -> tuple[float, ...]:
        """:attr:`pmf` as floats (each correctly rounded)."""
        return tuple(float(p) for p in self.pmf)

    @property
    def mean(self) -> Fraction:
        """The expected move."""
        return sum((v * p for v, p in zip(self.values, self.pmf)), Fraction(0))

    @property
    def variance(self) -> Fraction:
        """The variance of the move."""
        m = self.mean
        return sum(((v - m) ** 2 * p for v, p in zip(self.values, self.pmf)), Fraction(0))

    @property
    def top_prob(self) -> Fraction:
        """The chance of the top value (of "a six")."""
        return self.pmf[-1]

    @property
    def is_fair(self) -> bool:
        """Whether this is ``Die(n)``: faces ``1..n``, equally likely."""
        n = len(self.values)
        return n >= 2 and self.values == tuple(range(1, n + 1)) and all(p == self.pmf[0] for p in self.pmf)

    def without_top(self) -> Die:
        """The die without its top value, renormalised: the capped roll under ``redeal``.

        Raises
        ------
        RuleError
            When the die has a single value (nothing is left).

        Notes
        -----
        What is left may be the value 0 alone (``Die.faces(0, 4)``): a
        capped roll that never moves. That die is returned, although no rule
        set may use it as its own die.

        Examples
        --------
        >>> Die(6).without_top() == Die(5)
        True
        >>> Die.weighted({1: 1, 3: 1, 6: 4}).without_top()
        Die.weighted({1: 1, 3: 1})
        """
        if len(self.values) == 1:
            raise RuleError(f"{self!r} has a single value: there is no die without its top value to redeal from")
        return Die._from_pairs(dict(zip(self.values[:-1], self.pmf[:-1])), zero_only=True)

    def integer_weights(self) -> tuple[int, ...]:
        """The smallest whole weights proportional to :attr:`pmf`."""
        lcm = math.lcm(*(p.denominator for p in self.pmf))
        ints = [int(p * lcm) for p in self.pmf]
        g = math.gcd(*ints)
        return tuple(i // g for i in ints)

    @property
    def spec(self) -> str:
        """The canonical text form (:meth:`parse` reads it back).

        Examples
        --------
        >>> Die(6).spec, Die.faces(2, 2, 2, 2, 6, 6).spec
        ('d6', 'weights:2=2,6=1')
        """
        if self.is_fair:
            return f"d{len(self.values)}"
        return "weights:" + ",".join(f"{v}={w}" for v, w in zip(self.values, self.integer_weights()))

    def __repr__(self) -> str:
        if self.is_fair:
            return f"Die({len(self.values)})"
        body = ", ".join(f"{v}: {w}" for v, w in zip(self.values, self.integer_weights()))
        return f"Die.weighted({{{body}}})"

    def __str__(self) -> str:
        return self.spec


def _weights_form(rest: str) -> Die:
    weights: dict[int, Fraction] = {}
    for pair in rest.split(","):
        v, w = pair.split("=")
        if int(v) in weights:
            raise RuleError(f"die value {int(v)} is given twice in 'weights:{rest[:40]}'")
        weights[int(v)] = Fraction(w)
    return Die.weighted(weights)


def _cowries_form(rest: str) -> Die:
    n, _, zero = rest.partition(":")
    return Die.cowries(int(n), zero=int(zero) if zero else None)


#: The text forms ``kind:rest`` that :meth:`Die.parse` reads: the pattern of ``rest`` and its reader.
_FORMS = {
    "spinner": (r"[0-9]{1,4}", lambda rest: Die.spinner(int(rest))),
    "faces": (r"[0-9]{1,7}(,[0-9]{1,7})*", lambda rest: Die.faces(*(int(x) for x in rest.split(",")))),
    "weights": (r"[0-9]{1,7}=[0-9/]{1,61}(,[0-9]{1,7}=[0-9/]{1,61})*", _weights_form),
    "cowries": (r"[0-9]{1,4}(:[0-9]{1,7})?", _cowries_form),
}
