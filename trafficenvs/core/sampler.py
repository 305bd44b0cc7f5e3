"""Random legal actions: the uniform sampler over mask rows, the generators it draws from,
and kernel-only random play (the ceiling the vectorised env is measured against).

The sampler draws from counter-based generators (``core/rng.py``) kept in records of
their own, one per row, so sampling is as reproducible as the games themselves, alone
or in a batch, on any thread count. Its public entries check their arguments
(``core/checks.py``) and then call the compiled loops; GPU buffers are sampled on the
GPU by the same row code (``core/cuda_vector.py``).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import njit, prange

from trafficenvs.core.checks import check_game_arrays, check_int, check_out, describe
from trafficenvs.core.driver import reset_game
from trafficenvs.core.jit import kernel
from trafficenvs.core.records import as_kernel_array
from trafficenvs.core.rng import rng_next
from trafficenvs.core.threads import batched
from trafficenvs.core.verbs import k_is_over, k_is_truncated, k_legal_mask, k_step
from trafficenvs.core.views import as_bytes, as_words

_NO_JIT = bool(numba.config.DISABLE_JIT)
_BOOL = np.dtype(np.bool_)
_I64 = np.dtype(np.int64)
_ONES = np.uint64(0x0101010101010101)
_FF = np.uint64(0xFF)
_S56 = np.uint64(56)
_S32 = np.uint64(32)


@kernel(inline="never")
def pick_legal(mask_row, bits):
    """The legal action of one mask row chosen by 64 random ``bits`` (uniform), or -1.

    The pick is the k-th legal action, ``k = (bits >> 32) * count >> 32``. The mask is
    read 8 bytes at a time (a bool is one byte, 0 or 1), through the no-copy word view
    of :func:`~trafficenvs.core.views.as_words` (numba's own ``view`` per row cost more
    than the count): multiplying a word by ``0x0101..01`` leaves in byte i the number
    of ones in bytes 0..i, so the top byte counts the word (4 words are added first
    when only the count is needed), and the chosen byte is found by counting the
    running totals not above k, with no branch per byte. The tail that does not fill a
    word is read byte by byte.
    """
    a = mask_row.shape[0]
    words = as_words(as_bytes(mask_row))
    nw = words.shape[0]
    n = 0
    w = 0
    while w + 4 <= nw:  # each byte lane sums at most 4 ones
        n += np.int64(((words[w] + words[w + 1] + words[w + 2] + words[w + 3]) * _ONES) >> _S56)
        w += 4
    for v in range(w, nw):
        n += np.int64((words[v] * _ONES) >> _S56)
    for b in range(nw * 8, a):
        n += np.int64(mask_row[b])
    if n == 0:
        return -1
    k = np.int64(((bits >> _S32) * np.uint64(n)) >> _S32)
    seen = 0
    for v in range(nw):
        run = words[v] * _ONES
        c = np.int64(run >> _S56)
        if seen + c > k:
            j = np.uint64(k - seen)
            b = 0
            for i in range(8):
                b += np.int64(((run >> np.uint64(8 * i)) & _FF) <= j)
            return v * 8 + b
        seen += c
    k -= seen
    for b in range(nw * 8, a):
        if mask_row[b]:
            if k == 0:
                return b
            k -= 1
    return -1


@batched
@njit(cache=True, parallel=True)
def sample_rows(mask, states, out):
    """Uniform random legal action per row of ``mask`` (bool ``(B, A)``, C-contiguous).

    ``states`` is a ``(B,)`` array of RNG records (``rng_key``/``rng_ctr``), one per
    row, so sampling is as reproducible as the games themselves. Rows with no legal
    action get -1.
    """
    for i in prange(mask.shape[0]):
        out[i] = pick_legal(mask[i], rng_next(states[i]))


@batched
@njit(cache=True, parallel=True)
def play_random_rows(recs, cfg, seeds, seed_stride, nplayers, steps, mask):
    """Kernel-only play: ``steps`` random legal moves per row, no observation written.

    The ceiling of the vectorised env; games auto-reset. ``mask`` is scratch space
    of shape ``(B, num_actions)``. Returns the number of games finished.
    """
    finished = 0
    for i in prange(recs.shape[0]):
        r = recs[i]
        m = mask[i]
        for _ in range(steps):
            k_legal_mask(r, cfg[0], m)
            a = pick_legal(m, rng_next(r))
            k_step(r, cfg[0], a)
            r.moves += 1
            if k_is_over(r, cfg[0]) or k_is_truncated(r, cfg[0]):
                finished += 1
                seeds[i] += seed_stride
                reset_game(r, cfg[0], seeds[i], nplayers)
    return finished


RNG_DTYPE = np.dtype([("rng_key", np.uint64), ("rng_ctr", np.uint64)])


def _rng_records(states: Any, b: int, fn: str) -> np.ndarray:
    if not isinstance(states, np.ndarray) or states.shape != (b,) or not (
        states.dtype == RNG_DTYPE
        or (states.dtype.names is not None
            and all(f in states.dtype.names and states.dtype[f] == np.uint64
                    for f in ("rng_key", "rng_ctr")))
    ):
        raise ValueError(f"{fn}: states must be {b} generator records (rng_states({b}, seed)), "
                         f"got {describe(states)}")
    if not states.flags.writeable:
        raise ValueError(f"{fn}: states must be writeable (the generators advance)")
    return states


def sample_legal(mask: np.ndarray, states: np.ndarray, out: np.ndarray,
                 threads: int | None = None) -> np.ndarray:
    """Uniform random legal action per row of ``mask`` (bool ``(B, A)``).

    ``states`` is a ``(B,)`` array of RNG records (``rng_key``/``rng_ctr``, as made by
    :func:`rng_states`), one per row, so sampling is as reproducible as the games
    themselves; ``out`` is an int64 (or int32) array of shape ``(B,)``, written in
    place and returned. Rows with no legal action get -1. ``threads``: as in
    :func:`batch_observe`.

    GPU buffers (a GPU env's mask as a torch CUDA tensor, say, with states from
    ``rng_states(B, seed, device="cuda")`` and an int64 CUDA ``out``) are sampled on
    the GPU by the same code, with the same results; nothing is copied to the host.
    """
    # this runs once per step of a sampling loop: the usual arguments pass on a few
    # attribute reads (dtype identity: numpy's built-in dtypes are singletons), and
    # anything else goes through the full checks
    try:
        fast = (mask.dtype is _BOOL and states.dtype is RNG_DTYPE and out.dtype is _I64
                and mask.ndim == 2 and states.ndim == 1 and out.ndim == 1
                and mask.shape[0] == states.shape[0] == out.shape[0]
                and mask.flags.c_contiguous and states.flags.writeable
                and out.flags.writeable)
    except AttributeError:
        fast = False
    if not fast:
        if _on_gpu(mask):  # GPU buffers: sampled there, from the same generators
            from trafficenvs.core.cuda_vector import sample_legal_device

            return sample_legal_device(mask, states, out)
        mask, states = _check_sample_args(mask, states, out)
    if _NO_JIT:
        states = as_kernel_array(states)
    sample_rows(mask, states, out, threads=threads)
    return out


def _on_gpu(x: Any) -> bool:
    """Whether ``x`` is a GPU array (CUDA array interface, or the CUDA simulator's)."""
    return hasattr(x, "__cuda_array_interface__") or type(x).__name__ == "FakeCUDAArray"


def _check_sample_args(mask: Any, states: Any, out: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sample_legal`'s arguments checked in full; ``mask`` made C-contiguous."""
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.ndim != 2:
        raise TypeError(f"sample_legal: mask must be a bool array of shape (B, num_actions), "
                        f"got {describe(mask)}")
    b = mask.shape[0]
    if not mask.flags.c_contiguous:  # rows are read 8 bytes at a time
        mask = np.ascontiguousarray(mask)
    states = _rng_records(states, b, "sample_legal")
    if not isinstance(out, np.ndarray) or out.dtype not in (np.int64, np.int32):
        raise TypeError(f"sample_legal: out must be an int64 array of shape ({b},), "
                        f"got {describe(out)}")
    check_out(out, "sample_legal: out", (b,), out.dtype)
    return mask, states


def play_random(recs: np.ndarray, cfg: np.ndarray, seeds: np.ndarray, seed_stride: Any,
                nplayers: int, steps: int, mask: np.ndarray, threads: int | None = None) -> int:
    """Kernel-only play: ``steps`` random legal moves per row, no observation written.

    The ceiling of the vectorised env; games auto-reset (row ``i`` restarts with seed
    ``seeds[i] + seed_stride``). ``mask`` is scratch space: bool ``(B, num_actions)``,
    C-contiguous. Returns the number of games finished. ``threads``: as in
    :func:`batch_observe`.
    """
    sizes = check_game_arrays("play_random", recs, cfg)
    b = recs.shape[0]
    if not isinstance(seeds, np.ndarray) or seeds.dtype != np.uint64 or seeds.shape != (b,):
        raise TypeError(f"play_random: seeds must be a uint64 array of shape ({b},), "
                        f"got {describe(seeds)}")
    if not seeds.flags.writeable:
        raise ValueError("play_random: seeds must be writeable (restarts advance them)")
    stride = check_int(seed_stride, "play_random: seed_stride", 0, 2**64 - 1)
    top = sizes["num_players"] if sizes else int(recs.dtype["reward"].shape[0] or 1)
    nplayers = check_int(nplayers, "play_random: nplayers", 1, top)
    steps = check_int(steps, "play_random: steps", 0, 2**62)
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.ndim != 2:
        raise TypeError(f"play_random: mask must be a bool array of shape ({b}, num_actions), "
                        f"got {describe(mask)}")
    width = sizes["num_actions"] if sizes else mask.shape[1]
    mask = check_out(mask, "play_random: mask", (b, width), np.dtype(np.bool_))
    if not mask.flags.c_contiguous:
        raise ValueError("play_random: mask must be C-contiguous (scratch rows are read "
                         "8 bytes at a time)")
    return play_random_rows(recs, cfg, seeds, np.uint64(stride), nplayers, steps, mask,
                        threads=threads)


def rng_states(n: int, seed: int, device: str = "cpu") -> Any:
    """``n`` independent generator records for :func:`sample_legal`, keyed from ``seed``.

    ``device="cuda"`` (or ``"cuda:K"``): the same generators in GPU memory (a numba
    device array), for sampling a GPU env's masks there.
    """
    from trafficenvs.core.rng import rng_seed_array

    n = check_int(n, "rng_states: n", 0)
    seed = check_int(seed, "rng_states: seed", 0, 2**64 - 1)
    st = as_kernel_array(np.zeros(n, RNG_DTYPE))
    rng_seed_array(st, np.uint64(seed))
    if device != "cpu":
        from trafficenvs.core.cuda_vector import to_gpu

        return to_gpu(st, device)
    return st


__all__ = ["pick_legal", "sample_legal", "sample_rows", "play_random", "play_random_rows",
           "rng_states", "RNG_DTYPE"]
