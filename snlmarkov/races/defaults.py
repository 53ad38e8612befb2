"""Settings of :func:`snlmarkov.race` as plain constants (no numpy: the command
line shows them in ``--help`` at once). The most players a race takes is
:data:`snlmarkov.limits.MAX_PLAYERS`.

Examples
--------
>>> from snlmarkov.races.defaults import DEFAULT_GAMES, METHODS
>>> METHODS, DEFAULT_GAMES
(('auto', 'exact', 'monte_carlo'), 100000)
"""

__all__ = []

#: Ways :func:`snlmarkov.race` may be asked to work.
METHODS = ("auto", "exact", "monte_carlo")
#: Games simulated by default when the race is estimated.
DEFAULT_GAMES = 100_000
