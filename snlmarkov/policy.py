"""Policies: what a seat chooses under a rule set with a choice (``docs/rules.md``, "Choices").

A :class:`Policy` is configuration, like a board or a rule set: the exact
models (:mod:`snlmarkov.chain.choice`) and the play kernel's users (the game
engine, the simulator) both read it, each resolving it against a board and a
rule set with its own statement of a roll. A resolved policy is a
:class:`PolicyTable`: for every *decision state* a preference order of the
options, the first one on offer being the choice.

A decision state is what the mover knows when it chooses: its square
``0..N-1``, the sixes of the turn so far (``0..max_sixes``; without a cap,
0 or "one or more"), and under ``on_cap="forfeit"`` the square the turn
began on (a forfeited turn goes back there), and in a race the other
tokens' squares (in seat order, the mover's own left out). Under ``choose_die`` the options are the dice (the first in
the order is rolled); under ``choose_move`` they are the die's values (of
the values rolled, the first in the order is moved).

Examples
--------
>>> from snlmarkov import Board, Policy, Rules
>>> rules = Rules(choose_die=(4, 6))
>>> t = Policy.fixed(6).resolve(Board(10), rules)
>>> t.die_index(3, 0, 3), t.shape
(1, (3, 10, 1, 2))
>>> Policy.from_dict(t.policy.to_dict()).resolve(Board(10), rules).die_index(3, 0, 3)
1
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .args import rng_arg
from .board import Board, _read_data_file
from .dice import Die
from .errors import PolicyError, RuleError, SnlError
from .limits import check_memory, show_value
from .rules import Rules

__all__ = ["Policy", "PolicyTable", "POLICY_KINDS", "decision_shape", "FORMAT"]

#: The kinds of policy: always one die, the furthest move, a random order per state, or a solved table.
POLICY_KINDS = ("fixed", "greedy", "random", "table")
#: The ``format`` field of a saved policy.
FORMAT = "snlmarkov.policy/1"


def decision_shape(board: Board, rules: Rules, others: int = 0) -> tuple[int, ...]:
    """The shape of a policy table: ``(levels, squares, origins, *others' squares, options)``.

    ``levels`` is ``max_sixes + 1`` (2 without a cap); ``origins`` is the
    board size under ``on_cap="forfeit"`` with a cap, else 1; ``others`` is
    the number of other tokens whose square the choice depends on (a race
    policy), each ``0..N`` (``N``: finished, under ``last_one_standing``),
    in seat order without the mover's own.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> decision_shape(Board(10), Rules(choose_move=2)), decision_shape(Board(10), Rules(choose_die=(4, 6)), others=1)
    ((3, 10, 1, 6), (3, 10, 1, 11, 2))
    """
    if not rules.choice:
        raise PolicyError(
            'these rules give the mover no choice: a policy has nothing to decide (docs/rules.md, "Choices")'
        )
    n = board.size
    forfeit = rules.on_cap == "forfeit" and rules.max_sixes is not None
    return ((rules.max_sixes or 1) + 1, n, n if forfeit else 1, *([n + 1] * int(others)), len(rules.options))


@dataclass(frozen=True, eq=False)
class PolicyTable:
    """A policy resolved for one board and rule set: a preference order of the options per decision state.

    Attributes
    ----------
    policy : Policy
        The policy it resolves (a ``"table"`` policy holds this table itself).
    board : Board
    rules : Rules
    ranks : numpy.ndarray
        Of shape :func:`decision_shape`, read-only: ``ranks[state][k]`` is the
        place of option ``k`` in the order (0 first).
    """

    policy: Policy
    board: Board
    rules: Rules
    ranks: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """The table's shape (:func:`decision_shape`)."""
        return tuple(self.ranks.shape)

    @property
    def others(self) -> int:
        """How many other tokens' squares the choice depends on (0: a policy of one token)."""
        return self.ranks.ndim - 4

    def key(self, square: Any, sixes: Any, origin: Any, others: Any = ()) -> tuple[Any, ...]:
        """The index of the decision states ``(square, sixes, origin, others)`` into :attr:`ranks` (arrays welcome)."""
        levels, _, n_o = self.ranks.shape[:3]
        level = np.minimum(sixes, levels - 1)
        org = origin if n_o > 1 else np.zeros_like(np.asarray(square))
        if len(others) != self.others:
            raise PolicyError(f"this policy reads {self.others} other token(s)' squares; got {len(others)}")
        return (level, square, org, *others)

    def order(self, square: Any, sixes: Any, origin: Any, others: Any = ()) -> np.ndarray:
        """The ranks of the options at the decision states given (one row per state)."""
        return self.ranks[self.key(square, sixes, origin, others)]

    def die_index(self, square: Any, sixes: Any, origin: Any, others: Any = ()) -> Any:
        """Under ``choose_die``: the index of the die chosen (an array for arrays)."""
        if self.rules.choice != "die":
            raise PolicyError("die_index is for choose_die; under choose_move ask pick()")
        out = np.argmin(self.order(square, sixes, origin, others), axis=-1)
        return int(out) if out.ndim == 0 else out

    def pick(self, square: int, sixes: int, origin: int, rolled: Any, others: Any = ()) -> int:
        """Under ``choose_move``: the value moved, of the values ``rolled``.

        Raises
        ------
        PolicyError
            If a value rolled is not a value of the die, or nothing was rolled.
        """
        if self.rules.choice != "move":
            raise PolicyError("pick is for choose_move; under choose_die ask die_index()")
        values = self.rules.die.values
        rolled = tuple(rolled)
        if not rolled or any(v not in values for v in rolled):
            raise PolicyError(f"rolled {show_value(rolled)} holds a value the die {self.rules.die!r} cannot show")
        ranks = self.order(square, sixes, origin, others)
        return min(rolled, key=lambda v: (int(ranks[values.index(v)]), v))


@dataclass(frozen=True, eq=False)
class Policy:
    """A policy for a rule set with a choice: build one with a factory, not directly.

    Parameters
    ----------
    kind : {"fixed", "greedy", "random", "table"}
        ``fixed``: always the same die (:meth:`fixed`); ``greedy``: the die
        or value that takes the token furthest, jumps applied (:meth:`greedy`);
        ``random``: a random order per decision state, fixed by a seed
        (:meth:`random`); ``table``: a solved table
        (:func:`~snlmarkov.optimal_policy`, :meth:`from_table`).
    die : Die
        The die of a ``fixed`` policy.
    seed : int
        The seed of a ``random`` policy's orders.
    name : str
        What to call it in reports ("optimal", "greedy", ...).
    objective : str
        What a solved table optimises (``"turns"``, ``"within 20"``, ``"win"``), or ``""``.

    Examples
    --------
    >>> Policy.greedy().kind, Policy.fixed(4).die
    ('greedy', Die(4))
    """

    kind: str
    die: Die = field(default_factory=Die)
    seed: int = 0
    name: str = ""
    objective: str = ""
    _table: tuple[Any, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.kind not in POLICY_KINDS:
            raise PolicyError(f"kind must be one of {', '.join(map(repr, POLICY_KINDS))}; got {show_value(self.kind)}")
        if not isinstance(self.seed, (int, np.integer)) or isinstance(self.seed, bool) or not 0 <= self.seed < 2**63:
            raise PolicyError(f"seed must be an integer 0..2**63-1; got {show_value(self.seed)}")
        if self.kind == "table" and len(self._table) != 5:
            raise PolicyError("a table policy is made by optimal_policy or Policy.from_table")
        for name in ("name", "objective"):
            if not isinstance(getattr(self, name), str) or len(getattr(self, name)) > 200:
                raise PolicyError(f"{name} must be a string of at most 200 characters")
        if not self.name:
            object.__setattr__(self, "name", self.kind if self.kind != "table" else "solved")

    # ------------------------------------------------------------ factories
    @classmethod
    def fixed(cls, die: Any) -> Policy:
        """Always the same die (a :class:`Die`, a whole number of faces or a text form), under ``choose_die``."""
        try:
            return cls("fixed", die=Die.coerce(die), name=f"always {Die.coerce(die).spec}")
        except RuleError as exc:
            raise PolicyError(f"Policy.fixed: {exc}") from None

    @classmethod
    def greedy(cls) -> Policy:
        """The die (or the value) whose roll takes the token furthest, jumps applied (the finish is furthest).

        Under ``choose_die`` the die whose roll ends furthest on average;
        under ``choose_move`` the value rolled that ends furthest. Ties go to
        the first die, or the smaller value.
        """
        return cls("greedy")

    @classmethod
    def random(cls, rng: Any = None) -> Policy:
        """A random order of the options in every decision state, drawn once from ``rng`` (a seed or a Generator)."""
        seed = int(rng_arg(rng).integers(0, 2**63 - 1))
        return cls("random", seed=seed)

    @classmethod
    def from_table(
        cls,
        board: Board,
        rules: Rules,
        ranks: Any,
        *,
        name: str = "solved",
        objective: str = "",
        values: Any = (),
        stages: tuple[Policy, ...] = (),
    ) -> Policy:
        """A policy from a table of ranks (:func:`decision_shape`; each state's ranks an order 0..k-1).

        ``values`` (one per square ``0..N``) and ``stages`` (one policy per
        turns left) are what a solver knows of it: :attr:`values`, :attr:`stages`.
        """
        if not isinstance(board, Board) or not isinstance(rules, Rules):
            raise PolicyError("from_table takes a Board and a Rules")
        arr = np.array(ranks, dtype=np.int16, copy=True)
        n_opt = len(rules.options)
        want = decision_shape(board, rules, others=max(0, arr.ndim - 4))
        if arr.shape != want:
            raise PolicyError(f"a policy table for this board and these rules has shape {want}; got {arr.shape}")
        if arr.size and not _orders(arr, n_opt):
            raise PolicyError(f"each decision state's ranks must be an order of 0..{n_opt - 1}")
        arr.setflags(write=False)
        vals = np.array(values, dtype=float)
        if vals.size and vals.shape != (board.size + 1,):
            raise PolicyError(f"values must hold one figure per square 0..{board.size}; got shape {vals.shape}")
        vals.setflags(write=False)
        if not all(isinstance(p, Policy) for p in stages):
            raise PolicyError("stages must be policies")
        return cls("table", name=name, objective=objective, _table=(board, rules, arr, vals, tuple(stages)))

    # -------------------------------------------------------------- resolve
    def resolve(self, board: Board, rules: Rules, *, furthest: Callable[[], np.ndarray] | None = None) -> PolicyTable:
        """This policy as a table for ``board`` under ``rules``.

        ``furthest`` is how far each option takes the token from each decision
        state, an array of :func:`decision_shape`; a ``greedy`` policy needs
        it, and each path computes it with its own statement of a roll (the
        exact models with theirs, the engine and the simulator with the play
        kernel).

        Raises
        ------
        PolicyError
            If the policy does not fit (another board or rule set, a die the
            rules do not offer, no choice to make).
        """
        shape = decision_shape(board, rules)
        if self.kind == "table":
            t_board, t_rules, ranks = self._table[:3]
            if t_board != board or t_rules != rules:
                raise PolicyError(
                    f"this policy was solved for {'another board' if t_board != board else 'other rules'}; "
                    "solve one for this game with snlmarkov.optimal_policy"
                )
            return PolicyTable(self, board, rules, ranks)
        n_opt = shape[-1]
        if self.kind == "fixed":
            if rules.choice != "die" or self.die not in rules.choose_die:
                raise PolicyError(f"Policy.fixed({self.die.spec}): the rules offer no such die to choose")
            k = rules.choose_die.index(self.die)
            row = np.roll(np.arange(n_opt), k)  # die k first
            ranks = np.broadcast_to(row.astype(np.int16), shape)
        elif self.kind == "random":
            check_memory(2.0 * float(np.prod(shape)) * 3, "a random policy's table")
            keys = np.random.default_rng(self.seed).random(shape)
            ranks = np.argsort(np.argsort(keys, axis=-1, kind="stable"), axis=-1).astype(np.int16)
        else:  # greedy
            if furthest is None:
                raise PolicyError("a greedy policy is resolved by the code that rolls it (pass furthest=)")
            far = np.asarray(furthest(), dtype=float)
            if far.shape != shape:
                raise PolicyError(f"furthest() gave shape {far.shape}; want {shape}")
            order = np.argsort(-far, axis=-1, kind="stable")  # ties: the first option (die, or smaller value)
            ranks = np.argsort(order, axis=-1, kind="stable").astype(np.int16)
        ranks = np.array(ranks, dtype=np.int16)
        ranks.setflags(write=False)
        return PolicyTable(self, board, rules, ranks)

    @property
    def table(self) -> PolicyTable:
        """The table of a ``"table"`` policy (a :class:`PolicyError` for the other kinds)."""
        if self.kind != "table":
            raise PolicyError(f"a {self.kind} policy has no table until resolved: policy.resolve(board, rules)")
        board, rules, ranks = self._table[:3]
        return PolicyTable(self, board, rules, ranks)

    @property
    def values(self) -> np.ndarray:
        """What the solver found from every square ``0..N`` (expected turns, or the chance of finishing in time).

        Raises
        ------
        PolicyError
            For a policy no solver made (ask ``analyze(board, rules, policy=p)``).
        """
        if self.kind != "table" or not self._table[3].size:
            raise PolicyError(
                f"a {self.name} policy carries no values: analyze(board, rules, policy=p) gives its figures"
            )
        return self._table[3]

    @property
    def value(self) -> float:
        """:attr:`values` from square 0."""
        return float(self.values[0])

    @property
    def stages(self) -> tuple[Policy, ...]:
        """Under a finite horizon, the policy for each number of turns left (``stages[t - 1]``: ``t`` left); else ``()``."""
        return self._table[4] if self.kind == "table" else ()

    # ------------------------------------------------------------ save/load
    def to_dict(self) -> dict[str, Any]:
        """The policy as JSON-ready data (round-trips through :meth:`from_dict`)."""
        out: dict[str, Any] = {"format": FORMAT, "kind": self.kind, "name": self.name, "objective": self.objective}
        if self.kind == "fixed":
            out["die"] = self.die.spec
        elif self.kind == "random":
            out["seed"] = int(self.seed)
        elif self.kind == "table":
            board, rules, ranks = self._table[:3]
            if self._table[3].size:
                out["values"] = [float(x) if np.isfinite(x) else None for x in self._table[3]]
            out["board"] = board.to_dict()
            out["rules"] = rules.to_dict()
            out["shape"] = list(ranks.shape)
            out["ranks"] = _encode(ranks)
            if self._table[4]:  # a finite horizon's policy per turns left
                out["stages"] = [
                    {"name": p.name, "objective": p.objective, "ranks": _encode(p._table[2])} for p in self._table[4]
                ]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        """A policy from :meth:`to_dict` data, checked as hostile input (a :class:`PolicyError` says what is wrong)."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise PolicyError(f"not a saved policy: the format field must be {FORMAT!r}")
        kind = data.get("kind")
        extra = {"name": data.get("name", ""), "objective": data.get("objective", "")}
        try:
            if kind == "fixed":
                return cls("fixed", die=Die.coerce(data.get("die")), **extra)
            if kind == "random":
                return cls("random", seed=data.get("seed"), **extra)  # type: ignore[arg-type]  # checked on construction
            if kind == "greedy":
                return cls("greedy", **extra)
            if kind != "table":
                raise PolicyError(f"kind must be one of {', '.join(map(repr, POLICY_KINDS))}; got {show_value(kind)}")
            return _table_from_dict(data, extra)
        except PolicyError:
            raise
        except SnlError as exc:
            raise PolicyError(f"not a valid policy: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise PolicyError(f"not a valid policy: {exc}") from None

    def save(self, path: str | Path) -> Path:
        """Write the policy as JSON to ``path`` (returned)."""
        p = Path(path)
        p.write_text(json.dumps(self.to_dict()), encoding="utf-8")
        return p

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Read a policy saved by :meth:`save` (a ``.json`` file, checked as hostile input)."""
        shown, data = _read_data_file(path, what="policy file", error=PolicyError)
        try:
            return cls.from_dict(data)
        except PolicyError as exc:
            raise PolicyError(f"{shown}: {exc}") from None


def _orders(arr: np.ndarray, n_opt: int) -> bool:
    """Whether every row (last axis) of ``arr`` is an order of ``0..n_opt-1``.

    For up to 62 options one bit per option: a row is an order exactly when its
    entries lie in range and their bits sum to the full mask (no sort, one pass).

    Examples
    --------
    >>> _orders(np.array([[1, 0, 2], [2, 1, 0]]), 3), _orders(np.array([[1, 1, 2]]), 3)
    (True, False)
    """
    if arr.min() < 0 or arr.max() >= n_opt:
        return False
    if n_opt <= 62:
        bits = np.left_shift(np.int64(1), arr.astype(np.int64)).sum(axis=-1)
        return bool(np.all(bits == (1 << n_opt) - 1))
    return bool(np.array_equal(np.sort(arr, axis=-1), np.broadcast_to(np.arange(n_opt), arr.shape)))


def _table_from_dict(data: Mapping[str, Any], extra: dict[str, Any]) -> Policy:
    """The ``table`` policy of :meth:`Policy.from_dict` (errors as it raises them)."""
    board = Board.from_dict(data.get("board"), source="the policy's board")  # type: ignore[arg-type]  # it checks
    rules_data = data.get("rules")
    if not isinstance(rules_data, Mapping):
        raise PolicyError("a table policy needs its rules")
    rules = Rules(**rules_data)
    shape = data.get("shape")
    want = decision_shape(board, rules, others=max(0, len(shape) - 4) if isinstance(shape, list) else 0)
    if shape != list(want):
        raise PolicyError(f"shape must be {list(want)} for this board and these rules; got {show_value(shape)}")
    ranks = _decode(data.get("ranks", ""), want)
    vals = data.get("values", [])
    if not isinstance(vals, list) or (vals and len(vals) != board.size + 1):
        raise PolicyError(f"values must be a list of {board.size + 1} numbers")
    values = np.array([np.inf if x is None else float(x) for x in vals], dtype=float)
    raw_stages = data.get("stages", [])
    if not isinstance(raw_stages, list) or not all(isinstance(x, Mapping) for x in raw_stages):
        raise PolicyError("stages must be a list of {name, objective, ranks} tables")
    stages = tuple(
        Policy.from_table(
            board, rules, _decode(x.get("ranks", ""), want), name=x.get("name", ""), objective=x.get("objective", "")
        )
        for x in raw_stages
    )
    return Policy.from_table(board, rules, ranks, values=values, stages=stages, **extra)


def _encode(ranks: np.ndarray) -> str:
    """A table of ranks as base64 text (one byte per entry)."""
    return base64.b64encode(np.ascontiguousarray(ranks, dtype=np.uint8).tobytes()).decode("ascii")


def _decode(text: Any, shape: tuple[int, ...]) -> np.ndarray:
    """The ranks of :func:`_encode`, checked against ``shape``."""
    raw = base64.b64decode(str(text), validate=True)
    if len(raw) != int(np.prod(shape)):
        raise PolicyError(f"ranks hold {len(raw)} entries; the shape {list(shape)} needs {int(np.prod(shape))}")
    return np.frombuffer(raw, dtype=np.uint8).reshape(shape)
