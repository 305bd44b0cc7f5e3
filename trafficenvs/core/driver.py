"""Batched drivers: one compiled loop per verb sequence, written once for every game.

Each ``prange`` iteration touches only its own record and its own rows of the
output buffers, which the caller allocates once (DESIGN layer 2). The same
functions drive a batch of one for the AEC adapter (the ``single_*`` variants skip
the thread pool, whose start-up costs more than one game's step).

Auto-reset: when a game ends (terminated or truncated) during ``batch_step`` its
final observation (from the seat that just moved) goes to ``final_obs``, its
rewards stay in ``rewards``, and the row starts its next game with the seed
``seeds[i] + seed_stride``. For a vectorised env made with ``reset(seed=s)`` and
``num_envs=B`` that is seed ``s + i + k*B`` for row i's k-th game.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trafficenvs.core.rng import rng_next
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


@njit(cache=True, inline="never")
def _reset_row(rec, cfg, seed, nplayers):
    k_init(rec, cfg, seed)
    rec.moves = 0
    for j in range(nplayers):
        rec.reward[j] = 0.0


@njit(cache=True, parallel=True)
def batch_reset(recs, cfg, seeds, nplayers, obs, mask, cur):
    """Start game ``i`` with ``seeds[i]``; write its first observation and mask."""
    for i in prange(recs.shape[0]):
        r = recs[i]
        _reset_row(r, cfg[0], seeds[i], nplayers)
        p = k_current_player(r, cfg[0])
        cur[i] = p
        k_observe(r, cfg[0], p, obs[i])
        k_legal_mask(r, cfg[0], mask[i])


@njit(cache=True, parallel=True)
def count_illegal(recs, cfg, actions, active):
    """Number of active rows whose action is illegal (checked before anything changes)."""
    n = 0
    for i in prange(recs.shape[0]):
        if active[i] and not k_is_legal(recs[i], cfg[0], actions[i]):
            n += 1
    return n


@njit(cache=True)
def illegal_rows(recs, cfg, actions, active):
    """Indices of the active rows whose action is illegal (for error messages)."""
    out = []
    for i in range(recs.shape[0]):
        if active[i] and not k_is_legal(recs[i], cfg[0], actions[i]):
            out.append(i)
    return out


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
        if not active[i]:
            for j in range(nplayers):
                rewards[i, j] = 0.0
            term[i] = False
            trunc[i] = False
            continue
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


@njit(cache=True, parallel=True)
def batch_observe(recs, cfg, seats, out):
    """``out[i]`` = game ``i`` seen from seat ``seats[i]`` (e.g. a learner mid-game)."""
    for i in prange(recs.shape[0]):
        k_observe(recs[i], cfg[0], seats[i], out[i])


@njit(cache=True)
def refresh_row(recs, cfg, i, obs, mask, cur):
    """Rewrite row ``i``'s player to move, observation and mask from its record."""
    r = recs[i]
    q = k_current_player(r, cfg[0])
    cur[i] = q
    k_observe(r, cfg[0], q, obs[i])
    mask[i, :] = False
    if not (k_is_over(r, cfg[0]) or k_is_truncated(r, cfg[0])):
        k_legal_mask(r, cfg[0], mask[i])


@njit(cache=True)
def single_reset(recs, cfg, seed, nplayers):
    """Start the one game of an AEC env."""
    _reset_row(recs[0], cfg[0], seed, nplayers)


@njit(cache=True)
def single_step(recs, cfg, action):
    """Apply one action to the game of an AEC env; returns False if it was illegal."""
    r = recs[0]
    c = cfg[0]
    if not k_is_legal(r, c, action):
        return False
    k_step(r, c, action)
    r.moves += 1
    return True


@njit(cache=True)
def single_observe(recs, cfg, seat, obs, mask):
    """One seat's observation; its mask is all zeros unless that seat is to move."""
    r = recs[0]
    c = cfg[0]
    k_observe(r, c, seat, obs)
    mask[:] = 0
    live = not (k_is_over(r, c) or k_is_truncated(r, c))
    if live and k_current_player(r, c) == seat:
        k_legal_mask(r, c, mask)


@njit(cache=True)
def single_status(recs, cfg):
    """(current player, game over, cut off by a game option) of an AEC env's game."""
    r = recs[0]
    c = cfg[0]
    return k_current_player(r, c), k_is_over(r, c), k_is_truncated(r, c)


_ONES = np.uint64(0x0101010101010101)
_FF = np.uint64(0xFF)
_S56 = np.uint64(56)
_S32 = np.uint64(32)


@njit(cache=True, inline="never")
def _pick_legal(mask_row, bits):
    """The legal action of one mask row chosen by 64 random ``bits`` (uniform), or -1.

    The pick is the k-th legal action, ``k = (bits >> 32) * count >> 32``. The mask is
    read 8 bytes at a time (a bool is one byte, 0 or 1): multiplying a word by
    ``0x0101..01`` leaves in byte i the number of ones in bytes 0..i, so the top
    byte counts the word (4 words are added first when only the count is needed),
    and the chosen byte is found by counting the running totals not above k, with
    no branch per byte. The tail that does not fill a word is read byte by byte.
    """
    a = mask_row.shape[0]
    nw = a // 8
    words = mask_row[: nw * 8].view(np.uint64)
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


@njit(cache=True, parallel=True)
def sample_legal(mask, states, out):
    """Uniform random legal action per row of ``mask`` (bool ``(B, A)``, C-contiguous).

    ``states`` is a ``(B,)`` array of RNG records (``rng_key``/``rng_ctr``), one per
    row, so sampling is as reproducible as the games themselves. Rows with no legal
    action get -1.
    """
    for i in prange(mask.shape[0]):
        out[i] = _pick_legal(mask[i], rng_next(states[i]))


@njit(cache=True, parallel=True)
def play_random(recs, cfg, seeds, seed_stride, nplayers, steps, mask):
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
            a = _pick_legal(m, rng_next(r))
            k_step(r, cfg[0], a)
            r.moves += 1
            if k_is_over(r, cfg[0]) or k_is_truncated(r, cfg[0]):
                finished += 1
                seeds[i] += seed_stride
                _reset_row(r, cfg[0], seeds[i], nplayers)
    return finished


RNG_DTYPE = np.dtype([("rng_key", np.uint64), ("rng_ctr", np.uint64)])


def rng_states(n: int, seed: int) -> np.ndarray:
    """``n`` independent generator records for :func:`sample_legal`, keyed from ``seed``."""
    from trafficenvs.core.records import as_kernel_array
    from trafficenvs.core.rng import rng_seed_array

    st = as_kernel_array(np.zeros(n, RNG_DTYPE))
    rng_seed_array(st, np.uint64(seed))
    return st


__all__ = [
    "batch_reset", "batch_step", "count_illegal", "illegal_rows", "single_reset",
    "single_step", "single_observe", "single_status", "sample_legal", "play_random",
    "batch_observe", "refresh_row",
    "rng_states",
]
