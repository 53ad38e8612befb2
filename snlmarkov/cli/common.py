"""Arguments shared by several sub-commands: the board and the rules."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from ..board import Board
from ..errors import RuleError
from ..rules import Rules

__all__ = ["add_board_rules_arguments", "board_from_args", "rules_from_args", "parse_setting"]


def add_board_rules_arguments(parser: argparse.ArgumentParser, *, rules: bool = True) -> None:
    """Add ``--board``, and unless ``rules=False`` ``--rules`` and ``--set``."""
    parser.add_argument(
        "--board",
        default="jungle",
        metavar="NAME|FILE",
        help=(
            f"built-in board ({', '.join(Board.names())}) or a .toml/.json board file, "
            "with chain = true to let jumps chain (default: jungle)"
        ),
    )
    if rules:
        parser.add_argument(
            "--rules",
            default="app",
            metavar="PRESET",
            help=f"rule preset ({', '.join(Rules.presets())}; default: app)",
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


def board_from_args(args: argparse.Namespace) -> Board:
    """The board named by ``--board``: a built-in name or a file path."""
    spec = args.board
    if spec in Board.names():
        return Board.builtin(spec)
    if Path(spec).suffix.lower() in (".toml", ".json"):
        return Board.from_file(spec)
    return Board.builtin(spec)  # raises a BoardError listing the built-in boards


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The rules named by ``--rules`` with every ``--set`` applied."""
    rules = Rules.preset(args.rules)
    changes = dict(parse_setting(text) for text in getattr(args, "set", []))
    return rules.replace(**changes) if changes else rules


def parse_setting(text: str) -> tuple[str, Any]:
    """Parse ``field=value`` into a rule field and a typed value.

    Examples
    --------
    >>> parse_setting("max_sixes=none"), parse_setting("bump=yes"), parse_setting("finish=bounce")
    (('max_sixes', None), ('bump', True), ('finish', 'bounce'))
    >>> parse_setting("on_cap=restart"), parse_setting("jump_after_bounce=false")
    (('on_cap', 'restart'), ('jump_after_bounce', False))
    """
    name, sep, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    fields = {f.name: f for f in dataclasses.fields(Rules)}
    if not sep or name not in fields:
        raise RuleError(f"--set takes FIELD=VALUE with FIELD one of {', '.join(fields)}; got {text!r}")
    low = raw.lower()
    if name in ("bonus_on_six", "start_on_six", "bump", "jump_after_bounce"):
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
    if name in ("max_sixes", "faces", "bump_to"):
        if name == "max_sixes" and low in ("none", "null", "off", "-"):
            return name, None
        try:
            return name, int(raw)
        except ValueError:
            raise RuleError(f"{name} takes an integer; got {raw!r}") from None
    return name, raw
