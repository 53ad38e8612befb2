"""The exact joint chain of races with ``bump`` (snlmarkov.races.bump).

The tensor iteration of :mod:`snlmarkov.races.bump` is checked against a
hand-worked race and against a brute-force forward iteration written here
independently: a plain dictionary of whole game states (every token's
square, the seat to move, the round, the finishing order so far), one turn
at a time, applying the bump and the seat rotation literally.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, Rules, turn_model
from snlmarkov.races.bump import JointMover, joint_race
from snlmarkov.races.independent import independent_race
from snlmarkov.races.joint import resting_squares

TOL = 1e-10


# --------------------------------------------------------------- brute force
def brute_force_race(
    board: Board, rules: Rules, players: int, mode: str, tail: float = 1e-15, start: snl.GameState | None = None
) -> dict:
    """Joint distribution of (finishing order, rounds, total turns), turn by turn (from ``start`` if given)."""
    n = board.size
    m = turn_model(board, rules).matrix.tocsr()
    rows = {
        p: dict(zip(m.indices[m.indptr[p] : m.indptr[p + 1]].tolist(), m.data[m.indptr[p] : m.indptr[p + 1]].tolist()))
        for p in range(n)
    }
    # state: (squares, seat to move, round of that turn, finishing order so far); -1 = finished
    states = {((0,) * players, 0, 1, ()): 1.0}
    if start is not None:
        squares0 = tuple(-1 if s in start.places else p for s, p in enumerate(start.positions))
        states = {(squares0, start.to_move, 1, tuple(start.places)): 1.0}
    outcomes: dict = defaultdict(float)
    turn = 0
    while sum(states.values()) > tail:
        turn += 1
        nxt: dict = defaultdict(float)
        for (squares, seat, rnd, done), prob in states.items():
            for end, p in rows[squares[seat]].items():
                new = list(squares)
                order = done
                if end == n:
                    new[seat] = -1
                    order = done + (seat,)
                    if mode == "classic" or len(order) == players:
                        outcomes[(order, rnd, turn)] += prob * p
                        continue
                elif rules.bump and end >= 1 and any(new[o] == end for o in range(players) if o != seat):
                    end = rules.bump_to
                if end != n:
                    new[seat] = end
                alive = [s for s in range(players) if new[s] >= 0]
                after = [s for s in alive if s > seat]
                nxt_seat = after[0] if after else alive[0]
                nxt[(tuple(new), nxt_seat, rnd if after else rnd + 1, order)] += prob * p
        states = nxt
        if turn > 100_000:
            raise AssertionError("brute force did not converge")
    return dict(outcomes)


def summarise(outcomes: dict, players: int, mode: str) -> dict:
    win = np.zeros(players)
    orders: dict = defaultdict(float)
    rounds: dict = defaultdict(float)
    turns: dict = defaultdict(float)
    for (order, rnd, turn), p in outcomes.items():
        win[order[0]] += p
        orders[order] += p
        rounds[rnd] += p
        turns[turn] += p
    to_array = lambda d: np.array([d.get(i, 0.0) for i in range(max(d) + 1)])  # noqa: E731
    return {"win": win, "orders": dict(orders), "rounds": to_array(rounds), "turns": to_array(turns)}


def assert_matches_brute_force(board: Board, rules: Rules, players: int, mode: str) -> None:
    want = summarise(brute_force_race(board, rules, players, mode), players, mode)
    got = snl.race(board, rules, players=players, mode=mode, method="exact", tail=1e-15)
    if rules.bump and players > 1:
        assert got.method == "exact: joint chain (bump)"
    np.testing.assert_allclose(got.win_probability, want["win"], rtol=0, atol=TOL)
    for order, p in got.order_probability.items():
        assert abs(p - want["orders"].get(order, 0.0)) < TOL, order
    assert set(want["orders"]) <= set(got.order_probability)
    for dist, ref in ((got.rounds_distribution, want["rounds"]), (got.turns_distribution, want["turns"])):
        h = min(dist.horizon, ref.size - 1)
        np.testing.assert_allclose(dist.pmf(np.arange(h + 1)), ref[: h + 1], rtol=0, atol=TOL)
        assert dist.tail_mass < 1e-14
    assert abs(got.expected_rounds - np.dot(np.arange(want["rounds"].size), want["rounds"])) < 1e-9
    assert abs(got.expected_total_turns - np.dot(np.arange(want["turns"].size), want["turns"])) < 1e-9


# a variety of tiny boards and rule sets on which bump matters
CASES = {
    "four-squares-no-exact-finish": (Board(4), Rules.preset("plain").replace(faces=2, finish="none", bump=True)),
    "snake-ladder-forfeit-start-six": (
        Board(6, {2: 5, 4: 1}),
        Rules(
            finish="stay",
            bonus_on_six=True,
            max_sixes=1,
            on_cap="forfeit",
            start_on_six=True,
            bump=True,
            bump_to=2,
            faces=3,
        ),
    ),
    "bounce-bump-to-snake-head": (
        Board(5, {3: 1}),
        Rules(finish="bounce", bonus_on_six=False, max_sixes=None, start_on_six=True, bump=True, bump_to=3, faces=2),
    ),
    "redeal-bonus": (
        Board(7, {2: 6, 5: 3}),
        Rules(finish="stay", bonus_on_six=True, max_sixes=2, on_cap="redeal", bump=True, bump_to=1, faces=3),
    ),
}


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_joint_chain_matches_brute_force(case: str, players: int, mode: str) -> None:
    board, rules = CASES[case]
    assert_matches_brute_force(board, rules, players, mode)


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_joint_chain_four_players_matches_brute_force(mode: str) -> None:
    board, rules = CASES["four-squares-no-exact-finish"]
    assert_matches_brute_force(board, rules, 4, mode)


def test_brute_force_sees_the_bump() -> None:
    """The reference is not blind to the rule: with and without bump it differs."""
    board, rules = CASES["snake-ladder-forfeit-start-six"]
    with_bump = summarise(brute_force_race(board, rules, 2, "classic"), 2, "classic")
    without = summarise(brute_force_race(board, rules.replace(bump=False), 2, "classic"), 2, "classic")
    assert abs(with_bump["win"][0] - without["win"][0]) > 1e-3


def test_hand_worked_race() -> None:
    """Board of 4, a two-faced die, no exact finish, bump to 1.

    W(a, b) = chance that the seat to move, on a, wins against the other on b.
    From 3 a turn always finishes; W(1,3) = W(0,3) = W(0,2) = 0,
    W(2,1) = W(1,0) = 1, W(2,3) = 1/2, W(1,2) = 1/4, W(1,1) = 7/8,
    W(0,1) = 7/16, so W(0,0) = (9/16 + 1)/2 = 25/32. Without the bump the same
    steps give 47/64.
    """
    board, rules = CASES["four-squares-no-exact-finish"]
    r = snl.race(board, rules, players=2)
    assert r.method == "exact: joint chain (bump)"
    assert abs(r.win_probability[0] - 25 / 32) < 1e-12
    assert abs(r.win_probability[1] - 7 / 32) < 1e-12
    plain = snl.race(board, rules.replace(bump=False), players=2)
    assert abs(plain.win_probability[0] - 47 / 64) < 1e-12


def test_bump_that_cannot_act_changes_nothing() -> None:
    """On a board of 2 the only square a token can be bumped from is bump_to itself."""
    board = Board(2)
    rules = Rules.preset("plain").replace(faces=3, bump=True)
    for mode in ("classic", "last_one_standing"):
        a = snl.race(board, rules, players=3, mode=mode)
        b = snl.race(board, rules.replace(bump=False), players=3, mode=mode)
        assert a.method != b.method
        np.testing.assert_allclose(a.place_probability, b.place_probability, atol=TOL)
        for order, p in b.order_probability.items():
            assert abs(a.order_probability[order] - p) < TOL
        assert abs(a.expected_rounds - b.expected_rounds) < 1e-9
        assert abs(a.expected_total_turns - b.expected_total_turns) < 1e-9


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_joint_chain_without_bump_equals_independent_players(mode: str) -> None:
    """The tensor engine with the bump switched off reproduces the independent formulas."""
    board, rules = Board.builtin("milton_bradley"), Rules.preset("plain")
    joint = joint_race(turn_model(board, rules), rules, 3, mode, tail=1e-13)
    indep = independent_race(snl.analyze(board, rules).length, 3, mode)
    np.testing.assert_allclose(joint["win_probability"], indep["win_probability"], atol=TOL)
    np.testing.assert_allclose(joint["place_probability"], indep["place_probability"], atol=TOL)
    for order, p in indep["order_probability"].items():
        assert abs(joint["order_probability"].get(order, 0.0) - p) < TOL
    for name in ("rounds_distribution", "turns_distribution"):
        a, b = joint[name], indep[name]
        h = min(a.horizon, b.horizon)
        np.testing.assert_allclose(a.probabilities[: h + 1], b.probabilities[: h + 1], atol=TOL)
        assert abs(a.mean() - b.mean()) < 1e-9


# ------------------------------------------------------------- the pieces
def test_resting_squares_skip_jump_starts_but_keep_bump_to() -> None:
    board = Board(6, {2: 5, 4: 1})
    rules = Rules.preset("plain").replace(bump=True, bump_to=2)
    squares = resting_squares(turn_model(board, rules), rules.bump_to).tolist()
    assert squares == [0, 1, 2, 3, 5]  # 4 is a snake head; 2 is a ladder foot but also bump_to


def test_mover_moves_and_bumps_with_rotation() -> None:
    board = Board(4)
    rules = Rules.preset("plain").replace(faces=2, finish="none", bump=True)
    mover = JointMover.of(turn_model(board, rules), rules)
    n = mover.n
    assert mover.squares.tolist() == [0, 1, 2, 3]
    # three tokens: mover on 1, next seat on 3, last seat on 0
    x = np.zeros(n**3)
    x[np.ravel_multi_index((1, 3, 0), (n,) * 3)] = 1.0
    nxt, out = mover.move(x, 3)
    assert out.sum() == 0.0  # from 1 no roll reaches 4
    got = nxt.reshape(n, n, n)  # axes: the next seat, the last seat, the mover
    assert got[3, 0, 2] == 0.5  # a roll of 1 lands on the empty square 2
    assert got[3, 0, 1] == 0.5  # a roll of 2 lands on 3, held by the next seat: placed on 1
    assert abs(nxt.sum() - 1.0) < 1e-15


def test_mover_reports_finished_mass_over_the_others() -> None:
    board = Board(4)
    rules = Rules.preset("plain").replace(faces=2, finish="none", bump=True)
    mover = JointMover.of(turn_model(board, rules), rules)
    n = mover.n
    x = np.zeros(n**3)
    x[np.ravel_multi_index((3, 2, 1), (n,) * 3)] = 1.0
    nxt, out = mover.move(x, 3)
    assert nxt.sum() == 0.0
    assert out.reshape(n, n)[2, 1] == 1.0


@pytest.mark.parametrize("players", [2, 3])
def test_tokens_share_only_start_and_bump_to(players: int) -> None:
    """Reachable joint states never put two tokens on one square other than 0 or bump_to."""
    board, rules = CASES["redeal-bonus"]
    mover = JointMover.of(turn_model(board, rules), rules)
    n = mover.n
    x = np.zeros(n**players)
    x[0] = 1.0
    for _ in range(12 * players):
        x, _ = mover.move(x, players)
        for idx in np.flatnonzero(x > 0):
            squares = [int(mover.squares[i]) for i in np.unravel_index(idx, (n,) * players)]
            on_board = [s for s in squares if s not in (0, rules.bump_to)]
            assert len(on_board) == len(set(on_board))


def test_stall_detector_refuses_probability_that_stops_falling() -> None:
    """A chain with a trap would keep some probability in play for ever: refused, not looped on."""
    from snlmarkov.errors import SnlError
    from snlmarkov.races.bump import _Stall

    stall = _Stall(max_rounds=10**6)
    stall.check(1000, 0.5)
    with pytest.raises(SnlError, match="cannot end"):
        for rnd in range(1, 10_000):
            stall.check(rnd, 0.5)
    with pytest.raises(SnlError, match="had not ended after 10 rounds"):
        _Stall(max_rounds=10).check(11, 0.1)


def test_orders_of_joint_chain_cover_every_permutation() -> None:
    board, rules = CASES["bounce-bump-to-snake-head"]
    r = snl.race(board, rules, players=3, mode="last_one_standing")
    assert sorted(r.order_probability) == sorted(itertools.permutations(range(3)))


# ------------------------------------------------- turn counts of the other paths
def _los_states(board: Board, players: int) -> list:
    out = [snl.GameState.initial(players), snl.GameState((0,) * players, to_move=1)]
    if players == 3:
        out.append(snl.GameState((board.size, 0, 0), to_move=1, places=(0,)))
        out.append(snl.GameState((0, board.size, 0), to_move=2, places=(1,)))
    return out


# every case with 2 players and the four-square one with 3 in the fast suite; the other cases' 3-player
# brute forces (3 to 8 s each) in the slow step
LOS_PATH_CASES = [
    pytest.param(
        case, players, marks=[pytest.mark.slow] if players == 3 and case != "four-squares-no-exact-finish" else []
    )
    for case in sorted(CASES)
    for players in (2, 3)
]


@pytest.mark.parametrize("case, players", LOS_PATH_CASES)
def test_last_one_standing_turn_counts_of_every_path_match_brute_force(case: str, players: int) -> None:
    """Under last one standing with bump the turn counts depend on who moves after a finish: the
    chances alone do not show a path that lets the seat that just moved move again. The expected
    turns of the odds' value table (``Odds``) and of a race from a state (``race(..., state=...)``,
    its whole turns distribution) are compared with the brute force's, from the start, from a start
    with another seat to move, and (3 players) after a seat has finished."""
    board, rules = CASES[case]
    mode = "last_one_standing"
    odds = snl.Odds(board, rules, players=players, mode=mode, tail=1e-15)
    for state in _los_states(board, players):
        want = summarise(brute_force_race(board, rules, players, mode, start=state), players, mode)
        turns = float(np.dot(np.arange(want["turns"].size), want["turns"]))
        from_state = snl.race(board, rules, players=players, mode=mode, state=state, tail=1e-15)
        for got in (odds(state), from_state):
            np.testing.assert_allclose(got.win_probability, want["win"], rtol=0, atol=1e-9)
            assert abs(got.expected_total_turns - turns) < 1e-8, (state, got.expected_total_turns, turns)
        dist = from_state.turns_distribution
        h = min(dist.horizon, want["turns"].size - 1)
        np.testing.assert_allclose(dist.pmf(np.arange(h + 1)), want["turns"][: h + 1], rtol=0, atol=TOL)
        if state == snl.GameState.initial(players):
            rounds = float(np.dot(np.arange(want["rounds"].size), want["rounds"]))
            assert abs(odds(state).expected_rounds - rounds) < 1e-8


def test_last_one_standing_turns_clock_per_seat_movers_match_brute_force() -> None:
    """Seats with movers of their own (a policy each) keep the turns clock's tensors by (seats racing,
    seat to move); one mover for all merges them by size. The per-seat path, with three equal but
    distinct movers, against the brute force from every state of the test above."""
    board, rules = CASES["four-squares-no-exact-finish"]
    model = turn_model(board, rules)
    movers = tuple(JointMover.of(model, rules) for _ in range(3))
    assert len({id(mv) for mv in movers}) == 3
    for state in _los_states(board, 3):
        want = summarise(brute_force_race(board, rules, 3, "last_one_standing", start=state), 3, "last_one_standing")
        got = joint_race(None, rules, 3, "last_one_standing", tail=1e-15, state=state, movers=movers)
        dist = got["turns_distribution"]
        h = min(dist.horizon, want["turns"].size - 1)
        np.testing.assert_allclose(dist.pmf(np.arange(h + 1)), want["turns"][: h + 1], rtol=0, atol=TOL)
        np.testing.assert_allclose(got["win_probability"], want["win"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("players", [2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_last_one_standing_hand_over_matches_brute_force(monkeypatch: pytest.MonkeyPatch, players: int) -> None:
    """Once the full tensor settles, the rounds clock takes its outflow as one response, filtered, and
    the tensors it fed settle in turn (on the jungle board only for tensors of more than 2,048 entries;
    here for every size): every figure as the brute force's. Of the cases above only the bonus-roll
    one lasts long enough for its full tensor to settle; with 3 and 4 players the order tensors the
    full tensor fed settle too (4 players: an 18 s brute force, in the slow step)."""
    import snlmarkov.races.bump as bump_module

    monkeypatch.setattr(bump_module, "HANDOVER_ENTRIES", 0)
    seen = {"hand_over": 0, "settled": 0}
    hand_over, end_round = bump_module._Clocks.hand_over, bump_module._OrderChains.end_round

    def spy_hand_over(self, settled, drop):  # type: ignore[no-untyped-def]
        seen["hand_over"] += 1
        return hand_over(self, settled, drop)

    def spy_end_round(self):  # type: ignore[no-untyped-def]
        before = len(self.watches)
        end_round(self)
        seen["settled"] += sum(isinstance(x, bump_module.SettledTensor) for x in self.store.values()) * (
            len(self.watches) < before
        )

    monkeypatch.setattr(bump_module._Clocks, "hand_over", spy_hand_over)
    monkeypatch.setattr(bump_module._OrderChains, "end_round", spy_end_round)
    board, rules = CASES["redeal-bonus"]
    assert_matches_brute_force(board, rules, players, "last_one_standing")
    assert seen["hand_over"] == 1
    assert players == 2 or seen["settled"] > 0


#: its full tensor settles with 2e-4 of the probability still in play (3 players): the response carries weight
HAND_OVER_BOARD = (Board(8, {6: 3}), Rules.preset("plain").replace(faces=3, bump=True, finish="bounce"))


def _race_handing_over(monkeypatch: pytest.MonkeyPatch, entries: int, players: int = 3) -> tuple:
    import snlmarkov.races.bump as bump_module

    monkeypatch.setattr(bump_module, "HANDOVER_ENTRIES", entries)
    masses: list = []
    hand_over = bump_module._Clocks.hand_over

    def spy(self, settled, drop):  # type: ignore[no-untyped-def]
        masses.append(settled.mass)
        return hand_over(self, settled, drop)

    monkeypatch.setattr(bump_module._Clocks, "hand_over", spy)
    handed_turns = bump_module._Clocks._handed_turn

    def spy_turn(self, s, t):  # type: ignore[no-untyped-def]
        masses.append(None)  # a turn of the turns clock through its response
        return handed_turns(self, s, t)

    monkeypatch.setattr(bump_module._Clocks, "_handed_turn", spy_turn)
    board, rules = HAND_OVER_BOARD
    got = snl.race(board, rules, players=players, mode="last_one_standing", method="exact", tail=1e-15)
    monkeypatch.undo()
    return got, masses


def test_last_one_standing_hand_over_agrees_with_stepping_every_tensor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The filtered responses of both clocks (and the tensors settling) against the same race with every
    tensor stepped to the tail, on a board where 2e-4 of the probability is still in play at the
    hand-over: every order, the rounds and the turns distributions to 1e-14."""
    handed, masses = _race_handing_over(monkeypatch, 0)
    stepped, none = _race_handing_over(monkeypatch, 10**12)
    settled = [m for m in masses if m is not None]
    assert len(settled) == 1 and settled[0] > 1e-4 and None in masses and not none
    for order, p in stepped.order_probability.items():
        assert abs(handed.order_probability[order] - p) < 1e-14, order
    for name in ("rounds_distribution", "turns_distribution"):
        a, b = getattr(handed, name), getattr(stepped, name)
        h = max(a.horizon, b.horizon)
        np.testing.assert_allclose(a.pmf(np.arange(h + 1)), b.pmf(np.arange(h + 1)), rtol=0, atol=1e-14)
        # the mass in play on the filtered side decides when the clock stops and what its tail is
        assert a.horizon == b.horizon and abs(a.tail_mass - b.tail_mass) < 1e-17 and a.tail_mass < 1e-14
    assert abs(handed.expected_rounds - stepped.expected_rounds) < 1e-12


@pytest.mark.slow
def test_last_one_standing_hand_over_on_a_long_race_matches_brute_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """The board above, 3 players, against the brute force (24 s)."""
    import snlmarkov.races.bump as bump_module

    monkeypatch.setattr(bump_module, "HANDOVER_ENTRIES", 0)
    assert_matches_brute_force(*HAND_OVER_BOARD, 3, "last_one_standing")


# ------------------------------------------------- the full tensor moved in place (JointTensor)
@pytest.fixture
def in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """Move every full tensor of 3 or more tokens by JointTensor, however few its squares."""
    import snlmarkov.races.bump as bump_module

    monkeypatch.setattr(bump_module, "IN_PLACE_SLICE", 1)


@pytest.mark.parametrize("layout", ["default", "in place", "in place, 2 rows a product"])
@pytest.mark.parametrize("prefix", [True, False])
@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("case", sorted(CASES))
def test_joint_tensor_moves_as_the_mover_does(
    monkeypatch: pytest.MonkeyPatch, case: str, players: int, prefix: bool, layout: str
) -> None:
    """Turn after turn, the same tensor and finished mass as JointMover.move (its bump by the table,
    the tensor's slab by slab), with the turn on prefix sums or not; the axis before the last written
    rotated, and with 5 tokens the axes rotated to the front now and then ("default": these boards
    are too small for anything else), or every other axis moved where it lies, whole rows at a time
    into the other buffer, up to 2 rows a product."""
    import snlmarkov.races.joint as joint
    from snlmarkov.races.joint import JointTensor, prefix_matrix

    if layout != "default":
        monkeypatch.setattr(joint, "ROW_COLUMNS", 1)
    board, rules = CASES[case]
    if layout.endswith("a product"):
        monkeypatch.setattr(joint, "BLOCK_COLUMNS", 2 * JointMover.of(turn_model(board, rules), rules).n)
    mover = JointMover.of(turn_model(board, rules), rules)
    mover._tables["prefix"] = (prefix_matrix(mover.step), True) if prefix else (mover.step, False)
    n = mover.n
    x = np.random.default_rng(7).random(n**players)
    x /= x.sum()
    tensor = JointTensor(x.copy(), tuple(range(players)), (mover,) * players)
    for t in range(3 * players + 1):
        seat = t % players
        x, want = mover.move(x, players)
        got = tensor.move(seat, ordered=True)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-17)
        np.testing.assert_allclose(tensor.ordered((seat + 1) % players), x, rtol=1e-12, atol=1e-17)
    assert abs(tensor.sum() - x.sum()) < 1e-15


@pytest.mark.parametrize("players, row_columns", [(4, 64), (5, 64), (5, 1)])
@pytest.mark.parametrize("columns", [8192, 32, 3])
def test_joint_tensor_products_in_its_buffers_equal_the_public_product(
    monkeypatch: pytest.MonkeyPatch, columns: int, players: int, row_columns: int
) -> None:
    """The products written into the tensor's buffers (scipy's kernel adding onto a buffer cleared
    as the turn before read it, the finish rows spilling onto the next rows of the tensor and cleared
    again; the axis before the last written rotated) give the same bits as scipy's public product and
    a copy; with slices of 3 columns, no slice is a whole row and every product goes through the spare
    buffer. With 32 columns, products of 2 whole rows straight into a cleared buffer are made (counted):
    axis 1 of 4 tokens, axis 2 of 5 when it is moved where it lies (else the axes are rotated)."""
    import snlmarkov.races.joint as joint

    monkeypatch.setattr(joint, "BLOCK_COLUMNS", columns)
    monkeypatch.setattr(joint, "ROW_COLUMNS", row_columns)
    board, rules = CASES["four-squares-no-exact-finish"]
    mover = JointMover.of(turn_model(board, rules), rules)
    x = np.random.default_rng(11).random(mover.n**players)
    assert joint._csr_matvecs is not None  # this scipy has the kernel: two paths are compared
    kinds: list[tuple[int, bool]] = []
    product_into = joint.product_into

    def counted(a_mat: Any, part: np.ndarray, out: np.ndarray, *, zeroed: bool = False) -> np.ndarray:
        kinds.append((a_mat.shape[0] // (mover.n + 1), zeroed))
        return product_into(a_mat, part, out, zeroed=zeroed)

    monkeypatch.setattr(joint, "product_into", counted)
    runs = []
    for kernel in (joint._csr_matvecs, None):
        monkeypatch.setattr(joint, "_csr_matvecs", kernel)
        tensor = joint.JointTensor(x.copy(), tuple(range(players)), (mover,) * players)
        outs = [tensor.move(t % players, ordered=True) for t in range(2 * players + 1)]
        runs.append((outs, tensor.ordered(1)))
    for a, b in zip(runs[0][0], runs[1][0]):
        assert np.array_equal(a, b)
    assert np.array_equal(runs[0][1], runs[1][1])
    assert ((2, True) in kinds) == (columns == 32 and (players == 4 or row_columns == 1))


@pytest.mark.parametrize("columns", [8192, 7])
@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_rotating_turns_bump_slice_by_slice_gives_the_same_bits_as_after_the_turn(
    monkeypatch: pytest.MonkeyPatch, players: int, columns: int
) -> None:
    """The rotating turn bumps each slice while it is in cache (``_bump_rows``): the same sums in the
    same order as the whole tensor bumped after the turn (``_bump`` along the mover's last axis), to the
    last bit, on a board where a token can be bumped on most squares, in slices of several rows or of one."""
    import snlmarkov.races.joint as joint

    monkeypatch.setattr(joint, "BLOCK_COLUMNS", columns)
    board = Board(7, {2: 5, 6: 1})
    rules = Rules.preset("family")
    mover = JointMover.of(turn_model(board, rules), rules)
    n, m = mover.n, players
    assert mover._bumpable().sum() >= n - 2
    x = np.random.default_rng(5).random(n**m)
    seat = m - 2  # the axis before the last: the rotating turn
    new = joint.JointTensor(x.copy(), tuple(range(m)), (mover,) * m)
    assert new._path(seat) == "rotating"
    got = new.move(seat, ordered=False)
    monkeypatch.setattr(joint.JointTensor, "_bump_rows", lambda *args: None)
    old = joint.JointTensor(x.copy(), tuple(range(m)), (mover,) * m)
    fin = np.empty((n ** (m - 2), n))
    old._rotating_rows(mover, old.x.reshape(n ** (m - 2), n, n), fin)
    old._bump(mover, m - 1)  # the tensor rotated: the mover's axis last
    assert np.array_equal(new.x, old.spare) and np.array_equal(got, fin.reshape(-1))
    assert not np.array_equal(new.x, np.zeros_like(new.x))


def test_prefix_form_is_the_turn_on_prefix_sums() -> None:
    from snlmarkov.races.joint import prefix_form

    board = Board.builtin()
    rules = Rules.preset("family")
    mover = JointMover.of(turn_model(board, rules), rules)
    k, prefix = prefix_form(mover.step)
    assert prefix and k.nnz + mover.n < mover.step.nnz  # a die's faces land on runs of squares
    x = np.random.default_rng(3).random((mover.n, 5))
    np.testing.assert_allclose(k @ np.cumsum(x, axis=0), mover.step @ x, rtol=1e-13, atol=1e-16)


# the other cases' 3-player last-one-standing brute forces in the slow step (the same chains as above)
IN_PLACE_CASES = [
    pytest.param(
        case,
        players,
        mode,
        marks=[pytest.mark.slow]
        if (mode, players) == ("last_one_standing", 3) and case != "four-squares-no-exact-finish"
        else [],
    )
    for case, players in [(case, 3) for case in sorted(CASES)] + [("four-squares-no-exact-finish", 4)]
    for mode in ("classic", "last_one_standing")
]


@pytest.mark.parametrize("case, players, mode", IN_PLACE_CASES)
def test_in_place_tensor_matches_brute_force(in_place: None, case: str, players: int, mode: str) -> None:
    board, rules = CASES[case]
    assert_matches_brute_force(board, rules, players, mode)


def test_in_place_tensor_from_a_state_matches_brute_force(in_place: None) -> None:
    """From a state with another seat to move (the first round partial) and after a seat has finished."""
    board, rules = CASES["four-squares-no-exact-finish"]
    mode = "last_one_standing"
    for state in _los_states(board, 3) + [snl.GameState((0, 2, 0, 3), to_move=2)]:
        players = state.players
        want = summarise(brute_force_race(board, rules, players, mode, start=state), players, mode)
        got = snl.race(board, rules, players=players, mode=mode, state=state, method="exact", tail=1e-15)
        np.testing.assert_allclose(got.win_probability, want["win"], rtol=0, atol=TOL)
        dist = got.turns_distribution
        h = min(dist.horizon, want["turns"].size - 1)
        np.testing.assert_allclose(dist.pmf(np.arange(h + 1)), want["turns"][: h + 1], rtol=0, atol=TOL)
