"""Read-only queries on the game store for the archive page (``/games``).

:func:`list_games` pages through a :class:`~snlmarkov.web.store.GameStore`'s
file, newest first, filtered by mode, rule preset, player name and status, on
its own read-only SQLite connection (the store's writer is never touched, and
nothing here can change the file). Every filter value is checked first
(:func:`check_filters`).

Examples
--------
>>> import tempfile, os
>>> from snlmarkov import Game, Rules
>>> from snlmarkov.web.store import GameStore
>>> store = GameStore(os.path.join(tempfile.mkdtemp(), "games.sqlite"))
>>> _ = store.add(Game(players=["Ann", "Bob"], rng=1).play())
>>> _ = store.add(Game(rules=Rules.preset("plain"), players=["Cy", "Dee"], rng=2).play())
>>> page = list_games(store.path, check_filters({"player": "ann"}))
>>> page["total"], [g["players"] for g in page["games"]], page["games"][0]["rules"]
(1, [['Ann', 'Bob']], 'app')
>>> [g["id"] for g in list_games(store.path, check_filters({}))["games"]]
[2, 1]
>>> store.close()
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputFileError, SnlError
from ..rules import MODES, PRESETS, Rules
from .protocol import MAX_NAME
from .store import STATUSES

__all__ = []

#: games on one page of the archive
PAGE_SIZE = 20
#: the last page that can be asked for
MAX_PAGE = 100_000

_PRESET_RULES = {name: Rules.preset(name).to_dict() for name in PRESETS}


def check_filters(query: Mapping[str, str]) -> dict[str, Any]:
    """The archive's filters from a query string, checked.

    Parameters
    ----------
    query : mapping of str to str
        ``page`` (1-based), ``mode``, ``rules`` (a preset name or
        ``"custom"``), ``player`` (part of a name, any case), ``status``
        (``"finished"`` or ``"abandoned"``); missing or empty means any.

    Raises
    ------
    SnlError
        For an unknown key or a value out of range, naming it.

    Examples
    --------
    >>> check_filters({"page": "2", "mode": "classic"})["page"]
    2
    >>> check_filters({"mode": "chess"})
    Traceback (most recent call last):
    ...
    snlmarkov.errors.SnlError: mode must be one of classic, last_one_standing (or empty for any)
    """
    known = {"page", "mode", "rules", "player", "status"}
    extra = sorted(set(query) - known)
    if extra:
        raise SnlError(f"unknown filter {extra[0][:20]!r}; the archive filters by {', '.join(sorted(known))}")
    out: dict[str, Any] = {k: str(query.get(k, "") or "") for k in known}
    page = out["page"] or "1"
    if not page.isdigit() or not 1 <= int(page) <= MAX_PAGE:
        raise SnlError(f"page must be a whole number 1 to {MAX_PAGE}")
    out["page"] = int(page)
    for key, allowed in (("mode", MODES), ("rules", (*PRESETS, "custom")), ("status", STATUSES)):
        if out[key] and out[key] not in allowed:
            raise SnlError(f"{key} must be one of {', '.join(allowed)} (or empty for any)")
    if len(out["player"]) > MAX_NAME or not out["player"].isprintable():
        raise SnlError(f"player must be at most {MAX_NAME} printable characters")
    return out


def _preset_clause(name: str) -> tuple[str, list[Any]]:
    fields = _PRESET_RULES[name]
    return "(" + " AND ".join(f"json_extract(record, '$.rules.{f}') IS ?" for f in fields) + ")", list(fields.values())


def _where(filters: Mapping[str, Any]) -> tuple[str, list[Any]]:
    parts: list[str] = []
    args: list[Any] = []
    for column in ("mode", "status"):
        if filters[column]:
            parts.append(f"{column} = ?")
            args.append(filters[column])
    if filters["rules"] == "custom":
        for name in _PRESET_RULES:
            sql, values = _preset_clause(name)
            parts.append("NOT " + sql)
            args += values
    elif filters["rules"]:
        sql, values = _preset_clause(filters["rules"])
        parts.append(sql)
        args += values
    if filters["player"]:
        parts.append(
            "EXISTS (SELECT 1 FROM json_each(games.record, '$.seats') AS s "
            "WHERE instr(lower(json_extract(s.value, '$.name')), lower(?)) > 0)"
        )
        args.append(filters["player"])
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def _rules_name(rules: Mapping[str, Any]) -> str:
    return next((name for name, d in _PRESET_RULES.items() if dict(rules) == d), "custom")


def list_games(path: str | Path, filters: Mapping[str, Any], *, page_size: int = PAGE_SIZE) -> dict[str, Any]:
    """One page of the stored games, newest first, with the filters applied.

    Parameters
    ----------
    path : str or Path
        The store's SQLite file (opened read-only).
    filters : mapping
        From :func:`check_filters`.
    page_size : int, default PAGE_SIZE

    Returns
    -------
    dict
        ``games`` (each ``id``, ``status``, ``mode``, ``rules`` (the preset
        name or ``"custom"``), ``board``, ``players`` (names), ``colours``,
        ``winner`` (a name, empty if none finished), ``turns``,
        ``finished_at`` (seconds since the epoch)), ``total`` (games that
        match), ``page`` and ``pages``.

    Raises
    ------
    SnlError
        If the file cannot be read as a game store.
    """
    where, args = _where(filters)
    offset = (int(filters["page"]) - 1) * page_size
    select = (
        "SELECT id, status, mode, turns, finished_at, json_extract(record, '$.seats'), "
        "json_extract(record, '$.finishing_order'), json_extract(record, '$.rules'), "
        "json_extract(record, '$.board.name'), json_extract(record, '$.board.size') FROM games"
    )
    try:
        db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputFileError(f"cannot read the game store: {exc}") from None
    try:
        total = int(db.execute("SELECT COUNT(*) FROM games" + where, args).fetchone()[0])
        rows = db.execute(select + where + " ORDER BY id DESC LIMIT ? OFFSET ?", [*args, page_size, offset]).fetchall()
    except sqlite3.Error as exc:
        raise InputFileError(f"cannot read the game store: {exc}") from None
    finally:
        db.close()
    games = []
    for gid, status, mode, turns, at, seats, order, rules, board_name, board_size in rows:
        seats, order = json.loads(seats), json.loads(order)
        games.append(
            {
                "id": gid,
                "status": status,
                "mode": mode,
                "rules": _rules_name(json.loads(rules)),
                "board": board_name or f"{board_size} squares",
                "players": [s["name"] for s in seats],
                "colours": [s["colour"] for s in seats],
                "winner": seats[order[0]]["name"] if order else "",
                "turns": turns,
                "finished_at": at,
            }
        )
    return {"games": games, "total": total, "page": int(filters["page"]), "pages": max(1, -(-total // page_size))}
