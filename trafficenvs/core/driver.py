"""Batched drivers: one compiled loop per verb sequence, written once for every game.

Each ``prange`` iteration touches only its own record and its own rows of the
output buffers, which the caller allocates once (no allocation per step). The same
functions drive a batch of one for the AEC adapter (the ``single_*`` variants skip
the thread pool, whose start-up costs more than one game's step).

Auto-reset: when a game ends (terminated or truncated) during ``batch_step`` its
final observation (from the seat that just moved) goes to ``final_obs``, its
rewards stay in ``rewards``, and the row starts its next game with the seed
``seeds[i] + seed_stride``. For a vectorised env made with ``reset(seed=s)`` and
``num_envs=B`` that is seed ``s + i + k*B`` for row i's k-th game.

Checked and unchecked: the compiled loops trust their inputs (a row index or seat
out of range reads and writes outside the arrays). The loops the adapters drive
(``batch_reset``, ``batch_step``, ``count_illegal``, ``refresh_row``, the
``single_*``) are called only after the adapters' own checks. The helpers meant for
users and benchmarks (:func:`sample_legal`, :func:`play_random`,
:func:`batch_observe`, :func:`rng_states`) are Python functions that check shapes,
dtypes, ranges and contiguity first, raising ``TypeError``/``ValueError`` that name
the argument, then call their compiled loop (``_sample_legal`` and so on).
"""

from __future__ import annotations

import weakref
from typing import Any

import numba
import numpy as np
from numba import njit, prange

from trafficenvs.core.jit import kernel
from trafficenvs.core.records import as_kernel_array
from trafficenvs.core.rng import rng_next
from trafficenvs.core.threads import batched
from trafficenvs.core.verbs import (
    k_current_player,
    k_init,
    k_is_legal,
    k_is_over,
    k_is_truncated,
    k_legal_mask,
    k_observe,
    k_step,
)
from trafficenvs.core.views import as_bytes, as_words


@kernel(inline="never")
def _reset_row(rec, cfg, seed, nplayers):
    k_init(rec, cfg, seed)
    rec.moves = 0
    for j in range(nplayers):
        rec.reward[j] = 0.0


@kernel(inline="always")
def reset_row(recs, cfg, i, seeds, nplayers, obs, mask, cur):
    """Start game ``i`` with ``seeds[i]``; write its first observation and mask.

    The per-row body of :func:`batch_reset`, and of the CUDA build's reset (one
    thread per game, ``core/cuda_drivers.py``): every driver of either target calls
    the same row functions, so no driver logic is written twice.
    """
    r = recs[i]
    _reset_row(r, cfg[0], seeds[i], nplayers)
    p = k_current_player(r, cfg[0])
    cur[i] = p
    k_observe(r, cfg[0], p, obs[i])
    k_legal_mask(r, cfg[0], mask[i])


@batched
@njit(cache=True, parallel=True)
def batch_reset(recs, cfg, seeds, nplayers, obs, mask, cur):
    """Start game ``i`` with ``seeds[i]``; write its first observation and mask."""
    for i in prange(recs.shape[0]):
        reset_row(recs, cfg, i, seeds, nplayers, obs, mask, cur)


@batched
@njit(cache=True, parallel=True)
def count_illegal(recs, cfg, actions, active, mask):
    """Number of active rows whose action is illegal (checked before anything changes).

    ``mask`` is the env's own mask of the legal actions, written with each record by
    the same kernels (reset, step, a loaded state), and read-only to the user: an
    action it holds is legal. Any other action (out of range, or not in it) is checked
    by the rules (``is_legal``), so the answer is the rules' own. Reading one mask
    byte, which the caller's sampler has just read, instead of the record lines
    ``is_legal`` needs, which the step before has pushed out of the cache: the
    pre-check took 18-20 ns a row of Jamming Traffic's 170 at batch 4096 on two
    threads, and 3 with the mask (measured).
    """
    n = 0
    for i in prange(recs.shape[0]):
        if active[i] and row_illegal(recs, cfg, i, actions, mask):
            n += 1
    return n


@kernel(inline="always")
def row_illegal(recs, cfg, i, actions, mask):
    """Whether row ``i``'s action is illegal: not in the env's mask and refused by the
    rules (the per-row body of :func:`count_illegal`, for both targets)."""
    a = actions[i]
    if a >= 0 and a < mask.shape[1] and mask[i, a]:
        return False
    return not k_is_legal(recs[i], cfg[0], a)


@njit(cache=True)
def illegal_rows(recs, cfg, actions, active):
    """Indices of the active rows whose action is illegal (for error messages)."""
    out = []
    for i in range(recs.shape[0]):
        if active[i] and not k_is_legal(recs[i], cfg[0], actions[i]):
            out.append(i)
    return out


@batched
@njit(cache=True, parallel=True)
def batch_step(
    recs, cfg, actions, active, final_seat, seeds, seed_stride, max_moves, nplayers,
    obs, mask, cur, rewards, term, trunc, final_obs, final_recs,
):
    """Step every ``active`` game with its action, auto-resetting the ones that end.

    Inactive rows keep their record, observation, mask and player to move; their
    rewards and end flags read zero (nothing happened there). A game that ends
    writes its last observation from seat ``final_seat[i]`` (the mover where that is
    negative) to ``final_obs[i]`` and a copy of its final record to ``final_recs[i]``.
    ``max_moves <= 0`` disables truncation. Actions must be legal (``count_illegal``).
    """
    for i in prange(recs.shape[0]):
        step_row(recs, cfg, i, actions, active, final_seat, seeds, seed_stride, max_moves,
                 nplayers, obs, mask, cur, rewards, term, trunc, final_obs, final_recs)


@kernel(inline="always")
def step_row(
    recs, cfg, i, actions, active, final_seat, seeds, seed_stride, max_moves, nplayers,
    obs, mask, cur, rewards, term, trunc, final_obs, final_recs,
):
    """Row ``i`` of :func:`batch_step` (the CPU loop and the CUDA build both call it)."""
    if not active[i]:
        for j in range(nplayers):
            rewards[i, j] = 0.0
        term[i] = False
        trunc[i] = False
        return
    r = recs[i]
    p = k_current_player(r, cfg[0])
    k_step(r, cfg[0], actions[i])
    r.moves += 1
    for j in range(nplayers):
        rewards[i, j] = r.reward[j]
    done = k_is_over(r, cfg[0])
    cut = (not done) and ((max_moves > 0 and r.moves >= max_moves)
                          or k_is_truncated(r, cfg[0]))
    term[i] = done
    trunc[i] = cut
    if done or cut:
        s = final_seat[i]
        k_observe(r, cfg[0], p if s < 0 else s, final_obs[i])
        final_recs[i] = r
        seeds[i] += seed_stride
        _reset_row(r, cfg[0], seeds[i], nplayers)
    q = k_current_player(r, cfg[0])
    cur[i] = q
    k_observe(r, cfg[0], q, obs[i])
    k_legal_mask(r, cfg[0], mask[i])


@batched
@njit(cache=True, parallel=True)
def _batch_observe(recs, cfg, seats, out):
    """``out[i]`` = game ``i`` seen from seat ``seats[i]`` (e.g. a learner mid-game)."""
    for i in prange(recs.shape[0]):
        k_observe(recs[i], cfg[0], seats[i], out[i])


@batched
@njit(cache=True, parallel=True)
def batch_refresh(recs, cfg, obs, mask, cur):
    """Every row's player to move, observation and mask from its record (:func:`refresh_row`)."""
    for i in prange(recs.shape[0]):
        refresh_row(recs, cfg, i, obs, mask, cur)


@kernel
def refresh_row(recs, cfg, i, obs, mask, cur):
    """Rewrite row ``i``'s player to move, observation and mask from its record."""
    r = recs[i]
    q = k_current_player(r, cfg[0])
    cur[i] = q
    k_observe(r, cfg[0], q, obs[i])
    mask[i, :] = False
    if not (k_is_over(r, cfg[0]) or k_is_truncated(r, cfg[0])):
        k_legal_mask(r, cfg[0], mask[i])


@kernel
def single_reset(recs, cfg, seed, nplayers):
    """Start the one game of an AEC env."""
    _reset_row(recs[0], cfg[0], seed, nplayers)


@kernel
def single_step(recs, cfg, action):
    """Apply one action to the game of an AEC env; returns False if it was illegal."""
    r = recs[0]
    c = cfg[0]
    if not k_is_legal(r, c, action):
        return False
    k_step(r, c, action)
    r.moves += 1
    return True


@kernel
def single_observe(recs, cfg, seat, obs, mask):
    """One seat's observation; its mask is all zeros unless that seat is to move."""
    r = recs[0]
    c = cfg[0]
    k_observe(r, c, seat, obs)
    mask[:] = 0
    live = not (k_is_over(r, c) or k_is_truncated(r, c))
    if live and k_current_player(r, c) == seat:
        k_legal_mask(r, c, mask)


@kernel
def single_status(recs, cfg):
    """(current player, game over, cut off by a game option) of an AEC env's game."""
    r = recs[0]
    c = cfg[0]
    return k_current_player(r, c), k_is_over(r, c), k_is_truncated(r, c)


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
def _sample_legal(mask, states, out):
    """Uniform random legal action per row of ``mask`` (bool ``(B, A)``, C-contiguous).

    ``states`` is a ``(B,)`` array of RNG records (``rng_key``/``rng_ctr``), one per
    row, so sampling is as reproducible as the games themselves. Rows with no legal
    action get -1.
    """
    for i in prange(mask.shape[0]):
        out[i] = pick_legal(mask[i], rng_next(states[i]))


@batched
@njit(cache=True, parallel=True)
def _play_random(recs, cfg, seeds, seed_stride, nplayers, steps, mask):
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
                _reset_row(r, cfg[0], seeds[i], nplayers)
    return finished


RNG_DTYPE = np.dtype([("rng_key", np.uint64), ("rng_ctr", np.uint64)])


# -- argument checks: the compiled loops trust their inputs, so the public entries
#    check them first (every public entry checks shapes, dtypes and ranges before
#    compiled code runs). Errors name the argument, what was expected and what
#    was given. The checks read only attributes (shape, dtype, flags) where they can:
#    a pass over the data costs microseconds, which is a noticeable share of a small
#    batch's step.


def next_seed(env: Any, seed: Any) -> int:
    """The seed of a ``reset(seed)`` of ``env`` (an AEC or vectorised env with an
    ``np_random`` attribute): a given seed (checked, 0..2**64-1) also seeds
    ``env.np_random``; without one the seed is drawn from it, so a seeded reset and the
    unseeded ones after it are reproducible (Gymnasium's rule); before any seeded reset
    it draws from OS entropy."""
    if seed is None:
        if env.np_random is None:
            env.np_random = np.random.default_rng()
        return int(env.np_random.integers(0, 2**63, dtype=np.uint64))
    seed = check_int(seed, "seed", 0, 2**64 - 1)
    env.np_random = np.random.default_rng(seed)
    return seed


def describe(x: Any) -> str:
    """A short account of ``x`` for error messages: ``int64 array of shape (3,)``."""
    if isinstance(x, np.ndarray):
        flags = "" if x.flags.c_contiguous else " (not C-contiguous)"
        return f"{x.dtype} array of shape {x.shape}{flags}"
    text = repr(x)
    return text if len(text) <= 60 else f"{type(x).__name__} {text[:57]}..."


def check_int(value: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an ``int`` in ``lo..hi`` (inclusive; either end may be open).

    Python and numpy integers are accepted; ``bool``, floats and strings are not
    (``TypeError``); a value out of range is a ``ValueError``.
    """
    rng = (f" in {lo}..{hi}" if lo is not None and hi is not None
           else f" >= {lo}" if lo is not None else f" <= {hi}" if hi is not None else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int{rng}, got {describe(value)}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an int{rng}, got {v}")
    return v


def as_array(x: Any, name: str) -> np.ndarray:
    """``x`` as an ndarray (no copy for one), or a ``TypeError`` naming ``name``."""
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array, got {describe(x)} ({err})") from None


def check_ints(x: Any, name: str, shape: tuple[int, ...], lo: int, hi: int) -> np.ndarray:
    """An integer array of ``shape`` with every value in ``lo..hi``, as C-contiguous int64."""
    x = as_array(x, name)
    if x.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an int array of shape {shape}, got {describe(x)}")
    if x.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {x.shape}")
    if x.size:
        low, high = x.min(), x.max()
        if low < lo or high > hi:
            bad = x.flat[int(np.argmax((x < lo) | (x > hi)))]
            raise ValueError(f"{name} must be in {lo}..{hi}, got {bad}")
    return np.ascontiguousarray(x, dtype=np.int64)


def check_bools(x: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A bool array of ``shape``, C-contiguous (a copy only if it was not)."""
    x = as_array(x, name)
    if x.dtype != np.bool_:
        raise TypeError(f"{name} must be a bool array of shape {shape}, got {describe(x)}")
    if x.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {x.shape}")
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


def check_out(out: Any, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An output buffer: an ndarray of exactly ``shape`` and ``dtype``, writeable."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a {np.dtype(dtype)} array of shape {shape}, "
                        f"got {describe(out)}")
    if out.dtype != dtype:
        raise TypeError(f"{name} must be a {np.dtype(dtype)} array of shape {shape}, "
                        f"got {describe(out)}")
    if out.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {out.shape}")
    if not out.flags.writeable:
        raise ValueError(f"{name} must be writeable, got a read-only array")
    return out


# The sizes of the game configurations the adapters were made with, by the
# configuration record (``game.cfg``): the helpers below take a bare ``cfg`` and look
# up how wide a mask or observation row of that game must be. Entries die with their
# configuration array.
_SIZES: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}


def note_game(game: Any) -> None:
    """Remember ``game``'s sizes for its configuration record (the adapters call this)."""
    cfg = game.cfg
    key = id(cfg)
    _SIZES[key] = (weakref.ref(cfg, lambda _r, k=key: _SIZES.pop(k, None)), {
        "num_players": game.num_players, "num_actions": game.num_actions,
        "obs_dim": game.obs_dim, "obs_dtype": np.dtype(game.obs_dtype),
        "record_dtype": np.dtype(game.record_dtype),
    })


def _sizes_of(cfg: np.ndarray) -> dict[str, Any] | None:
    entry = _SIZES.get(id(cfg))
    if entry is None or entry[0]() is not cfg:
        return None
    return entry[1]


def check_game_arrays(fn: str, recs: Any, cfg: Any) -> dict[str, Any] | None:
    """``recs`` a 1-D array of game records and ``cfg`` a 1-element configuration record
    of the same game; the game's sizes if an env was made with this ``cfg``."""
    from trafficenvs.core.verbs import is_registered

    if not isinstance(recs, np.ndarray) or recs.ndim != 1 or not is_registered(recs.dtype):
        raise TypeError(f"{fn}: recs must be a 1-D array of game records (env.records), "
                        f"got {describe(recs)}")
    if not isinstance(cfg, np.ndarray) or cfg.shape != (1,) or cfg.dtype.names is None:
        raise TypeError(f"{fn}: cfg must be a game's 1-element configuration record "
                        f"(env.game.cfg), got {describe(cfg)}")
    if not recs.flags.writeable:
        raise ValueError(f"{fn}: recs must be writeable")
    sizes = _sizes_of(cfg)
    if sizes is not None and sizes["record_dtype"] != recs.dtype:
        raise TypeError(f"{fn}: recs are records of another game than cfg's")
    return sizes


def batch_observe(recs: np.ndarray, cfg: np.ndarray, seats: Any, out: np.ndarray,
                  threads: int | None = None) -> None:
    """``out[i]`` = game ``i`` seen from seat ``seats[i]`` (e.g. a learner mid-game).

    ``out`` is ``(B, obs_dim)`` of the game's observation dtype. Prefer
    ``TrafficVecEnv.observe``, which checks against its own game; here the row width
    and seat range are checked when an env was made with this ``cfg``. ``threads``: see
    :class:`~trafficenvs.core.threads.Batched` (None: numba's current setting).
    """
    sizes = check_game_arrays("batch_observe", recs, cfg)
    b = recs.shape[0]
    players = sizes["num_players"] if sizes else int(recs.dtype["reward"].shape[0] or 1)
    seats = check_ints(seats, "batch_observe: seats", (b,), 0, players - 1)
    if sizes is not None:
        out = check_out(out, "batch_observe: out", (b, sizes["obs_dim"]), sizes["obs_dtype"])
    else:
        if not isinstance(out, np.ndarray) or out.ndim != 2 or out.shape[0] != b:
            raise ValueError(f"batch_observe: out must be a 2-D array of {b} rows, "
                             f"got {describe(out)}")
        out = check_out(out, "batch_observe: out", out.shape, np.dtype(np.uint8))
    if out.flags.c_contiguous:
        _batch_observe(recs, cfg, seats, out, threads=threads)
    else:  # a strided view: write a contiguous copy, then into the view
        tmp = np.zeros(out.shape, out.dtype)
        _batch_observe(recs, cfg, seats, tmp, threads=threads)
        out[...] = tmp


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
    _sample_legal(mask, states, out, threads=threads)
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
    return _play_random(recs, cfg, seeds, np.uint64(stride), nplayers, steps, mask,
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


__all__ = [
    "batch_reset", "batch_step", "count_illegal", "illegal_rows", "single_reset",
    "single_step", "single_observe", "single_status", "sample_legal", "play_random",
    "batch_observe", "refresh_row", "reset_row", "step_row", "row_illegal", "pick_legal",
    "rng_states", "note_game", "check_int", "check_ints", "check_bools", "check_out",
    "describe",
]
