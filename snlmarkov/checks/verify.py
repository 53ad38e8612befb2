"""Verify a played game against the exact model's roll mechanics.

:func:`verify_game` replays the whole event log of a
:class:`~snlmarkov.GameRecord` through the matrix code's own roll mechanics
(:func:`snlmarkov.chain.mechanics.roll_story`, not the engine): from the
state the log has reached and the dice the log shows, it regenerates every
event each turn must hold (rolls, entries, moves, bounces, jumps, bonus
rolls, caps, forfeits, bumps, finishes, the end of the game) and compares
them field by field with the log, reporting the first event that differs by
turn and event index. It also checks that every turn ``start -> end`` has
positive probability in the turn-level matrix, and reports the
log-probability of each turn and of the whole game.

Under a rule set with a choice (``docs/rules.md``, "Choices") every roll
must follow a legal choice: under ``choose_die`` a ``choose_die`` event
naming a die the rules offer, the roll then checked with that die's rules
(``rules.option_rules(i)``); under ``choose_move`` a ``rolled_dice`` event
of exactly ``choose_move`` values, each a value the die (or, capped under
``redeal``, the die without its top) can deal there, then a
``choose_move`` of one of them, which is the roll checked. A choice need
not be the best one. The turn matrix of a choice rule depends on the policy
played, so there a turn's probability is that of its dice given the
choices made (every die thrown counted as a draw).

Two verdicts are kept apart. Whether the record follows the rules
(:attr:`VerificationReport.rules_verdict`: a whole game, ``"unfinished"`` when
its log stops before the game is over, or a broken rule), and, given the
server's key, whether the server signed it
(:attr:`VerificationReport.signature`). Rules alone cannot tell a forged
record from a played one when the forgery is itself a legal game (a turn
turned into a countdown skip, a game cut short at a turn boundary): the
signature can. A skipped turn is legal only in a record signed as played
online (only an online room's countdown skips a turn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..chain.mechanics import roll_story
from ..chain.model import turn_model
from ..errors import GameError
from ..game.events import (
    Bump,
    ChooseDie,
    ChooseMove,
    Event,
    Finish,
    GameOver,
    Roll,
    RolledDice,
    Skip,
    event_from_dict,
)
from ..state import GameState

__all__ = ["verify_game", "VerificationReport", "TurnCheck"]

#: The rules verdicts: a whole game that follows the rules, a record that follows them but stops
#: before the game is over, a record that breaks them.
FOLLOWS_RULES, UNFINISHED, BREAKS_RULES = "follows the rules", "unfinished", "breaks the rules"
#: The signature verdicts.
SIGNED = "signed by this server"
NOT_SIGNED = "not signed"
SIGNATURE_MISMATCH = "signature does not match"
SIGNATURE_UNCHECKED = "signature not checked (no key given)"

_SKIP_UNSIGNED = "a skipped turn, legal only in a record this server signed as played online"


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
        ``P(turn from start ends on end)`` in the turn-level matrix (under
        a choice rule: the probability of the turn's dice, given its choices).
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
    finished : bool
        The log ends with the game over (a whole game, not a part of one).
    signature : str
        :data:`SIGNED`, :data:`NOT_SIGNED`, :data:`SIGNATURE_MISMATCH`, or
        :data:`SIGNATURE_UNCHECKED` when no key was given.

    Notes
    -----
    ``passed`` says that every turn follows the rules, also in a record that
    stops before the end: :attr:`rules_verdict` (or :attr:`whole_game`) says
    whether it is a whole game.
    """

    passed: bool
    turns: tuple
    log_probability: float
    rolls_log_probability: float
    failures: tuple
    finished: bool = True
    signature: str = SIGNATURE_UNCHECKED

    @property
    def follows_rules(self) -> bool:
        """Every turn follows the rules (the same as ``passed``)."""
        return self.passed

    @property
    def whole_game(self) -> bool:
        """A whole game that follows the rules."""
        return self.passed and self.finished

    @property
    def rules_verdict(self) -> str:
        """:data:`FOLLOWS_RULES` (a whole game), :data:`UNFINISHED` or :data:`BREAKS_RULES`."""
        if not self.passed:
            return BREAKS_RULES
        return FOLLOWS_RULES if self.finished else UNFINISHED

    @property
    def signed(self) -> bool:
        """Signed by the server whose key was given."""
        return self.signature == SIGNED

    def __str__(self) -> str:
        n = sum(not t.skipped for t in self.turns)
        head = {FOLLOWS_RULES: "PASSED", UNFINISHED: "UNFINISHED", BREAKS_RULES: "FAILED"}[self.rules_verdict]
        what = "" if self.finished or not self.passed else " (the log stops before the game is over)"
        lines = [
            f"{head}: {n} turns checked against the exact turn matrix, log-probability "
            f"{self.log_probability:.4f}{what}; {self.signature}"
        ]
        lines += [f"  {f}" for f in self.failures]
        return "\n".join(lines)


def _expected_rolls(  # noqa: C901
    board, rules, dest, seat: int, turn: int, start: int, values: tuple, choices: tuple = ()
) -> tuple[list, int, float, str]:
    """The events the dice ``values`` must produce from ``start``: (events, end, log-probability, problem).

    Under a choice rule ``choices`` holds the turn's choice events in order
    (one ``choose_die``, or one ``rolled_dice`` and one ``choose_move``, per
    roll): each is checked for legality and logged back in its place.
    """
    if not values:
        return [], start, -math.inf, "no rolls in a turn that was not skipped"
    cur, sixes, logp = start, 0, 0.0
    events: list = []
    per_roll = {"die": 1, "move": 2}.get(rules.choice, 0)
    for i, k in enumerate(values):
        capped = rules.max_sixes is not None and sixes >= rules.max_sixes
        why = "after the cap" if capped else "here"
        roll_rules = rules.option_rules() if rules.choice == "move" else rules
        chosen = choices[per_roll * i : per_roll * (i + 1)]
        if per_roll and len(chosen) < per_roll:
            return events, cur, -math.inf, f"roll {i + 1} ({k}) follows no choice (the rules ask for one)"
        if rules.choice == "die":
            pick = chosen[0]
            if not isinstance(pick, ChooseDie) or pick.die >= len(rules.choose_die):
                return events, cur, -math.inf, f"roll {i + 1} ({k}) follows no legal choice of die"
            roll_rules = rules.option_rules(pick.die)
        story = roll_story(board, roll_rules, cur, sixes, start, k, dest=dest)
        if story.prob <= 0:
            return events, cur, -math.inf, f"roll {i + 1} ({k}) cannot be dealt {why} under these rules"
        steps = [event_from_dict({**step, "seat": seat, "turn": turn}) for step in story.steps]
        if rules.choice == "move":
            thrown, pick = chosen
            if not isinstance(thrown, RolledDice) or not isinstance(pick, ChooseMove):
                return events, cur, -math.inf, f"roll {i + 1} ({k}) does not follow a throw of the dice and a pick"
            if len(thrown.values) != rules.choose_move:
                return (
                    events,
                    cur,
                    -math.inf,
                    (f"roll {i + 1}: {len(thrown.values)} dice thrown, where the rules throw {rules.choose_move}"),
                )
            if pick.value not in thrown.values:
                return events, cur, -math.inf, f"roll {i + 1}: the value picked, {pick.value}, was not thrown"
            draws = [roll_story(board, roll_rules, cur, sixes, start, v, dest=dest).prob for v in thrown.values]
            bad = [v for v, p in zip(thrown.values, draws) if p <= 0]
            if bad:
                return events, cur, -math.inf, f"roll {i + 1}: a die thrown ({bad[0]}) cannot be dealt {why}"
            logp += sum(math.log(p) for p in draws) - math.log(story.prob)
            choice_events: list[Event] = [RolledDice(seat=seat, turn=turn, values=thrown.values, capped=capped), pick]
        else:
            choice_events = list(chosen)
        at = 1 if capped else 0  # a choice comes after the cap is announced, before the roll
        events += steps[:at] + choice_events + steps[at:]
        logp += math.log(story.prob)
        cur = story.square
        if not story.cont:
            if i < len(values) - 1:
                return events, cur, -math.inf, f"rolls go on after roll {i + 1} ended the turn"
            if len(choices) > per_roll * len(values):
                return events, cur, -math.inf, f"the turn logs more choices than its {len(values)} roll(s) use"
            return events, cur, logp, ""
        sixes += 1
    return events, cur, -math.inf, "the turn stopped while another roll was due"


def _first_difference(expected: list, logged: tuple) -> str:
    """Where two event lists first differ, in words; empty when they are equal."""
    for i, (want, got) in enumerate(zip(expected, logged)):
        if want != got:
            return f"event {i}: the rules give {want!r}, the log has {got!r}"
    if len(expected) > len(logged):
        return f"event {len(logged)}: the rules give {expected[len(logged)]!r}, the log has no more events"
    if len(logged) > len(expected):
        return f"event {len(expected)}: the log has {logged[len(expected)]!r} where the rules give no more events"
    return ""


def _turn_groups(log: tuple) -> list[tuple]:
    """The log cut into turns (the record guarantees turns 0, 1, 2, ... in order)."""
    groups: list[list] = []
    for event in log:
        if not groups or groups[-1][0].turn != event.turn:
            groups.append([])
        groups[-1].append(event)
    return [tuple(g) for g in groups]


def _signature(record, key) -> str:
    if key is None:
        return NOT_SIGNED if not record.signature else SIGNATURE_UNCHECKED
    if not record.signature:
        return NOT_SIGNED
    return SIGNED if record.signature_matches(key) else SIGNATURE_MISMATCH


def verify_game(record, *, key: bytes | None = None) -> VerificationReport:  # noqa: C901, PLR0915
    """Check a played game, event by event, against the exact model's roll mechanics.

    Every turn is regenerated from the state the game had reached (every
    token's square, who has finished, whose turn it is; a record of a game
    started from a state begins at ``record.start``) and the dice the log
    shows, through the same roll mechanics the matrices are built from; the
    regenerated events must equal the logged ones in every field. A turn
    logged as skipped must be a lone :class:`~snlmarkov.game.events.Skip` of
    the seat due, in a record signed (with ``key``) as played online.

    Parameters
    ----------
    record : GameRecord
        A game played with :class:`~snlmarkov.Game` (or read from JSON).
    key : bytes, optional
        The server's signing key (see :mod:`snlmarkov.web.store`): the
        report then says whether this server signed the record.

    Returns
    -------
    VerificationReport
        ``passed`` is True when every turn holds; ``failures`` names each
        failing turn and its first differing event; ``rules_verdict`` says
        whether it is a whole game, and ``signature`` who signed it.

    Raises
    ------
    SnlError
        If ``record`` is not a GameRecord; GameError if its log is empty
        (there is nothing to verify).

    Notes
    -----
    Cost: one turn-level matrix of the board (see
    :func:`~snlmarkov.turn_model`) plus a few microseconds per roll.

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
    >>> report.rules_verdict, report.signature
    ('follows the rules', 'not signed')
    >>> key = bytes(range(32))
    >>> verify_game(record.signed(key), key=key).signature
    'signed by this server'
    >>> part = snl.Game(players=2, rng=7)
    >>> _ = part.take_turn()
    >>> verify_game(part.record()).rules_verdict
    'unfinished'
    """
    from ..game.record import GameRecord  # the engine's data class; no probability code

    if not isinstance(record, GameRecord):
        raise GameError(f"verify_game takes a GameRecord, got {type(record).__name__}")
    if not record.log:
        raise GameError("the record's log is empty: there is no game to verify")
    signature = _signature(record, key)
    skips_legal = record.online and signature == SIGNED
    board, rules = record.board, record.rules
    n = board.size
    dest = board.destination()
    matrix = None if rules.choice else turn_model(board, rules).matrix  # a choice rule's matrix depends on the policy
    k = len(record.seats)
    begin = record.start if record.start is not None else GameState.initial(k)
    positions = list(begin.positions)
    finished: list[int] = list(begin.places)
    checks, failures = [], []
    expected_seat = begin.to_move
    game_over = False
    summaries = record.turns()
    for group, t in zip(_turn_groups(record.log), summaries):
        problems = []
        seat = expected_seat
        if game_over:
            problems.append("a turn after the game was over")
        if t.seat != seat:
            problems.append(f"seat {t.seat} played where seat {seat} was due")
        start = positions[seat]
        values = tuple(e.value for e in group if isinstance(e, Roll))
        prob, logp, roll_logp = 1.0, 0.0, 0.0
        if isinstance(group[0], Skip):
            expected: list = [Skip(seat=seat, turn=t.turn)]
            end = start
            if not skips_legal:
                problems.append(_SKIP_UNSIGNED)
        else:
            choices = tuple(e for e in group if isinstance(e, (ChooseDie, RolledDice, ChooseMove)))
            expected, end, roll_logp, problem = _expected_rolls(
                board, rules, dest, seat, t.turn, start, values, choices
            )
            if problem:
                problems.append(problem)
            elif matrix is None:
                prob, logp = math.exp(roll_logp), roll_logp
            else:
                prob = float(matrix[start, end])
                logp = math.log(prob) if prob > 0 else -math.inf
                if prob <= 0:
                    problems.append(f"a turn from {start} to {end} has probability 0 in the turn matrix")
            others = [positions[s] for s in range(k) if s != seat]
            if rules.bump and 0 < end < n and end in others:
                expected.append(Bump(seat=seat, turn=t.turn, from_square=end, to_square=rules.bump_to))
                end = rules.bump_to
            if end == n and seat not in finished:
                finished.append(seat)
                expected.append(Finish(seat=seat, turn=t.turn, place=len(finished)))
                if record.mode == "classic" or len(finished) == k:
                    game_over = True
                    expected.append(GameOver(seat=seat, turn=t.turn, finishing_order=tuple(finished)))
        if all(p in ("a turn after the game was over", _SKIP_UNSIGNED) for p in problems):
            diff = _first_difference(expected, group)
            if diff:
                problems.append(diff)
        positions[seat] = end
        # who plays next: the following seat that has not finished
        nxt = (seat + 1) % k
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
    if tuple(positions) != record.positions:
        failures.append(f"positions {record.positions} differ from the replay's {tuple(positions)}")
    if tuple(finished) != record.finishing_order:
        failures.append(f"finishing order {record.finishing_order} differs from the replay's {tuple(finished)}")
    rolled = tuple(e.value for e in record.log if isinstance(e, Roll))
    if rolled != record.dice:
        failures.append("the record's dice are not the rolls of its log")
    return VerificationReport(
        passed=not failures,
        turns=tuple(checks),
        log_probability=float(sum(c.log_probability for c in checks)),
        rolls_log_probability=float(sum(c.rolls_log_probability for c in checks)),
        failures=tuple(failures),
        finished=record.finished,
        signature=signature,
    )
