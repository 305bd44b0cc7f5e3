"""Jakarta Traffic as a :class:`~trafficenvs.core.game.Game`: config, names, state dicts."""

from __future__ import annotations

from typing import Any

import numpy as np

from trafficenvs.core.files import option_bool, option_int
from trafficenvs.core.game import Game
from trafficenvs.jakarta_traffic import state
from trafficenvs.jakarta_traffic.rules.board import trace
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DELIVER,
    A_DETOUR,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    CFG_DTYPE,
    DELIVER,
    MAX_PLAYERS,
    MAX_ROUNDS,
    NUM_ACTIONS,
    PLACE,
    RECORD_DTYPE,
    SIDE,
    TYPES,
    action_layout,
    obs_layout,
)
from trafficenvs.jakarta_traffic.rules.scoring import final_score
from trafficenvs.jakarta_traffic.rules.tiles import TileSet, TileSpec, check_tiles_fit, fill_cfg
from trafficenvs.jakarta_traffic.rules.tiles import load_tiles as _load_tiles
from trafficenvs.jakarta_traffic.spec import SPEC

EDGE_NAMES = ("north", "east", "south", "west")
TURN_NAMES = ("a quarter turn clockwise", "a half turn", "a quarter turn anticlockwise")


def cell_name(x: int) -> str:
    """``"r2c4"``: row and column counted from 1, as the detour dice count them."""
    r, c = divmod(int(x), SIDE)
    return f"r{r + 1}c{c + 1}"


class JakartaTrafficGame(Game):
    """Jakarta Traffic for 2-4 players (K1) on a 5x5 board of a given tile set (K2).

    Options: ``tiles`` (None for the shipped default, a JSON path or a dict, see
    :mod:`~trafficenvs.jakarta_traffic.rules.tiles`) and ``shaping`` (reward star points as
    they are taken and speech-bubble bonus as it grows, on top of the zero-sum
    result; off by default, C2) and ``max_rounds`` (K9's cap: the game is truncated
    once that many rounds are complete; 0, the default, for none).
    """

    spec = SPEC
    record_dtype = RECORD_DTYPE
    min_players = 2
    max_players = MAX_PLAYERS
    #: truncation: decisions per player (a turn is 1-5 decisions; random play ends in ~600)
    default_max_cycles = 450

    def __init__(self, num_players: int = 4, tiles: TileSpec = None, shaping: bool = False,
                 max_rounds: int = 0):
        self.num_players = self.check_num_players(num_players)
        #: the ``tiles`` option as given (to make more envs of this configuration)
        self.tiles_spec = tiles
        self.tiles: TileSet = _load_tiles(tiles)
        check_tiles_fit(self.tiles, self.num_players)
        self.shaping = option_bool(shaping, "shaping")
        #: 0: no cap (MAX_ROUNDS bounds it: the record's int32 round counter never wraps)
        self.max_rounds = option_int(max_rounds, "max_rounds (0: no cap)", 0, MAX_ROUNDS)
        self.obs_layout = obs_layout(self.num_players, self.max_rounds)
        self.action_layout = action_layout()
        self.num_actions = self.action_layout.size
        self.obs_dim = self.obs_layout.size
        cfg = np.zeros(1, CFG_DTYPE)
        c = cfg[0]
        c["num_players"] = self.num_players
        c["shaping"] = self.shaping
        c["max_rounds"] = self.max_rounds
        for name, offset in self.obs_layout.offsets().items():
            c[name] = offset
        fill_cfg(c, self.tiles)
        self.cfg = cfg

    # -- names -----------------------------------------------------------------
    def action_name(self, rec: np.void, action: int) -> str:
        a = int(action)
        if not 0 <= a < NUM_ACTIONS:
            raise ValueError(f"action {a} out of range 0..{NUM_ACTIONS - 1}")
        if a < A_SWAP:
            x, k = divmod(a - A_ROTATE, 3)
            return f"honk: rotate {cell_name(x)} {TURN_NAMES[k]}"
        if a < A_DRIVE:
            x, r = divmod(a - A_SWAP, 4)
            return f"honk: swap your spare tile into {cell_name(x)}, rotation {r}"
        if a < A_DETOUR:
            e = a - A_DRIVE
            p = int(rec["cur"])
            dest = int(trace(rec, self.cfg[0], rec["pos"][p], e))
            to = f" to {cell_name(dest)}" if dest >= 0 else ""
            return f"drive out {EDGE_NAMES[e]}{to}"
        if a == A_DETOUR:
            return "detour (roll the dice)"
        if a < A_ACCEPT:
            x = a - A_CELL
            if rec["phase"] == PLACE:
                return f"put the rest of the stack on {cell_name(x)}"
            return f"park on {cell_name(x)} (double 6)"
        if a == A_ACCEPT:
            t = int(rec["pending"])
            return f"accept the {TYPES[t]} order" if t >= 0 else "accept the order"
        if a == A_DECLINE:
            return "decline" if rec["phase"] != DELIVER else "do not deliver"
        t = a - A_DELIVER
        return f"deliver ({TYPES[t]} goes to the bottom)"

    def scores(self, rec: np.void) -> np.ndarray:
        """K9 final scores as they stand (stars + energy + bubble bonus)."""
        return np.array([int(final_score(rec, p)) for p in range(self.num_players)], float)

    # -- state dicts (trafficenvs/jakarta_traffic/state.py) ---------------------
    def tile_spec(self, tile_id: int) -> str:
        """Tile ``tile_id`` as ``"<kind> <pattern>[ <address>]"``."""
        return self.tiles.tiles[tile_id].spec(self.tiles)

    def to_dict(self, rec: np.void) -> dict[str, Any]:
        return state.to_dict(self, rec)

    def from_dict(self, state_dict: dict[str, Any]) -> np.ndarray:
        return state.from_dict(self, state_dict)

    # -- checks ----------------------------------------------------------------
    def check_invariants(self, rec: np.void) -> None:
        """Tiles, tokens, stars and limits are where the rules allow (a compiled check)."""
        state.check_invariants(self, rec)

    def plan_reader(self, threads: int | None = 1) -> Any:
        """The features of the plan network (``trafficenvs train --arch plan``):
        :class:`~trafficenvs.jakarta_traffic.strategy.plan.PlanReader` for this configuration's
        observations (where each honk takes my drives and the next player's; per
        cell, turns and next stops)."""
        from trafficenvs.jakarta_traffic.strategy.plan import PlanReader

        return PlanReader(self.cfg, self.obs_dim, threads)

    # -- renders ---------------------------------------------------------------
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        from trafficenvs.jakarta_traffic.render import render_text

        return render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        from trafficenvs.jakarta_traffic.render import render_image

        return render_image(self, rec, seat)
