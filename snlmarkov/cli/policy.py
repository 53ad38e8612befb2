"""``snlmarkov policy``: the best play under a rule set with a choice, drawn as a board, and what it gains.

``--choose-die 4,6`` lets the mover pick the die before each roll;
``--choose-move 2`` rolls two dice and moves by one of them (a rule file
with ``choose_die`` or ``choose_move`` works too). The policy is solved
exactly (:func:`snlmarkov.optimal_policy`) and printed as the board with
the choice at the start of a turn on each square (no six yet), then what
choosing well gains over simpler play (:func:`snlmarkov.policy_gain`).

Examples
--------
>>> from snlmarkov.cli import main
>>> main(["policy", "--choose-die", "4,6", "--board", "milton_bradley", "--rules", "plain"])  # doctest: +ELLIPSIS
policy: optimal (fewest expected turns), milton_bradley board (100 squares), rules plain, choose the die: d4, d6
...
expected turns from square 0:
  optimal    ...
0
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputFileError, PolicyError
from ..limits import clean_text
from .common import (
    DIE_HELP,
    PLAYERS_HELP,
    add_board_rules_arguments,
    ascii_int_arg,
    board_from_args,
    count_arg,
    dice_arg,
    players_arg,
    rules_from_args,
    show,
)

if TYPE_CHECKING:
    from ..board import Board
    from ..policy import Policy
    from ..rules import Rules

__all__ = []

#: What ``--objective`` takes (``snlmarkov.optimal_policy``'s objectives).
OBJECTIVE_NAMES = ("turns", "within", "win")
#: The figure formats ``--plot`` writes, by the file's suffix.
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
#: Squares listed under "the choice matters most".
_TOP_SQUARES = 5


def register(parser: argparse.ArgumentParser) -> None:
    """Give the ``policy`` sub-command's parser its description and arguments."""
    parser.description = (
        "Solve the exact best policy under a rule set with a choice and print it as the board: the die "
        "to roll (or the value to move first) at the start of a turn on each square. Then the gain: "
        "expected turns playing it against every die alone (--choose-die) or against moving the first "
        "die rolled and the greedy move (--choose-move). Example: snlmarkov policy --choose-die 4,6"
    )
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--choose-die",
        nargs="+",
        type=dice_arg,
        metavar="DICE",
        help=(
            "the dice to choose from before each roll, 2 to 8: 4,6 or d4 2d6 (a die written with a colon "
            f"is one argument: faces:0,0,4,4,4,4). Each die: {DIE_HELP}"
        ),
    )
    choice.add_argument(
        "--choose-move",
        type=ascii_int_arg,
        metavar="K",
        help="roll K of the die (2 to 8) and move by the one value chosen",
    )
    add_board_rules_arguments(parser)
    parser.add_argument(
        "--objective",
        default="turns",
        choices=OBJECTIVE_NAMES,
        help="turns (fewest expected turns, default), within (the best chance of finishing within --turns) "
        "or win (a race of --players)",
    )
    parser.add_argument("--turns", type=count_arg, metavar="N", help="the horizon of --objective within")
    parser.add_argument(
        "--players",
        type=players_arg,
        metavar="N",
        help=f"seats in the race of --objective win, {PLAYERS_HELP} (default 2 there, else 1)",
    )
    parser.add_argument("--json", action="store_true", help="print the policy and the gain as JSON")
    parser.add_argument("--out", metavar="FILE.json", help="save the policy (Policy.load reads it back)")
    parser.add_argument("--plot", metavar="FILE", help=f"draw the policy on the board ({', '.join(PLOT_SUFFIXES)})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``snlmarkov policy``; return the exit status."""
    board, rules = board_from_args(args), _choice_rules(args)
    players = _check_objective(args)
    outputs = [_check_output(args.out, (".json",), "--out"), _check_output(args.plot, PLOT_SUFFIXES, "--plot")]
    from ..races.policy import optimal_policy

    solved = optimal_policy(board, rules, objective=args.objective, turns=args.turns, players=players)
    policies: tuple[Policy, ...] = tuple(solved) if isinstance(solved, tuple) else (solved,)
    report = _report(board, rules, policies, args, players)
    if args.json:
        import json

        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        print(_text(board, rules, report))
    for path, write in zip(outputs, (_save_policies, _save_plots)):
        if path is not None:
            for where in write(path, board, rules, policies, args):
                if not args.json:
                    print(f"wrote {show(where)}")
    return 0


# ---------------------------------------------------------------- arguments
def _choice_rules(args: argparse.Namespace) -> Rules:
    """The rules of ``--rules``/``--set``/``--die`` with the choice of ``--choose-die`` or ``--choose-move``."""
    rules = rules_from_args(args)
    if args.choose_die is not None and args.die is not None:
        raise PolicyError("--die and --choose-die: the dice to choose from are the ones --choose-die lists; drop --die")
    if args.choose_die is not None:
        dice = tuple(d for group in args.choose_die for d in group)
        rules = rules.replace(choose_die=dice, choose_move=None)
    elif args.choose_move is not None:
        rules = rules.replace(choose_move=args.choose_move, choose_die=(), die=rules.die)
    if not rules.choice:
        raise PolicyError(
            "the rules give the mover no choice: give --choose-die 4,6 (the dice to choose from) or "
            '--choose-move 2 (dice rolled, one moved), or a rule file with choose_die or choose_move (docs/rules.md, "Choices")'
        )
    return rules


def _check_objective(args: argparse.Namespace) -> int:
    """The number of players, once ``--objective``, ``--turns`` and ``--players`` are known to fit together."""
    from ..analysis.policy import MAX_WITHIN_TURNS

    if args.objective == "within" and args.turns is None:
        raise PolicyError("--objective within needs --turns N: the chance of finishing within N turns")
    if args.turns is not None and args.turns > MAX_WITHIN_TURNS:
        raise PolicyError(f"--turns must be 1..{MAX_WITHIN_TURNS:,} (the horizon); got {args.turns:,}")
    if args.objective != "within" and args.turns is not None:
        raise PolicyError(f"--turns is the horizon of --objective within; --objective {args.objective} takes none")
    if args.objective == "win":
        players = 2 if args.players is None else args.players
        if players < 2:
            raise PolicyError("--objective win is a race: --players must be 2 or more")
        return int(players)
    if args.players not in (None, 1):
        raise PolicyError(
            f"--objective {args.objective} is one token's; a race of --players {args.players} needs --objective win"
        )
    return 1


def _check_output(text: str | None, suffixes: tuple[str, ...], option: str) -> Path | None:
    """The file ``option`` names, refused before any work if it cannot be written (suffix, folder, kind)."""
    if text is None:
        return None
    shown = clean_text(text)
    path = Path(text)
    if not text.strip() or path.suffix.lower() not in suffixes:
        raise InputFileError(f"{option} {shown!r}: the file must end in {' or '.join(suffixes)}")
    folder = path.parent
    if not folder.is_dir():  # checked first: the probe below would say less
        raise InputFileError(f"{option} {shown}: the folder {clean_text(str(folder))} does not exist")
    if path.is_dir() or (path.exists() and not path.is_file()):
        raise InputFileError(f"{option} {shown}: not a file that can be written")
    existed = path.exists()
    try:  # a probe: the file opened for writing (nothing written), removed again if it is new
        with open(path, "ab"):
            pass
        if not existed:
            path.unlink()
    except OSError as exc:
        raise InputFileError(f"{option} {shown}: cannot write there ({exc.strerror or exc})") from None
    return path


# ---------------------------------------------------------------- figures
def _report(
    board: Board, rules: Rules, policies: tuple[Policy, ...], args: argparse.Namespace, players: int
) -> dict[str, Any]:
    """Everything printed, as JSON-ready data (infinite figures as null)."""
    from ..analysis.policy import policy_gain, turn_start_orders
    from ..analysis.single import analyze
    from ..errors import UnwinnableBoardError
    from ..plots.policy import option_labels

    labels: list[Any] = list(option_labels(rules)) if rules.choice == "die" else list(rules.options)
    one = len(policies) == 1
    gain = policy_gain(board, rules, policy=policies[0]) if args.objective == "turns" else None
    seats = []
    for seat, policy in enumerate(policies):
        orders = turn_start_orders(policy, board, rules)
        try:
            begins = (analyze(board, rules, policy=policy).occupancy[: board.size] > 0).tolist() if one else None
        except UnwinnableBoardError:
            begins = None
        seats.append(
            {
                "seat": seat + 1,
                "policy": policy.name,
                "objective": policy.objective,
                "value": _value(policy),
                "choices": [labels[k] for k in orders.argmin(axis=1)],
                "orders": [[labels[k] for k in sorted(range(len(labels)), key=lambda k: row[k])] for row in orders],
                "turn_begins": begins,
            }
        )
    return {
        "board": board.name or "custom",
        "squares": board.size,
        "rules": rules.to_dict(),
        "base_rules": args.rules,
        "choice": rules.choice,
        "options": labels,
        "objective": args.objective,
        "turns": args.turns,
        "players": players,
        "seats": seats,
        "gain": None if gain is None else _gain_data(gain),
        "within": _within(board, rules, policies[0], args.turns) if args.objective == "within" else None,
    }


def _value(policy: Policy) -> float | None:
    """What the solver found from square 0 (expected turns, or a chance), or None for a policy without values."""
    try:
        return _num(policy.value)
    except PolicyError:
        return None


def _gain_data(gain: Any) -> dict[str, Any]:
    summary = gain.summary()
    return {
        "optimal": _num(summary["optimal"]),
        "against": {k: _num(v) for k, v in summary["against"].items()},
        "gain": {k: _num(v) for k, v in summary["gain"].items()},
        "spread": [_num(x) for x in gain.spread],
    }


def _within(board: Board, rules: Rules, policy: Policy, turns: int) -> dict[str, Any]:
    """The chance of finishing within ``turns`` turns: the optimal policy's against simpler play."""
    from ..analysis.single import analyze
    from ..errors import UnwinnableBoardError
    from ..policy import Policy

    ways: dict[str, tuple[Rules, Policy | None]] = {}
    if rules.choice == "die":
        for k, d in enumerate(rules.choose_die):
            ways[f"always {d.spec}"] = (rules.option_rules(k), None)
    else:
        ways["first die"] = (rules.option_rules(), None)
        ways["greedy"] = (rules, Policy.greedy())
    against: dict[str, float | None] = {}
    for name, (r, p) in ways.items():
        try:
            against[name] = float(analyze(board, r, policy=p).length.cdf(turns))
        except UnwinnableBoardError:
            against[name] = None
    return {"turns": turns, "optimal": _num(policy.value), "against": against}


def _num(x: Any) -> float | None:
    value = float(x)
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------- text
def _text(board: Board, rules: Rules, report: dict[str, Any]) -> str:
    """The text output: a heading, the board of choices of each seat, the gain."""
    from ..game.textboard import MAX_DRAWN_SQUARES, grid
    from ..plots.policy import option_labels

    short, full = option_labels(rules, short=True), option_labels(rules)
    to_short = dict(zip(full, short)) if rules.choice == "die" else {v: str(v) for v in rules.options}
    what = {"turns": "fewest expected turns", "within": f"the best chance of finishing within {report['turns']} turns"}
    objective = what.get(report["objective"], f"the best chance of winning a race of {report['players']}")
    options = ", ".join(full)
    kind = "the die" if rules.choice == "die" else f"the move ({rules.choose_move} of {rules.die.spec} rolled)"
    first = report["seats"][0]
    lines = [
        f"policy: {show(first['policy'])} ({objective}), {show(report['board'])} board ({board.size} squares), "
        f"rules {show(report['base_rules'])}, choose {kind}: {options}",
    ]
    keys = [f"{s} = {f}" for s, f in zip(short, full) if s != f]
    if keys:
        lines.append("dice: " + ", ".join(keys))
    on_square = "the die rolled" if rules.choice == "die" else "the value moved first, when rolled"
    lines.append(
        f"on each square: {on_square} at the start of a turn there (no six yet); blank: no turn begins there"
        + ("; the first turn's choices (they change with the turns left)" if report["objective"] == "within" else "")
    )
    jumps = {start: f"{start} {'L' if end > start else 'S'}{end}" for start, end in board.jumps.items()}
    for seat in report["seats"]:
        if len(report["seats"]) > 1:
            lines += ["", f"seat {seat['seat']} (the other tokens off the board):"]
        begins = seat["turn_begins"] or [True] * board.size
        if board.size <= MAX_DRAWN_SQUARES:
            top = {sq: jumps.get(sq, str(sq)) for sq in range(1, board.size + 1)}
            bottom = {sq: to_short[seat["choices"][sq]] for sq in range(1, board.size) if begins[sq]}
            lines += grid(board, top, bottom)
            if board.jumps:
                lines.append("Ln: ladder up to n, Sn: snake down to n")
        else:
            lines.append(f"(a board of {board.size:,} squares is not drawn; --json lists every square's choice)")
        lines.append(f"off the board (square 0): {seat['choices'][0]}")
    names = {f"always {f}": f"always {s}" for s, f in zip(short, full)}  # the dice's short names, as on the board
    lines += _gain_lines(report, names)
    return "\n".join(lines)


def _gain_lines(report: dict[str, Any], names: dict[str, str]) -> list[str]:
    gain, within = report["gain"], report["within"]

    def figure(x: float | None, digits: int) -> str:
        return "never surely finishes" if x is None else f"{x:.{digits}f}"

    if gain is not None:
        rows = [("optimal", figure(gain["optimal"], 4), "")]
        for name, value in gain["against"].items():
            extra = gain["gain"][name]
            rows.append((names.get(name, name), figure(value, 4), "" if extra is None else f"({extra:+.4f} turns)"))
        width = max(len(r[0]) for r in rows)
        out = ["", "expected turns from square 0:"]
        values = max(len(r[1]) for r in rows)
        out += [f"  {n:<{width}}  {v:>{values}}  {x}".rstrip() for n, v, x in rows]
        spread = gain["spread"][:-1]
        begins = report["seats"][0]["turn_begins"] or [True] * len(spread)
        ranked = sorted((s for s in range(1, len(spread)) if begins[s] and spread[s]), key=lambda s: -spread[s])
        if ranked:
            top = ", ".join(f"{s} ({spread[s]:.2f} turns)" for s in ranked[:_TOP_SQUARES])
            out.append(f"the choice matters most at the start of a turn on: {top} (worst choice minus best)")
        return out
    if within is not None:
        chances = [("optimal", figure(within["optimal"], 6))]
        chances += [
            (names.get(n, n), "not computed: never surely finishes" if v is None else f"{v:.6f}")
            for n, v in within["against"].items()
        ]
        width = max(len(r[0]) for r in chances)
        head = ["", f"chance of finishing within {within['turns']} turns:"]
        return head + [f"  {n:<{width}}  {v}" for n, v in chances]
    return ["", "gain: policy_gain rates one token's expected turns; a race's is not shown"]


# ---------------------------------------------------------------- files
def _seat_paths(path: Path, count: int) -> list[Path]:
    """``path`` for one policy; ``name-seat1.json``, ``name-seat2.json``, ... for a race's."""
    if count == 1:
        return [path]
    return [path.with_name(f"{path.stem}-seat{i + 1}{path.suffix}") for i in range(count)]


def _save_policies(path: Path, board: Board, rules: Rules, policies: tuple[Policy, ...], args: Any) -> list[Path]:
    out = []
    for where, policy in zip(_seat_paths(path, len(policies)), policies):
        try:
            out.append(policy.save(where))
        except OSError as exc:
            raise InputFileError(f"--out {clean_text(str(where))}: cannot write ({exc.strerror or exc})") from None
    return out


def _save_plots(path: Path, board: Board, rules: Rules, policies: tuple[Policy, ...], args: Any) -> list[Path]:
    from matplotlib.figure import Figure

    from ..plots.policy import plot_policy

    out = []
    for where, policy in zip(_seat_paths(path, len(policies)), policies):
        fig = Figure(figsize=(7.0, 7.8), layout="constrained")
        title = None
        if args.objective == "within":
            title = f"Best choice on the first turn, to finish within {args.turns} turns ({show(board.name or 'custom')} board)"
        plot_policy(policy, board, rules, fig.subplots(), title=title)
        try:
            fig.savefig(where, dpi=120, bbox_inches="tight")
        except OSError as exc:
            raise InputFileError(f"--plot {clean_text(str(where))}: cannot write ({exc.strerror or exc})") from None
        out.append(where)
    return out
