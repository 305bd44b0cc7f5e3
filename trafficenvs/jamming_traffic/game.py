"""Jamming Traffic as a :class:`~trafficenvs.core.game.Game`: options, names, checks.

The configuration record's tables are built in ``tables.py``, the state dicts
converted in ``state.py`` (the Game's ``to_dict`` and ``from_dict`` call it; the
names of faces and directions it defines are importable from here too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trafficenvs.core.files import OptionTypeError, option_bool, option_int
from trafficenvs.core.game import Game
from trafficenvs.jamming_traffic import state as S
from trafficenvs.jamming_traffic.rules.layout import (
    CFG_DTYPE,
    MAX_FACES,
    MAX_PLAYERS,
    MAX_TURNS,
    RECORD_DTYPE,
    action_layout,
    obs_layout,
)
from trafficenvs.jamming_traffic.rules.maps import Map, MapSpec, load_map
from trafficenvs.jamming_traffic.rules.tables import (
    fill_layout_offsets,
    fill_map_tables,
    fill_options,
)
from trafficenvs.jamming_traffic.spec import SPEC
from trafficenvs.jamming_traffic.state import (
    DIRECTIONS,
    FACE_ALIASES,
    OPTIONAL_KEYS,
    STATE_KEYS,
    face_label,
    face_value,
)

__all__ = ["DEFAULT_FACES", "DIRECTIONS", "FACE_ALIASES", "OPTIONAL_KEYS", "STATE_KEYS",
           "JammingTrafficGame", "face_label", "face_value"]

DEFAULT_FACES: tuple[int | str, ...] = (1, 2, 3, 4, "roundabout", "one-way")


class JammingTrafficGame(Game):
    """Jamming Traffic for 2-10 players on one map (J1-J9).

    Options: ``map`` (a shipped name, a JSON path, a dict or a
    :class:`~trafficenvs.jamming_traffic.rules.maps.Map`), ``homes`` (one town per seat;
    None draws them from the reset seed, J3), ``faces`` (the faces of each of the
    two dice, J4), ``max_turns`` (truncate the game after this many turns, J9; the
    env's ``max_cycles`` also truncates, by moves) and ``shaping`` (reward 1 for each
    town a seat still needed that its car passes for the first time, whoever moved
    it, on top of the zero-sum result; off by default, C2: a learner otherwise waits
    about 2 000 moves for its first reward).
    """

    spec = SPEC
    record_dtype = RECORD_DTYPE
    min_players = 2
    max_players = MAX_PLAYERS
    default_max_cycles = 2000

    def __init__(
        self,
        num_players: int = 4,
        map: MapSpec = "default",  # noqa: A002  (the option's natural name)
        homes: Sequence[int] | None = None,
        faces: Sequence[int | str] = DEFAULT_FACES,
        max_turns: int | None = None,
        shaping: bool = False,
    ):
        self.num_players = self.check_num_players(num_players)
        self.map: Map = load_map(map)
        m = self.map
        T, R, N = m.num_towns, m.num_roads, self.num_players
        if T < N:
            raise ValueError(f"map {m.name!r} has {T} towns: too few for {N} players "
                             "(each needs its own home town)")
        if homes is not None:
            if isinstance(homes, (str, bytes)) or not hasattr(homes, "__iter__"):
                raise OptionTypeError(f"homes must be a list of {N} towns, got {homes!r}")
            homes = [option_int(h, "homes[i]", 0, T - 1) for h in homes]
            if len(homes) != N or len(set(homes)) != N or not all(0 <= h < T for h in homes):
                raise ValueError(f"homes must be {N} distinct towns in 0..{T - 1}, got {homes}")
        self.homes = homes
        if isinstance(faces, (str, bytes)) or not hasattr(faces, "__iter__"):
            raise OptionTypeError(f"faces must be a list of die faces, got {faces!r}")
        faces = list(faces)
        if not 1 <= len(faces) <= MAX_FACES:
            raise ValueError(f"a die has 1 to {MAX_FACES} faces, got {len(faces)}")
        self.faces = [face_value(f) for f in faces]
        if max_turns is not None:
            max_turns = option_int(max_turns, "max_turns (or None)", 1, MAX_TURNS)
        self.max_turns = max_turns
        self.shaping = option_bool(shaping, "shaping")

        cfg = np.zeros(1, CFG_DTYPE)
        c = cfg[0]
        fill_options(c, m, N, self.faces, homes, max_turns, self.shaping)
        self.ccw, self.move_table = fill_map_tables(c, m)
        numbers = [f for f in self.faces if f > 0]
        self.obs_layout = obs_layout(N, T, R, dist_high=int(c["dist_high"]),
                                     face_high=max(numbers, default=0),
                                     max_turns=max_turns or 0)
        self.action_layout = action_layout(len(self.move_table), T, R)
        fill_layout_offsets(c, self.obs_layout, self.action_layout)
        self.cfg = cfg
        self.num_actions = self.action_layout.size
        self.obs_dim = self.obs_layout.size

    # -- names -----------------------------------------------------------------
    def town_name(self, t: int) -> str:
        names = self.map.town_names
        return names[t] if names else str(t)

    def decode(self, action: int) -> tuple[str, tuple[int, ...]]:
        """``(kind, args)``: ``("move", (road, end, out_road))``, ``("roundabout", (town,
        dir))``, ``("one_way", (road, entry_end))``, ``("setup", (road,))``,
        ``("stop", (town,))`` or ``("end", ())``."""
        c = self.cfg[0]
        a = int(action)
        if not 0 <= a < self.num_actions:
            raise ValueError(f"action {action} out of range 0..{self.num_actions - 1}")
        if a < c["a_rb"]:
            r, x, k = self.move_table[a]
            return "move", (r, x, self.ccw[self.map.roads[r][x]][k])
        if a < c["a_ow"]:
            return "roundabout", divmod(a - int(c["a_rb"]), 2)
        if a < c["a_setup"]:
            return "one_way", divmod(a - int(c["a_ow"]), 2)
        if a < c["a_stop"]:
            return "setup", (a - int(c["a_setup"]),)
        if a < c["a_end"]:
            return "stop", (a - int(c["a_stop"]),)
        return "end", ()

    def move_action(self, road: int, end_town: int, to_road: int) -> int:
        """The action id of moving the car at ``road``'s ``end_town`` end onto ``to_road``."""
        m = self.map
        if end_town not in m.roads[road]:
            raise ValueError(f"road {road} {m.roads[road]} has no end at town {end_town}")
        x = 0 if m.roads[road][0] == end_town else 1
        k = self.ccw[end_town].index(to_road)
        return int(self.cfg[0]["mv_base"][road, x]) + k

    def road_label(self, r: int) -> str:
        a, b = self.map.roads[r]
        return f"road {r} ({self.town_name(a)}-{self.town_name(b)})"

    def action_name(self, rec: np.void, action: int) -> str:
        kind, args = self.decode(action)
        if kind == "move":
            r, x, o = args
            t = self.map.roads[r][x]
            n = int(rec["cnt"][r])
            car = int(rec["q"][r][0 if x == 0 else max(n - 1, 0)]) if n else 0
            who = "neutral car" if car == 0 else f"player_{car - 1}'s car"
            return f"move {who} from {self.road_label(r)} through {self.town_name(t)} onto " \
                   f"{self.road_label(o)}"
        if kind == "roundabout":
            t, d = args
            return f"roundabout on {self.town_name(t)}, {DIRECTIONS[d]}"
        if kind == "one_way":
            r, e = args
            a = self.map.roads[r][e]
            b = self.map.roads[r][1 - e]
            return f"one-way on {self.road_label(r)}: {self.town_name(a)} -> {self.town_name(b)}"
        if kind == "setup":
            return f"start on {self.road_label(args[0])}"
        if kind == "stop":
            return f"stop the endless jam at {self.town_name(args[0])}"
        return "end turn"

    def scores(self, rec: np.void) -> np.ndarray:
        """Towns each seat has visited (its home not counted)."""
        out = np.zeros(self.num_players)
        for p in range(self.num_players):
            v = int(rec["visited"][p]) & ~(1 << int(rec["home"][p]))
            out[p] = bin(v).count("1")
        return out

    # -- state dicts (state.py) -------------------------------------------------
    def to_dict(self, rec: np.void) -> dict[str, Any]:
        return S.to_dict(self, rec)

    def from_dict(self, state: dict[str, Any]) -> np.ndarray:
        return S.from_dict(self, state)

    def check_invariants(self, rec: np.void) -> None:
        S.check_invariants(self, rec)

    # -- renders ---------------------------------------------------------------
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        from trafficenvs.jamming_traffic.render import render_text

        return render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        from trafficenvs.jamming_traffic.render import render_image

        return render_image(self, rec, seat)
