"""What snlmarkov accepts, and the small helpers that check each kind of input.

Every user input is hostile until checked. The limits below are refused up
front with a :class:`~snlmarkov.errors.LimitError` that names the limit and
says how to raise it, before any large allocation or long computation:

- a board file: :data:`MAX_FILE_BYTES` (16 MiB), raised by ``SNLMARKOV_MAX_FILE_BYTES``;
- a game record's JSON text: :data:`MAX_RECORD_BYTES` (64 MiB), raised by
  ``SNLMARKOV_MAX_RECORD_BYTES``;
- a board's size: :data:`MAX_BOARD_SIZE` (10^8 squares), raised by
  ``SNLMARKOV_MAX_BOARD_SIZE``;
- the board of a game record: :data:`MAX_RECORD_BOARD_SIZE` (10^6 squares);
- the die: :data:`MAX_FACES` (1000 faces or distinct values; ``max_sixes`` too) and
  :data:`MAX_DIE_VALUE` (the largest move, 10^6);
- the exact-fraction solver: :data:`MAX_EXACT_SQUARES` (1000 squares);
- players of a command-line game, race or simulation: :data:`MAX_PLAYERS`
  (6, as ``docs/rules.md`` says); seats of a :class:`~snlmarkov.Game` in Python:
  :data:`MAX_SEATS` (1000);
- memory one computation plans to use: 8 GiB, set by
  ``SNLMARKOV_MEMORY_LIMIT`` (``32G``, ``512M`` or bytes);
- worker processes a command starts: :func:`max_workers` (four per core,
  at least 8), raised by ``SNLMARKOV_MAX_WORKERS``;
- the (board, rules) pairs of one sweep: :data:`MAX_SWEEP_PAIRS` (100,000),
  raised by ``SNLMARKOV_MAX_SWEEP_PAIRS``;
- the streams of one simulation: :data:`MAX_STREAMS` (10,000).

The helpers, one per kind of input: :func:`check_rng` (seeds and
generators), :func:`check_file` (a path that must be a regular file of sane
size), :func:`parse_ascii_int` (integers written as text),
:func:`check_memory` (a memory estimate against the limit),
:func:`check_count` (a count a caller passes: workers, streams, pairs),
:func:`clean_text` (any board or seat name before it is printed) and
:func:`show_value` (any value a caller gave, before a message echoes it: an
integer of thousands of digits is not written out).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputFileError, LimitError, SeedError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_RECORD_BYTES",
    "MAX_BOARD_SIZE",
    "MAX_RECORD_BOARD_SIZE",
    "MAX_FACES",
    "MAX_CHOICES",
    "MAX_DIE_VALUE",
    "MAX_PLAYERS",
    "MAX_EXACT_SQUARES",
    "MAX_SEATS",
    "MAX_SWEEP_PAIRS",
    "MAX_STREAMS",
    "DEFAULT_MEMORY_LIMIT",
    "memory_limit",
    "max_workers",
    "check_memory",
    "check_count",
    "show_value",
    "check_rng",
    "check_file",
    "parse_ascii_int",
    "clean_text",
    "format_bytes",
]

#: Largest board file read (bytes); ``SNLMARKOV_MAX_FILE_BYTES`` raises it.
MAX_FILE_BYTES = 16 * 2**20
#: Largest game record text read (bytes); ``SNLMARKOV_MAX_RECORD_BYTES`` raises it.
MAX_RECORD_BYTES = 64 * 2**20
#: Largest board size (squares); ``SNLMARKOV_MAX_BOARD_SIZE`` raises it.
MAX_BOARD_SIZE = 10**8
#: Largest board a game record may be played on (a played game visits every turn).
MAX_RECORD_BOARD_SIZE = 10**6
#: Most faces a die may have (the turn matrices grow with faces x squares).
MAX_FACES = 1000
#: most dice a rule set may offer to choose from (``choose_die``), and most dice rolled to choose a move from (``choose_move``)
MAX_CHOICES = 8
#: Largest value a die may show (a move longer than any board is allowed, but bounded).
MAX_DIE_VALUE = 10**6
#: Largest board :func:`~snlmarkov.exact_expected_turns` solves in fractions (its cost is about cubic in the squares).
MAX_EXACT_SQUARES = 1000
#: Most players a command-line game, race or simulation takes (``docs/rules.md``: 1 to 6).
MAX_PLAYERS = 6
#: Most seats the Python API's :class:`~snlmarkov.Game` takes.
MAX_SEATS = 1000
#: Most (board, rules) pairs one sweep evaluates (each is a full analysis); ``SNLMARKOV_MAX_SWEEP_PAIRS`` raises it.
MAX_SWEEP_PAIRS = 100_000
#: Most streams one simulation is split into (each is a task with its own seed).
MAX_STREAMS = 10_000
#: Default memory one computation may plan to use; ``SNLMARKOV_MEMORY_LIMIT`` changes it.
DEFAULT_MEMORY_LIMIT = 8 * 2**30

if TYPE_CHECKING:
    import numpy as np

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _env_int(name: str, default: int) -> int:
    """An integer limit from the environment (``16M``, ``8G`` or digits), or ``default``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    m = re.fullmatch(r"([0-9]+)\s*([KMGT]?)(?:i?B)?", raw, flags=re.ASCII | re.IGNORECASE)
    if not m:
        raise LimitError(f"{name}={raw!r} is not a size such as 8G, 512M or 1000000")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def limit(name: str) -> int:
    """The value of a limit, with its environment override applied.

    ``name`` is one of ``"file_bytes"``, ``"record_bytes"``, ``"board_size"``,
    ``"memory"``, ``"workers"``, ``"sweep_pairs"``.

    Examples
    --------
    >>> limit("board_size") == MAX_BOARD_SIZE  # unless SNLMARKOV_MAX_BOARD_SIZE is set
    True
    """
    table = {
        "file_bytes": ("SNLMARKOV_MAX_FILE_BYTES", MAX_FILE_BYTES),
        "record_bytes": ("SNLMARKOV_MAX_RECORD_BYTES", MAX_RECORD_BYTES),
        "board_size": ("SNLMARKOV_MAX_BOARD_SIZE", MAX_BOARD_SIZE),
        "memory": ("SNLMARKOV_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT),
        "workers": ("SNLMARKOV_MAX_WORKERS", 0),
        "sweep_pairs": ("SNLMARKOV_MAX_SWEEP_PAIRS", MAX_SWEEP_PAIRS),
    }
    env, default = table[name]
    if name == "workers":  # counted only when asked: os.cpu_count() reads /sys on every call
        default = max(8, 4 * (os.cpu_count() or 1))
    return _env_int(env, default)


def memory_limit() -> int:
    """Bytes one computation may plan to use (``SNLMARKOV_MEMORY_LIMIT``, default 8 GiB)."""
    return limit("memory")


def max_workers() -> int:
    """Most worker processes a command may start: four per core, at least 8 (``SNLMARKOV_MAX_WORKERS``)."""
    return limit("workers")


def check_count(
    value: Any, what: str, cap: int, *, low: int = 1, env: str = "", error: type[Exception] = LimitError
) -> int:
    """A whole number ``low..cap`` a caller passed (workers, streams, pairs), refused before any work.

    A value below ``low`` or not a whole number raises ``error``; one over
    ``cap`` a :class:`~snlmarkov.errors.LimitError` naming the limit (and
    ``env``, the setting that raises it, when there is one).

    Examples
    --------
    >>> check_count(4, "workers", 64)
    4
    >>> check_count(10**30, "workers", 64, env="SNLMARKOV_MAX_WORKERS")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.LimitError: workers (an integer of 31 digits) is over the limit of 64; set SNLMARKOV_MAX_WORKERS to raise it
    """
    import numpy as np

    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low:
        raise error(f"{what} must be a whole number >= {low}; got {show_value(value)}")
    if value > cap:
        how = f"; set {env} to raise it" if env else ""
        raise LimitError(f"{what} ({show_value(value)}) is over the limit of {cap}{how}")
    return int(value)


def show_value(value: Any, *, commas: bool = False) -> str:
    """``value`` as a message may echo it: short, printable, never thousands of digits.

    Integers of more than 30 digits are described, not written (Python
    refuses to write one of over 4,300 digits), shorter ones written with
    thousands separators when ``commas``; other values are their
    ``repr``, cut to 60 characters, with control characters escaped.

    Examples
    --------
    >>> show_value(42), show_value(10**40), show_value(10**5000), show_value(2.5)
    ('42', 'an integer of 41 digits', 'an integer of about 5001 digits', '2.5')
    >>> show_value(-(10**40))
    'a negative integer of 41 digits'
    """
    import numpy as np

    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        number = int(value)
        size = abs(number)
        if size < 10**30:
            return f"{number:,}" if commas else str(number)
        sign = "a negative integer" if number < 0 else "an integer"
        if size.bit_length() <= 14_000:  # str() writes up to 4,300 digits
            return f"{sign} of {len(str(size))} digits"
        return f"{sign} of about {int(size.bit_length() * 0.30102999566398120) + 1} digits"
    return _short(value)


def format_bytes(n: float) -> str:
    """``n`` bytes in words.

    Examples
    --------
    >>> format_bytes(3 * 2**30), format_bytes(1.5e14)
    ('3.0 GiB', '136.4 TiB')
    """
    if n >= 2**40 * 10**6:
        return "over a million TiB"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def check_memory(need: float, what: str, *, hint: str = "") -> None:
    """Refuse work whose memory estimate ``need`` (bytes) is over :func:`memory_limit`.

    Raises
    ------
    LimitError
        Naming ``what``, the estimate, the limit and how to raise it.

    Examples
    --------
    >>> check_memory(1e15, "a simulation of 10^14 games")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.LimitError: a simulation of 10^14 games would need about 909.5 TiB of memory, over the limit of 8.0 GiB; set SNLMARKOV_MEMORY_LIMIT (e.g. 32G) to raise it
    """
    cap = memory_limit()
    need = min(need, 1e300)  # an estimate past any float (a count of thousands of digits) is still "too much"
    if need > cap:
        extra = f"; {hint}" if hint else ""
        raise LimitError(
            f"{what} would need about {format_bytes(need)} of memory, over the limit of {format_bytes(cap)}"
            f"{extra}; set SNLMARKOV_MEMORY_LIMIT (e.g. 32G) to raise it"
        )


def check_rng(rng: Any, what: str = "rng") -> np.random.Generator:
    """The one check of every seed or generator: a :class:`numpy.random.Generator`.

    Accepts ``None`` (fresh entropy), an integer ``>= 0`` (numpy integers
    too), a sequence of such integers, a :class:`numpy.random.SeedSequence`,
    a :class:`numpy.random.BitGenerator` or a :class:`numpy.random.Generator`
    (returned as is, so its stream goes on).

    Raises
    ------
    SeedError
        For a negative integer, a bool, a float, text or anything else.

    Examples
    --------
    >>> int(check_rng(7).integers(10)) == int(check_rng(7).integers(10))
    True
    >>> check_rng(-1)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.SeedError: rng must be None, an integer >= 0, a SeedSequence or a Generator; got -1
    """
    import numpy as np  # here, not at the top: the command line's --help reads this module

    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if _seed_int(rng):
        return np.random.default_rng(int(rng))
    if isinstance(rng, Sequence) and not isinstance(rng, (str, bytes)) and rng and all(_seed_int(v) for v in rng):
        return np.random.default_rng([int(v) for v in rng])
    raise SeedError(f"{what} must be None, an integer >= 0, a SeedSequence or a Generator; got {_short(rng)}")


def _seed_int(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and bool(value >= 0)


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a repr that fails (an object's own, or numbers past Python's digit limit)
        text = f"<{type(value).__name__}>"
    return clean_text(text if len(text) <= 60 else text[:57] + "...")


def check_file(
    path: Any, *, what: str, max_bytes: int, suffixes: tuple[str, ...] = (), error: type[Exception] = InputFileError
) -> Path:
    """A path that names a regular file no larger than ``max_bytes``, checked before reading.

    Devices (``/dev/zero``), FIFOs, folders and oversized files are refused
    without opening them for reading, so nothing blocks or fills memory.

    Raises
    ------
    LimitError
        If the file is over ``max_bytes``.
    InputFileError
        (or the ``error`` class given) for a missing file, a wrong suffix,
        anything that is not a regular file, or a path that is not a path.

    Examples
    --------
    >>> check_file("/dev/zero", what="board file", max_bytes=100)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.InputFileError: /dev/zero: a board file must be a regular file, not a character device
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise error(f"a {what} must be given as a path; got {_short(path)}")
    p = Path(path)
    shown = clean_text(str(p))
    if str(path) == "":
        raise error(f"a {what} path must not be empty")
    if suffixes and p.suffix.lower() not in suffixes:
        raise error(f"{shown}: a {what} must end in {' or '.join(suffixes)}")
    try:
        st = os.stat(p)
    except OSError as exc:
        raise error(f"{shown}: cannot read {what} ({exc.strerror or exc})") from None
    except ValueError as exc:  # an embedded NUL byte
        raise error(f"{shown}: not a usable path ({exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{shown}: a {what} must be a regular file, not {_file_kind(st.st_mode)}")
    if st.st_size > max_bytes:
        raise LimitError(
            f"{shown}: the {what} holds {format_bytes(st.st_size)}, over the limit of {format_bytes(max_bytes)}"
        )
    return p


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"  # pragma: no cover


_ASCII_INT = re.compile(r"[+-]?[0-9]+", flags=re.ASCII)


def parse_ascii_int(text: str, what: str, error: type[Exception] = LimitError) -> int:
    """An integer written in plain ASCII decimal digits, with an optional sign.

    Python's ``int()`` also reads ``"3_0"``, Arabic-Indic and full-width
    digits; a board file or a command line must not.

    Examples
    --------
    >>> parse_ascii_int(" 42 ", "square")
    42
    >>> parse_ascii_int("3_0", "square")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.LimitError: square must be written with the digits 0-9; got '3_0'
    """
    stripped = text.strip(" \t")
    if len(stripped) > 40 or not _ASCII_INT.fullmatch(stripped):
        raise error(f"{what} must be written with the digits 0-9; got {_short(text)}")
    return int(stripped)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean_text(text: Any) -> str:
    """``text`` made safe to print: control characters and lone surrogates escaped.

    Terminal escape sequences (``"\\x1b[2J"``), carriage returns, bidi
    overrides and unpaired surrogates are shown as ``\\x1b``-style escapes.

    Examples
    --------
    >>> clean_text("Ann\\x1b[31m")
    'Ann\\\\x1b[31m'
    >>> clean_text("Zo\\ud800e")
    'Zo\\\\ud800e'
    """
    text = str(text)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates -> \udxxx
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
