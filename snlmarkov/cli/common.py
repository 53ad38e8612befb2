"""Arguments shared by several sub-commands: the board, the rules, seeds, counts, players.

Every number on the command line is read by one of the ``argparse`` types
here (:func:`seed_arg`, :func:`count_arg`, :func:`players_arg`), so every
sub-command refuses the same things the same way: one line, exit status 2.

The die, stated once for every sub-command that takes rules: ``--die`` reads
any text form of :meth:`snlmarkov.Die.parse` (:data:`DIE_HELP` lists them),
through :func:`die_arg`; a die that cannot be read is one line, exit status 2.

The players rule, stated once for every sub-command: ``--players`` takes 1 to
:data:`snlmarkov.limits.MAX_PLAYERS` (6, as ``docs/rules.md`` says). The Python
API's :class:`~snlmarkov.Game` and ``simulate`` accept more seats.

Building the parsers must stay light (``snlmarkov --help`` imports neither
numpy, scipy nor matplotlib): this module and every ``register`` read only
plain-data modules (:mod:`snlmarkov.builtin_boards`, :mod:`snlmarkov.rules`,
``*/defaults.py``); the numerical code is imported inside each ``run``.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ..builtin_boards import BUILTIN_BOARDS
from ..errors import AddressError, BoardError, InputFileError, RuleError, SnlError
from ..limits import MAX_CHOICES, MAX_PLAYERS, clean_text, max_workers, parse_ascii_int, show_value
from ..vocab import NAMED_DICE, PRESETS

if TYPE_CHECKING:  # the numerical and configuration classes are imported where they are used: --help needs none
    from pathlib import Path

    from ..board import Board
    from ..dice import Die
    from ..rules import Rules

__all__ = []

#: The one ``--players`` rule, in the words every sub-command's help uses.
PLAYERS_HELP = f"1 to {MAX_PLAYERS} (docs/rules.md)"


#: What ``--rules`` takes, in the words every sub-command's help uses.
RULES_HELP = (
    f"rule preset ({', '.join(PRESETS)}; default: app) or a .toml/.json rule file "
    "of rule fields (finish, max_sixes, die, ...) over an optional preset"
)

#: The text forms ``--die`` reads, in the words every sub-command's help uses.
DIE_HELP = (
    "the die: 6 or d6 (fair, the default), d4, 2d6 (two dice summed), spinner:15, "
    "faces:2,2,2,2,6,6 (a repeated face weighs more; 0 does not move), weights:1=1,2=1,6=4, "
    "cowries:4 (shells mouth up; none up scores 8, cowries:4:0 scores it 0), "
    f"or a named die ({', '.join(NAMED_DICE)}); every rule's 'six' is the die's top value (docs/rules.md)"
)


def ascii_int_arg(text: str) -> int:
    """An integer in plain ASCII digits, with an optional sign (argparse type)."""
    try:
        return parse_ascii_int(text, "the value")
    except Exception:
        raise argparse.ArgumentTypeError(f"expected a whole number written with the digits 0-9, got {text!r}") from None


def seed_arg(text: str) -> int:
    """``--seed``: an integer >= 0 in plain digits (argparse type)."""
    value = ascii_int_arg(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed must be a whole number >= 0, got {value}")
    return value


def check_host(host: str) -> str:
    """``--host`` of ``snlmarkov serve``: an IP address or a name that resolves, checked before anything is printed.

    Raises
    ------
    AddressError
        For an empty or overlong value, control characters, or an address
        that neither parses nor resolves (``999.999.999.999``).
    """
    import ipaddress
    import socket

    text = str(host)
    shown = clean_text(text)
    if not text or len(text) > 253 or clean_text(text) != text or text.strip() != text:
        raise AddressError(f"--host {shown!r} is not an address: give an IP address or a host name")
    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    unusable = AddressError(
        f"--host {shown!r} is not an address of this machine: not an IPv4 or IPv6 address, "
        "nor a name that resolves to one"
    )
    if all(part.isdigit() for part in text.split(".")):  # dotted digits that are not an IPv4 address
        raise unusable
    try:
        socket.getaddrinfo(text, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise unusable from None
    return text


def at_least_arg(low: int, doc: str = "") -> Any:
    """An argparse type: an integer >= ``low`` in plain digits."""

    def parse(text: str) -> int:
        value = ascii_int_arg(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {value}")
        return value

    parse.__doc__ = doc or f"An integer >= {low} in plain digits (argparse type)."
    return parse


#: A square, a seat or a count that may be 0 (argparse type).
whole_arg = at_least_arg(0, "A square, a seat or a count that may be 0: an integer >= 0 in plain digits.")
#: ``--games``, ``--max-turns``: an integer >= 1 in plain digits (argparse type).
count_arg = at_least_arg(1, "``--games``, ``--max-turns``: an integer >= 1 in plain digits.")


def workers_arg(text: str) -> int:
    """``--workers``: 1 to :func:`~snlmarkov.limits.max_workers` processes, in plain digits (argparse type)."""
    value = ascii_int_arg(text)
    cap = max_workers()
    if not 1 <= value <= cap:
        raise argparse.ArgumentTypeError(
            f"workers must be 1..{cap} (four per core; SNLMARKOV_MAX_WORKERS raises it), got {show_value(value)}"
        )
    return value


def players_arg(text: str) -> int:
    """``--players``: 1 to MAX_PLAYERS (argparse type); the same rule for every sub-command."""
    value = ascii_int_arg(text)
    if not 1 <= value <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"players must be {PLAYERS_HELP}, got {value}")
    return value


def die_arg(text: str) -> Die:
    """``--die``: a text form of :meth:`snlmarkov.Die.parse` (argparse type).

    Examples
    --------
    >>> from snlmarkov import Die
    >>> die_arg("2d6") == Die.sum_of(2, 6), die_arg("spinner:15").top
    (True, 15)
    """
    from ..dice import Die

    try:
        return Die.parse(text)
    except RuleError as exc:
        raise argparse.ArgumentTypeError(clean_text(str(exc))) from None


def dice_arg(text: str) -> tuple[Die, ...]:
    """One ``--choose-die`` argument: dice separated by commas (``4,6``), or one die with a colon (``faces:0,4,4``).

    A text form with a colon (``faces:``, ``weights:``, ``spinner:``,
    ``cowries:``) holds commas of its own, so it is one die: give several
    such dice as separate arguments (``--choose-die d4 faces:0,0,4,4,4,4``).

    Examples
    --------
    >>> [d.spec for d in dice_arg("4,d6")], [d.spec for d in dice_arg("faces:1,5")]
    (['d4', 'd6'], ['weights:1=1,5=1'])
    """
    if "," in text.partition(":")[0] and ":" in text:
        raise argparse.ArgumentTypeError(
            f"{clean_text(text[:40])!r}: a die written with a colon is an argument of its own "
            "(--choose-die d4 faces:0,0,4,4,4,4)"
        )
    parts = [text] if ":" in text else text.split(",", MAX_CHOICES)
    if len(parts) > MAX_CHOICES:
        raise argparse.ArgumentTypeError(f"at most {MAX_CHOICES} dice to choose from (snlmarkov.limits.MAX_CHOICES)")
    return tuple(die_arg(part) for part in parts)


def show(text: Any) -> str:
    """A board or seat name made safe to print (control characters escaped)."""
    return clean_text(text)


def writable_folder(text: str, option: str = "--out") -> Path:
    """The folder ``text``, created if needed, checked to take a new file (before any work).

    Refuses an empty path (it would mean the current folder by accident),
    anything that is not a folder, and folders where no file can be made
    (``/proc``, ``/sys``, read-only mounts).
    """
    from pathlib import Path

    if not text or not text.strip():
        raise InputFileError(f"{option} must name a folder; got an empty path")
    path = Path(text)
    shown = clean_text(text)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".snlmarkov-write-test-{os.getpid()}"
        with open(probe, "wb") as fh:
            fh.write(b"ok")
        probe.unlink()
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise InputFileError(f"{option} {shown}: cannot write files there ({why})") from None
    return path


def add_board_rules_arguments(parser: argparse.ArgumentParser, *, rules: bool = True) -> None:
    """Add ``--board``, and unless ``rules=False`` ``--rules``, ``--set`` and ``--die``."""
    parser.add_argument(
        "--board",
        default="jungle",
        metavar="NAME|FILE",
        help=(
            f"built-in board ({', '.join(BUILTIN_BOARDS)}) or a .toml/.json board file, "
            "with chain = true to let jumps chain (default: jungle)"
        ),
    )
    if rules:
        parser.add_argument(
            "--rules",
            default="app",
            metavar="PRESET|FILE",
            help=RULES_HELP,
        )
        parser.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="FIELD=VALUE",
            help=(
                "change one rule, e.g. --set finish=bounce --set max_sixes=none --set on_cap=restart "
                "--set jump_after_bounce=false (repeatable)"
            ),
        )
        add_die_argument(parser)


def add_die_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--die`` (read by :func:`die_arg`, applied by :func:`rule_changes`)."""
    parser.add_argument("--die", type=die_arg, default=None, metavar="DIE", help=DIE_HELP + " (default: d6)")


def board_from_args(args: argparse.Namespace) -> Board:
    """The board named by ``--board``: a built-in name or a file path."""
    from ..board import Board

    spec = args.board
    if spec in Board.names():
        return Board.builtin(spec)
    if os.path.splitext(spec)[1].lower() in (".toml", ".json"):
        return Board.from_file(spec)
    if os.sep in spec or "." in spec or os.path.lexists(spec):
        raise BoardError(f"{clean_text(spec)}: a board file must end in .toml or .json")
    raise BoardError(
        f"unknown board {clean_text(spec)!r}; built-in boards: {', '.join(Board.names())} "
        "(or give a .toml or .json board file)"
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The rules named by ``--rules`` with every ``--set`` and ``--die`` applied."""
    rules = base_rules(args.rules)
    changes = rule_changes(args)
    return rules.replace(**changes) if changes else rules


def base_rules(text: str) -> Rules:
    """The rules ``--rules`` names: a preset, or a ``.toml``/``.json`` rule file (:func:`~snlmarkov.search.files.read_rules`)."""
    from ..rules import Rules

    if os.path.splitext(text)[1].lower() in (".toml", ".json"):
        from ..search.files import read_rules

        return read_rules(text)
    return Rules.preset(text)


def rule_changes(args: argparse.Namespace) -> dict[str, Any]:
    """The rule fields that ``--set`` and ``--die`` change, ready for :meth:`Rules.replace`.

    Raises
    ------
    RuleError
        When the die is given twice (``--die`` and ``--set die=`` or ``--set faces=``).
    """
    changes = dict(parse_setting(text) for text in getattr(args, "set", []))
    die = getattr(args, "die", None)
    if die is not None:
        if "die" in changes or "faces" in changes:
            raise RuleError("give the die once: --die, or --set die=/faces=, not both")
        changes["die"] = die
    return changes


def parse_setting(text: str) -> tuple[str, Any]:
    """Parse ``field=value`` into a rule field and a typed value.

    Examples
    --------
    >>> parse_setting("max_sixes=none"), parse_setting("bump=yes"), parse_setting("finish=bounce")
    (('max_sixes', None), ('bump', True), ('finish', 'bounce'))
    >>> parse_setting("on_cap=restart"), parse_setting("jump_after_bounce=false")
    (('on_cap', 'restart'), ('jump_after_bounce', False))
    >>> parse_setting("choose_die=d4,d6"), parse_setting("choose_move=2")
    (('choose_die', (Die(4), Die(6))), ('choose_move', 2))
    >>> parse_setting("die=2d6"), parse_setting("faces=4")
    (('die', Die.weighted({2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 6, 8: 5, 9: 4, 10: 3, 11: 2, 12: 1})), ('faces', 4))
    """
    import dataclasses

    from ..dice import Die
    from ..rules import Rules

    name, sep, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    fields: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(Rules)}
    fields["faces"] = 6  # the shorthand for die=Die(n)
    if not sep or name not in fields:
        raise RuleError(f"--set takes FIELD=VALUE with FIELD one of {', '.join(fields)}; got {clean_text(repr(text))}")
    if name == "die":
        return name, Die.parse(raw)
    if name == "choose_die":  # dice as --choose-die reads them, several arguments separated by spaces
        try:
            return name, tuple(d for part in raw.split() for d in dice_arg(part))
        except argparse.ArgumentTypeError as exc:
            raise RuleError(f"choose_die: {exc}") from None
    low = raw.lower()
    default = fields[name]
    if isinstance(default, bool):
        truth = {
            "true": True,
            "yes": True,
            "on": True,
            "1": True,
            "false": False,
            "no": False,
            "off": False,
            "0": False,
        }
        if low not in truth:
            raise RuleError(f"{name} takes true or false; got {raw!r}")
        return name, truth[low]
    if isinstance(default, int) or name in ("max_sixes", "choose_move"):
        if name in ("max_sixes", "choose_move") and low in ("none", "null", "off", "-"):
            return name, None
        try:
            return name, parse_ascii_int(raw, name)
        except SnlError:
            raise RuleError(f"{name} takes an integer (digits 0-9); got {clean_text(repr(raw))[:60]}") from None
    return name, raw
