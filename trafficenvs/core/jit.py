"""``@kernel``: how the rules kernels are compiled (numba ``njit``, cached, no NRT).

Every compiled function the drivers call per row (a game's verbs and all they call,
the samplers, the greedy players' kernels) is a kernel. Two options differ from a
plain ``@njit``:

- ``cache=True``: compiled once per machine, loaded from numba's cache after;
- no NRT (numba's reference-counted memory): a kernel never allocates (no
  allocation per step) and never keeps an array past its call, so counting the
  references of the views it takes (``obs[i]``, ``mask[i]``, a record's field) buys
  nothing. With NRT each such view costs a call and an atomic add and subtract on
  the buffer's shared counter at every function that receives it: on Jamming
  Traffic's step that was about a seventh of the time on one thread, and removing
  it gave Traffic Jam 4-5% at batch 4096 on two threads. A kernel that allocated
  would fail to compile, not misbehave.

numba compiles a called function with its caller's options unless it sets its own,
so every kernel sets them here, and the few compiled helpers that do allocate (the
error paths' index lists, say) use plain ``@njit`` and are never called from a kernel.

The NRT switch is numba's ``_nrt`` target option (underscored: not in numba's
documented API). If a numba release no longer knows it, kernels compile with NRT
(slower, same results): :func:`_nrt_option` asks numba's own list of options.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba


def _nrt_option() -> dict[str, Any]:
    """``{"_nrt": False}`` if this numba knows the option, else ``{}``."""
    try:
        from numba.core.cpu import CPUTargetOptions

        known = hasattr(CPUTargetOptions, "_nrt")
    except ImportError:
        known = False
    return {"_nrt": False} if known else {}


NO_NRT = _nrt_option()


def kernel(fn: Callable | None = None, /, **options: Any) -> Any:
    """``@kernel`` or ``@kernel(inline="never")``: ``numba.njit`` with ``cache=True``
    and without NRT, other options passed on (see the module docstring)."""
    opts = {"cache": True, **NO_NRT, **options}
    if fn is None:
        return numba.njit(**opts)
    return numba.njit(**opts)(fn)
