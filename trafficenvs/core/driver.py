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
``single_*``) are called only after the adapters' own checks (``core/checks.py``).
:func:`batch_observe`, meant for users, checks shapes, dtypes, ranges and contiguity
first and then calls its compiled loop (:func:`observe_rows`). Random legal actions
and kernel-only random play are in ``core/sampler.py``.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
from numba import njit, prange

from trafficenvs.core.checks import check_game_arrays, check_ints, check_out, describe
from trafficenvs.core.jit import kernel
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

#: the buffers one :func:`batch_step` writes, grouped once per env (the rows of its
#: ``VecStep`` and its final records) and passed spread out (``*buffers``). Not as one
#: namedtuple argument unpacked inside the compiled loop: tried, and numba's parallel
#: build then raced (under load, 6 of 40 runs of a 2-thread Jamming Traffic batch played
#: other games than the serial build; 0 of 40 with the arrays as separate arguments)
StepBuffers = namedtuple("StepBuffers", ["observation", "action_mask", "current_player",
                                         "rewards", "terminated", "truncated",
                                         "final_observation", "final_records"])


@kernel(inline="never")
def reset_game(rec, cfg, seed, nplayers):
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
    reset_game(r, cfg[0], seeds[i], nplayers)
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
def batch_step(recs, cfg, actions, active, final_seat, seeds, seed_stride, max_moves, nplayers,
               obs, mask, cur, rewards, term, trunc, final_obs, final_recs):
    """Step every ``active`` game with its action, auto-resetting the ones that end.

    Inactive rows keep their record, observation, mask and player to move; their
    rewards and end flags read zero (nothing happened there). A game that ends
    writes its last observation from seat ``final_seat[i]`` (the mover where that is
    negative) to ``final_obs[i]`` and a copy of its final record to ``final_recs[i]``.
    ``max_moves <= 0`` disables truncation. Actions must be legal (``count_illegal``).
    The eight buffers are a :class:`StepBuffers`, spread (``*buffers``).
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
        reset_game(r, cfg[0], seeds[i], nplayers)
    q = k_current_player(r, cfg[0])
    cur[i] = q
    k_observe(r, cfg[0], q, obs[i])
    k_legal_mask(r, cfg[0], mask[i])


@batched
@njit(cache=True, parallel=True)
def observe_rows(recs, cfg, seats, out):
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
    reset_game(recs[0], cfg[0], seed, nplayers)


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
        observe_rows(recs, cfg, seats, out, threads=threads)
    else:  # a strided view: write a contiguous copy, then into the view
        tmp = np.zeros(out.shape, out.dtype)
        observe_rows(recs, cfg, seats, tmp, threads=threads)
        out[...] = tmp


__all__ = [
    "StepBuffers", "batch_reset", "batch_step", "count_illegal", "illegal_rows", "single_reset",
    "single_step", "single_observe", "single_status", "batch_observe", "observe_rows",
    "batch_refresh", "refresh_row", "reset_row", "reset_game", "step_row", "row_illegal",
]
