"""The ``snlmarkov`` command line.

Each sub-command lives in its own module of this package, which defines
``register(parser)``: given the sub-command's parser, which this package makes
with its one-line help (``_COMMANDS``), it adds the description and the
arguments and sets ``func`` to the function that runs the command. A command
line builds only the sub-command it runs (:func:`build_parser` with
``command``): the others are listed by name and help, so ``snlmarkov
--help`` imports none of their modules. Errors the user can fix print one line
on standard error and exit with status 2; they never show a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..errors import SnlError

__all__ = ["main", "build_parser"]

#: every sub-command (the module of the same name in this package) and its line in ``snlmarkov --help``, in that order
_COMMANDS: dict[str, str] = {
    "report": "write the figures and summary tables of a board",
    "analyze": "exact single-player figures for one board and rule set",
    "race": "who wins a game of 1 to 6 players, in which order, and how long it lasts",
    "odds": "who wins from any moment of a game: every seat's square, who has finished, who moves next",
    "policy": "the best play when the rules give a choice (of die, or of move), as a board, and what it gains",
    "simulate": "Monte Carlo games beside the exact figures, with a cross-check verdict",
    "play": "play a game in the terminal (pass and play, with automatic seats)",
    "serve": "play in the browser: pass & play, AI seats and online rooms",
    "games": "list the games stored by snlmarkov serve --db",
    "verify": "verify every stored game, and all of them together, against the exact model",
    "design": "search for a board that meets a target (mean, spread, quantiles, fairness)",
    "sweep": "a table of exact figures for several boards and rule sets",
}


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _version() -> str:
    """The version of snlmarkov: the installed distribution's (package metadata), else the source's.

    Running from a source tree that is not installed gives ``snlmarkov.__version__``
    (which the package metadata is built from); an installed distribution whose
    metadata disagrees with the code imported says both.
    """
    from importlib import metadata

    from .._version import __version__

    try:
        installed = metadata.version("snlmarkov")
    except metadata.PackageNotFoundError:
        return __version__
    return installed if installed == __version__ else f"{__version__} (installed metadata: {installed})"


class _VersionAction(argparse.Action):
    """``--version``: print :func:`_version` and exit (read only when asked, so building the parser stays cheap)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: object, values: object, option_string: str | None = None
    ) -> None:
        print(f"snlmarkov {_version()}")  # on standard output, as argparse's own version action
        parser.exit(0)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser, with every sub-command, or with only ``command``'s arguments.

    Parameters
    ----------
    command : str, optional
        A sub-command (a key of ``_COMMANDS``): only its module is imported
        and its arguments added; the others are listed by name and help and take
        no argument, which is all a command line that runs ``command`` needs.
        By default every sub-command is built. A name that is not a sub-command
        builds none of them (the parser then refuses it as argparse does).

    Examples
    --------
    >>> parser = build_parser("race")
    >>> parser.parse_args(["race", "--players", "3"]).players
    3
    >>> parser.parse_args(["race", "--players", "3"]).command
    'race'
    """
    parser = _Parser(prog="snlmarkov", description="Snakes & Ladders as an exact Markov chain.")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, line in _COMMANDS.items():
        child = sub.add_parser(name, help=line)
        if command is None or name == command:
            importlib.import_module(f".{name}", __name__).register(child)
    return parser


def _command_of(argv: Sequence[str]) -> str:
    """The sub-command a command line runs: its first word that is not an option (the top level's options,
    ``--help`` and ``--version``, take no value); ``""`` when there is none."""
    return next((word for word in argv if not word.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    An :class:`~snlmarkov.errors.SnlError` prints one line (control
    characters escaped) and gives status 2, as does running out of memory;
    Ctrl-C at any moment, the imports included, prints ``interrupted`` and
    gives 130, never a traceback.

    Examples
    --------
    >>> main(["analyze", "--rules", "plain", "--board", "milton_bradley", "--json"])  # doctest: +ELLIPSIS
    {...
    0
    """
    command = "snlmarkov"
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(_command_of(words))
        args = parser.parse_args(words)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        command = f"snlmarkov {args.command}"
        return int(args.func(args) or 0)
    except SnlError as exc:
        print(f"{command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            f"{command}: error: out of memory (the work needs more than this machine has; "
            "see snlmarkov.limits for the limits and SNLMARKOV_MEMORY_LIMIT)",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130


def _one_line(exc: BaseException) -> str:
    from ..limits import clean_text

    return clean_text(str(exc))
