"""Can every square a token reaches still reach the finish? The check of the dice paths.

A board on which some reachable square cannot reach the finish would make
played or simulated games run until their turn guard. :func:`check_winnable`
refuses it up front with :class:`~snlmarkov.errors.UnwinnableBoardError`,
for the game engine and the simulator alike, from a graph of squares built
from ``docs/rules.md`` (no code shared with the exact models, which make the same
check their own way). It holds no probabilities, only which squares one
roll can join.
"""

from __future__ import annotations

import functools

import numpy as np

from .board import Board
from .errors import UnwinnableBoardError
from .limits import check_memory
from .rules import Rules

__all__ = ["check_winnable"]


@functools.lru_cache(maxsize=16)
def check_winnable(board: Board, rules: Rules, bump_between_players: bool = False) -> None:
    """Refuse a board and rules on which the finish is unreachable from a reachable square.

    Edges join each square to where one roll of each value of the die leaves the token
    (jump applied; overshoots by the finish rule); with ``bump`` between
    players, any square ``1..N-1`` also leads to ``bump_to``. Forfeits and
    redeals lead back to squares already reached, so add none; a restart
    (``on_cap="restart"``) joins every square a six can leave the token on
    to square 0. Without ``jump_after_bounce`` a bounce square keeps the
    token; chained jumps are followed by ``board.destination()``.

    Under a rule set with a choice (``docs/rules.md``, "Choices") the
    check is made for each option's rules (:meth:`Rules.option_rules`) and
    passes if one passes: under ``choose_move`` the option is the plain die,
    every value of which can be the one moved, so the check is exact; under
    ``choose_die`` the board passes if some die alone brings every token it
    can reach home (a seat that chooses badly may still wander: games and
    simulations stop at their turn limits).

    Cost: a sparse graph of ``size * values`` edges and two breadth-first
    searches, linear in the board; its memory (about 64 bytes an edge) is
    checked against the memory limit first.

    Raises
    ------
    UnwinnableBoardError
        Naming the lowest stuck square.
    LimitError
        If the graph would pass the memory limit (a 10^8-square board).

    Examples
    --------
    >>> check_winnable(Board(9, {2: 9, 7: 5, 8: 6}), Rules.preset("plain").replace(faces=2))
    Traceback (most recent call last):
    ...
    snlmarkov.errors.UnwinnableBoardError: the finish 9 cannot be reached from square 3, which a token can reach from 0 (stuck squares: 3, 4, 5, 6)
    """
    if rules.choice:
        first: UnwinnableBoardError | None = None
        for i in range(max(1, len(rules.choose_die))):
            try:
                check_winnable(board, rules.option_rules(i), bump_between_players)
                return
            except UnwinnableBoardError as exc:
                first = first or exc
        assert first is not None  # a choice offers one option at least
        raise first
    n = board.size
    values = np.array(rules.die.values, dtype=np.int64)
    f = values.size
    check_memory(  # about 50 bytes an edge while the graph is built and searched (one more per square for bump)
        64.0 * (n + 1) * (f + 2),
        f"checking that every square of a {n:,}-square board can reach the finish ({f} die values)",
    )
    dest = board.destination()
    sq = np.arange(n, dtype=np.int64)
    t = sq[:, None] + values
    over = t > n
    if rules.finish == "bounce":
        t = np.where(over, 2 * n - t, t)
    elif rules.finish == "none":
        t = np.minimum(t, n)
    else:
        t = np.where(over, sq[:, None], t)
    stays = over & (rules.finish == "stay" or (rules.finish == "bounce" and not rules.jump_after_bounce))
    stays |= values == 0  # a move of 0 keeps the token where it is, no jump
    t = np.where(stays, t, dest[np.clip(t, 0, n)])  # no jump after a stay, nor after a bounce without it
    src = np.repeat(sq, f)
    tgt = t.ravel()
    if rules.on_cap == "restart" and rules.max_sixes is not None and rules.bonus_on_six:
        # a capped roll is made where a six left the token, and its six sends the token to 0
        sixed = np.unique(t[:, f - 1])
        src = np.concatenate([src, sixed])
        tgt = np.concatenate([tgt, np.zeros(sixed.size, dtype=np.int64)])
    if bump_between_players and rules.bump:
        src = np.concatenate([src, np.arange(1, n, dtype=np.int64)])
        tgt = np.concatenate([tgt, np.full(n - 1, rules.bump_to, dtype=np.int64)])
    import scipy.sparse as sp  # here, not above: simulation workers import this module and never call this
    from scipy.sparse.csgraph import breadth_first_order

    graph = sp.csr_matrix((np.ones(src.size, dtype=np.int8), (src, tgt)), shape=(n + 1, n + 1))
    reach = breadth_first_order(graph, 0, directed=True, return_predecessors=False)
    back = breadth_first_order(graph.T.tocsr(), n, directed=True, return_predecessors=False)
    finishable = np.zeros(n + 1, dtype=bool)
    finishable[back] = True
    stuck = np.sort(reach[~finishable[reach]])
    if stuck.size:
        shown = ", ".join(map(str, stuck[:10].tolist())) + (" ..." if stuck.size > 10 else "")
        raise UnwinnableBoardError(
            f"the finish {n} cannot be reached from square {int(stuck[0])}, which a token can reach from 0 "
            f"(stuck squares: {shown})",
            int(stuck[0]),
        )
