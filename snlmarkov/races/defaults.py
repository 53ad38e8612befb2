"""Settings of :func:`snlmarkov.race` as plain constants (no numpy: the command
line shows them in ``--help`` at once).

Examples
--------
>>> from snlmarkov.races.defaults import MAX_PLAYERS, METHODS
>>> MAX_PLAYERS, METHODS
(6, ('auto', 'exact', 'monte_carlo'))
"""

__all__ = ["METHODS", "MAX_PLAYERS", "DEFAULT_GAMES"]

#: Ways :func:`snlmarkov.race` may be asked to work.
METHODS = ("auto", "exact", "monte_carlo")
#: Seats a race may have (RULES.md: 1 to 6 players).
MAX_PLAYERS = 6
#: Games simulated by default when the race is estimated.
DEFAULT_GAMES = 100_000
