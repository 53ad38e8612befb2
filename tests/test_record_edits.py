"""Single-field edits of real records: none that the engine cannot replay passes verify_game.

A bounded run of ``benchmarks/record_edits.py`` (the note reports the 20,000-edit run).
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import record_edits  # noqa: E402


def test_no_invalid_edit_passes_and_no_valid_one_fails():
    counts = record_edits.run(600, seed=5, n_records=18)
    assert counts["crashed"] == 0, counts
    assert counts["passed_invalid"] == 0, counts
    assert counts["false_alarm"] == 0, counts
    assert counts["failed"] + counts["refused"] > 400  # the edits were real edits
