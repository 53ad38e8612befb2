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
_COMMANDS = (
    "report",
    "analyze",
    "race",
    "odds",
    "policy",
    "simulate",
    "play",
    "serve",
    "games",
    "verify",
    "design",
    "sweep",
)


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


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every available sub-command."""
    parser = _Parser(prog="snlmarkov", description="Snakes & Ladders as an exact Markov chain.")
    parser.add_argument("--version", action=_VersionAction)
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
