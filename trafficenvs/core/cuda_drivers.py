"""The batched drivers of the GPU build: one CUDA thread per game, same row functions.

The CPU drivers (``core/driver.py``) are loops over rows whose bodies are the row
functions :func:`~trafficenvs.core.driver.reset_row`, :func:`~trafficenvs.core.driver.
step_row`, :func:`~trafficenvs.core.driver.row_illegal` and :func:`~trafficenvs.core.
driver.refresh_row`, which call the games' verbs (``k_step``, ``k_observe``, ...). The
kernels here are the same loops with the loop replaced by the thread index
(``i = cuda.grid(1)``): numba-cuda compiles the very same ``@njit`` row functions and
the games' rule kernels a second time, for the GPU, so no rule and no driver step is
written twice. The verbs resolve for CUDA because their overloads are registered for
numba's ``generic`` target (``core/verbs.py``), so a game needs nothing new to run on
the GPU (the template game runs there too).

Each kernel has its Python function here (``_reset`` and so on) and is compiled
lazily, by :func:`kernels`, the first time an env of any game needs it: importing this
module does not import numba-cuda, so the CPU package never pays for it. The compiled
kernels are cached on disk under the package's numba cache (named after a hash of the
package's numba sources, as the CPU kernels are: a kernel compiled against older rules
is never loaded). :func:`driver_signatures` gives each kernel's signature for a game,
so tests can compile all of them to PTX for a chosen GPU without one.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

import numpy as np

from trafficenvs.core.driver import refresh_row, reset_row, row_illegal, step_row
from trafficenvs.core.rng import rng_next
from trafficenvs.core.sampler import RNG_DTYPE, pick_legal
from trafficenvs.core.verbs import k_observe

#: threads per block of every launch (one thread per game); tuned on a GPU by the
#: device benchmark (``python -m benchmarks.gpu``)
BLOCK = 128

#: what ``pip`` must install for the GPU build (the ``[gpu]`` extra)
INSTALL_HINT = 'pip install "trafficenvs[gpu]"  (numba-cuda[cu13])'


def available() -> bool:
    """Whether numba-cuda is installed (the GPU build can compile; a GPU may still be
    missing: see :func:`gpu_present`)."""
    return importlib.util.find_spec("numba_cuda") is not None


def simulated() -> bool:
    """Whether numba-cuda's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1``)."""
    from numba.cuda.core import config

    return bool(config.ENABLE_CUDASIM)


def gpu_present() -> bool:
    """Whether a CUDA GPU (or the simulator) is there to run on; never raises."""
    if not available():
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001  (a broken driver is "no GPU" here)
        return False


# -- the kernels' Python functions: one thread per game ---------------------------
# ``cuda`` is bound by :func:`kernels` before any of these is compiled (numba reads
# the module global at compile time); the CPU package never imports it.
cuda: Any = None


def _reset(recs, cfg, seeds, nplayers, obs, mask, cur, rewards, term, trunc):
    i = cuda.grid(1)
    if i < recs.shape[0]:
        reset_row(recs, cfg, i, seeds, nplayers, obs, mask, cur)
        for j in range(nplayers):
            rewards[i, j] = 0.0
        term[i] = False
        trunc[i] = False


def _check(recs, cfg, actions, active, final_seat, nplayers, mask, acts, bad, count):
    """Copy the caller's actions into the env's int64 buffer; flag each active row
    whose action is illegal (``bad[i] = 1``) or whose ``final_seat`` is no seat
    (``bad[i] = 2``), and count them in ``count[0]`` (read by the host: one sync)."""
    i = cuda.grid(1)
    if i < recs.shape[0]:
        a = np.int64(actions[i])
        acts[i] = a
        s = final_seat[i]
        flag = np.int8(0)
        if s < -1 or s >= nplayers:
            flag = np.int8(2)
        elif active[i] and row_illegal(recs, cfg, i, acts, mask):
            flag = np.int8(1)
        bad[i] = flag
        if flag != 0:
            cuda.atomic.add(count, 0, 1)


def _step(recs, cfg, actions, active, final_seat, seeds, seed_stride, max_moves, nplayers,
          obs, mask, cur, rewards, term, trunc, final_obs, final_recs):
    i = cuda.grid(1)
    if i < recs.shape[0]:
        step_row(recs, cfg, i, actions, active, final_seat, seeds, seed_stride, max_moves,
                 nplayers, obs, mask, cur, rewards, term, trunc, final_obs, final_recs)


def _refresh(recs, cfg, first, obs, mask, cur):
    """Rows ``first, first + 1, ...`` (as many as threads launched): see ``refresh_row``."""
    i = first + cuda.grid(1)
    if i < recs.shape[0]:
        refresh_row(recs, cfg, i, obs, mask, cur)


def _observe(recs, cfg, seats, out):
    i = cuda.grid(1)
    if i < recs.shape[0]:
        k_observe(recs[i], cfg[0], seats[i], out[i])


def _sample(mask, states, out):
    i = cuda.grid(1)
    if i < mask.shape[0]:
        out[i] = pick_legal(mask[i], rng_next(states[i]))


def _seed_rows(seeds, base):
    """``seeds[i] = base + i`` (a ``reset(seed)``'s seeds, written on the device)."""
    i = cuda.grid(1)
    if i < seeds.shape[0]:
        seeds[i] = base + np.uint64(i)


KERNELS = {"reset": _reset, "check": _check, "step": _step, "refresh": _refresh,
           "observe": _observe, "sample": _sample, "seed_rows": _seed_rows}

_LOCK = threading.Lock()
_COMPILED: dict[str, Any] = {}


def bind_cuda() -> Any:
    """Import numba-cuda (``numba.cuda``) and bind it for the kernels above; an
    ``ImportError`` that says what to install when it is missing."""
    global cuda
    if cuda is None:
        if not available():
            raise ImportError(f"the GPU build needs numba-cuda: {INSTALL_HINT}")
        from numba import cuda as _cuda

        cuda = _cuda
    return cuda


def kernels() -> dict[str, Any]:
    """The CUDA dispatchers of :data:`KERNELS`, made once per process and cached on
    disk (compiled per game on first launch, loaded from the cache after)."""
    with _LOCK:
        if not _COMPILED:
            cu = bind_cuda()
            with cuda_cache():
                for name, fn in KERNELS.items():
                    _COMPILED[name] = cu.jit(fn, cache=not simulated())
        return _COMPILED


class cuda_cache:  # noqa: N801  (used as ``with cuda_cache():``)
    """Point numba-cuda's cache at the package's cache directory while dispatchers are
    made (see ``trafficenvs/numba_cache.py``: a directory named after the package's
    sources, so a kernel compiled against older rules is never loaded)."""

    def __enter__(self) -> None:
        from numba.cuda.core import config

        from trafficenvs.numba_cache import cache_dir

        where = cache_dir()
        self._config = config
        self._old = config.CACHE_DIR
        config.CACHE_DIR = "" if where is None else str(where)

    def __exit__(self, *exc: Any) -> None:
        self._config.CACHE_DIR = self._old


def launch(name: str, n: int, *args: Any, stream: Any = 0) -> None:
    """Launch kernel ``name`` over ``n`` threads (one per game), blocks of :data:`BLOCK`
    threads (or one block of ``n`` below that)."""
    if n <= 0:
        return
    k = kernels()[name]
    block = min(BLOCK, n)  # (a small batch: one block of its size; the simulator runs
    k[(n + block - 1) // block, block, stream](*args)  # one Python thread per GPU thread)


def driver_signatures(game: Any, num_envs: int = 4) -> dict[str, tuple[Any, ...]]:
    """Each kernel's argument types for ``game`` (a :class:`~trafficenvs.core.game.Game`)
    as the GPU env launches it: ``{name: (numba types...)}``, for compiling to PTX
    (``cuda.compile_ptx(KERNELS[name], sig, cc=...)``) without a GPU."""
    from numba import typeof, types

    n = num_envs
    recs = game.new_records(n)
    p = game.num_players
    obs = np.zeros((n, game.obs_dim), game.obs_dtype)
    mask = np.zeros((n, game.num_actions), np.bool_)
    i64 = np.zeros(n, np.int64)
    b = np.zeros(n, np.bool_)
    u64 = np.zeros(n, np.uint64)
    rew = np.zeros((n, p), np.float32)
    t = typeof
    nt = types.int64
    return {
        "reset": (t(recs), t(game.cfg), t(u64), nt, t(obs), t(mask), t(i64), t(rew), t(b),
                  t(b)),
        "check": (t(recs), t(game.cfg), t(i64), t(b), t(i64), nt, t(mask), t(i64),
                  t(np.zeros(n, np.int8)), t(np.zeros(1, np.int64))),
        "step": (t(recs), t(game.cfg), t(i64), t(b), t(i64), t(u64), types.uint64, nt, nt,
                 t(obs), t(mask), t(i64), t(rew), t(b), t(b), t(obs), t(recs)),
        "refresh": (t(recs), t(game.cfg), nt, t(obs), t(mask), t(i64)),
        "observe": (t(recs), t(game.cfg), t(i64), t(obs)),
        "sample": (t(mask), t(np.zeros(n, RNG_DTYPE)), t(i64)),
        "seed_rows": (t(u64), types.uint64),
    }


__all__ = ["BLOCK", "KERNELS", "available", "bind_cuda", "driver_signatures", "gpu_present",
           "kernels", "launch", "simulated"]
