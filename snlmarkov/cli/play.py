"""``snlmarkov play``: pass-and-play Snakes & Ladders in the terminal.

One to six seats share the keyboard: each human seat presses Enter to roll
(``q`` then Enter quits); the board is drawn before every turn and the turn's
events are told in words; the game ends with the finishing order.

Automatic seats (``--ai``) roll by themselves. ``--ai K`` (a single whole
number) makes the last ``K`` seats automatic; ``--ai NAME [NAME ...]`` makes
the named seats automatic. When standard input is not a terminal, every seat
plays automatically, so the command can run in scripts and tests.

In a terminal the screen is redrawn in place every turn, in the layout that
fits the terminal's size at that moment (:mod:`snlmarkov.cli.screen`: the
ruled grid, one line per row, or a one-line track of the squares ahead);
tokens are ``[label]`` (``[A]``, ``[P1]``: distinct for every seat), in
colour unless ``NO_COLOR`` is set or ``--no-color`` is given.

Under a rule set with a choice (``--set choose_die=d4,d6`` or ``--set choose_move=2``,
``docs/rules.md``, "Choices") a human seat is asked for its
choice: the die before each roll (by its number in the list shown or its
name, ``d6``), or after the dice are thrown the value it moves by.
Automatic seats play the strength ``--ai-strength`` (``optimal`` by
default: the table's solved policy, the race of two solved as a game, else
one token's fewest expected turns; ``greedy``; ``random``). After each
human choice the coach's line says the best choice and what the choice cost
(points of win chance in a race of two, else expected turns), read from the
same solution (:func:`snlmarkov.web.coach.solve_table`, which the browser
game's coach reads too); ``--no-coach`` hides it. There are no live odds
under a choice rule.

The odds beside each name are exact (:class:`~snlmarkov.races.odds.Odds`).
With ``bump`` they need the joint chain of every token, solved once before
the first turn; the game shows none, and says why, for more than
:data:`~snlmarkov.races.core.EXACT_JOINT_PLAYERS` players or when that
solve would take more than :data:`LIVE_BUMP_WORK` state-turns.

Examples
--------
>>> from snlmarkov.cli import main
>>> main(["play", "--names", "Ann", "Bob", "--board", "milton_bradley", "--seed", "1", "--no-board"])
Snakes & Ladders on milton_bradley, rules: app, mode: classic
Seats: [A] Ann (red, automatic), [B] Bob (blue, automatic)
...
Bob (blue) wins after 14 turns.
Finishing order: 1. Bob (blue)
0
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import GameError
from ..limits import MAX_PLAYERS
from ..vocab import MODES
from .common import (
    PLAYERS_HELP,
    add_board_rules_arguments,
    board_from_args,
    count_arg,
    players_arg,
    rules_from_args,
    seed_arg,
    show,
)

if TYPE_CHECKING:
    from ..game.seats import Seat

__all__ = []

#: Seats the terminal game takes (the engine itself accepts more): the one --players rule.
MAX_SEATS = MAX_PLAYERS

#: With ``bump``, live odds are solved when the joint chain's states times the
#: expected turns of one token stay within this (a rough measure of the
#: solve's work: 3 players on the jungle board are about 9e7).
LIVE_BUMP_WORK = 100_000_000

#: Why a game under a choice rule shows no odds.
_NO_CHOICE_ODDS = "No live odds under a choice rule (they would assume every seat's policy)."

_LAYOUT_HELP = (
    "In a terminal the screen is redrawn every turn to fit the terminal's size at that moment: "
    "the board as a ruled grid when the terminal is tall enough, one line per row of the board "
    "(80x24 for a 10x10 board), or else a one-line track of the squares ahead of the seat to move "
    "(40x12 and smaller, and boards too large to draw whole). A legend reads the jump marks "
    "(^38: ladder up to 38, v27: snake down to 27); tokens are [label], distinct for every seat "
    "([A] for Ann, [P1] for Player 1), coloured unless NO_COLOR is set, --no-color is given or "
    "the output is not a terminal. The layouts and the odds: docs/terminal.md."
)


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``play`` sub-command's parser its description and arguments."""
    parser.description = (
        "Pass-and-play Snakes & Ladders for 1 to 6 seats. Press Enter to roll (q to quit). "
        "When standard input is not a terminal every seat plays automatically."
    )
    parser.epilog = _LAYOUT_HELP
    parser.add_argument(
        "--players",
        type=players_arg,
        metavar="N",
        help=f"number of seats, {PLAYERS_HELP} (default: 2, or one per --names)",
    )
    parser.add_argument("--names", nargs="+", metavar="NAME", help="the players' names, in playing order")
    parser.add_argument(
        "--colours", nargs="+", metavar="COLOUR", help="token colours in seat order (default: red, blue, green, ...)"
    )
    parser.add_argument(
        "--ai",
        nargs="+",
        metavar="K|NAME",
        help="automatic seats: a single whole number K makes the last K seats automatic; "
        "otherwise the named seats are automatic",
    )
    parser.add_argument(
        "--ai-strength",
        default="optimal",
        choices=("random", "greedy", "optimal"),
        help="under a choice rule, how the automatic seats choose: optimal (the solved policy: the race of two "
        "as a game, else the fewest expected turns; the default), greedy (the furthest move) or random",
    )
    parser.add_argument(
        "--no-coach",
        action="store_true",
        help="under a choice rule, hide the coach's line (the best choice and what yours cost: points of win "
        "chance in a race of two, else expected turns)",
    )
    parser.add_argument(
        "--mode", default="classic", choices=MODES, help="classic (the first home wins) or last_one_standing"
    )
    add_board_rules_arguments(parser)
    parser.add_argument("--seed", type=seed_arg, metavar="INT", help="seed for the die (default: unpredictable)")
    parser.add_argument(
        "--max-turns",
        type=count_arg,
        default=10_000,
        metavar="N",
        help="stop with an error after N turns (default 10000)",
    )
    parser.add_argument("--no-board", action="store_true", help="tell the turns in words without drawing the board")
    parser.add_argument(
        "--no-odds",
        action="store_true",
        help="hide each seat's exact chance of winning (with the bump rule: the odds are solved only for "
        "up to 3 players on boards small enough to solve in a few seconds; otherwise the screen says why not)",
    )
    parser.add_argument(
        "--no-color",
        "--no-colour",
        dest="no_color",
        action="store_true",
        help="draw the redrawn screen without colour (as the NO_COLOR environment variable does)",
    )
    parser.add_argument(
        "--lines",
        action="store_true",
        help="print the game line by line even in a terminal (by default a terminal is redrawn in place)",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.4,
        metavar="SECONDS",
        help="pause before each automatic turn on the redrawn screen (default 0.4)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play one game as ``args`` say; return the exit status (0 done, 1 quit)."""
    from ..game.engine import Game
    from ..game.seats import Seat
    from .screen import LineDisplay, ScreenDisplay, use_colour

    board, rules = board_from_args(args), rules_from_args(args)
    seats = _seats(args.players, args.names, args.colours)
    if args.max_turns < 1:
        raise GameError(f"--max-turns must be at least 1; got {args.max_turns}")
    if args.delay < 0 or args.delay > 10:
        raise GameError(f"--delay must be between 0 and 10 seconds; got {args.delay}")
    automatic = _automatic(args.ai, seats)  # checked even when unused
    if not sys.stdin.isatty():
        automatic = set(range(len(seats)))
    coached = bool(rules.choice) and not args.no_coach and len(automatic) < len(seats)
    solved = _solved(
        board, rules, len(seats), args.mode, coached or (bool(automatic) and args.ai_strength == "optimal")
    )
    if rules.choice and automatic:
        strength = solved.policy if args.ai_strength == "optimal" else args.ai_strength
        seats = [Seat(s.name, s.colour, policy=strength) if i in automatic else s for i, s in enumerate(seats)]
    game = Game(board, rules, seats, args.mode, rng=args.seed)
    coach = solved if coached else None
    seats = [Seat(show(s.name), show(s.colour)) for s in seats]  # what is printed: control characters escaped
    screen = sys.stdout.isatty() and not args.lines
    display: Any = (
        ScreenDisplay(board, seats, odds=not args.no_odds, colour=use_colour() and not args.no_color)
        if screen
        else LineDisplay(board, seats, draw_board=not args.no_board, odds=not args.no_odds)
    )

    where = show(board.name) or f"a {board.size}-square board"
    title = f"Snakes & Ladders on {where}, rules: {rules.preset_name}, mode: {args.mode}"
    seats_line = "Seats: " + ", ".join(
        f"[{label}] {s.name} ({s.colour}{', automatic' if i in automatic else ''})"
        for i, (s, label) in enumerate(zip(seats, display.labels))
    )
    odds: Any
    why_not: tuple[str, ...]
    if rules.choice and not args.no_odds:
        odds, why_not = None, (_NO_CHOICE_ODDS, "No odds: a choice rule")
    else:
        odds, why_not = (None, ()) if args.no_odds else _odds(board, rules, len(seats), args.mode, screen=screen)
    display.header([title, seats_line], note=why_not)
    chances = _chances(odds, game, args.mode)
    while not game.is_over:
        if game.total_turns >= args.max_turns:
            raise GameError(f"the game is not over after {args.max_turns} turns (--max-turns)")
        seat, round_now = game.current_seat, game.round
        name, square = seats[seat].name, game.positions[seat]
        display.before_turn(game, chances)
        asks_first = seat in automatic or rules.choice != "die"  # under choose_die the choice is the prompt
        if asks_first and seat not in automatic and not _ready(display.prompt(seat)):
            print(f"{name} quits: game abandoned after {_turns(game.total_turns)}.")
            return 1
        if screen and seat in automatic and args.delay:
            time.sleep(args.delay)
        events = game.take_turn()
        while game.waiting:
            more = _choose(game, name, coach)
            if more is None:
                print(f"{name} quits: game abandoned after {_turns(game.total_turns)}.")
                return 1
            events += more
        chances = _chances(odds, game, args.mode)
        said = [f"{event.describe(seats[event.seat].name)}." for event in events]
        display.after_turn(f"Turn {game.total_turns}, round {round_now}: {name} on {square}", said, game, chances)
    winner = seats[game.winner]
    closing = _story(odds, game.record(), args.mode) if odds is not None else []
    closing.append(f"{winner.name} ({winner.colour}) wins after {_turns(game.turns_taken[game.winner])}.")
    order = (f"{place}. {seats[i].name} ({seats[i].colour})" for place, i in enumerate(game.finishing_order, 1))
    closing.append("Finishing order: " + ", ".join(order))
    display.finish(game, closing)
    return 0


def _solved(board: Any, rules: Any, players: int, mode: str, needed: bool) -> Any:
    """The table's optimal policy and option values (:func:`~snlmarkov.web.coach.solve_table`), when needed."""
    if not rules.choice or not needed:
        return None
    from ..web.coach import solve_table

    return solve_table(board, rules, players, mode)


def _choose(game: Any, name: str, coach: Any) -> list[Any] | None:
    """Ask the human mover for the choice the game waits for; the events it brings (None: quit)."""
    d = game.decision
    if d.kind == "die":
        menu = "  ".join(f"{i + 1}) {die.spec}" for i, die in enumerate(d.options))
        prompt = f"{name} on {d.square}: which die? {menu} (q to quit): "
    else:
        thrown = " and ".join(map(str, d.options))
        prompt = f"{name} on {d.square} rolled {thrown}: which value to move by? (q to quit): "
    while True:
        try:
            answer = input(prompt).strip()
        except EOFError:
            print()
            return None
        if answer.lower() in ("q", "quit", "exit"):
            return None
        choice = _parse_choice(answer, d)
        if choice is not None:
            break
        print(f"Not one of the choices: {show(answer)[:40]!s}")
    events = game.choose(choice) if d.kind == "die" else game.pick(choice)
    if coach is not None:
        verdict = coach.judge(d.square, d.sixes, d.origin, choice, rolled=d.options, others=d.others)
        if verdict is not None:  # None: the race is decided, nothing at stake
            print(f"Coach: {verdict.text(name)}")  # the name is shown escaped already
    return list(events)


def _parse_choice(answer: str, d: Any) -> int | None:
    """The die's index (from its number in the menu, or its name) or the value picked; None if not a choice."""
    if d.kind == "die":
        names = [die.spec for die in d.options]
        if answer in names:
            return names.index(answer)
        if answer.isdigit() and 1 <= int(answer) <= len(names):
            return int(answer) - 1
        return None
    if answer.isdigit() and int(answer) in d.options:
        return int(answer)
    return None


def _odds(board: Any, rules: Any, players: int, mode: str, *, screen: bool) -> tuple[Any, tuple[str, ...]]:
    """Exact odds for the game, or None and why they are not shown (longest form first)."""
    from ..races.odds import Odds

    why_not, states = _bump_cost(board, rules, players)
    if why_not:
        return None, why_not
    if screen:
        solving = f" (bump rule: {states:,} joint states)" if states else ""
        print(f"Working out the exact odds{solving}...", flush=True)
    return Odds(board, rules, players=players, mode=mode), ()


def _bump_cost(board: Any, rules: Any, players: int) -> tuple[tuple[str, ...], int]:
    """Why live odds are not solved under ``bump`` (longest form first; none if they are), and the joint states."""
    from ..analysis.single import expected_turns
    from ..races.core import EXACT_JOINT_PLAYERS, joint_chain_states

    if not rules.bump or players < 2:
        return (), 0
    if players > EXACT_JOINT_PLAYERS:
        return (
            f"No live odds: with the bump rule exact odds are solved for up to {EXACT_JOINT_PLAYERS} players "
            f"(this game has {players}).",
            f"No odds: bump rule, over {EXACT_JOINT_PLAYERS} players",
        ), 0
    states = joint_chain_states(board, rules, players)
    turns = expected_turns(board, rules)
    if states * turns > LIVE_BUMP_WORK:
        return (
            f"No live odds: with the bump rule they need the joint chain of {states:,} states, over about "
            f"{turns:.0f} turns a token: too slow to solve for a live game "
            f"(the terminal game solves up to {LIVE_BUMP_WORK:,} state-turns).",
            "No odds: bump rule, too slow to solve",
        ), states
    return (), states


def _chances(odds: Any, game: Any, mode: str) -> Any:
    """Each seat's chance of the best place still open (the win in classic), or None without odds."""
    if odds is None:
        return None
    state = game.state
    places = odds.place_probability(state)
    if mode == "classic" or state.is_over(game.board, mode):
        return places[:, 0]
    return places[:, len(state.places)]


def _story(odds: Any, record: Any, mode: str) -> list[str]:
    """The game's story in a line or two: the turns that cost and gave the most (the final finish aside)."""
    swings = odds.swings(record, top=max(len(record.turns()), 1))
    if not swings:
        return []
    worse = (lambda s: s.change < 0) if mode == "classic" else (lambda s: s.change > 0)
    lines = []
    for pick in (next((s for s in swings if worse(s)), None), next((s for s in swings if not worse(s)), None)):
        if pick is not None and abs(pick.change) >= (0.01 if mode == "classic" else 0.05):
            lines.append(show(f"Story: {pick.story(mode)}."))  # the names come from the record, unescaped
    return lines


def _seats(players: int | None, names: Sequence[str] | None, colours: Sequence[str] | None) -> list[Seat]:
    """The seats from ``--players``, ``--names`` and ``--colours``."""
    from ..game.seats import Seat

    if names is not None and players is not None and players != len(names):
        raise GameError(f"--players {players} does not match the {len(names)} names given")
    count = len(names) if names is not None else 2 if players is None else players
    if not 1 <= count <= MAX_SEATS:
        raise GameError(f"the terminal game takes 1 to {MAX_SEATS} players; got {count}")
    if colours is not None and len(colours) > count:
        raise GameError(f"{len(colours)} colours given for {count} players")
    seats = []
    for i in range(count):
        seat = Seat.default(i, None if names is None else names[i])
        if colours is not None and i < len(colours):
            seat = Seat(seat.name, colours[i])
        seats.append(seat)
    return seats


def _automatic(ai: Sequence[str] | None, seats: Sequence[Seat]) -> set[int]:
    """Indices of the seats ``--ai`` makes automatic."""
    if not ai:
        return set()
    if len(ai) == 1 and ai[0].strip().isdigit():
        k = int(ai[0])
        if k > len(seats):
            raise GameError(f"--ai {k}: there are only {len(seats)} seats")
        return set(range(len(seats) - k, len(seats)))
    names = [s.name for s in seats]
    unknown = [a for a in ai if a not in names]
    if unknown:
        raise GameError(f"--ai: no seat named {unknown[0]!r} (seats: {', '.join(names)})")
    return {names.index(a) for a in ai}


def _ready(prompt: str) -> bool:
    """Wait for Enter; False if the player typed q or input ended."""
    try:
        answer = input(prompt)
    except EOFError:
        print()  # end the prompt's line
        return False
    return answer.strip().lower() not in ("q", "quit", "exit")


def _turns(count: int) -> str:
    return f"{count} turn{'' if count == 1 else 's'}"
