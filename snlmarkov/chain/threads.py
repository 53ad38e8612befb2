"""One BLAS thread around the library's small solves, without touching the user's settings.

On a machine whose other cores are busy, OpenBLAS's extra threads make
every small BLAS call wait for a free core: ``analyze()`` of the jungle board
took 180 ms with two OpenBLAS threads against 35-56 ms with one. The
library's solves are small or sparse (SuperLU's supernodes here are a few
columns wide), so they never gain from more threads. :func:`one_blas_thread`
limits BLAS to one thread for the duration of a call with
:mod:`threadpoolctl` and restores the previous limits on the way out: no
environment variable is read or set, and the user's own BLAS calls outside
the library keep their threads.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["one_blas_thread"]

F = TypeVar("F", bound=Callable[..., Any])

_controller: Any = None
_lock = threading.Lock()
_users = 0
_limiter: Any = None


def _get_controller() -> Any:
    """The threadpoolctl controller, made once the BLAS libraries are loaded (once)."""
    global _controller
    if _controller is None:
        import numpy  # noqa: F401  (load both BLAS builds before looking for them)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with BLAS limited to one thread; the previous limits come back afterwards.

    Nested and concurrent uses share one limit: the first to enter sets it,
    the last to leave restores what was there before. (OpenBLAS applies a
    limit set from a thread other than the main one unreliably; that is
    threadpoolctl's and OpenBLAS's behaviour, not changed here.) Cost: about 10 us per
    use, after a one-off 10 ms to find the BLAS libraries.

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     x = np.linalg.solve(np.eye(3), np.ones(3))
    >>> x.tolist()
    [1.0, 1.0, 1.0]
    """
    global _users, _limiter
    with _lock:
        if _users == 0:
            _limiter = _get_controller().limit(limits=1, user_api="blas")
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None


def single_blas_thread(func: F) -> F:
    """Decorator form of :func:`one_blas_thread`.

    Examples
    --------
    >>> @single_blas_thread
    ... def f():
    ...     return 1
    >>> f()
    1
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
