"""Verify a played game against the exact turn-level model.

:func:`verify_game` replays every turn of a :class:`~snlmarkov.GameRecord`
through the matrix code's own roll mechanics (not the engine's) and checks
that the logged rolls produce exactly the logged moves, that every observed
turn ``start -> end`` has positive probability in the turn-level matrix, that
bumps happen exactly when the rules say, and that seats play in order. It
reports the log-probability of each turn and of the whole game.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..chain.mechanics import one_roll
from ..chain.model import turn_model
from ..errors import SnlError

__all__ = ["verify_game", "VerificationReport", "TurnCheck"]


@dataclass(frozen=True)
class TurnCheck:
    """The verdict on one turn of a game.

    Attributes
    ----------
    turn, seat, start, end : int
        As in the record (``end`` before any bump).
    rolls : tuple of int
        The turn's rolls.
    probability : float
        ``P(turn from start ends on end)`` in the turn-level matrix.
    log_probability : float
        Its natural logarithm (``-inf`` when impossible).
    rolls_log_probability : float
        Log-probability of exactly these rolls (``-inf`` when impossible).
    skipped : bool
        A skipped turn (no roll; probability 1, not a step of the chain).
    problem : str
        What is wrong with the turn; empty when it holds.
    """

    turn: int
    seat: int
    start: int
    end: int
    rolls: tuple
    probability: float
    log_probability: float
    rolls_log_probability: float
    skipped: bool
    problem: str

    @property
    def ok(self) -> bool:
        """True when the turn holds."""
        return not self.problem


@dataclass(frozen=True)
class VerificationReport:
    """The verdict on a whole game.

    Attributes
    ----------
    passed : bool
        Every turn holds.
    turns : tuple of TurnCheck
    log_probability : float
        Sum of the turns' log-probabilities in the turn-level chain.
    rolls_log_probability : float
        Log-probability of the exact sequence of rolls.
    failures : tuple of str
        One line per failing turn, naming it.
    """

    passed: bool
    turns: tuple
    log_probability: float
    rolls_log_probability: float
    failures: tuple

    def __str__(self) -> str:
        n = sum(not t.skipped for t in self.turns)
        head = "PASSED" if self.passed else "FAILED"
        lines = [f"{head}: {n} turns checked against the exact turn matrix, log-probability {self.log_probability:.4f}"]
        lines += [f"  {f}" for f in self.failures]
        return "\n".join(lines)


def _replay_turn(board, rules, start: int, rolls: tuple) -> tuple[int, float, str]:
    """Follow ``rolls`` from ``start``: (end square, log-probability of the rolls, problem)."""
    if not rolls:
        return start, -math.inf, "no rolls in a turn that was not skipped"
    cur, sixes, logp = start, 0, 0.0
    for i, k in enumerate(rolls):
        out = one_roll(board, rules, np.array([cur]), np.array([sixes]), np.array([start]))
        hit = np.flatnonzero(out.face == k)
        if hit.size != 1:
            why = "after the cap" if rules.max_sixes is not None and sixes >= rules.max_sixes else "here"
            return cur, -math.inf, f"roll {i + 1} ({k}) cannot be dealt {why} under these rules"
        j = int(hit[0])
        logp += math.log(out.prob[j])
        last = i == len(rolls) - 1
        if out.cont[j]:
            if last:
                return int(out.square[j]), -math.inf, "the turn stopped while another roll was due"
            cur, sixes = int(out.square[j]), sixes + 1
        else:
            if not last:
                return int(out.square[j]), -math.inf, f"rolls go on after roll {i + 1} ended the turn"
            return int(out.square[j]), logp, ""
    raise AssertionError("unreachable")  # pragma: no cover


def verify_game(record) -> VerificationReport:
    """Check every turn of a played game against the exact model.

    Parameters
    ----------
    record : GameRecord
        A game played with :class:`~snlmarkov.Game` (or read from JSON).

    Returns
    -------
    VerificationReport
        ``passed`` is True when every turn holds; ``failures`` names the
        turns that do not.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> game = snl.Game(players=["Ann", "Bob"], rng=7)
    >>> record = game.play()
    >>> report = snl.verify_game(record)
    >>> report.passed, len(report.turns) == len(record.turns())
    (True, True)
    >>> report.log_probability < 0
    True
    """
    from ..game.record import GameRecord  # the engine's data class; no probability code

    if not isinstance(record, GameRecord):
        raise SnlError(f"verify_game takes a GameRecord, got {type(record).__name__}")
    board, rules = record.board, record.rules
    n = board.size
    matrix = turn_model(board, rules).matrix
    k = len(record.seats)
    positions = [0] * k
    finished: list[int] = []
    checks, failures = [], []
    expected_seat = 0
    game_over = False
    for t in record.turns():
        problems = []
        if game_over:
            problems.append("a turn after the game was over")
        if t.seat != expected_seat:
            problems.append(f"seat {t.seat} played where seat {expected_seat} was due")
        if t.start != positions[t.seat]:
            problems.append(f"starts on {t.start} but the token was on {positions[t.seat]}")
        if t.skipped:
            prob, logp, roll_logp, end = 1.0, 0.0, 0.0, t.start
        else:
            end, roll_logp, problem = _replay_turn(board, rules, t.start, t.rolls)
            if problem:
                problems.append(problem)
            elif end != t.end_before_bump:
                problems.append(f"the rolls {t.rolls} from {t.start} end on {end}, the log says {t.end_before_bump}")
            prob = float(matrix[t.start, t.end_before_bump])
            logp = math.log(prob) if prob > 0 else -math.inf
            if prob <= 0:
                problems.append(f"a turn from {t.start} to {t.end_before_bump} has probability 0")
            e = t.end_before_bump
            others = [positions[s] for s in range(k) if s != t.seat]
            due = rules.bump and 1 <= e <= n - 1 and e in others
            if due != t.bumped:
                problems.append("a bump was due but not made" if due else "a bump was made but not due")
            elif t.bumped and t.end != rules.bump_to:
                problems.append(f"bumped to {t.end}, not to bump_to={rules.bump_to}")
        positions[t.seat] = t.end
        if t.end == n and t.seat not in finished:
            finished.append(t.seat)
            if record.mode == "classic" or len(finished) == k:
                game_over = True
        # who plays next: the following seat that has not finished
        nxt = (t.seat + 1) % k
        for _ in range(k):
            if nxt not in finished:
                break
            nxt = (nxt + 1) % k
        expected_seat = nxt
        problem = "; ".join(problems)
        if problem:
            failures.append(f"turn {t.turn} (seat {t.seat}, {t.start} -> {t.end}): {problem}")
        checks.append(
            TurnCheck(
                turn=t.turn,
                seat=t.seat,
                start=t.start,
                end=t.end_before_bump,
                rolls=t.rolls,
                probability=prob,
                log_probability=logp,
                rolls_log_probability=roll_logp,
                skipped=t.skipped,
                problem=problem,
            )
        )
    if tuple(finished) != record.finishing_order:
        failures.append(f"finishing order {record.finishing_order} differs from the turns' {tuple(finished)}")
    return VerificationReport(
        passed=not failures,
        turns=tuple(checks),
        log_probability=float(sum(c.log_probability for c in checks)),
        rolls_log_probability=float(sum(c.rolls_log_probability for c in checks)),
        failures=tuple(failures),
    )
