"""One thread at a time per env: a second thread's call is refused, not interleaved.

The compiled loops release nothing to Python, but numba's parallel loops run without
the GIL, so two Python threads can be inside one env's ``step`` at once; their writes
to the same records and buffers then interleave and leave games whose invariants are
broken, with no error (seen: hundreds of rows of 512). An env is not thread-safe, as
none in Gymnasium or PettingZoo is: use one env per thread. The guard makes the
mistake loud: a non-blocking lock taken around every call that reads or writes the
games (about 0.1 microseconds), and a ``RuntimeError`` when it is already held.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class ThreadGuard:
    """The lock of one env (copied or pickled as a fresh, free lock)."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return (ThreadGuard, ())

    def __deepcopy__(self, memo: dict) -> ThreadGuard:
        return ThreadGuard()


def exclusive(method: F) -> F:
    """Run ``method`` holding its env's :class:`ThreadGuard` (``self._guard``), or raise
    ``RuntimeError`` if another thread holds it."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        lock = self._guard._lock  # noqa: SLF001
        if not lock.acquire(False):
            raise RuntimeError(
                f"{type(self).__name__}.{method.__name__}: this env is in use by another "
                "thread; an env is not thread-safe, make one env per thread")
        try:
            return method(self, *args, **kwargs)
        finally:
            lock.release()

    return call  # type: ignore[return-value]


__all__ = ["ThreadGuard", "exclusive"]
