"""A counter of table entries for the simulator's landing counts.

The simulator records which (state, code) entry of its step table every game
used at every step; the squares landed on follow from those counts at the end
(:meth:`snlmarkov.sim.tables.StepTable.landings`). Counting through a
buffer keeps the cost per entry low even for large tables: one
:func:`numpy.bincount` per few million entries, not one per step.
"""

from __future__ import annotations

import numpy as np

__all__ = []


class EntryCounter:
    """Counts how often each entry ``0..size-1`` is used.

    Parameters
    ----------
    size : int
        Number of entries.
    buffer : int, optional
        Entries held before they are counted.

    Examples
    --------
    >>> c = EntryCounter(4)
    >>> c.add(np.array([1, 3, 3]))
    >>> slot = c.reserve(2); slot[:] = [0, 3]; c.commit(2)
    >>> c.counts().tolist()
    [1, 1, 0, 3]
    """

    def __init__(self, size: int, buffer: int = 1 << 19) -> None:
        self.size = int(size)
        self._counts = np.zeros(self.size, dtype=np.int64)
        self._buffer = np.empty(max(int(buffer), 1), dtype=np.intp)
        self._fill = 0

    def reserve(self, n: int) -> np.ndarray:
        """A writable slot for ``n`` entries; call :meth:`commit` after filling it."""
        if n > self._buffer.size:
            self.flush()
            self._buffer = np.empty(n, dtype=np.intp)
        elif self._fill + n > self._buffer.size:
            self.flush()
        return self._buffer[self._fill : self._fill + n]

    def commit(self, n: int) -> None:
        """Count the ``n`` entries written into the last reserved slot."""
        self._fill += n

    def add(self, index: np.ndarray) -> None:
        """Count the entries in ``index``."""
        n = index.size
        self.reserve(n)[...] = index
        self.commit(n)

    def flush(self) -> None:
        """Count everything buffered so far."""
        if self._fill:
            self._counts += np.bincount(self._buffer[: self._fill], minlength=self.size)
            self._fill = 0

    def counts(self) -> np.ndarray:
        """Use counts of every entry (int64)."""
        self.flush()
        return self._counts
