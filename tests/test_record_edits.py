"""Edits of real signed records: none that the engine cannot replay passes verify_game, a record cut
short verifies as unfinished, a turn turned into a skip fails, and no edit keeps the server's signature.

A bounded run of ``benchmarks/record_edits.py`` (the note reports the long run).
"""

import functools
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import record_edits  # noqa: E402


@functools.cache
def _counts():
    return record_edits.run(600, seed=5, n_records=18)


def test_no_invalid_edit_passes_and_no_valid_one_fails():
    counts = _counts()
    assert counts["crashed"] == 0, counts
    assert counts["passed_invalid"] == 0, counts
    assert counts["false_alarm"] == 0, counts
    assert counts["failed"] + counts["refused"] > 400  # the edits were real edits


def test_cuts_are_unfinished_skips_fail_and_no_edit_is_signed():
    counts = _counts()
    assert counts["cut_whole"] == 0 and counts["cut_failed"] == 0, counts
    assert counts["skip_passed"] == 0, counts
    assert counts["signed_forgery"] == 0, counts
    assert counts["cut_unfinished"] > 5 and counts["skip_failed:skip"] > 5, counts
