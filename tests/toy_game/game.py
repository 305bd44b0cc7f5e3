"""The game as a :class:`~trafficenvs.core.game.Game`: config, names, state dicts, renders."""

from __future__ import annotations

from typing import Any

import numpy as np

from toy_game import kernels as K
from toy_game.layout import MAX_CARS, MAX_PLAYERS, MAX_WAVE, action_layout, obs_layout
from toy_game.spec import SPEC
from trafficenvs.core.game import Game
from trafficenvs.core.statedict import StateDictError

STATE_KEYS = {"game", "num_players", "cars", "to_move", "last_wave", "over", "moves", "rng",
              "winner"}
OPTIONAL_KEYS = {"moves", "rng", "winner"}


class TollGateGame(Game):
    """Toll Gate for 2-4 players. No options beyond the player count."""

    spec = SPEC
    record_dtype = K.RECORD_DTYPE
    min_players = 2
    max_players = MAX_PLAYERS

    def __init__(self, num_players: int = 2):
        self.num_players = self.check_num_players(num_players)
        self.obs_layout = obs_layout(self.num_players)
        self.action_layout = action_layout()
        self.obs_dim = self.obs_layout.size
        self.num_actions = self.action_layout.size
        cfg = np.zeros(1, K.CFG_DTYPE)
        cfg[0]["num_players"] = self.num_players
        for key, offset in self.obs_layout.offsets().items():
            cfg[0][key] = offset
        self.cfg = cfg

    def action_name(self, rec: np.void, action: int) -> str:
        return f"wave {int(action) + 1} car{'s' if action else ''} through"

    def to_dict(self, rec: np.void) -> dict[str, Any]:
        n = self.num_players
        return {
            "game": self.name, "num_players": n, "cars": int(rec["cars"]),
            "to_move": int(rec["cur"]), "last_wave": int(rec["last"]),
            "over": bool(rec["over"]), "moves": int(rec["moves"]), "rng": self.rng_to_dict(rec),
            "winner": [p for p in range(n) if rec["winner"][p]],
        }

    def from_dict(self, state: dict[str, Any]) -> np.ndarray:
        st = self.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
        n = self.num_players
        over = st.bool("over")
        cars = st.int("cars", 0, MAX_CARS)
        if over != (cars == 0):
            raise StateDictError("state dict: over must be True exactly when no car waits")
        winner = st.int_list("winner", 0, n - 1, default=[])
        if len(winner) != (1 if over else 0):
            raise StateDictError("state dict: winner must name one seat once the game is over")
        recs = self.new_records(1)
        r = recs[0]
        self.load_rng(r, state)
        r["moves"] = st.int("moves", 0, 2**31 - 1, default=0)
        r["cars"], r["over"] = cars, over
        r["cur"] = st.int("to_move", 0, n - 1)
        r["last"] = st.int("last_wave", 0, MAX_WAVE)
        for p in winner:
            r["winner"][p] = 1
        return recs

    def check_invariants(self, rec: np.void) -> None:
        assert 0 <= rec["cars"] <= MAX_CARS
        assert bool(rec["over"]) == (rec["cars"] == 0)
        assert 0 <= rec["cur"] < self.num_players

    def scores(self, rec: np.void) -> np.ndarray:
        return rec["winner"][: self.num_players].astype(np.float64)

    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        return (f"Toll Gate: {int(rec['cars'])} cars waiting  " + "o" * int(rec["cars"])
                + f"\nseat {int(rec['cur'])} to move" + (" (over)" if rec["over"] else ""))

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        img = np.full((40, 20 * MAX_CARS + 20, 3), 255, np.uint8)
        for c in range(int(rec["cars"])):
            img[12:28, 10 + 20 * c: 26 + 20 * c] = (200, 40, 40)
        return img
