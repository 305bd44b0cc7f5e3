"""The kernel verbs over one record (the contract is in ``trafficenvs/core/verbs.py``).

Inside the package keep ``cache=True``; this copy outside it compiles per process
(a cache file beside the tests would outlive edits of the drivers it is compiled into).
"""

from __future__ import annotations

import numpy as np

from toy_game.layout import CFG_DTYPE, MAX_CARS, MAX_WAVE, MIN_CARS, RECORD_DTYPE
from trafficenvs.core.clock import horizon_left
from trafficenvs.core.jit import kernel
from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.core.rng import rng_below, rng_seed

CACHE = __name__.startswith("trafficenvs.")


@kernel(cache=CACHE)
def init(rec, cfg, seed):
    rng_seed(rec, seed)
    rec.cars = MIN_CARS + rng_below(rec, MAX_CARS - MIN_CARS + 1)
    rec.cur = 0
    rec.last = 0
    rec.over = False
    rec.winner[:] = 0


@kernel(cache=CACHE)
def current_player(rec, cfg):
    return np.int64(rec.cur)


@kernel(cache=CACHE)
def is_over(rec, cfg):
    return rec.over


@kernel(cache=CACHE)
def is_legal(rec, cfg, action):
    return not rec.over and 0 <= action < MAX_WAVE and action + 1 <= rec.cars


@kernel(cache=CACHE)
def legal_mask(rec, cfg, out):
    for a in range(MAX_WAVE):
        out[a] = is_legal(rec, cfg, a)


@kernel(cache=CACHE)
def observe(rec, cfg, seat, out):
    out[cfg.ob_cars_left] = rec.cars
    for a in range(MAX_WAVE):
        out[cfg.ob_last_wave + a] = 1 if rec.last == a + 1 else 0
    out[cfg.ob_horizon_left] = horizon_left(rec.moves, cfg.horizon)


@kernel(cache=CACHE)
def step(rec, cfg, action):
    N = cfg.num_players
    for j in range(N):
        rec.reward[j] = 0.0
    rec.cars -= action + 1
    rec.last = action + 1
    if rec.cars == 0:
        rec.over = True
        rec.winner[rec.cur] = 1
        write_zero_sum(rec.reward, rec.winner, N)
        return
    rec.cur = (rec.cur + 1) % N


__all__ = ["init", "step", "is_legal", "legal_mask", "observe", "current_player", "is_over",
           "RECORD_DTYPE", "CFG_DTYPE"]
