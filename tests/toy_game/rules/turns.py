"""The turn flow: set-up (a queue of 8-15 cars from the game's generator), the seat to
move, a wave of 1-3 cars, and the end (whoever waves the last car through wins)."""

from __future__ import annotations

import numpy as np
from toy_game.rules.layout import CACHE, MAX_CARS, MIN_CARS

from trafficenvs.core.jit import kernel
from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.core.rng import rng_below, rng_seed


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
