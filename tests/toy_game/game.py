"""The game as a :class:`~trafficenvs.core.game.Game`: options and names. Its state dicts
are in ``state.py``, its renders in ``render.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
from toy_game import render, state
from toy_game.rules.layout import CFG_DTYPE, MAX_PLAYERS, RECORD_DTYPE, action_layout, obs_layout
from toy_game.spec import SPEC

from trafficenvs.core.game import Game


class TollGateGame(Game):
    """Toll Gate for 2-4 players. No options beyond the player count."""

    spec = SPEC
    record_dtype = RECORD_DTYPE
    min_players = 2
    max_players = MAX_PLAYERS

    def __init__(self, num_players: int = 2):
        self.num_players = self.check_num_players(num_players)
        self.obs_layout = obs_layout(self.num_players)
        self.action_layout = action_layout()
        self.obs_dim = self.obs_layout.size
        self.num_actions = self.action_layout.size
        cfg = np.zeros(1, CFG_DTYPE)
        cfg[0]["num_players"] = self.num_players
        for key, offset in self.obs_layout.offsets().items():
            cfg[0][key] = offset
        self.cfg = cfg

    def action_name(self, rec: np.void, action: int) -> str:
        return f"wave {int(action) + 1} car{'s' if action else ''} through"

    def scores(self, rec: np.void) -> np.ndarray:
        return rec["winner"][: self.num_players].astype(np.float64)

    def to_dict(self, rec: np.void) -> dict[str, Any]:
        return state.to_dict(self, rec)

    def from_dict(self, state_dict: dict[str, Any]) -> np.ndarray:
        return state.from_dict(self, state_dict)

    def check_invariants(self, rec: np.void) -> None:
        state.check_invariants(self, rec)

    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        return render.render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        return render.render_image(self, rec, seat)
