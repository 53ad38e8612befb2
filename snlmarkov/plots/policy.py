"""A policy on the drawn board: the choice at the start of a turn on each square, and how much it matters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..analysis.policy import PolicyGain, policy_gain, turn_start_orders
from ..board import Board
from ..errors import PolicyError, UnwinnableBoardError
from ..policy import Policy
from ..rules import Rules
from ._common import SERIES_COLOURS, board_label, new_axes
from .board import draw_board

__all__ = ["plot_policy"]

#: The palest a square gets where its choice matters least (0: white, 1: the option's full colour).
_FAINTEST = 0.25
#: The colour of a square on which no turn begins (a ladder's foot, a snake's head): its choice is never made.
_NO_TURN = "#dddddd"
#: One colour per option, as many as ``limits.MAX_CHOICES`` dice (the Okabe-Ito palette, then grey).
_OPTION_COLOURS = (*SERIES_COLOURS[:6], "#999999", "#000000")


def option_labels(rules: Rules, *, short: bool = False) -> tuple[str, ...]:
    """What each option of a choice rule is called: a die's text form (``d4``), or a value (``6``).

    ``short``: a die whose text form is longer than 5 characters is called
    by its place among the dice (``#2``), to fit on a square.

    Examples
    --------
    >>> option_labels(Rules(choose_die=(4, "faces:1,5"))), option_labels(Rules(choose_move=2, die=4))
    (('d4', 'weights:1=1,5=1'), ('1', '2', '3', '4'))
    >>> option_labels(Rules(choose_die=(4, "faces:1,5")), short=True)
    ('d4', '#2')
    """
    if rules.choice == "die":
        specs = [d.spec for d in rules.choose_die]
        return tuple(s if len(s) <= 5 or not short else f"#{k + 1}" for k, s in enumerate(specs))
    return tuple(str(v) for v in rules.options)


def plot_policy(
    policy: Policy,
    board: Board,
    rules: Rules | None = None,
    ax: Any = None,
    *,
    gain: PolicyGain | None = None,
    others: Sequence[int] = (),
    title: str | None = None,
    legend: bool = True,
) -> Any:
    """The board coloured by the choice at the start of a turn on each square, paler where it matters less.

    Under ``choose_die`` each square takes the colour of the die rolled at
    the start of a turn there; under ``choose_move``, of the value moved
    first when rolled (the top of the square's order). The square's colour
    is full where the choice matters most (the largest
    :attr:`~snlmarkov.PolicyGain.spread`: the expected turns of the worst
    choice there minus the best's) and fades towards white where it matters
    less. Every square ``1..N-1`` is labelled with its choice too, so the
    figure reads without colour (up to 400 squares). Squares on which no
    turn begins under the policy (a ladder's foot, a snake's head) are grey.

    Parameters
    ----------
    policy : Policy
        Any policy (``fixed``, ``greedy``, ``random`` or solved).
    board : Board
    rules : Rules, optional
        A rule set with a choice; by default a solved policy's own.
    ax : matplotlib Axes, optional
    gain : PolicyGain, optional
        From :func:`snlmarkov.policy_gain` for this policy, board and rules;
        computed when omitted (for one token's policy: a race policy's squares
        are drawn at full colour).
    others : sequence of int, optional
        For a race policy: the other tokens' squares the choices are shown
        for (default: all at 0, the start of the game).
    title : str, optional
    legend : bool, default True
        A legend of the options (those chosen somewhere first).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    PolicyError
        If the rules give no choice, ``rules`` is missing for a policy that
        is not solved, or the policy, the gain and the rules do not fit.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> rules = snl.Rules(choose_die=(4, 6))
    >>> board = snl.Board(30, {3: 16, 27: 5})
    >>> ax = plot_policy(snl.optimal_policy(board, rules), board, ax=Figure().subplots())
    >>> ax.get_title()
    'Best die at the start of a turn (custom board, rules with a choice of d4 or d6)'
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['d4', 'd6']
    """
    from matplotlib.patches import Patch

    if not isinstance(policy, Policy):
        raise PolicyError(f"plot_policy takes a Policy; got {type(policy).__name__}")
    if rules is None:
        if policy.kind != "table":
            raise PolicyError(f"plot_policy: a {policy.kind} policy needs the rules it plays (rules=)")
        rules = policy.table.rules
    orders = turn_start_orders(policy, board, rules, others)
    chosen = orders.argmin(axis=1)
    weight, begins = _emphasis(policy, board, rules, gain, race=policy.kind == "table" and policy.table.others > 0)
    labels, full = option_labels(rules, short=True), option_labels(rules)
    colours = _colours(len(labels))
    n = board.size
    faces: list[Any] = [None]
    for square in range(1, n):
        rgb = np.array(colours[chosen[square]][:3])
        faces.append(tuple(1.0 - weight[square] * (1.0 - rgb)) if begins[square] else _NO_TURN)
    faces.append("#f6d55c")  # the finish: no choice
    kind = "die" if rules.choice == "die" else "value to move"
    if title is None:
        title = f"Best {kind} at the start of a turn ({board_label(board)} board, {_describe_choice(rules)})"
    ax = new_axes(ax, (7.0, 7.8))
    draw_board(board, ax, title=title, facecolors=faces, jump_alpha=0.85, outline_jumps=True, legend=False)
    if n <= 400:
        size = max(4.0, min(9.0, 90.0 / max(board.width, -(-n // board.width))))
        for square in (int(s) + 1 for s in np.flatnonzero(begins[1:n])):
            row, col = board.cell(square)
            ax.text(col + 0.5, row + 0.3, labels[chosen[square]], ha="center", va="center", fontsize=size, zorder=6)
    note = f"Off the board (square 0): {labels[chosen[0]]}."
    note += " Paler: the choice matters less there." if weight[1:n][begins[1:n]].min(initial=1.0) < 1.0 else ""
    note += " Grey: no turn begins there." if not begins[1:n].all() else ""
    ax.text(0.5, -0.015, note, transform=ax.transAxes, ha="center", va="top", fontsize="small")
    if legend:
        used = list(dict.fromkeys(int(k) for k in chosen[1:n][begins[1:n]]))
        used += [k for k in range(len(labels)) if k not in used][: max(0, 12 - len(used))]
        handles = [
            Patch(
                facecolor=colours[k],
                edgecolor="#7a6a55",
                label=labels[k] if labels[k] == full[k] else f"{labels[k]}: {full[k]}",
            )
            for k in used[:12]
        ]
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.05),
            ncol=min(len(handles), 6),
            frameon=False,
            title=kind,
        )
    return ax


def _describe_choice(rules: Rules) -> str:
    if rules.choice == "die":
        names = [d.spec for d in rules.choose_die]
        return f"rules with a choice of {', '.join(names[:-1])} or {names[-1]}"
    return f"rules: move one of {rules.choose_move} {rules.die.spec} rolled"


def _colours(count: int) -> list[Any]:
    """One colour per option: the palette for up to 8, a perceptually uniform map beyond (values in order)."""
    import matplotlib
    from matplotlib.colors import to_rgba

    if count <= len(_OPTION_COLOURS):
        return [to_rgba(c) for c in _OPTION_COLOURS[:count]]
    cmap = matplotlib.colormaps["viridis"]
    return [cmap(x) for x in np.linspace(0.0, 1.0, count)]


def _emphasis(
    policy: Policy, board: Board, rules: Rules, gain: PolicyGain | None, *, race: bool
) -> tuple[np.ndarray, np.ndarray]:
    """How strongly each square ``0..N`` is coloured (from the faintest to 1, as its spread grows), and where turns begin.

    A race policy, or one that does not finish surely, is drawn at full
    colour on every square.
    """
    from ..analysis.single import analyze

    n = board.size
    full = (np.ones(n + 1), np.ones(n + 1, dtype=bool))
    if race:
        return full
    try:
        begins = np.asarray(analyze(board, rules, policy=policy).occupancy) > 0
        if gain is None:
            gain = policy_gain(board, rules, policy=policy)
    except UnwinnableBoardError:  # no expected turns to compare
        return full
    if not isinstance(gain, PolicyGain) or gain.board != board or gain.rules != rules:
        raise PolicyError("gain must be the PolicyGain of policy_gain for this board and these rules")
    spread = np.nan_to_num(np.asarray(gain.spread, dtype=float), nan=0.0, posinf=0.0)
    shown = spread[1:n][begins[1:n]]
    top = float(shown.max()) if shown.size else 0.0
    if top <= 0:
        return np.ones(n + 1), begins
    return _FAINTEST + (1.0 - _FAINTEST) * np.clip(spread / top, 0.0, 1.0), begins
