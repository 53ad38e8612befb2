"""Race figures from any state of a game (not only from the start).

A state (:class:`~snlmarkov.state.GameState`) gives every token's square,
the seats already finished and the seat to move. :class:`StateRace`
answers from it, the one path that :func:`~snlmarkov.races.core.race` with
``state=`` and :class:`~snlmarkov.races.odds.Odds` share:

- a state that is over gives its outcome with certainty
  (:func:`finished_figures`);
- without ``bump``, or with one token left, the racing tokens move
  independently, each from its own square: their turns-to-finish
  distributions (:func:`~snlmarkov.races.passage.first_passage`, built once)
  are combined in the order of play
  (:func:`~snlmarkov.races.independent.independent_from`);
- with ``bump`` the joint chain is run forwards from the state
  (:func:`~snlmarkov.races.bump.joint_race`); :class:`Odds` answers these
  states from its value table instead.

The figures count what is *left*: turns still to be played, and rounds with
the round in progress counted as the first (a state where seat 2 of 3 is to
move is in the middle of a round; that round counts as one, and the next
round begins when play passes back to an earlier seat, as
:attr:`Game.round <snlmarkov.game.engine.Game.round>` counts them). Seats
already finished keep their places; finishing orders that do not begin with
them have probability 0.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..analysis.distribution import LengthDistribution
from ..board import Board
from ..chain.model import TransitionModel, turn_model
from ..errors import GameError
from ..rules import Rules
from ..state import GameState
from .bump import joint_race
from .independent import independent_from
from .joint import JointMover, reachable, resting_squares
from .order import play_order
from .passage import FirstPassage, first_passage
from .result import _METHOD_INDEPENDENT, _METHOD_JOINT, _METHOD_OVER, _METHOD_POLICIES, RaceResult
from .seatchains import SeatChains

__all__ = []


class StateRace:
    """Exact race figures from any state of a game on one board, rules, number of seats and mode.

    The arguments are checked by the caller (:func:`~snlmarkov.races.core.race`,
    :class:`~snlmarkov.races.odds.Odds`). The turns-to-finish table is built
    on first use.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> later = StateRace(snl.Board.builtin(), snl.Rules(), 2, "classic", tail=1e-13)
    >>> later(snl.GameState((90, 30), to_move=1)).win_probability.round(4).tolist()
    [0.6764, 0.3236]
    """

    def __init__(
        self,
        board: Board,
        rules: Rules,
        players: int,
        mode: str,
        *,
        tail: float,
        progress: bool = False,
        chains: SeatChains | None = None,
    ) -> None:
        self.board, self.rules, self.players, self.mode, self.tail = board, rules, players, mode, float(tail)
        self._progress = progress
        self._chains = chains
        self._origins = (0, rules.bump_to) if rules.bump else (0,)
        self._model: TransitionModel | None = None
        if chains is None:
            self._model = turn_model(board, rules)
            self._models: tuple[TransitionModel, ...] = (self._model,) * players
            self._reachable = reachable(self._model, self._origins)
        else:  # every seat plays its policy (a rule set with a choice)
            self._models = chains.alone
            self._reachable = chains.reachable()
        self._first_passage: dict[int, FirstPassage] = {}
        self._seat_movers: tuple[JointMover, ...] = ()

    @property
    def policies(self) -> tuple[Any, ...]:
        """The seats' policies (under a choice rule), else ``()``."""
        return () if self._chains is None else tuple(t.policy for t in self._chains.tables)

    def _passage_of(self, seat: int) -> FirstPassage:
        """The turns-to-finish distributions of ``seat``'s token from every square (built on first use)."""
        model = self._models[seat]
        key = next(i for i, other in enumerate(self._models) if other is model)  # seats that move alike share it
        if key not in self._first_passage:
            self._first_passage[key] = first_passage(model, self.tail, self._origins)
        return self._first_passage[key]

    def _movers(self) -> tuple[JointMover, ...]:
        """One joint-chain mover per seat (every seat the same one without policies)."""
        if not self._seat_movers:
            if self._chains is not None:
                self._seat_movers = self._chains.movers()
            else:
                self._seat_movers = (JointMover.of(self._models[0], self.rules),) * self.players
        return self._seat_movers

    def joint_states(self, m: int) -> int:
        """States of the joint chain of ``m`` racing tokens: ``m * n**m``, ``n`` the resting squares."""
        if self._chains is None:
            return m * resting_squares(self._models[0], self.rules.bump_to).size ** m
        seen = self._reachable.copy()
        seen[self.board.size] = False
        return m * int(seen.sum()) ** m

    def check(self, state: GameState) -> GameState:
        """Validate ``state`` for these figures (seats, board, rules, mode); return it."""
        if not isinstance(state, GameState):
            raise GameError(f"state must be a GameState; got {type(state).__name__}")
        if state.players != self.players:
            raise GameError(f"state has {state.players} seats' squares for odds of {self.players} players")
        state.validate(self.board, self.rules, self.mode)
        for seat in state.racing:
            if not self._reachable[state.positions[seat]]:
                raise GameError(f"GameState.positions[{seat}] = {state.positions[seat]}: no token rests on that square")
        return state

    def __call__(self, state: GameState) -> RaceResult:
        """The race figures from ``state`` (a :class:`RaceResult`)."""
        return self._result(self.check(state))

    def _independent(self, state: GameState) -> bool:
        """Whether the racing tokens of ``state`` (not over) move independently."""
        joint = self.rules.bump if self._chains is None else self._chains.joint
        return not joint or len(state.racing) == 1

    def _places(self, state: GameState) -> tuple[np.ndarray, np.ndarray]:
        """Win and place probabilities only (no orders, no distributions)."""
        if not state.is_over(self.board, self.mode) and self._independent(state):
            out = independent_from(*self._rows(state), state, self.mode, places_only=True)
            return out["win_probability"], out["place_probability"]
        r = self._result(state)
        return r.win_probability, r.place_probability

    def _rows(self, state: GameState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The racing seats' turns to finish, in playing order: pmfs, tails and survivals (:meth:`FirstPassage.rows`)."""
        order, _ = play_order(state)
        tables = [self._passage_of(s) for s in order]
        squares = [state.positions[s] for s in order]
        if all(t is tables[0] for t in tables):
            return tables[0].rows(squares)
        parts = [t.rows([q]) for t, q in zip(tables, squares)]  # seats that play different policies
        width = max(f.shape[1] for f, _, _ in parts)
        f, s = np.zeros((len(parts), width)), np.empty((len(parts), width))
        for j, (row, tail, surv) in enumerate(parts):
            f[j, : row.shape[1]] = row[0]
            s[j, : row.shape[1]] = surv[0]
            s[j, row.shape[1] :] = tail[0]
        return f, np.concatenate([tail for _, tail, _ in parts]), s

    def _result(self, state: GameState) -> RaceResult:
        common: dict[str, Any] = {
            "board": self.board,
            "rules": self.rules,
            "players": self.players,
            "mode": self.mode,
            "policies": self.policies,
        }
        if state.is_over(self.board, self.mode):
            return RaceResult(**common, method=_METHOD_OVER, exact=True, games=0, **finished_figures(state, self.mode))
        if self._independent(state):
            figures = independent_from(*self._rows(state), state, self.mode)
            return RaceResult(**common, method=_METHOD_INDEPENDENT, exact=True, games=0, **figures)
        method = _METHOD_JOINT if self._chains is None else _METHOD_POLICIES
        return RaceResult(**common, method=method, exact=True, games=0, **self._joint(state))

    def _joint(self, state: GameState) -> dict[str, Any]:
        """The figures of a state with ``bump`` and several seats racing: the joint chain run forwards."""
        return joint_race(
            None,
            self.rules,
            self.players,
            self.mode,
            tail=self.tail,
            state=state,
            progress=self._progress,
            movers=self._movers(),
        )


def finished_figures(state: GameState, mode: str) -> dict[str, Any]:
    """Figures of a state that is over (nothing left to play).

    Examples
    --------
    >>> out = finished_figures(GameState((10, 4), places=(0,)), "classic")
    >>> out["win_probability"].tolist(), out["rounds_distribution"].mean()
    ([1.0, 0.0], 0.0)
    """
    k = state.players
    places = state.places
    if mode == "classic":
        (winner,) = places if places else (state.positions.index(max(state.positions)),)
        win = np.zeros(k)
        win[winner] = 1.0
        place = win[:, None].copy()
        orders: dict[tuple[int, ...], float] = {(i,): float(win[i]) for i in range(k)}
    else:
        place = np.zeros((k, k))
        place[list(places), np.arange(k)] = 1.0
        win = place[:, 0].copy()
        orders = {o: float(o == tuple(places)) for o in itertools.permutations(range(k))}
    nothing = LengthDistribution(np.array([1.0]), tail_mass=0.0, unit="rounds")
    return {
        "win_probability": win,
        "place_probability": place,
        "order_probability": orders,
        "rounds_distribution": nothing,
        "turns_distribution": LengthDistribution(np.array([1.0]), tail_mass=0.0, unit="turns"),
    }
