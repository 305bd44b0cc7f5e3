"""The rule-based player: leave a multiple of 4 cars when it can (the winning line for
2 players), else wave one car through. Reads the observation by layout names."""

from __future__ import annotations

import numpy as np

from toy_game.kernels import CACHE
from toy_game.layout import MAX_WAVE
from trafficenvs.core.game import Game
from trafficenvs.core.jit import kernel
from trafficenvs.core.player import GreedyPlayer


@kernel(cache=CACHE)
def greedy_batch(obs, mask, o_cars, out):
    for i in range(obs.shape[0]):
        a = np.int64(obs[i, o_cars] + 0.5) % (MAX_WAVE + 1) - 1
        out[i] = a if a >= 0 and mask[i, a] else np.argmax(mask[i])


class TollGateGreedy(GreedyPlayer):
    game_name = "toll_gate"

    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy"):
        super().__init__(game, seed, name)
        self.o_cars = game.obs_layout.field("cars_left").offset

    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        greedy_batch(obs, mask, self.o_cars, out)
