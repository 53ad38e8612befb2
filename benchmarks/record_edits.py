"""How many single-field edits of real game records pass ``verify_game``?

Plays real games under several rule sets (half of them as online games, with
turns skipped by the countdown), signs each record as the server does, then
edits one record at a time as a person editing the JSON would: one value of
one event of the log (a roll, a move's end, a jump's square, a bounce
target, a finish place, a flag...), one value of the board, the rules or a
seat; or the record is cut short at a turn boundary, or one turn is turned
into a countdown skip. The record is then made consistent again the way that
person would: ``dice``, ``positions``, ``finishing_order`` and ``finished``
are rewritten from the edited log (the signature cannot be: the key is the
server's). Each edited record is read back with ``GameRecord.from_dict`` and
verified with the server's key.

The judge of an edited record is the playable engine, an implementation
independent of ``verify_game``: ``Game.replay`` plays the edited record's
board, rules and dice again and must reproduce its log exactly. An edit
that the engine does not reproduce is *invalid* (it changes the game into
one the rules cannot give); the target is that none of those passes (each is
refused when read, with an ``SnlError``, or fails ``verify_game``). Some
edits give another valid game: a failed entry roll of 3 edited to 2 under
six to start, a jump no token used, a seat's name. Those should pass, and
are counted apart (``valid_passed``; ``false_alarm`` counts valid edits that
``verify_game`` fails). A cut record is a game the engine can replay, but it
must verify as ``"unfinished"``, never as a whole game (``cut_whole``); a
turn turned into a skip is legal only in a record this server signed as
online, so it must fail (``skip_passed``), and so must any edit of an online
record that holds a skip (its signature no longer matches); and no edited
record may verify as signed by this server (``signed_forgery``). The
targets are 0.

Usage::

    python benchmarks/record_edits.py --edits 20000 --seed 1

Prints one line per outcome and exits 1 if an edit that changes the game
passed (or a target above is missed). ``tests/test_record_edits.py`` runs a bounded version.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections import Counter
from typing import Any

import numpy as np

from snlmarkov import Board, Game, GameRecord, GameState, Rules, SnlError, verify_game
from snlmarkov.checks.verify import UNFINISHED
from snlmarkov.game.events import event_from_dict
from snlmarkov.game.record import _summarise

RULE_SETS = [
    Rules(),
    Rules.preset("family"),
    Rules.preset("plain"),
    Rules(on_cap="forfeit", start_on_six=True, bump=True, finish="none", max_sixes=1),
    Rules(finish="bounce", max_sixes=None, bump=True, bump_to=5),
    Rules(on_cap="forfeit", max_sixes=2, finish="bounce"),
]
BOARDS = [Board.builtin(), Board.builtin("milton_bradley"), Board(30, {3: 17, 9: 2, 20: 28, 27: 11, 14: 6})]
MODES = ("classic", "last_one_standing")
#: the experiment's server key
KEY = bytes(range(32))
#: share of an online game's turns skipped by the countdown
SKIP_SHARE = 0.05


def real_records(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` records of real games, as plain data, over every rule set, board and mode."""
    out = []
    for i in range(count):
        rules = RULE_SETS[i % len(RULE_SETS)]
        board = BOARDS[(i // len(RULE_SETS)) % len(BOARDS)]
        mode = MODES[(i // 2) % 2]
        players = 2 + i % 3
        online = i % 2 == 1
        game = Game(board, rules, players=players, mode=mode, rng=[seed, i])
        skips = np.random.default_rng([seed, i, 1])
        while not game.is_over:
            if online and skips.random() < SKIP_SHARE:
                game.skip_turn()
            else:
                game.take_turn()
        out.append(game.record().signed(KEY, online=online).to_dict())
    return out


def _leaves(data: dict[str, Any]) -> list[tuple]:
    """Paths to every editable value: log event fields, board, rules, seats."""
    paths: list[tuple] = []
    for i, event in enumerate(data["log"]):
        for key, value in event.items():
            if key == "kind":
                continue
            if isinstance(value, list):
                paths += [("log", i, key, j) for j in range(len(value))]
                paths.append(("log", i, key))  # the whole list (reordered / shortened)
            else:
                paths.append(("log", i, key))
    for key in data["rules"]:
        paths.append(("rules", key))
    paths.append(("board", "size"))
    for kind in ("ladders", "snakes"):
        for start in data["board"][kind]:
            paths.append(("board", kind, start, "start"))
            paths.append(("board", kind, start, "end"))
    for j in range(len(data["seats"])):
        paths.append(("seats", j, "name"))
    turns = data["log"][-1]["turn"] + 1
    paths += [("cut", t) for t in range(1, turns)]  # cut before turn t
    paths += [("skip", t) for t in range(turns)]  # turn t turned into a skip
    return paths


def _new_value(value: Any, size: int, gen: np.random.Generator) -> Any:
    """A different value of the same kind, chosen as a person might."""
    if isinstance(value, bool):
        return not value
    if value is None:
        return int(gen.integers(1, 4))
    if isinstance(value, int):
        choices = [value + d for d in (-6, -2, -1, 1, 2, 6) if value + d >= 0] + [0, 1, size, size - 1]
        choices = [c for c in choices if c != value]
        return int(gen.choice(choices))
    if isinstance(value, str):
        if value in ("stay", "bounce", "none"):
            return str(gen.choice([v for v in ("stay", "bounce", "none") if v != value]))
        if value in ("redeal", "forfeit"):
            return "forfeit" if value == "redeal" else "redeal"
        return value + "x"
    if isinstance(value, list):  # a finishing order: reversed, or its last entry dropped
        return value[::-1] if len(value) > 1 and gen.random() < 0.5 else value[:-1]
    return value


def edit(data: dict[str, Any], path: tuple, gen: np.random.Generator) -> dict[str, Any]:
    """A copy of ``data`` with the value at ``path`` changed, made consistent again."""
    out = copy.deepcopy(data)
    size = data["board"]["size"]
    if path[0] == "cut":
        out["log"] = [e for e in out["log"] if e["turn"] < path[1]]
    elif path[0] == "skip":
        at = [i for i, e in enumerate(out["log"]) if e["turn"] == path[1]]
        seat = out["log"][at[0]]["seat"]
        out["log"][at[0] : at[-1] + 1] = [{"kind": "skip", "seat": seat, "turn": path[1]}]
    elif path[0] == "board" and len(path) == 4:
        _, kind, start, which = path
        jumps = out["board"][kind]
        end = jumps.pop(start)
        if which == "start":
            jumps[_new_value(int(start), size, gen)] = end
        else:
            jumps[start] = _new_value(end, size, gen)
    else:
        node = out
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = _new_value(node[path[-1]], size, gen)
    # a person fixes the summary fields to match the edited log
    try:
        log = tuple(event_from_dict(e) for e in out["log"])
        _, positions, finished = _summarise(log, len(out["seats"]), GameState.initial(len(out["seats"])))
    except SnlError:
        return out  # the log itself is refused: left for from_dict to refuse
    out["dice"] = [e["value"] for e in out["log"] if e["kind"] == "roll"]
    out["positions"] = list(positions)
    out["finishing_order"] = list(finished)
    out["finished"] = bool(out["log"]) and out["log"][-1]["kind"] == "game_over"
    return out


def run(n_edits: int, seed: int = 1, n_records: int = 60) -> Counter:
    """Make ``n_edits`` edits of ``n_records`` real records; count the outcomes.

    Keys: ``refused`` (from_dict raised SnlError), ``failed`` (an invalid
    edit that verify_game failed), ``passed_invalid`` (an invalid edit that
    passed: the target is 0), ``valid_passed`` (a valid other game that
    passed), ``false_alarm`` (a valid game that failed), ``crashed`` (any
    other exception: the target is 0), ``no_change``; for cuts
    ``cut_unfinished`` (verified as unfinished) and ``cut_whole`` (as a whole
    game: the target is 0); for skips ``skip_failed`` and ``skip_passed``
    (the target is 0); ``signed_forgery`` (an edited record verified as
    signed by this server: the target is 0).
    """
    gen = np.random.default_rng(seed)
    records = real_records(n_records, seed)
    leaves = [_leaves(r) for r in records]
    counts: Counter = Counter()
    for _ in range(n_edits):
        r = int(gen.integers(len(records)))
        path = leaves[r][int(gen.integers(len(leaves[r])))]
        original = records[r]
        edited = edit(original, path, gen)
        if edited == original:
            counts["no_change"] += 1
            continue
        try:
            record = GameRecord.from_dict(json.loads(json.dumps(edited)))
            report = verify_game(record, key=KEY)
            passed = report.passed
        except SnlError:
            counts["refused"] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - the experiment counts crashes
            counts["crashed"] += 1
            counts[f"crashed:{type(exc).__name__}"] += 1
            continue
        if report.signed:
            counts["signed_forgery"] += 1
        valid = _engine_replays(record)
        where = path[0] if path[0] != "log" else f"log:{original['log'][path[1]]['kind']}.{path[2]}"
        skips = any(t.skipped for t in record.turns())
        if valid and skips:  # an edited online record: its skips are no longer vouched for by the signature
            key = "skip_passed" if passed else "skip_failed"
        elif valid and path[0] == "cut":
            key = (
                "cut_failed"
                if not passed
                else ("cut_unfinished" if report.rules_verdict == UNFINISHED else "cut_whole")
            )
        elif valid and path[0] == "skip":
            key = "skip_passed" if passed else "skip_failed"
        elif valid:
            key = "valid_passed" if passed else "false_alarm"
        else:
            key = "passed_invalid" if passed else "failed"
        counts[key] += 1
        if key != "failed":
            counts[f"{key}:{where}"] += 1
    return counts


def _engine_replays(record: GameRecord) -> bool:
    """Whether the playable engine reproduces the record exactly (the independent judge)."""
    try:
        Game.replay(record)
    except SnlError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--records", type=int, default=60)
    args = parser.parse_args(argv)
    counts = run(args.edits, args.seed, args.records)
    for key in sorted(counts):
        print(f"{key}: {counts[key]}")
    bad = sum(counts[k] for k in ("passed_invalid", "crashed", "cut_whole", "skip_passed", "signed_forgery"))
    print(
        f"invalid edits that pass verify_game, crash, cut records taken for whole games, skips taken for legal, "
        f"or edits taken for signed: {bad} of {args.edits}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
