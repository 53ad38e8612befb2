"""Boards: the squares, the ladders and the snakes.

A :class:`Board` is immutable and validated on construction exactly as
``docs/rules.md`` says: jumps act only from squares ``1..size-1``, land on
``1..size``, never on themselves, and one square holds at most one jump. By
default a jump never ends on another jump's start (jumps do not chain); a
board made with ``chain=True`` allows it, the token then taking every jump of
the chain in the same roll, and refuses only a cycle of jumps.
"""

from __future__ import annotations

import json
import math
import sys
import types
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .builtin_boards import BUILTIN_BOARDS
from .errors import BoardError, LimitError, SnlError
from .limits import MAX_FILE_BYTES, check_file, check_rng, clean_text, limit, parse_ascii_int, show_value

__all__ = ["Board", "BUILTIN_BOARDS"]

_DEFAULT_BOARD = "jungle"


def _as_int(value: Any, what: str) -> int:
    """Return ``value`` as an int, refusing bools, floats with fractions and text."""
    if isinstance(value, (bool, np.bool_)):
        raise BoardError(f"{what} must be an integer, got {show_value(value)}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return int(value)
    raise BoardError(f"{what} must be an integer, got {show_value(value)}")


@dataclass(frozen=True, eq=True)
class Board:
    """A Snakes & Ladders board: squares ``0..size`` and their jumps.

    Square 0 is off the board (every token starts there), square ``size`` is
    the finish. A jump ``start -> end`` is a ladder when ``end > start`` and a
    snake when ``end < start``; it acts only when a roll lands on ``start``.

    Parameters
    ----------
    size : int
        The finishing square ``N`` (100 on standard boards); at least 2.
    jumps : mapping of int to int, optional
        ``start -> end`` for every ladder and snake.
    name : str, optional
        A label used in reports; not part of equality. ``None`` means no
        label. At most 200 characters of valid text (no lone surrogates);
        control characters are escaped whenever it is printed.
    chain : bool, default False
        Whether jumps chain: a jump may end on another jump's start, and a
        token landing on the first takes every jump of the chain in the same
        roll (``83->84`` and ``84->97``: landing on 83 ends on 97). Every
        square of the chain where a jump acts counts as landed on, and every
        jump taken as a use. A cycle of jumps is refused.

    Raises
    ------
    BoardError
        If a square is out of range, a jump leads to itself, starts on 0 or
        on the finish, ends on another jump's start (without ``chain``),
        jumps form a cycle (with ``chain``), or the size is invalid. The
        message names the offending squares.
    LimitError
        If ``size`` is over :data:`snlmarkov.limits.MAX_BOARD_SIZE`
        (10^8; ``SNLMARKOV_MAX_BOARD_SIZE`` raises it).

    Examples
    --------
    >>> from snlmarkov import Board
    >>> b = Board(10, {2: 7, 9: 3})
    >>> b.ladders, b.snakes
    ({2: 7}, {9: 3})
    >>> Board(10, {2: 7, 7: 1})
    Traceback (most recent call last):
    ...
    snlmarkov.errors.BoardError: jumps chain: 2->7 ends on the start of 7->1 (a board with chain=True allows it)
    >>> Board(10, {2: 7, 7: 1}, chain=True).destination()[2]
    np.int64(1)
    >>> Board(10, {2: 7, 7: 4, 4: 2}, chain=True)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.BoardError: jumps form a cycle: 2->7->4->2
    """

    size: int
    jumps: Mapping[int, int] = field(default_factory=dict)
    name: str = field(default="", compare=False)
    chain: bool = False

    def __post_init__(self) -> None:
        size = _check_size(self.size)
        if not isinstance(self.jumps, Mapping):
            raise BoardError(f"jumps must be a mapping start -> end, got {type(self.jumps).__name__}")
        clean: dict[int, int] = {}
        for raw_start, raw_end in self.jumps.items():
            start = _as_int(raw_start, "jump start")
            end = _as_int(raw_end, f"end of jump from {show_value(start)}")
            if start in clean:
                raise BoardError(f"two jumps from square {show_value(start)}")
            clean[start] = end
        if not isinstance(self.chain, (bool, np.bool_)):
            raise BoardError(f"chain must be True or False, got {self.chain!r}")
        object.__setattr__(self, "chain", bool(self.chain))
        _validate_jumps(size, clean, chain=self.chain)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "jumps", types.MappingProxyType(dict(sorted(clean.items()))))
        object.__setattr__(self, "name", _check_name(self.name))

    def __hash__(self) -> int:
        return hash((self.size, tuple(self.jumps.items()), self.chain))

    def __repr__(self) -> str:
        label = f", name={self.name!r}" if self.name else ""
        chained = ", chain=True" if self.chain else ""
        return f"Board(size={self.size}, jumps={dict(self.jumps)!r}{label}{chained})"

    # ------------------------------------------------------------------ views
    @property
    def ladders(self) -> dict[int, int]:
        """The jumps that go up, ``start -> end``."""
        return {s: e for s, e in self.jumps.items() if e > s}

    @property
    def snakes(self) -> dict[int, int]:
        """The jumps that go down, ``head -> tail``."""
        return {s: e for s, e in self.jumps.items() if e < s}

    def destination(self) -> np.ndarray:
        """Where a token that lands on each square ends up.

        On a chained board the whole chain is followed.

        Returns
        -------
        numpy.ndarray
            Integer array of length ``size + 1``: ``dest[t]`` is the end of the
            jump (or chain of jumps) starting on ``t``, or ``t`` itself.

        Examples
        --------
        >>> Board(6, {2: 5}).destination().tolist()
        [0, 1, 5, 3, 4, 5, 6]
        >>> Board(6, {2: 4, 4: 1}, chain=True).destination().tolist()
        [0, 1, 1, 3, 1, 5, 6]
        """
        dest = np.arange(self.size + 1, dtype=np.int64)
        if self.jumps:
            starts = np.fromiter(self.jumps.keys(), dtype=np.int64, count=len(self.jumps))
            ends = np.fromiter(self.jumps.values(), dtype=np.int64, count=len(self.jumps))
            dest[starts] = ends
            if self.chain:  # pointer doubling: chains have no cycles, so this settles
                while True:
                    nxt = dest[dest]
                    if np.array_equal(nxt, dest):
                        break
                    dest = nxt
        return dest

    def jump_path(self, square: int) -> tuple[int, ...]:
        """The squares a token that lands on ``square`` passes through, in order.

        The first is ``square``, the last where the token stays; a jump acts
        on every square but the last (all of them count as landed on). A
        square that starts no jump gives ``(square,)``.

        Examples
        --------
        >>> Board(100, {83: 84, 84: 97}, chain=True).jump_path(83)
        (83, 84, 97)
        >>> Board(100, {83: 84}).jump_path(50)
        (50,)
        """
        square = _as_int(square, "square")
        if not 0 <= square <= self.size:
            raise BoardError(f"square {show_value(square)} is outside 0..{self.size}")
        path = [square]
        while path[-1] in self.jumps and (len(path) == 1 or self.chain):
            path.append(self.jumps[path[-1]])
        return tuple(path)

    def cell(self, square: int, width: int | None = None) -> tuple[int, int]:
        """The ``(row, column)`` of a square on the drawn board.

        Rows count up from the bottom and columns from the left; square 1 is
        bottom-left and rows alternate direction (boustrophedon), so square 100
        is top-left on the 10x10 board. Square 0 (off the board) is drawn just
        left of square 1, at ``(0, -1)``.

        Parameters
        ----------
        square : int
            A square in ``0..size``.
        width : int, optional
            Squares per row; by default the smallest ``w`` with ``w*w >= size``.

        Examples
        --------
        >>> b = Board.builtin()
        >>> b.cell(1), b.cell(10), b.cell(11), b.cell(100)
        ((0, 0), (0, 9), (1, 9), (9, 0))
        """
        square = _as_int(square, "square")
        if not 0 <= square <= self.size:
            raise BoardError(f"square {show_value(square)} is outside 0..{self.size}")
        w = self.width if width is None else _as_int(width, "width")
        if w < 1:
            raise BoardError(f"width must be positive, got {show_value(w)}")
        if square == 0:
            return (0, -1)
        row, offset = divmod(square - 1, w)
        col = offset if row % 2 == 0 else w - 1 - offset
        return (row, col)

    @property
    def width(self) -> int:
        """Squares per drawn row: the smallest ``w`` with ``w * w >= size``."""
        return math.isqrt(self.size - 1) + 1

    # ------------------------------------------------------------ factories
    @classmethod
    def names(cls) -> list[str]:
        """Names of the built-in boards, the default first.

        Examples
        --------
        >>> Board.names()
        ['jungle', 'milton_bradley']
        """
        return list(BUILTIN_BOARDS)

    @classmethod
    def builtin(cls, name: str | None = None) -> Board:
        """A built-in board by name (``"jungle"``, the default, or ``"milton_bradley"``).

        Examples
        --------
        >>> b = Board.builtin()
        >>> b.name, b.size, len(b.ladders), len(b.snakes)
        ('jungle', 100, 9, 10)
        """
        key = _DEFAULT_BOARD if name is None else str(name)
        if key not in BUILTIN_BOARDS:
            raise BoardError(f"unknown board {name!r}; built-in boards: {', '.join(BUILTIN_BOARDS)}")
        size, ladders, snakes = BUILTIN_BOARDS[key]
        return cls(size, {**ladders, **snakes}, name=key)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "board data") -> Board:
        """Build a board from ``{"size": N, "ladders": ..., "snakes": ...}``.

        ``ladders`` and ``snakes`` are each a mapping ``start -> end`` (keys may
        be strings, as TOML and JSON need) or a list of ``[start, end]`` pairs.
        An optional ``name`` labels the board; an optional ``chain`` (true or
        false, default false) lets jumps chain.

        Examples
        --------
        >>> Board.from_dict({"size": 10, "ladders": {"2": 7}, "snakes": [[9, 3]]})
        Board(size=10, jumps={2: 7, 9: 3})
        >>> Board.from_dict({"size": 10, "ladders": {"2": 7}, "snakes": {"7": 3}, "chain": True}).destination()[2]
        np.int64(3)
        """
        if not isinstance(data, Mapping):
            raise BoardError(f"{source}: expected a table with size, ladders and snakes")
        unknown = set(data) - {"size", "ladders", "snakes", "name", "chain"}
        if unknown:
            raise BoardError(f"{source}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        if "size" not in data:
            raise BoardError(f"{source}: missing 'size'")
        try:
            size = _as_int(data["size"], "size")
            ladders = _pairs(data.get("ladders", {}), "ladders")
            snakes = _pairs(data.get("snakes", {}), "snakes")
            for s, e in ladders:
                if e <= s:
                    raise BoardError(f"ladder {show_value(s)}->{show_value(e)} does not go up")
            for s, e in snakes:
                if e >= s:
                    raise BoardError(f"snake {show_value(s)}->{show_value(e)} does not go down")
            counts = Counter(s for s, _ in ladders + snakes)  # linear: a file may hold a million jumps
            dup = min((s for s, c in counts.items() if c > 1), default=None)
            if dup is not None:
                raise BoardError(f"two jumps from square {show_value(dup)}")
            chain = data.get("chain", False)
            if not isinstance(chain, bool):
                raise BoardError(f"chain must be true or false, got {chain!r}")
            return cls(size, dict(ladders + snakes), name=data.get("name", ""), chain=chain)
        except LimitError as exc:
            raise LimitError(f"{source}: {exc}") from None
        except BoardError as exc:
            raise BoardError(f"{source}: {exc}") from None

    @classmethod
    def from_file(cls, path: str | Path) -> Board:
        """Read a board from a TOML (``.toml``) or JSON (``.json``) file.

        The file holds ``size``, ``ladders`` and ``snakes`` (see
        :meth:`from_dict`). It is parsed as data; nothing in it is executed.
        It must be a regular file of at most
        :data:`snlmarkov.limits.MAX_FILE_BYTES` (16 MiB;
        ``SNLMARKOV_MAX_FILE_BYTES`` raises it), checked before reading, and
        UTF-8 text (a byte-order mark is allowed). JSON objects must not
        repeat a key (TOML refuses that itself); squares written as keys
        must be plain ASCII digits.

        Raises
        ------
        BoardError
            If the path is not a path, the file is missing, not a regular
            file, not named ``.toml``/``.json``, not UTF-8, not valid
            TOML/JSON, or does not describe a valid board; the message names
            the file.
        LimitError
            If the file is over the size limit or the board over the board
            size limit.

        Examples
        --------
        >>> Board.from_file("/dev/zero")
        Traceback (most recent call last):
        ...
        snlmarkov.errors.BoardError: /dev/zero: a board file must end in .toml or .json
        """
        if path is None:
            raise BoardError("Board.from_file needs the path of a .toml or .json file; got None")
        shown, data = _read_data_file(path, what="board file", error=BoardError)
        p = Path(path)
        board = cls.from_dict(data, source=shown)
        if not board.name:
            object.__setattr__(board, "name", _check_name(p.stem))
        return board

    def to_dict(self) -> dict[str, Any]:
        """The board as plain data, the inverse of :meth:`from_dict`.

        Examples
        --------
        >>> Board(10, {2: 7, 9: 3}).to_dict()
        {'size': 10, 'ladders': {2: 7}, 'snakes': {9: 3}}
        >>> Board(10, {2: 7, 7: 3}, chain=True).to_dict()
        {'size': 10, 'ladders': {2: 7}, 'snakes': {7: 3}, 'chain': True}
        """
        out: dict[str, Any] = {"size": self.size, "ladders": self.ladders, "snakes": self.snakes}
        if self.name:
            out["name"] = self.name
        if self.chain:
            out["chain"] = True
        return out

    @classmethod
    def random(
        cls,
        size: int,
        *,
        jump_fraction: float = 0.1,
        max_length: int = 12,
        rng: Any = None,
    ) -> Board:
        """A random valid board with jumps on about ``jump_fraction`` of its squares.

        Half the jumps are ladders and half snakes, each of a length drawn
        uniformly from ``1..max_length``; jumps never chain. Used for scale
        benchmarks and property tests.

        Parameters
        ----------
        size : int
            The finishing square.
        jump_fraction : float, default 0.1
            Fraction of squares ``1..size-1`` that start a jump (before
            removing the few that would chain or fall off the board).
        max_length : int, default 12
            Longest jump (at most ``size - 1`` is used: no longer one fits).
        rng : None, int >= 0, SeedSequence or numpy.random.Generator
            Seed or generator, checked by :func:`snlmarkov.limits.check_rng`.

        Examples
        --------
        >>> b = Board.random(1000, rng=1)
        >>> 80 < len(b.jumps) <= 100
        True
        """
        size = _check_size(size)
        if not isinstance(jump_fraction, (int, float, np.integer, np.floating)) or not 0.0 <= jump_fraction <= 1.0:
            raise BoardError(f"jump_fraction must be in [0, 1], got {show_value(jump_fraction)}")
        max_length = _as_int(max_length, "max_length")
        if max_length < 1:
            raise BoardError(f"max_length must be at least 1, got {show_value(max_length)}")
        max_length = min(max_length, size - 1)  # no longer jump fits on the board
        gen = check_rng(rng)
        n_jumps = int(round(jump_fraction * (size - 1)))
        starts = gen.choice(np.arange(1, size), size=min(n_jumps, size - 1), replace=False)
        lengths = gen.integers(1, max_length + 1, size=starts.size)
        signs = np.where(gen.random(starts.size) < 0.5, 1, -1)
        ends = starts + signs * lengths
        keep = (ends >= 1) & (ends <= size)
        starts, ends = starts[keep], ends[keep]
        is_start = np.zeros(size + 1, dtype=bool)
        is_start[starts] = True
        keep = ~is_start[ends]  # no chains: an end never lands on a start
        return cls(size, dict(zip(starts[keep].tolist(), ends[keep].tolist())), name=f"random{size}")


def _pairs(value: Any, what: str) -> list[tuple[int, int]]:
    """Normalise a mapping or a list of pairs to ``[(start, end), ...]``."""
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = []
        for item in value:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise BoardError(f"{what}: each entry must be a [start, end] pair, got {show_value(item)}")
            items.append((item[0], item[1]))
    else:
        raise BoardError(f"{what} must be a table start -> end or a list of pairs")
    out = []
    for s, e in items:
        if isinstance(s, str):
            s = parse_ascii_int(s, f"{what}: a square", BoardError)
        out.append((_as_int(s, f"{what} start"), _as_int(e, f"{what} end")))
    return out


def _check_size(value: Any) -> int:
    """A board size: an integer 2..MAX_BOARD_SIZE."""
    size = _as_int(value, "board size")
    if size < 2:
        raise BoardError(f"board size must be at least 2, got {show_value(size)}")
    cap = limit("board_size")
    if size > cap:
        raise LimitError(
            f"board size {show_value(size)} is over the limit of {cap} squares; set SNLMARKOV_MAX_BOARD_SIZE to raise it"
        )
    return size


_MAX_NAME = 200


def _check_name(value: Any) -> str:
    """A board label: text (``None`` is no label), at most 200 characters, valid UTF-8."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BoardError(f"a board name must be text; got {type(value).__name__}")
    if len(value) > _MAX_NAME:
        raise BoardError(f"a board name holds at most {_MAX_NAME} characters; got {len(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BoardError(f"the board name {clean_text(value)!r} is not valid text (a lone surrogate)") from None
    return value


def _read_data_file(path: Any, *, what: str, error: type[SnlError]) -> tuple[str, Any]:
    """The data of a TOML or JSON file, read as hostile input: ``(name to show, data)``.

    The checks of :meth:`Board.from_file` (a regular ``.toml``/``.json`` file
    of at most :data:`~snlmarkov.limits.MAX_FILE_BYTES`, UTF-8 text with an
    optional byte-order mark, no JSON key given twice), shared by every file
    reader; the messages name the file and ``what`` it is.
    """
    p = check_file(path, what=what, max_bytes=limit("file_bytes"), suffixes=(".toml", ".json"), error=error)
    shown = clean_text(str(p))
    try:
        with open(p, "rb") as fh:
            raw = fh.read(limit("file_bytes") + 1)
    except OSError as exc:
        raise error(f"{shown}: cannot read {what} ({exc.strerror or exc})") from None
    if len(raw) > limit("file_bytes"):  # the file grew after it was checked
        raise LimitError(f"{shown}: the {what} is over the limit of {MAX_FILE_BYTES} bytes")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{shown}: a {what} must be UTF-8 text (byte {exc.start} is not)") from None
    suffix = p.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        else:
            data = _load_toml(text)
    except BoardError as exc:  # a key given twice
        raise error(f"{shown}: {exc}") from None
    except RecursionError:
        raise error(f"{shown}: not valid {suffix[1:].upper()}: nested too deeply") from None
    except Exception as exc:  # parser errors differ between tomllib and json
        raise error(f"{shown}: not valid {suffix[1:].upper()}: {clean_text(exc)}") from None
    return shown, data


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for json: refuse a key given twice (TOML refuses it too)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise BoardError(f"the key {clean_text(key)!r} is given twice")
        out[key] = value
    return out


def _load_toml(text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib.loads(text)


def _validate_jumps(size: int, jumps: Mapping[int, int], *, chain: bool = False) -> None:  # noqa: C901
    for start, end in jumps.items():
        if start == 0:
            raise BoardError(f"jump {show_value(start)}->{show_value(end)} starts on square 0, which is off the board")
        if start == size:
            raise BoardError(
                f"jump {show_value(start)}->{show_value(end)} starts on the finish square {show_value(size)}"
            )
        if not 0 < start < size:
            raise BoardError(
                f"jump {show_value(start)}->{show_value(end)} starts outside the board 0..{show_value(size)}"
            )
        if not 1 <= end <= size:
            raise BoardError(f"jump {show_value(start)}->{show_value(end)} ends outside 1..{show_value(size)}")
        if end == start:
            raise BoardError(f"jump {show_value(start)}->{show_value(end)} leads to itself")
    if not chain:
        for start, end in jumps.items():
            if end in jumps:
                raise BoardError(
                    f"jumps chain: {start}->{end} ends on the start of {end}->{jumps[end]} "
                    "(a board with chain=True allows it)"
                )
        return
    done: set[int] = set()  # squares known to lead out of every chain
    for first in jumps:
        path: list[int] = []
        on_path: dict[int, int] = {}  # square -> its place in path: the cycle check is O(1)
        square = first
        while square in jumps and square not in done:
            if square in on_path:
                cycle = path[on_path[square] :]
                low = cycle.index(min(cycle))
                cycle = cycle[low:] + cycle[:low]
                raise BoardError("jumps form a cycle: " + "->".join(map(str, cycle + [cycle[0]])))
            on_path[square] = len(path)
            path.append(square)
            square = jumps[square]
        done.update(path)
