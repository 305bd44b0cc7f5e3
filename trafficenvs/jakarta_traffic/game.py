"""Jakarta Traffic as a :class:`~trafficenvs.core.game.Game`: config, names, state dicts."""

from __future__ import annotations

from typing import Any

import numpy as np

from trafficenvs.core.files import option_bool, option_int
from trafficenvs.core.game import Game
from trafficenvs.jakarta_traffic import kernels as K
from trafficenvs.jakarta_traffic.layout import MAX_ROUNDS, action_layout, obs_layout
from trafficenvs.jakarta_traffic.spec import SPEC
from trafficenvs.jakarta_traffic.state import state_from_dict, state_to_dict
from trafficenvs.jakarta_traffic.tiles import TileSet, TileSpec, check_tiles_fit, fill_cfg
from trafficenvs.jakarta_traffic.tiles import load_tiles as _load_tiles

EDGE_NAMES = ("north", "east", "south", "west")
TURN_NAMES = ("a quarter turn clockwise", "a half turn", "a quarter turn anticlockwise")


def cell_name(x: int) -> str:
    """``"r2c4"``: row and column counted from 1, as the detour dice count them."""
    r, c = divmod(int(x), K.SIDE)
    return f"r{r + 1}c{c + 1}"


class JakartaTrafficGame(Game):
    """Jakarta Traffic for 2-4 players (K1) on a 5x5 board of a given tile set (K2).

    Options: ``tiles`` (None for the shipped default, a JSON path or a dict, see
    :mod:`~trafficenvs.jakarta_traffic.tiles`) and ``shaping`` (reward star points as
    they are taken and speech-bubble bonus as it grows, on top of the zero-sum
    result; off by default, C2) and ``max_rounds`` (K9's cap: the game is truncated
    once that many rounds are complete; 0, the default, for none).
    """

    spec = SPEC
    record_dtype = K.RECORD_DTYPE
    min_players = 2
    max_players = K.MAX_PLAYERS
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
        cfg = np.zeros(1, K.CFG_DTYPE)
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
        if not 0 <= a < K.NUM_ACTIONS:
            raise ValueError(f"action {a} out of range 0..{K.NUM_ACTIONS - 1}")
        if a < K.A_SWAP:
            x, k = divmod(a - K.A_ROTATE, 3)
            return f"honk: rotate {cell_name(x)} {TURN_NAMES[k]}"
        if a < K.A_DRIVE:
            x, r = divmod(a - K.A_SWAP, 4)
            return f"honk: swap your spare tile into {cell_name(x)}, rotation {r}"
        if a < K.A_DETOUR:
            e = a - K.A_DRIVE
            p = int(rec["cur"])
            dest = int(K.trace(rec, self.cfg[0], rec["pos"][p], e))
            to = f" to {cell_name(dest)}" if dest >= 0 else ""
            return f"drive out {EDGE_NAMES[e]}{to}"
        if a == K.A_DETOUR:
            return "detour (roll the dice)"
        if a < K.A_ACCEPT:
            x = a - K.A_CELL
            if rec["phase"] == K.PLACE:
                return f"put the rest of the stack on {cell_name(x)}"
            return f"park on {cell_name(x)} (double 6)"
        if a == K.A_ACCEPT:
            t = int(rec["pending"])
            return f"accept the {K.TYPES[t]} order" if t >= 0 else "accept the order"
        if a == K.A_DECLINE:
            return "decline" if rec["phase"] != K.DELIVER else "do not deliver"
        t = a - K.A_DELIVER
        return f"deliver ({K.TYPES[t]} goes to the bottom)"

    def scores(self, rec: np.void) -> np.ndarray:
        """K9 final scores as they stand (stars + energy + bubble bonus)."""
        return np.array([int(K.final_score(rec, p)) for p in range(self.num_players)], float)

    # -- state dicts (trafficenvs/jakarta_traffic/state.py) ---------------------
    def tile_spec(self, tile_id: int) -> str:
        """Tile ``tile_id`` as ``"<kind> <pattern>[ <address>]"``."""
        return self.tiles.tiles[tile_id].spec(self.tiles)

    def to_dict(self, rec: np.void) -> dict[str, Any]:
        return state_to_dict(self, rec)

    def from_dict(self, state: dict[str, Any]) -> np.ndarray:
        return state_from_dict(self, state)

    # -- checks ----------------------------------------------------------------
    def check_invariants(self, rec: np.void) -> None:
        """Tiles, tokens, stars and limits are where the rules allow (a compiled check)."""
        code = int(K.check(rec, self.cfg[0]))
        assert code == 0, f"jakarta_traffic invariant broken: {K.INVARIANT_MESSAGES[code]}"

    def plan_reader(self, threads: int | None = 1) -> Any:
        """The features of the plan network (``trafficenvs train --arch plan``):
        :class:`~trafficenvs.jakarta_traffic.plan.PlanReader` for this configuration's
        observations (where each honk takes my drives and the next player's; per
        cell, turns and next stops)."""
        from trafficenvs.jakarta_traffic.plan import PlanReader

        return PlanReader(self.cfg, self.obs_dim, threads)

    # -- renders ---------------------------------------------------------------
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        from trafficenvs.jakarta_traffic.render import render_text

        return render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        from trafficenvs.jakarta_traffic.render import render_image

        return render_image(self, rec, seat)
