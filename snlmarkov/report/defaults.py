"""Default settings of the report, as plain constants (importing this module
pulls in neither numpy nor matplotlib, so the command line can show them in
``--help`` at once)."""

__all__ = ["DEFAULT_GAMES", "MIN_GAMES", "DEFAULT_SEED", "DPI"]

#: Games simulated for the cross-check figure by default.
DEFAULT_GAMES = 100_000
#: The fewest games the cross-check takes (10 games in each of its 40 batches).
MIN_GAMES = 400
#: Seed of the cross-check simulation by default.
DEFAULT_SEED = 20240601
#: Resolution of the PNG files: 7-inch-wide figures are 1050 pixels wide.
DPI = 150
