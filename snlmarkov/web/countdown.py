"""A room's countdown: a coroutine run after a delay, with no task until the delay is over.

Every turn of an online game starts a countdown (the mover's time to roll,
or the AI seat's pause) and nearly every one is cancelled by the next roll.
:func:`later` keeps such a countdown as one timer of the event loop
(``loop.call_later``): cancelling it before it runs makes no task, throws no
``CancelledError`` and leaves no reference cycle for the garbage collector.
Only a countdown that runs out starts its task, which :meth:`Countdown.cancel`
then cancels (unless it is the task asking).

Examples
--------
>>> import asyncio
>>> ran = []
>>> async def main():
...     async def ring():
...         ran.append("rang")
...     kept = later(0.01, ring)
...     later(0.01, ring).cancel()  # cancelled before it ran: nothing runs
...     await asyncio.sleep(0.05)
...     return kept.started
>>> asyncio.run(main()), ran
(True, ['rang'])
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = []


class Countdown:
    """A pending call of ``make()`` (a coroutine function) on the running loop; see :func:`later`."""

    __slots__ = ("_handle", "_make", "task")

    def __init__(self, delay: float, make: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        self._make = make
        self.task: asyncio.Task[Any] | None = None
        self._handle: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(delay, self._ring)

    @property
    def started(self) -> bool:
        """Whether the delay ran out and the coroutine's task was started."""
        return self.task is not None

    def _ring(self) -> None:
        self._handle = None
        self.task = asyncio.ensure_future(self._make())

    def cancel(self) -> None:
        """Stop it: the timer if it has not rung, else its task (never the task calling this)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        elif self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()


def later(delay: float, make: Callable[[], Coroutine[Any, Any, Any]]) -> Countdown:
    """Run ``make()`` as a task in ``delay`` seconds, unless cancelled first (on the running loop)."""
    return Countdown(delay, make)
