"""Write a board to a file that :meth:`Board.from_file` (and ``snlmarkov report --board``) reads back."""

from __future__ import annotations

import json
from pathlib import Path

from ..board import Board
from ..errors import BoardError

__all__ = ["write_board", "board_toml"]


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
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".toml":
        text = board_toml(board, comment)
    elif suffix == ".json":
        text = json.dumps({**board.to_dict(), "ladders": board.ladders, "snakes": board.snakes}, indent=2) + "\n"
    else:
        raise BoardError(f"{path}: board files must end in .toml or .json")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BoardError(f"{path}: cannot write board file ({exc.strerror or exc})") from None
    return path
