"""The WebSocket protocol: message limits and validation of every client message.

Every message from a browser is hostile until checked. :func:`parse_message`
turns the raw text of one WebSocket frame into a :class:`Message` (a type and
its checked fields) or raises :class:`ProtocolError`, whose ``code`` is sent
back in the error reply. Nothing about a room is touched before a message has
passed here. The message types and their fields are listed in ``docs/web.md``.

Examples
--------
>>> parse_message('{"type": "roll", "seat": 1, "secret": "abcdefgh"}')
Message(type='roll', fields={'seat': 1, 'secret': 'abcdefgh'})
>>> parse_message('{"type": "teleport"}')
Traceback (most recent call last):
...
snlmarkov.web.protocol.ProtocolError: unknown message type 'teleport'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import SnlError
from ..limits import MAX_CHOICES

__all__ = []

#: largest accepted client message, in bytes of UTF-8 text
MAX_MESSAGE_BYTES = 4096
#: longest player name
MAX_NAME = 24
#: seats in one room
MAX_SEATS = 6
#: token colours: a CSS hex colour ``#rgb`` or ``#rrggbb``
COLOUR_RE = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
#: messages per second a connection may send on average, and the burst allowed
RATE, BURST = 10.0, 20.0
#: deepest nesting of arrays and objects accepted in a message or a request body
MAX_DEPTH = 8
#: the strengths of an AI seat under a choice rule (``docs/rules.md``, "Choices"), weakest first
STRENGTHS = ("random", "greedy", "optimal")
#: the largest value a ``choose`` message may move by (a room's die moves at most this far)
MAX_MOVE = 100
_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")
_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET_RE = re.compile(r"[\[\]{}]")


class ProtocolError(SnlError):
    """A client message was refused; ``code`` names the reason for the reply."""

    def __init__(self, message: str, code: str = "bad_message") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Message:
    """A checked client message: its ``type`` and its fields (without ``type``)."""

    type: str
    fields: dict[str, Any] = field(default_factory=dict)


def _secret(v: Any) -> str:
    if not isinstance(v, str) or not _SECRET_RE.fullmatch(v):
        raise ProtocolError("a secret is 8 to 64 URL-safe characters", "bad_secret")
    return v


def _seat(v: Any) -> int:
    if type(v) is not int or not 0 <= v < MAX_SEATS:
        raise ProtocolError(f"seat must be an integer 0..{MAX_SEATS - 1}", "bad_field")
    return v


def check_name(v: Any) -> str:
    """A player's name: 1 to ``MAX_NAME`` printable characters, spaces trimmed.

    Examples
    --------
    >>> check_name("  Ann ")
    'Ann'
    """
    if not isinstance(v, str):
        raise ProtocolError("name must be text", "bad_field")
    v = " ".join(v.split())
    if not 1 <= len(v) <= MAX_NAME or not v.isprintable():
        raise ProtocolError(f"name must be 1 to {MAX_NAME} printable characters", "bad_field")
    return v


def check_colour(v: Any) -> str:
    """A token colour: ``#rgb`` or ``#rrggbb``, returned in lower case.

    Examples
    --------
    >>> check_colour("#E53935")
    '#e53935'
    """
    if not isinstance(v, str) or not COLOUR_RE.fullmatch(v):
        raise ProtocolError("colour must be a CSS hex colour like #e53935", "bad_field")
    return v.lower()


def _object(v: Any) -> dict:
    if not isinstance(v, dict) or len(v) > 32:
        raise ProtocolError("expected an object of at most 32 fields", "bad_field")
    return v


def _countdown(v: Any) -> float:
    if type(v) not in (int, float) or not 0.05 <= v <= 600:
        raise ProtocolError("countdown must be a number of seconds 0.05..600", "bad_field")
    return float(v)


def _mode(v: Any) -> str:
    if v not in ("classic", "last_one_standing"):
        raise ProtocolError("mode must be 'classic' or 'last_one_standing'", "bad_field")
    return str(v)


def _board(v: Any) -> str:
    if not isinstance(v, str) or len(v) > 40:
        raise ProtocolError("board must be a built-in board's name", "bad_field")
    return v


def _die(v: Any) -> int:
    if type(v) is not int or not 0 <= v < MAX_CHOICES:
        raise ProtocolError(f"die must be the index of a die on offer, an integer 0..{MAX_CHOICES - 1}", "bad_field")
    return v


def _value(v: Any) -> int:
    if type(v) is not int or not 0 <= v <= MAX_MOVE:
        raise ProtocolError(f"value must be one of the values rolled, an integer 0..{MAX_MOVE}", "bad_field")
    return v


def check_strength(v: Any) -> str:
    """An AI seat's strength under a choice rule: ``"random"``, ``"greedy"`` or ``"optimal"``.

    Examples
    --------
    >>> check_strength("greedy")
    'greedy'
    """
    if not isinstance(v, str) or v not in STRENGTHS:
        raise ProtocolError(f"strength must be one of {', '.join(STRENGTHS)}", "bad_field")
    return v


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ProtocolError("expected true or false", "bad_field")
    return v


#: per message type: field -> (checker, required)
_SCHEMA: dict[str, dict[str, tuple[Any, bool]]] = {
    "hello": {"secret": (_secret, False)},
    "join": {"name": (check_name, True), "colour": (check_colour, True)},
    "configure": {
        "secret": (_secret, True),
        "mode": (_mode, False),
        "rules": (_object, False),
        "board": (_board, False),
        "countdown": (_countdown, False),
    },
    "add_ai": {
        "secret": (_secret, True),
        "name": (check_name, True),
        "colour": (check_colour, True),
        "strength": (check_strength, False),
    },
    "remove_seat": {"secret": (_secret, True), "seat": (_seat, True)},
    "start": {"secret": (_secret, True)},
    "roll": {"seat": (_seat, True), "secret": (_secret, True), "die": (_die, False)},
    "choose": {"seat": (_seat, True), "secret": (_secret, True), "die": (_die, False), "value": (_value, False)},
    "ping": {},
}

#: the message types a client may send
MESSAGE_TYPES = tuple(_SCHEMA)


def load_json(text: str, what: str = "message") -> Any:
    """Parse JSON text nested at most :data:`MAX_DEPTH` deep (checked before parsing).

    Raises
    ------
    ProtocolError
        ``too_deep`` past :data:`MAX_DEPTH` levels of arrays and objects,
        ``bad_json`` for text that is not JSON.

    Examples
    --------
    >>> load_json('{"a": [1, {"b": "[[[["}]}')
    {'a': [1, {'b': '[[[['}]}
    >>> load_json("[" * 4000 + "]" * 4000)
    Traceback (most recent call last):
    ...
    snlmarkov.web.protocol.ProtocolError: message nested deeper than 8 levels
    """
    depth = 0
    for bracket in _BRACKET_RE.findall(_STRING_RE.sub("", text)):  # strings removed: their brackets do not count
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            raise ProtocolError(f"{what} nested deeper than {MAX_DEPTH} levels", "too_deep")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ProtocolError(f"{what} is not valid JSON", "bad_json") from None


def parse_message(text: Any) -> Message:
    """Check the raw text of one client frame and return the message it holds.

    Parameters
    ----------
    text : str
        The frame's text (a binary frame is refused).

    Raises
    ------
    ProtocolError
        With ``code`` ``too_big`` (over :data:`MAX_MESSAGE_BYTES`), ``bad_json``,
        ``too_deep`` (nested past :data:`MAX_DEPTH`),
        ``bad_message`` (not an object, no type, unknown or missing fields),
        ``unknown_type``, ``bad_secret`` or ``bad_field``.

    Examples
    --------
    >>> parse_message("x" * 5000)
    Traceback (most recent call last):
    ...
    snlmarkov.web.protocol.ProtocolError: message of 5000 bytes is over the limit of 4096
    >>> parse_message('{"type": "join", "name": "Ann", "colour": "#e53935", "extra": 1}').type
    Traceback (most recent call last):
    ...
    snlmarkov.web.protocol.ProtocolError: join: unexpected field(s) extra
    """
    if not isinstance(text, str):
        raise ProtocolError("messages must be JSON text frames", "bad_message")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {size} bytes is over the limit of {MAX_MESSAGE_BYTES}", "too_big")
    data = load_json(text, "message")
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ProtocolError("a message is a JSON object with a string 'type'", "bad_message")
    kind = data.pop("type")
    schema = _SCHEMA.get(kind)
    if schema is None:
        raise ProtocolError(f"unknown message type {kind[:40]!r}", "unknown_type")
    extra = sorted(set(data) - set(schema))
    if extra:
        raise ProtocolError(f"{kind}: unexpected field(s) {', '.join(e[:40] for e in extra[:5])}", "bad_message")
    out: dict[str, Any] = {}
    for name, (check, required) in schema.items():
        if name in data:
            out[name] = check(data[name])
        elif required:
            raise ProtocolError(f"{kind}: missing field {name!r}", "bad_message")
    if kind == "choose" and ("die" in out) == ("value" in out):
        raise ProtocolError("choose: give either die (choose_die) or value (choose_move), not both", "bad_message")
    return Message(kind, out)
