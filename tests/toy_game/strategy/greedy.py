"""The rule-based player: leave a multiple of 4 cars when it can (the winning line for
2 players), else wave one car through. ``TollGateGreedy`` reads the observation by
layout names; ``rollout_move`` (gathered as the ``greedy`` verb) reads the record."""

from __future__ import annotations

import numpy as np
from toy_game.rules.layout import CACHE, MAX_WAVE

from trafficenvs.core.game import Game
from trafficenvs.core.jit import kernel
from trafficenvs.core.player import GreedyPlayer


@kernel(cache=CACHE)
def choose(cars, mask_row):
    """The wave (an action) that leaves a multiple of 4 cars, else the first legal one."""
    a = cars % (MAX_WAVE + 1) - 1
    return a if a >= 0 and mask_row[a] else np.argmax(mask_row)


@kernel(cache=CACHE)
def greedy_batch(obs, mask, o_cars, out):
    for i in range(obs.shape[0]):
        out[i] = choose(np.int64(obs[i, o_cars] + 0.5), mask[i])


@kernel(cache=CACHE)
def rollout_move(rec, cfg, mask, gs, i):
    """The ``greedy`` verb: the same move from the record (``gs`` is unused)."""
    return choose(np.int64(rec.cars), mask)


class TollGateGreedy(GreedyPlayer):
    game_name = "toll_gate"

    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy"):
        super().__init__(game, seed, name)
        self.o_cars = game.obs_layout.field("cars_left").offset

    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        greedy_batch(obs, mask, self.o_cars, out)

    def rollout_scratch(self, b: int) -> tuple[np.ndarray, ...]:
        return (np.zeros((b, 1), np.int64),)
