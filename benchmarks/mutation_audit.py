"""Planted-bug audit: does the test suite catch single realistic bugs?

Each mutant is one small change a person could make by mistake (an off-by-one, a dropped term, a
check deleted, a wrong branch) in the exact model, the engine, the simulator, the races, verify, the
cross-check or the command line. The audit copies the project to a temporary folder, applies one
mutant at a time, and runs the tests of that area there (``pytest -x``); the mutant is *killed* when
a test fails (or the run passes its time limit) and *survives* when every test passes.

Usage::

    python benchmarks/mutation_audit.py              # every mutant (about 20-40 min on 2 shared cores)
    python benchmarks/mutation_audit.py --check      # only check that every mutant applies
    python benchmarks/mutation_audit.py --only 3 17  # some mutants, by number
    python benchmarks/mutation_audit.py --area verify store  # the mutants of some areas

Prints one line per mutant and the kill score; exits 1 if any survived. Doctests and notebooks are
not counted: only tests/ may kill.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME_LIMIT = 900

# fast, direct tests first: pytest -x stops at the first failure
MODEL = ["tests/test_distribution.py", "tests/test_analysis.py", "tests/test_model.py"]
KERNEL = ["tests/test_dice_exact.py", "tests/test_model.py", "tests/test_design_batch.py", "tests/test_game.py"]
MODEL_ALL = MODEL + ["tests/test_properties.py", "tests/test_hostile_inputs.py"]
ENGINE = ["tests/test_game.py", "tests/test_verify.py", "tests/test_record.py"]
SIM = ["tests/test_simulate.py", "tests/test_crosscheck.py"]
RACES = ["tests/test_race.py", "tests/test_race_bump.py"]
VERIFY = ["tests/test_verify.py", "tests/test_record_edits.py"]
CROSS = ["tests/test_crosscheck.py"]
CLI = [
    "tests/test_hostile_inputs.py",
    "tests/test_cli_analyze.py",
    "tests/test_cli_simulate.py",
    "tests/test_cli_play.py",
    "tests/test_cli_race.py",
]
FILES = ["tests/test_board.py", "tests/test_hostile_inputs.py"]

#: (area, file, text to replace, replacement, tests that should catch it)
MUTANTS: list[tuple[str, str, str, str, list[str]]] = [
    # ---- the exact model: roll mechanics
    (
        "model",
        "chain/mechanics.py",
        "np.subtract(2 * n_sq, t, out=t, where=over)",
        "np.subtract(2 * n_sq - 1, t, out=t, where=over)",
        MODEL,
    ),
    # the exact kernel and dice of any shape
    ("kernel", "chain/mechanics.py", "prob[redeal] = cols.capped", "prob[redeal] = cols.probs", KERNEL),
    ("kernel", "chain/mechanics.py", "capped[:-1] = die.without_top().probs", "capped[:-1] = die.probs[:-1]", KERNEL),
    ("kernel", "chain/mechanics.py", "        square[:, 0] = cur\n", "        square[:, 0] = square[:, 0]\n", KERNEL),
    ("kernel", "chain/mechanics.py", "    while p**depth >= bound:", "    while p**depth >= 100 * bound:", KERNEL),
    (
        "kernel",
        "chain/exact.py",
        'exact_slot_probs(rules.die, bool(s.capped[0]) and rules.on_cap == "redeal")',
        "exact_slot_probs(rules.die, False)",
        KERNEL,
    ),
    (
        "kernel",
        "search/batch.py",
        "        go_on = s.cont[:, -1]",
        "        go_on = s.cont[:, -1] & (level < 1)",
        KERNEL,
    ),
    ("kernel", "reach.py", "    stays |= values == 0", "    stays |= values < 0", KERNEL),
    (
        "model",
        "chain/mechanics.py",
        "    return die.without_top().pmf + (Fraction(0),)",
        "    return die.pmf",
        MODEL_ALL,
    ),
    (
        "model",
        "chain/mechanics.py",
        "cont[:, f - 1] = ~stay[:, f - 1] & (square[:, f - 1] < n_sq) & ~capped",
        "cont[:, f - 1] = ~stay[:, f - 1] & ~capped",
        MODEL,
    ),
    (
        "model",
        "chain/mechanics.py",
        "np.copyto(square, cur[:, None], where=stay)",
        "np.copyto(square, cur[:, None] * 0, where=stay)",
        MODEL,
    ),
    (
        "model",
        "chain/mechanics.py",
        "square[void, f - 1] = np.asarray(origin, dtype=itype)[void]",
        "square[void, f - 1] = cur[void]",
        MODEL,
    ),
    ("model", "chain/mechanics.py", "entering = (cur == 0) & (sixes == 0)", "entering = cur == 0", MODEL),
    (
        "model",
        "chain/mechanics.py",
        "capped = np.zeros(b, dtype=bool) if rules.max_sixes is None else sixes >= rules.max_sixes",
        "capped = np.zeros(b, dtype=bool) if rules.max_sixes is None else sixes > rules.max_sixes",
        MODEL,
    ),
    ("model", "chain/mechanics.py", "np.minimum(t, n_sq, out=t)", "np.minimum(t, n_sq - 1, out=t)", MODEL),
    # ---- exact fractions, distributions
    (
        "model",
        "chain/exact.py",
        "    return x0[m] + sum((c * v for c, v in zip(x0[:m], values)), Fraction(0))",
        "    return float(x0[m] + sum((c * v for c, v in zip(x0[:m], values)), Fraction(0)))",
        MODEL_ALL,
    ),
    (
        "model",
        "analysis/distribution.py",
        'k = np.searchsorted(self._cdf, q - 1e-15, side="left").astype(float)',
        'k = np.searchsorted(self._cdf, q + 1e-15, side="left").astype(float)',
        MODEL,
    ),
    (
        "model",
        "analysis/distribution.py",
        "return float(np.dot(self.support, self.probabilities))",
        "return float(np.dot(self.support + 1, self.probabilities))",
        MODEL,
    ),
    # ---- the engine (and the play kernel it shares with the simulator)
    (
        "engine",
        "playkernel.py",
        "target = np.where(over, 2 * size - target, target)",
        "target = np.where(over, 2 * size - target - 1, target)",
        ENGINE,
    ),
    (
        "engine",
        "playkernel.py",
        "bonus = moved & six & rules.bonus_on_six & (after != size)",
        "bonus = moved & six & rules.bonus_on_six",
        ENGINE,
    ),
    ("engine", "playkernel.py", "sixes=np.where(more, sixes + 1, 0),", "sixes=np.where(more, sixes, 0),", ENGINE),
    (
        "engine",
        "playkernel.py",
        "after = np.where(forfeit, origin, np.where(restart, 0, after))",
        "after = np.where(restart, 0, after)",
        ENGINE,
    ),
    (
        "engine",
        "game/engine.py",
        "if not rules.bump or not 0 < position < self._board.size:",
        "if not rules.bump or not 0 <= position < self._board.size:",
        ENGINE,
    ),
    ("engine", "game/engine.py", "place=len(self._finished)))", "place=len(self._seats)))", ENGINE),
    (
        "engine",
        "game/engine.py",
        'if self._mode == "classic" or len(self._finished) == len(self._seats):',
        'if self._mode == "classic":',
        ENGINE,
    ),
    (
        "engine",
        "game/engine.py",
        "                kern = self._kernels[0]\n                value = self._roll(seat, turn, kern.law(capped), kern.die, sixes=sixes)",
        "                kern = self._kernels[0]\n                value = self._roll(seat, turn, kern.law(False), kern.die, sixes=sixes)",
        ENGINE,
    ),
    # ---- the simulator
    ("sim", "sim/tables.py", "    return rules.max_sixes + 1\n", "    return rules.max_sixes\n", SIM),
    (
        "sim",
        "playkernel.py",
        'acts = moved & ~bounce if rules.finish == "bounce" and not rules.jump_after_bounce else moved',
        "acts = moved",
        SIM,
    ),
    ("sim", "sim/solo.py", "landings = landings + slow.landings(counts)", "landings = landings", SIM),
    (
        "sim",
        "sim/multi.py",
        "hit = others.any(axis=1) & (end >= 1) & (end <= size - 1)",
        "hit = others.any(axis=1) & (end >= 1) & (end <= size)",
        SIM,
    ),
    (
        "sim",
        "sim/multi.py",
        "place[gid[won], seat] = n_done[won]",
        "place[gid[won], seat] = n_done[won] + 0 * seat + (seat > 0)",
        SIM,
    ),
    (
        "sim",
        "sim/core.py",
        "return float(np.std(values, dtype=np.float64, ddof=1))",
        "return float(np.std(values, dtype=np.float64))",
        SIM,
    ),
    # ---- races
    ("races", "races/independent.py", "tail = float(s[-1] ** k)", "tail = 0.0", RACES),
    (
        "races",
        "races/independent.py",
        "win = f[None, :] * s[None, :] ** seats[:, None] * s_prev[None, :] ** (k - 1 - seats)[:, None]",
        "win = f[None, :] * s_prev[None, :] ** seats[:, None] * s_prev[None, :] ** (k - 1 - seats)[:, None]",
        RACES,
    ),
    (
        "races",
        "races/independent.py",
        "q = cdf[other] if other < j else cdf_prev[other]",
        "q = cdf[other]",
        RACES,
    ),
    (
        "races",
        "races/independent.py",
        "rounds_pmf = f * sum(cdf**j * cdf_prev ** (k - 1 - j) for j in range(k))",
        "rounds_pmf = f * sum(cdf**j * cdf ** (k - 1 - j) for j in range(k))",
        RACES,
    ),
    # ---- verify_game: every check
    (
        "verify",
        "checks/verify.py",
        '        if t.seat != seat:\n            problems.append(f"seat {t.seat} played where seat {seat} was due")\n',
        "",
        VERIFY,
    ),
    (
        "verify",
        "checks/verify.py",
        '        if game_over:\n            problems.append("a turn after the game was over")\n',
        "",
        VERIFY,
    ),
    (
        "verify",
        "checks/verify.py",
        "            if rules.bump and 0 < end < n and end in others:",
        "            if rules.bump and 0 < end <= n and end in others:",
        VERIFY,
    ),
    (
        "verify",
        "checks/verify.py",
        '                if prob <= 0:\n                    problems.append(f"a turn from {start} to {end} has probability 0 in the turn matrix")\n',
        "",
        VERIFY,
    ),
    ("verify", "checks/verify.py", "    if tuple(positions) != record.positions:", "    if False:", VERIFY),
    ("verify", "checks/verify.py", "    if tuple(finished) != record.finishing_order:", "    if False:", VERIFY),
    ("verify", "checks/verify.py", "    if rolled != record.dice:", "    if False:", VERIFY),
    ("verify", "checks/verify.py", "        if want != got:", "        if want.kind != got.kind:", VERIFY),
    ("verify", "checks/verify.py", "    if len(expected) > len(logged):", "    if False:", VERIFY),
    (
        "verify",
        "checks/verify.py",
        '            if i < len(values) - 1:\n                return events, cur, -math.inf, f"rolls go on after roll {i + 1} ended the turn"\n',
        "",
        VERIFY,
    ),
    (
        "verify",
        "checks/verify.py",
        '    return events, cur, -math.inf, "the turn stopped while another roll was due"',
        '    return events, cur, logp, ""',
        VERIFY,
    ),
    ("verify", "checks/verify.py", "        if story.prob <= 0:", "        if story.prob < 0:", VERIFY),
    (
        "verify",
        "chain/mechanics.py",
        '        steps.append({"kind": "bounce", "target": landing})',
        "        pass",
        VERIFY,
    ),
    (
        "verify",
        "chain/mechanics.py",
        '        steps.append({"kind": "ladder" if nxt > pos else "snake", "start": pos, "end": nxt})',
        '        steps.append({"kind": "ladder" if nxt >= pos else "snake", "start": pos, "end": pos})',
        VERIFY,
    ),
    (
        "verify",
        "chain/mechanics.py",
        '        steps.append({"kind": "cap_reached", "sixes": int(sixes)})',
        "        pass",
        VERIFY,
    ),
    # ---- the cross-check: each statistical test disabled
    (
        "cross",
        "checks/crosschecking.py",
        'mean_check = Check("mean turns", abs(z_turns), p, share, p > share,',
        'mean_check = Check("mean turns", abs(z_turns), p, share, True,',
        CROSS,
    ),
    (
        "cross",
        "checks/crosschecking.py",
        'rolls_check = Check("mean rolls", abs(z_rolls), p, share, p > share,',
        'rolls_check = Check("mean rolls", abs(z_rolls), p, share, True,',
        CROSS,
    ),
    (
        "cross",
        "checks/crosschecking.py",
        'return Check("turn distribution", stat, p, alpha, p > alpha,',
        'return Check("turn distribution", stat, p, alpha, True,',
        CROSS,
    ),
    (
        "cross",
        "checks/crosschecking.py",
        "flagged = tuple(int(s) for s in np.flatnonzero(p_holm <= share))",
        "flagged = ()",
        CROSS,
    ),
    (
        "cross",
        "checks/crosschecking.py",
        "adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))",
        "adjusted = np.minimum(1.0, np.maximum.accumulate(p[order]))",
        CROSS,
    ),
    # ---- board files and limits
    (
        "files",
        "board.py",
        "    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():",
        "    if isinstance(value, (float, np.floating)) and np.isfinite(value):",
        FILES,
    ),
    (
        "files",
        "board.py",
        "            data = json.loads(text, object_pairs_hook=_no_duplicate_keys)",
        "            data = json.loads(text)",
        FILES,
    ),
    ("files", "board.py", '    if raw.startswith(b"\\xef\\xbb\\xbf"):', "    if False:", FILES),
    ("files", "limits.py", "    if not stat.S_ISREG(st.st_mode):", "    if stat.S_ISDIR(st.st_mode):", FILES),
    (
        "files",
        "limits.py",
        '_ASCII_INT = re.compile(r"[+-]?[0-9]+", flags=re.ASCII)',
        '_ASCII_INT = re.compile(r"[+-]?[0-9_]+")',
        FILES,
    ),
    # ---- the command line
    (
        "cli",
        "cli/common.py",
        '    if value < 0:\n        raise argparse.ArgumentTypeError(f"a seed must be a whole number >= 0, got {value}")',
        '    if value < -1:\n        raise argparse.ArgumentTypeError(f"a seed must be a whole number >= 0, got {value}")',
        CLI,
    ),
    ("cli", "cli/common.py", "    if not 1 <= value <= MAX_PLAYERS:", "    if not 1 <= value <= 100:", CLI),
    (
        "cli",
        "cli/common.py",
        '        with open(probe, "wb") as fh:\n            fh.write(b"ok")\n        probe.unlink()',
        "        pass",
        CLI,
    ),
    (
        "cli",
        "cli/__init__.py",
        '        print(f"{command}: error: {_one_line(exc)}", file=sys.stderr)',
        '        print(f"{command}: error: {exc}", file=sys.stderr)',
        CLI,
    ),
    ("cli", "cli/common.py", '    if os.sep in spec or "." in spec or os.path.lexists(spec):', "    if False:", CLI),
]


def _named(test_file: str, *names: str) -> list[str]:
    """Named tests of one test file (a mutant must be killed by the module's own tests)."""
    return [f"tests/{test_file}::{name}" for name in names]


_V = "test_verify.py"
_WS = "test_web_store.py"
#: per-module mutants, each with the named test in the module's own test file that must kill it
MUTANTS += [
    # ---- checks/verify.py: the checks a forgery needs
    (
        "verify",
        "checks/verify.py",
        "            if not skips_legal:\n                problems.append(_SKIP_UNSIGNED)\n",
        "",
        _named(_V, "test_a_skip_is_legal_only_in_a_record_signed_as_online"),
    ),
    (
        "verify",
        "checks/verify.py",
        "skips_legal = record.online and signature == SIGNED",
        "skips_legal = signature == SIGNED",
        _named(_V, "test_a_skip_is_legal_only_in_a_record_signed_as_online"),
    ),
    (
        "verify",
        "checks/verify.py",
        "        finished=record.finished,",
        "        finished=True,",
        _named(_V, "test_a_record_cut_short_verifies_as_unfinished_never_as_a_whole_game"),
    ),
    (
        "verify",
        "checks/verify.py",
        "return SIGNED if record.signature_matches(key) else SIGNATURE_MISMATCH",
        "return SIGNED",
        _named(_V, "test_an_edited_signed_record_no_longer_matches_its_signature"),
    ),
    (
        "verify",
        "checks/verify.py",
        "to_square=rules.bump_to))\n                end = rules.bump_to",
        "to_square=t.end))\n                end = t.end",
        _named(_V, "test_a_bump_must_send_the_token_to_bump_to_not_where_the_log_says"),
    ),
    (
        "verify",
        "checks/verify.py",
        "    if len(logged) > len(expected):",
        "    if False:",
        _named(_V, "test_events_appended_after_a_turns_events_are_reported"),
    ),
    (
        "verify",
        "checks/verify.py",
        "expected: list = [Skip(seat=seat, turn=t.turn)]",
        "expected: list = [Skip(seat=seat, turn=t.turn), *group[1:]]",
        _named(_V, "test_events_after_a_skip_are_not_trusted"),
    ),
    # ---- game/record.py: what a record says about itself
    (
        "record",
        "game/record.py",
        '        if "finished" in data and data["finished"] != record.finished:',
        "        if False:",
        _named(_V, "test_a_record_cut_short_verifies_as_unfinished_never_as_a_whole_game"),
    ),
    (
        "record",
        "game/record.py",
        'dataclasses.replace(self, online=bool(online), signature="")',
        'dataclasses.replace(self, online=False, signature="")',
        _named(_V, "test_a_skip_is_legal_only_in_a_record_signed_as_online"),
    ),
    (
        "record",
        "game/record.py",
        '    plain = json.loads(json.dumps({k: v for k, v in data.items() if k != "signature"}))',
        "    plain = json.loads(json.dumps(dict(data)))",
        _named(_V, "test_an_edited_signed_record_no_longer_matches_its_signature"),
    ),
    # ---- checks/stored.py: the pooled check of stored games
    (
        "stored",
        "checks/stored.py",
        'return Check("landings", float(np.abs(z).max()), float(p.min()), alpha, bool(p.min() > alpha), detail), turns',
        'return Check("landings", float(np.abs(z).max()), float(p.min()), alpha, True, detail), turns',
        _named(_WS, "test_the_wrong_model_is_caught", "test_a_loaded_die_is_caught"),
    ),
    (
        "stored",
        "checks/stored.py",
        'return Check("turn counts", float(stat), p, alpha, p > alpha, detail), len(at_risk), finished',
        'return Check("turn counts", float(stat), p, alpha, True, detail), len(at_risk), finished',
        _named(_WS, "test_a_biased_sample_is_caught"),
    ),
    (
        "stored",
        "checks/stored.py",
        "            if not t.skipped:\n                played[t.seat] += 1",
        "            if True:\n                played[t.seat] += 1",
        _named(_WS, "test_fair_games_pass"),
    ),
    (
        "stored",
        "checks/stored.py",
        "            if e.start != counted:  # a chained jump: the square where it starts was landed on too",
        "            if False:",
        _named(_WS, "test_a_chained_jump_counts_its_middle_square_as_landed_on"),
    ),
    # ---- checks/crosschecking.py: named tests of its own file
    (
        "cross",
        "checks/crosschecking.py",
        "    if impossible.size:\n        k = int(impossible[0])",
        "    if False:\n        k = int(impossible[0])",
        _named("test_crosscheck.py", "test_impossible_turn_counts_fail_outright"),
    ),
    (
        "cross",
        "checks/crosschecking.py",
        "        if acc >= 5:",
        "        if acc >= 1:",
        _named("test_crosscheck.py", "test_turn_distribution_pools_cells_to_expected_five"),
    ),
    (
        "cross",
        "checks/crosschecking.py",
        "    if truncated:\n        raise GameError(",
        "    if truncated < 0:\n        raise GameError(",
        _named("test_crosscheck.py", "test_truncated_games_are_refused_not_judged"),
    ),
    # ---- state.py: GameState.validate
    (
        "state",
        "state.py",
        'jump_may_stay = rules.finish == "bounce" and not getattr(rules, "jump_after_bounce", True)',
        'jump_may_stay = not getattr(rules, "jump_after_bounce", True)',
        _named("test_state.py", "test_a_token_on_a_jump_start_is_refused_unless_a_bounce_can_leave_it_there"),
    ),
    (
        "state",
        "state.py",
        '        if mode == "classic" and len(home) > 1:',
        "        if False:",
        _named("test_state.py", "test_states_are_checked_against_board_rules_and_mode"),
    ),
    (
        "state",
        "state.py",
        "        if not self.is_over(board, mode) and self.to_move in self.places:",
        "        if False:",
        _named("test_state.py", "test_states_are_checked_against_board_rules_and_mode"),
    ),
    (
        "state",
        "state.py",
        "                if 0 < p < size and p != rules.bump_to:",
        "                if 0 < p < size:",
        _named("test_state.py", "test_states_the_rules_allow"),
    ),
    # ---- search/: the design search
    (
        "search",
        "search/anneal.py",
        "        if a in c.no_jump or b in c.no_jump:",
        "        if a in c.no_jump:",
        _named("test_design_search.py", "test_no_jump_squares_hold_neither_a_start_nor_an_end"),
    ),
    (
        "search",
        "search/anneal.py",
        "        if not lo <= length <= hi:\n            return False",
        "        if not lo <= length:\n            return False",
        _named("test_design_search.py", "test_jump_lengths_stay_within_both_limits"),
    ),
    (
        "search",
        "search/target.py",
        "        if both:\n            raise TargetError",
        "        if len(both) > 1:\n            raise TargetError",
        _named("test_design_search.py", "test_bad_goals_and_constraints_are_refused"),
    ),
    (
        "search",
        "search/target.py",
        "        if len(self.must_jump) > ladders + snakes:",
        "        if len(self.must_jump) > ladders + snakes + 1:",
        _named("test_design_search.py", "test_bad_goals_and_constraints_are_refused"),
    ),
    (
        "search",
        "search/target.py",
        "            if not 1 <= s <= size - 1:",
        "            if not 1 <= s <= size:",
        _named("test_design_search.py", "test_bad_goals_and_constraints_are_refused"),
    ),
    (
        "search",
        "search/anneal.py",
        "    return c.must_jump <= start_set",
        "    return True",
        _named("test_design_search.py", "test_must_jump_squares_keep_their_jump_through_the_search"),
    ),
    (
        "search",
        "search/batch.py",
        "        m2 = np.linalg.solve(a, 2.0 * m - 1.0)",
        "        m2 = np.linalg.solve(a, 2.0 * m)",
        _named("test_design_batch.py", "test_a_hand_derived_board"),
    ),
    (
        "search",
        "search/batch.py",
        "        return (pmf * at_least ** (players - 1)).sum(axis=1)",
        "        return (pmf * at_least**players).sum(axis=1)",
        _named("test_design_batch.py", "test_distribution_figures_agree_with_the_length_distribution"),
    ),
    (
        "search",
        "search/batch.py",
        "    if len(sizes) != 1:",
        "    if len(sizes) > 2:",
        _named("test_design_batch.py", "test_boards_of_different_sizes_are_refused"),
    ),
    (
        "search",
        "search/sweep.py",
        '        "sd_turns": a.std_turns,',
        '        "sd_turns": a.var_turns,',
        _named("test_sweep.py", "test_rows_hold_the_exact_figures"),
    ),
    (
        "search",
        "search/sweep.py",
        '        row[f"p_longer_{t}"] = float(d.sf(t))',
        '        row[f"p_longer_{t}"] = float(d.sf(t - 1))',
        _named("test_sweep.py", "test_rows_hold_the_exact_figures"),
    ),
    (
        "search",
        "search/sweep.py",
        '    if "win_probability" in names and int(players) < 2:',
        "    if False:",
        _named("test_sweep.py", "test_metrics_by_name_and_unknown_names"),
    ),
    (
        "search",
        "search/files.py",
        '(("ladders", board.ladders), ("snakes", board.snakes))',
        '(("ladders", board.ladders), ("snakes", board.ladders))',
        _named("test_design_search.py", "test_designed_boards_round_trip_through_a_board_file"),
    ),
    (
        "search",
        "search/files.py",
        '    lines.append(f"size = {board.size}")',
        '    lines.append(f"size = {board.size + 1}")',
        _named("test_design_search.py", "test_designed_boards_round_trip_through_a_board_file"),
    ),
    (
        "search",
        "search/files.py",
        '    if suffix == ".toml":',
        '    if suffix == ".tml":',
        _named("test_design_search.py", "test_designed_boards_round_trip_through_a_board_file"),
    ),
    # ---- races: last one standing with bump, turn counts (the value table and the race from a state)
    (
        "races",
        "races/valuetable.py",
        '            fin[-2] = vals[sub.names.index("turns")]',
        '            fin[-2] = vals[sub.names.index("turns")] + 1.0',
        _named("test_race_bump.py", "test_last_one_standing_turn_counts_of_every_path_match_brute_force"),
    ),
    (
        "races",
        "races/valuetable.py",
        '            fin[-1] = vals[sub.names.index("wraps")] + (1.0 if j == m - 1 else 0.0)',
        '            fin[-1] = vals[sub.names.index("wraps")]',
        _named("test_race_bump.py", "test_last_one_standing_turn_counts_of_every_path_match_brute_force"),
    ),
    (
        "races",
        "races/bump.py",
        "                    _add(nxt_store, (left, _next_in(left, seat)), out)",
        "                    _add(nxt_store, (left, seat), out)",
        _named("test_race_bump.py", "test_last_one_standing_turn_counts_of_every_path_match_brute_force"),
    ),
    (
        "races",
        "races/bump.py",
        "                _add(nxt_store, (rest, _next_in(rest, s)), out_full)",
        "                _add(nxt_store, (rest, s), out_full)",
        _named("test_race_bump.py", "test_last_one_standing_turn_counts_of_every_path_match_brute_force"),
    ),
    # ---- web/store.py: signatures and a busy database
    (
        "store",
        "web/store.py",
        "            record = record.signed(self._key, online=online)",
        "            pass",
        _named(_WS, "test_every_stored_record_is_signed_with_a_private_key_kept_beside_the_database"),
    ),
    (
        "store",
        "web/store.py",
        "os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)",
        "os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)",
        _named(_WS, "test_every_stored_record_is_signed_with_a_private_key_kept_beside_the_database"),
    ),
    (
        "store",
        "web/store.py",
        "            if time.monotonic() >= deadline:\n                self._start_retry()",
        "            if True:\n                self._start_retry()",
        _named(_WS, "test_a_write_blocked_past_the_timeout_is_retried_until_it_is_written"),
    ),
    (
        "store",
        "web/store.py",
        "                self._start_retry()\n                raise StoreBusyError(",
        "                raise StoreBusyError(",
        _named(_WS, "test_a_game_blocked_past_the_wait_stays_queued_and_is_written_later"),
    ),
    (
        "store",
        "web/store.py",
        "        while not self._flush() and time.monotonic() < deadline:",
        "        while False:",
        _named(_WS, "test_close_writes_what_is_queued"),
    ),
]


_WA, _WAPI = "test_web_abuse.py", "test_web_api.py"
#: the web server under hostile clients (protocol, rooms, odds pool, guard, serving)
MUTANTS += [
    (
        "web",
        "web/protocol.py",
        '    size = len(text.encode("utf-8", "surrogatepass"))',
        "    size = len(text)",
        _named(_WAPI, "test_refused_messages_change_nothing"),
    ),
    (
        "web",
        "web/protocol.py",
        "        if depth > MAX_DEPTH:",
        "        if False:",
        _named(_WAPI, "test_refused_messages_change_nothing"),
    ),
    (
        "web",
        "web/rooms.py",
        '(self.kind == "online" and seat == 0 and self._is_host(secret))',
        '(self.kind == "online" and self._is_host(secret))',
        _named(_WA, "test_host_secret_rolls_only_for_the_host_seat"),
    ),
    (
        "web",
        "web/rooms.py",
        "                    stored = await room.abandon()",
        "                    stored = True",
        _named(_WA, "test_the_reaper_stores_a_game_before_dropping_its_room"),
    ),
    (
        "web",
        "web/rooms.py",
        "        if not self._anyone_racing():",
        "        if False:",
        _named(_WA, "test_nobody_racing_present_pauses_the_game"),
    ),
    (
        "web",
        "web/odds.py",
        "            if key in self._inflight:\n                return self._inflight[key]\n",
        "",
        _named(_WA, "test_odds_solves_are_shared_bounded_and_kept_within_their_memory"),
    ),
    (
        "web",
        "web/guard.py",
        '        if origin is not None and (scope["type"] == "websocket" or method not in _SAFE_METHODS):',
        "        if False:",
        _named(_WA, "test_host_origin_and_content_type"),
    ),
    (
        "web",
        "web/serving.py",
        "        super().connection_made(transport)\n        self._arm_header_timer()",
        "        super().connection_made(transport)",
        _named(_WA, "test_slow_and_silent_sockets_are_closed_and_capped"),
    ),
]

_WC = "test_web_crash.py"
#: an online game survives the server (persist, the rooms' writes, restore, the countdown after a restart)
MUTANTS += [
    (
        "web",
        "web/rooms.py",
        "        await self._persist(written)  # the turn is on disk",
        "        pass  # the turn is on disk",
        _named(_WC, "test_rooms_round_trip_through_the_store"),
    ),
    (
        "web",
        "web/persist.py",
        '"ai": s.ai, "hash": s.digest,',
        '"ai": s.ai, "hash": s.secret,',
        _named(_WC, "test_rooms_round_trip_through_the_store"),
    ),
    (
        "web",
        "web/rooms.py",
        '                if self.status == "playing" and self.deadline:\n                    self._schedule()',
        '                if self.status == "playing" and self.deadline:\n                    pass',
        _named(_WC, "test_the_countdown_after_a_restart_is_a_fresh_full_one"),
    ),
    (
        "web",
        "web/rooms.py",
        "(RESTORE_GRACE if self._fresh_for == (game.total_turns, seat) else 0.0)",
        "0.0",
        _named(_WC, "test_the_countdown_after_a_restart_is_a_fresh_full_one"),
    ),
    (
        "web",
        "web/persist.py",
        '        room.broadcast({"type": "saving", "saving": "behind"})',
        "        pass",
        _named(_WC, "test_a_busy_database_holds_the_turn_back_and_says_so"),
    ),
    (
        "web",
        "web/rooms.py",
        "                if self.persists:\n                    async with room.lock:",
        "                if False:\n                    async with room.lock:",
        _named(_WAPI, "test_a_graceful_stop_leaves_the_rooms_to_be_resumed"),
    ),
]


_WG, _WO = "test_web_games.py", "test_web_odds.py"
#: at least three per module of snlmarkov/web/, each killed by a named test of the module's own test file
#: (limits.py has none of its own: test_web_abuse.py, which tests the limits, stands in)
MUTANTS += [
    # ---- web/app.py: the HTTP routes
    (
        "web",
        "web/app.py",
        "        if not isinstance(data, dict) or not set(data) <= _ROOM_FIELDS:",
        "        if not isinstance(data, dict):",
        _named(_WAPI, "test_refused_http"),
    ),
    (
        "web",
        "web/app.py",
        "            if len(body) > MAX_BODY_BYTES:",
        "            if len(body) > 4 * MAX_BODY_BYTES:",
        _named(_WAPI, "test_refused_http"),
    ),
    (
        "web",
        "web/app.py",
        '            "seats": [s.secret if not s.ai else "" for s in room.seats],',
        '            "seats": [s.secret for s in room.seats],',
        _named(_WAPI, "test_play_with_ai"),
    ),
    # ---- web/analysis.py: a game page's figures
    (
        "web",
        "web/analysis.py",
        '            "others": float(figure[-1, i] - figure[0, i] - own[i]),',
        '            "others": float(figure[-1, i] - own[i]),',
        _named(_WG, "test_analysis_equals_the_library"),
    ),
    (
        "web",
        "web/analysis.py",
        '        "winner": record.finishing_order[0] if record.finishing_order else -1,',
        '        "winner": record.finishing_order[0] if record.finishing_order else 0,',
        _named(_WG, "test_analysis_equals_the_library"),
    ),
    (
        "web",
        "web/analysis.py",
        "        if value > cap:",
        "        if value > cap + 1:",
        _named(_WG, "test_upload_refuses_records_past_the_analysis_limits"),
    ),
    # ---- web/archive.py: the archive's pages and filters
    (
        "web",
        "web/archive.py",
        '    offset = (int(filters["page"]) - 1) * page_size',
        '    offset = int(filters["page"]) * page_size',
        _named(_WG, "test_archive_pages"),
    ),
    (
        "web",
        "web/archive.py",
        '    for column in ("mode", "status"):',
        '    for column in ("mode",):',
        _named(_WG, "test_archive_filters"),
    ),
    (
        "web",
        "web/archive.py",
        "WHERE instr(lower(json_extract(s.value, '$.name')), lower(?)) > 0)",
        "WHERE instr(json_extract(s.value, '$.name'), ?) > 0)",
        _named(_WG, "test_archive_filters"),
    ),
    # ---- web/games.py: the game pages' routes
    (
        "web",
        "web/games.py",
        """        disposition = f'attachment; filename="snl-game-{game_id}.json"'""",
        """        disposition = f'inline; filename="snl-game-{game_id}.json"'""",
        _named(_WG, "test_record_download"),
    ),
    (
        "web",
        "web/games.py",
        '            data = await self._analysis(("id", game_id), record)',
        '            data = await self._analysis(("id", 0), record)',
        _named(_WG, "test_analysis_equals_the_library"),
    ),
    (
        "web",
        "web/games.py",
        '"bad_secret": 403, "not_over": 409',
        '"bad_secret": 400, "not_over": 409',
        _named(_WG, "test_rematch_of_a_local_room"),
    ),
    # ---- web/rematch.py
    (
        "web",
        "web/rematch.py",
        '    if room.status != "over":',
        "    if False:",
        _named(_WG, "test_rematch_of_a_local_room"),
    ),
    (
        "web",
        "web/rematch.py",
        "    votes = _votes.setdefault(room, {i for i, s in enumerate(room.seats) if s.ai})",
        "    votes = _votes.setdefault(room, set())",
        _named(_WG, "test_rematch_online_needs_every_seat"),
    ),
    (
        "web",
        "web/rematch.py",
        "            if conn.seat >= 0 or conn.host:",
        "            if True:",
        _named(_WG, "test_rematch_online_needs_every_seat"),
    ),
    # ---- web/limits.py
    (
        "web",
        "web/limits.py",
        "        if tokens >= 1:",
        "        if tokens >= 0:",
        _named(_WA, "test_throttles_count_an_ipv6_network_as_one_client_and_limits_are_checked"),
    ),
    (
        "web",
        "web/limits.py",
        '        return str(ipaddress.ip_network(f"{ip}/64", strict=False))',
        '        return str(ipaddress.ip_network(f"{ip}/128", strict=False))',
        _named(_WA, "test_throttles_count_an_ipv6_network_as_one_client_and_limits_are_checked"),
    ),
    (
        "web",
        "web/limits.py",
        "not isinstance(value, (int, float)) or not value > 0:",
        "not isinstance(value, (int, float)) or value < 0:",
        _named(_WA, "test_throttles_count_an_ipv6_network_as_one_client_and_limits_are_checked"),
    ),
    # ---- web/guard.py
    (
        "web",
        "web/guard.py",
        '            if kind != "application/json":',
        '            if kind not in ("application/json", "text/plain"):',
        _named(_WA, "test_host_origin_and_content_type"),
    ),
    (
        "web",
        "web/guard.py",
        '        (b"x-frame-options", b"DENY"),',
        '        (b"x-frame-options", b"SAMEORIGIN"),',
        _named(_WA, "test_host_origin_and_content_type"),
    ),
    (
        "web",
        "web/guard.py",
        "        if not host_allowed(host, self.allowed_hosts):",
        "        if not host:",
        _named(_WA, "test_host_origin_and_content_type"),
    ),
    # ---- web/odds.py
    (
        "web",
        "web/odds.py",
        "            if len(self._inflight) >= self.workers + self.queue:",
        "            if len(self._inflight) > self.workers + self.queue:",
        _named(_WA, "test_odds_solves_are_shared_bounded_and_kept_within_their_memory"),
    ),
    (
        "web",
        "web/odds.py",
        "            while self.held_bytes > self.cache_bytes:",
        "            while self.held_bytes > 2 * self.cache_bytes:",
        _named(_WA, "test_odds_solves_are_shared_bounded_and_kept_within_their_memory"),
    ),
    (
        "web",
        "web/odds.py",
        "        state = GameState(tuple(positions), to_move=current, places=tuple(finished))",
        "        state = GameState(tuple(positions), to_move=0, places=tuple(finished))",
        _named(_WO, "test_hand_derived_two_square_board"),
    ),
    # ---- web/serving.py
    (
        "web",
        "web/serving.py",
        "len(mine) >= self.limits.connections_per_address:",
        "len(mine) > self.limits.connections_per_address:",
        _named(_WA, "test_slow_and_silent_sockets_are_closed_and_capped"),
    ),
    (
        "web",
        "web/serving.py",
        "        if now - self.last < self.every:",
        "        if now - self.last < 0:",
        _named(_WA, "test_running_out_of_files_is_logged_once_in_a_while"),
    ),
    (
        "web",
        "web/serving.py",
        "            if exc.errno == errno.EADDRINUSE",
        "            if exc.errno == errno.EACCES",
        _named(_WA, "test_serve_checks_the_port_before_anything"),
    ),
    # ---- web/persist.py
    (
        "web",
        "web/persist.py",
        '    room.texts.extend(str(t) for t in s["texts"])',
        "    room.texts.clear()",
        _named(_WC, "test_rooms_round_trip_through_the_store"),
    ),
    (
        "web",
        "web/persist.py",
        '        if row.status == "abandoned":  # its game is stored',
        '        if row.status == "over":  # its game is stored',
        _named(_WC, "test_rooms_round_trip_through_the_store"),
    ),
    # ---- web/protocol.py
    (
        "web",
        "web/protocol.py",
        '        elif required:\n            raise ProtocolError(f"{kind}: missing field',
        '        elif False:\n            raise ProtocolError(f"{kind}: missing field',
        _named(_WAPI, "test_refused_messages_change_nothing"),
    ),
    (
        "web",
        "web/protocol.py",
        '    if not isinstance(data, dict) or not isinstance(data.get("type"), str):',
        '    if not isinstance(data.get("type"), str):',
        _named(_WAPI, "test_refused_messages_change_nothing"),
    ),
    (
        "web",
        "web/protocol.py",
        "    if not 1 <= len(v) <= MAX_NAME or not v.isprintable():",
        "    if not 1 <= len(v) <= 3 * MAX_NAME or not v.isprintable():",
        _named(_WAPI, "test_refused_http"),
    ),
]


_WCH, _CX, _CP, _CF = "test_web_choices.py", "test_choice_exact.py", "test_choice_policies.py", "test_choice_files.py"
#: the modules that had fewer than three planted bugs (issue 20): the coach and the turns with a choice in a room,
#: the dice, the policies, the exact decision process; the board's no-chain rule of issue 20's list
MUTANTS += [
    # ---- web/coach.py: the optimal play and the coach's verdicts
    (
        "web",
        "web/coach.py",
        '        sign = -1.0 if self.unit == "win" else 1.0',
        "        sign = 1.0",
        _named(_WCH, "test_the_race_coach_against_a_hand_computation"),
    ),
    (
        "web",
        "web/coach.py",
        "(math.inf if not math.isfinite(mine) else mine - best_v)",
        "(math.inf if not math.isfinite(mine) else abs(mine))",
        _named(_WCH, "test_the_coach_against_a_hand_computation"),
    ),
    (
        "web",
        "web/coach.py",
        '            row["best"] += verdict.is_best',
        '            row["best"] += 1',
        _named(_WCH, "test_accuracy_against_a_hand_computation"),
    ),
    # ---- web/turns.py: a room's turns with a choice
    (
        "web",
        "web/turns.py",
        "    if value not in d.options:",
        "    if False:",
        _named(_WCH, "test_choose_the_move_and_refused_choices"),
    ),
    (
        "web",
        "web/turns.py",
        '    if game.waiting:\n        raise ProtocolError("roll: the turn has begun',
        '    if False:\n        raise ProtocolError("roll: the turn has begun',
        _named(_WCH, "test_choose_the_move_and_refused_choices"),
    ),
    (
        "web",
        "web/turns.py",
        "    await _go_on(room, [], chosen, idle=True)",
        "    await _go_on(room, [], chosen, idle=False)",
        _named(_WCH, "test_an_idle_players_choice_is_the_greedy_one"),
    ),
    (
        "web",
        "web/turns.py",
        '    room.texts.append(f"{name} took too long',
        '    (f"{name} took too long',
        _named(_WCH, "test_an_idle_players_choice_is_the_greedy_one"),
    ),
    # ---- dice.py: the laws of the dice
    (
        "kernel",
        "dice.py",
        "                for j in range(f):",
        "                for j in range(f - 1):",
        _named("test_dice.py", "test_two_dice_summed"),
    ),
    (
        "kernel",
        "dice.py",
        "            v = z if up == 0 else up",
        "            v = up",
        _named("test_dice.py", "test_cowries_binomial_with_the_zero_reading"),
    ),
    (
        "kernel",
        "dice.py",
        "dict(zip(self.values[:-1], self.pmf[:-1]))",
        "dict(zip(self.values[1:], self.pmf[1:]))",
        _named("test_dice.py", "test_without_top"),
    ),
    (
        "kernel",
        "dice.py",
        "        return sum(((v - m) ** 2 * p for v, p",
        "        return sum(((v - m) * p for v, p",
        _named("test_dice.py", "test_fair_die_and_spinner"),
    ),
    # ---- policy.py: policies resolved to tables
    (
        "kernel",
        "policy.py",
        '            order = np.argsort(-far, axis=-1, kind="stable")',
        '            order = np.argsort(far, axis=-1, kind="stable")',
        _named(_CP, "test_greedy_and_random_resolve_and_analyze"),
    ),
    (
        "kernel",
        "policy.py",
        "            row = np.roll(np.arange(n_opt), k)  # die k first",
        "            row = np.arange(n_opt)  # die k first",
        _named(_CP, "test_a_fixed_die_plays_as_the_plain_rules"),
    ),
    (
        "kernel",
        "policy.py",
        "        return bool(np.all(bits == (1 << n_opt) - 1))",
        "        return bool(np.all(bits > 0))",
        _named(_CF, "test_policy_construction_is_checked"),
    ),
    # ---- chain/choice.py: the exact decision process and its solvers
    (
        "kernel",
        "chain/choice.py",
        "            return ranks, q.min(axis=1)",
        "            return ranks, q.mean(axis=1)",
        _named(_CX, "test_policy_iteration_is_a_bellman_fixed_point"),
    ),
    (
        "kernel",
        "chain/choice.py",
        "                    r = _ranks_of(-q)",
        "                    r = _ranks_of(q)",
        _named(_CX, "test_within_equals_an_exact_dynamic_programme"),
    ),
    (
        "kernel",
        "chain/choice.py",
        "            return np.where(s.cont[rows], w[tgt], w_prev[tgt])",
        "            return np.where(s.cont[rows], w_prev[tgt], w_prev[tgt])",
        _named(_CX, "test_within_equals_an_exact_dynamic_programme"),
    ),
    (
        "kernel",
        "chain/choice.py",
        "                    settled = np.array_equal(w[at], best)",
        "                    settled = True",
        _named(_CX, "test_within_without_a_cap_matches_value_iteration"),
    ),
    # ---- web/rooms.py: a room reaped while the database is busy is queued once, not once a sweep
    (
        "web",
        "web/rooms.py",
        "            room._queued = True\n            if status",
        "            if status",
        _named(_WC, "test_a_room_reaped_while_the_database_is_busy_is_stored_once"),
    ),
    (
        "web",
        "web/rooms.py",
        "                asyncio.ensure_future(self._when_written(room, busy))",
        "                pass",
        _named(_WC, "test_a_game_finished_while_the_database_is_busy_is_told_its_id_once_written"),
    ),
    (
        "store",
        "web/store.py",
        'and is written when it frees",\n                    item,',
        'and is written when it frees",',
        _named(_WC, "test_a_game_finished_while_the_database_is_busy_is_told_its_id_once_written"),
    ),
    # ---- board.py: a jump ending on another jump's start, without chain (issue 20's list: a snake too)
    (
        "files",
        "board.py",
        "            if end in jumps:\n                raise BoardError(",
        "            if end in jumps and end > start:\n                raise BoardError(",
        _named("test_board.py", "test_a_jump_ending_on_another_jumps_start_is_refused_without_chain"),
    ),
    # ---- web/timing.py: the server's own time per message (the load benchmark's figures)
    (
        "web",
        "web/timing.py",
        "        if k < self.size:\n            self.samples[k] = x",
        "        if k < 0:\n            self.samples[k] = x",
        _named("test_web_timing.py", "test_reservoir_percentiles_and_bound"),
    ),
    (
        "web",
        "web/timing.py",
        "return xs[min(len(xs) - 1, max(0, int(-(-p * len(xs) // 100)) - 1))] * 1e3",
        "return xs[min(len(xs) - 1, max(0, int(p * len(xs) // 100)))] * 1e3",
        _named("test_web_timing.py", "test_reservoir_percentiles_and_bound"),
    ),
    (
        "web",
        "web/timing.py",
        '        self.kind = "interrupted"  # until the handling returns its kind',
        '        self.kind = ""  # until the handling returns its kind',
        _named("test_web_timing.py", "test_a_handling_that_raises_is_counted_as_interrupted"),
    ),
    (
        "web",
        "web/timing.py",
        '        series["rest"].add(total - span.write)',
        '        series["rest"].add(total)',
        _named("test_web_timing.py", "test_a_span_ends_with_its_last_frame_and_keeps_the_write_apart"),
    ),
]


def _copy(dest: Path) -> None:
    for name in ("snlmarkov", "tests", "benchmarks"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", ".pydtmc-venv"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    (dest / "notebooks").mkdir()


def _apply(base: Path, mutant: tuple) -> tuple[Path, str]:
    _, rel, old, new, _ = mutant
    path = base / "snlmarkov" / rel
    text = path.read_text()
    count = text.count(old)
    if count != 1:
        raise SystemExit(f"mutant does not apply ({count} matches) in {rel}: {old!r}")
    path.write_text(text.replace(old, new))
    return path, text


def run_one(index: int, workdir: Path) -> tuple[int, str, float, str]:
    mutant = MUTANTS[index]
    path, original = _apply(workdir, mutant)
    start = time.monotonic()
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *mutant[4]]
    try:
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=TIME_LIMIT)
        verdict = "killed" if proc.returncode != 0 else "SURVIVED"
        detail = next((ln for ln in proc.stdout.splitlines() if ln.startswith("FAILED")), "")
    except subprocess.TimeoutExpired:
        verdict, detail = "killed", "(time limit)"
    finally:
        path.write_text(original)
    return index, verdict, time.monotonic() - start, detail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that every mutant applies")
    parser.add_argument("--only", type=int, nargs="+", help="mutant numbers to run")
    parser.add_argument("--area", nargs="+", help="areas whose mutants to run (verify, store, state, ...)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    chosen = args.only or [i for i, m in enumerate(MUTANTS) if not args.area or m[0] in args.area]
    with tempfile.TemporaryDirectory() as tmp:
        dirs = []
        for j in range(max(1, args.jobs)):
            d = Path(tmp) / f"copy{j}"
            d.mkdir()
            _copy(d)
            dirs.append(d)
        if args.check:
            for i in chosen:
                path, original = _apply(dirs[0], MUTANTS[i])
                path.write_text(original)
            print(f"{len(chosen)} mutants apply")
            return 0
        free = list(dirs)
        results = []

        def task(i: int):
            d = free.pop()
            try:
                return run_one(i, d)
            finally:
                free.append(d)

        with ThreadPoolExecutor(len(dirs)) as pool:
            for index, verdict, seconds, detail in pool.map(task, chosen):
                area, rel, old, new, _ = MUTANTS[index]
                print(
                    f"{index:3d} {verdict:8} {seconds:6.1f}s {area:6} {rel}: {old.strip()[:60]!r} {detail[:90]}",
                    flush=True,
                )
                results.append(verdict)
    killed = results.count("killed")
    print(f"kill score: {killed}/{len(results)} = {100 * killed / len(results):.1f}%")
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
