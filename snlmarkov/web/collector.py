"""The served app's cyclic garbage collector: the start-up's objects frozen, full collections on a timer.

Python's cyclic garbage collector stops the event loop while it walks the
objects it tracks. A collection of the oldest generation (a *full*
collection) walks every object the games keep (their events, the rooms,
the connections): tens to a hundred milliseconds at a few hundred rooms. On
its own trigger the collector runs one after every ten collections of the
middle generation, every few seconds under load, and every turn that
arrives meanwhile waits for it.

:class:`ServedCollector` is what ``snlmarkov serve`` does instead
(docs/web.md "The collector"):

- once the app has started, a full collection frees what start-up left as
  garbage and :func:`gc.freeze` moves every object then alive (the modules,
  classes and functions imported, the boards, the restored rooms) out of
  every later walk;
- with ``full_every`` seconds (``snlmarkov serve``: :data:`FULL_EVERY`), the
  oldest generation's threshold is raised to :data:`FULL_AFTER` collections
  of the middle one (a bound on the garbage that waits, however fast it is
  made) and a loop timer runs a full collection every ``full_every``
  seconds. The young generations are collected as before. The server makes
  little cyclic garbage (the sockets of closed connections, an exception's
  traceback), so what waits for the timer is small; each timed collection
  still stops the loop for a full walk, once every ``full_every`` seconds
  rather than every few;
- :meth:`ServedCollector.stop` (at the app's shutdown) cancels the timer,
  puts the thresholds back and unfreezes.

Examples
--------
>>> import asyncio
>>> async def serve_briefly():
...     collector = ServedCollector(full_every=0.01)
...     collector.start()
...     frozen = gc.get_freeze_count() > 0
...     await asyncio.sleep(0.1)
...     collector.stop()
...     return frozen, collector.timed >= 1, gc.get_freeze_count()
>>> asyncio.run(serve_briefly())
(True, True, 0)
"""

from __future__ import annotations

import asyncio
import gc

from ..errors import SnlError

__all__ = []

#: seconds between the timed full collections of ``snlmarkov serve``
FULL_EVERY = 300.0
#: the oldest generation's threshold while full collections are timed: collections of the middle generation
#: between two full ones at most (the collector's own default is 10)
FULL_AFTER = 1000
#: the longest ``full_every`` accepted (a day)
MAX_FULL_EVERY = 86_400.0


class ServedCollector:
    """The collector's policy for one served app: see the module's docstring.

    Parameters
    ----------
    full_every : float, default 0
        Seconds between the full collections run by a loop timer (at most
        :data:`MAX_FULL_EVERY`), or 0 to leave them to the collector's own
        trigger (only the freeze then).

    Raises
    ------
    SnlError
        If ``full_every`` is not a number in 0..:data:`MAX_FULL_EVERY`.
    """

    def __init__(self, full_every: float = 0.0) -> None:
        # the range refuses nan and infinity too, and compares a huge integer without converting it
        if (
            type(full_every) is bool
            or not isinstance(full_every, (int, float))
            or not 0 <= full_every <= MAX_FULL_EVERY
        ):
            raise SnlError(
                f"full_every must be a number of seconds in 0..{MAX_FULL_EVERY:g} (0: the collector's own "
                f"trigger); got {full_every!r}"
            )
        self.full_every = float(full_every)
        self.timed = 0  # full collections the timer has run
        self._thresholds: tuple[int, int, int] = gc.get_threshold()
        self._timer: asyncio.TimerHandle | None = None
        self._running = False

    def start(self) -> None:
        """Collect and freeze what is alive now, and time the full collections (on the running loop)."""
        if self._running:
            return
        self._running = True
        gc.collect()  # what start-up left as garbage is freed, not kept for the life of the server
        gc.freeze()
        if self.full_every:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(self._thresholds[0], self._thresholds[1], FULL_AFTER)
            self._timer = asyncio.get_running_loop().call_later(self.full_every, self._collect)

    def _collect(self) -> None:
        gc.collect()
        self.timed += 1
        self._timer = asyncio.get_running_loop().call_later(self.full_every, self._collect)

    def stop(self) -> None:
        """Cancel the timer, put the collector's thresholds back and unfreeze (idempotent)."""
        if not self._running:
            return
        self._running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.full_every:
            gc.set_threshold(*self._thresholds)
        gc.unfreeze()
