"""The ``snlmarkov`` command line.

Each sub-command lives in its own module of this package, which defines
``register(subparsers)`` (adding its parser, with ``func`` set to the function
that runs it). Errors the user can fix print one line on standard error and
exit with status 2; they never show a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..errors import SnlError

__all__ = ["main", "build_parser"]

#: sub-command modules, in the order ``--help`` lists them
_COMMANDS = ("report", "analyze", "race", "odds", "simulate", "play", "serve", "games", "verify", "design", "sweep")


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every available sub-command."""
    parser = _Parser(prog="snlmarkov", description="Snakes & Ladders as an exact Markov chain.")
    from .._version import __version__

    parser.add_argument("--version", action="version", version=f"snlmarkov {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _COMMANDS:
        try:
            module = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:  # a sub-command not built yet
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        module.register(sub)
    return parser


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
        parser = build_parser()
        args = parser.parse_args(argv)
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
