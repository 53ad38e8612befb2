"""Board and rule files: write a board that :meth:`Board.from_file` reads back, and write and read rule sets.

A rule file is a TOML or JSON table of the fields of :class:`~snlmarkov.Rules`
(as :meth:`Rules.to_dict` writes them: a fair die as ``faces``, any other as
``die``, its text form), any subset of them, over an optional ``preset``
(default ``"app"``); ``max_sixes = "none"`` (TOML has no null) or ``null``
means no cap. ``snlmarkov analyze --rules house.toml`` reads one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..board import Board, _read_data_file
from ..dice import Die
from ..errors import BoardError, RuleError, SnlError
from ..limits import clean_text
from ..rules import Rules

__all__ = ["write_board", "write_rules", "read_rules"]


def board_toml(board: Board, comment: str = "") -> str:
    """The board as TOML text: ``name``, ``size`` and the ``[ladders]`` and ``[snakes]`` tables.

    Examples
    --------
    >>> from snlmarkov import Board
    >>> print(board_toml(Board(10, {2: 7, 9: 3}, name="tiny"), comment="a small board"))
    # a small board
    name = "tiny"
    size = 10
    <BLANKLINE>
    [ladders]
    2 = 7
    <BLANKLINE>
    [snakes]
    9 = 3
    <BLANKLINE>
    """
    lines = [f"# {line}" if line else "#" for line in comment.splitlines()]
    if board.name:
        lines.append(f"name = {json.dumps(board.name)}")
    lines.append(f"size = {board.size}")
    for title, jumps in (("ladders", board.ladders), ("snakes", board.snakes)):
        lines += ["", f"[{title}]"] + [f"{s} = {e}" for s, e in jumps.items()]
    return "\n".join(lines) + "\n"


def write_board(board: Board, path: str | Path, *, comment: str = "") -> Path:
    """Write ``board`` to ``path`` (``.toml`` or ``.json``) and return the path.

    Raises
    ------
    BoardError
        For another suffix, or a file that cannot be written (the message names it).
    """
    return _write_data_file(
        path,
        "board",
        BoardError,
        toml=lambda: board_toml(board, comment),
        data=lambda: {**board.to_dict(), "ladders": board.ladders, "snakes": board.snakes},
    )


def _write_data_file(
    path: str | Path, what: str, error: type[SnlError], *, toml: Callable[[], str], data: Callable[[], Any]
) -> Path:
    """Write TOML text or JSON data to ``path`` as its suffix says; refuse another suffix or a failed write."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".toml":
        text = toml()
    elif suffix == ".json":
        text = json.dumps(data(), indent=2) + "\n"
    else:
        raise error(f"{clean_text(str(path))}: {what} files must end in .toml or .json")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise error(f"{clean_text(str(path))}: cannot write {what} file ({exc.strerror or exc})") from None
    return path


def rules_toml(rules: Rules, comment: str = "") -> str:
    """The rules as TOML text, every field written (``max_sixes = "none"`` for no cap).

    Examples
    --------
    >>> print(rules_toml(Rules.preset("plain").replace(die="2d6")))
    finish = "stay"
    bonus_on_six = false
    max_sixes = "none"
    on_cap = "redeal"
    start_on_six = false
    bump = false
    bump_to = 1
    die = "weights:2=1,3=2,4=3,5=4,6=5,7=6,8=5,9=4,10=3,11=2,12=1"
    jump_after_bounce = true
    <BLANKLINE>
    """
    lines = [f"# {line}" if line else "#" for line in comment.splitlines()]
    for key, value in rules.to_dict().items():
        lines.append(f"{key} = {json.dumps('none' if value is None else value)}")
    return "\n".join(lines) + "\n"


def write_rules(rules: Rules, path: str | Path, *, comment: str = "") -> Path:
    """Write ``rules`` to ``path`` (``.toml`` or ``.json``) and return the path.

    Raises
    ------
    RuleError
        For another suffix, or a file that cannot be written (the message names it).
    """
    return _write_data_file(path, "rule", RuleError, toml=lambda: rules_toml(rules, comment), data=rules.to_dict)


def read_rules(path: str | Path) -> Rules:
    """Read a rule set from a TOML or JSON rule file (see the module's notes).

    The file is read as hostile input, with the checks of
    :meth:`Board.from_file` (a regular file of at most 16 MiB, UTF-8, no key
    given twice).

    Raises
    ------
    RuleError
        Naming the file and the field: a bad file, an unknown key, a value
        of the wrong kind, a die that cannot be read.
    LimitError
        For a file over the size limit.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "house.toml")
    >>> _ = open(path, "w").write('preset = "plain"\\ndie = "spinner:15"\\n')
    >>> read_rules(path) == Rules.preset("plain").replace(die=Die.spinner(15))
    True
    """
    shown, data = _read_data_file(path, what="rule file", error=RuleError)
    return rules_from_mapping(data, source=shown)


def rules_from_mapping(data: Any, *, source: str = "rules") -> Rules:
    """A rule set from a file's table: rule fields over an optional ``preset``.

    Examples
    --------
    >>> rules_from_mapping({"preset": "family", "die": "d4"}) == Rules.preset("family").replace(die=4)
    True
    >>> rules_from_mapping({"die": "d1"})
    Traceback (most recent call last):
    ...
    snlmarkov.errors.RuleError: rules: die: faces must be an integer 2..1000; got 1
    """
    if not isinstance(data, Mapping):
        raise RuleError(f"{source}: expected a table of rule fields")
    fields = {f.name for f in dataclasses.fields(Rules)} | {"faces"}
    unknown = sorted(str(k) for k in data if k not in fields | {"preset"})
    if unknown:
        shown = ", ".join(clean_text(repr(k))[:60] for k in unknown[:5])
        raise RuleError(f"{source}: unknown key(s) {shown}; rule fields: {', '.join(sorted(fields))} and preset")
    preset = data.get("preset", "app")
    if not isinstance(preset, str):
        raise RuleError(f"{source}: preset must be a preset's name; got {clean_text(repr(preset))[:60]}")
    changes = {k: v for k, v in data.items() if k != "preset"}
    if changes.get("max_sixes") in ("none", "None"):
        changes["max_sixes"] = None
    for key in ("die", "faces"):
        if key in changes:
            value = changes[key]
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise RuleError(f"{source}: {key} must be a text form such as '2d6' or a whole number of faces")
            try:
                changes[key] = Die.coerce(value) if key == "die" else value
            except RuleError as exc:
                raise RuleError(f"{source}: {key}: {exc}") from None
    try:
        return Rules.preset(clean_text(preset)[:40]).replace(**changes)
    except RuleError as exc:
        raise RuleError(f"{source}: {exc}") from None
