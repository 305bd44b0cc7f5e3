"""Jamming Traffic's configuration record: the options and the map's look-up tables.

The kernels read the rules' geometry from tables built here once per game (every
field is explained on ``layout.CFG_DTYPE``): each town's roads in counter-clockwise
order (the incidence tables ``inc``, ``inc_end``, ``pos``; J1, the roundabout), each
road end's pushed-exit order (``st``, ``st_end``, ``st_h``; J7), the move actions
(``mv_*``), the observation's tables (``rd8``, ``lev``, ``ht``, ``arr``: the derived
features, built once since the map is fixed) and the observation and action layouts'
offsets. The order of the roads comes from the map (``maps.Map.ccw_roads``,
``maps.Map.pushed_order``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trafficenvs.core.layout import Layout
from trafficenvs.jamming_traffic.rules.layout import (
    CFG_ACTION_STARTS,
    MAX_MOVES,
    OB_ROAD_NEUTRAL,
    ONE_WAY,
    ROUNDABOUT,
    SEAT_PARTS,
)
from trafficenvs.jamming_traffic.rules.maps import Map


def fill_options(c: np.void, m: Map, num_players: int, faces: Sequence[int],
                 homes: Sequence[int] | None, max_turns: int | None, shaping: bool) -> None:
    """The map's sizes and the game's options (faces as the kernels store them)."""
    N, T = num_players, m.num_towns
    c["num_players"] = N
    c["n_towns"] = T
    c["n_roads"] = m.num_roads
    c["max_turns"] = max_turns or 0
    c["shaping"] = shaping
    c["n_faces"] = len(faces)
    c["face_val"][: len(faces)] = faces
    c["face_obs"][:] = 0
    for f, v in enumerate(faces):  # the observation's "dice" entries per face
        c["face_obs"][f + 1] = (max(v, 0), v == ROUNDABOUT, v == ONE_WAY)
    c["home_given"][:] = -1
    if homes is not None:
        c["home_given"][:N] = homes
    c["all_towns"] = (1 << T) - 1


def fill_incidence(c: np.void, m: Map) -> list[list[int]]:
    """Road ends ``rt``; each town's roads counter-clockwise (``deg``, ``inc``,
    ``inc_end``) and each road end's place among them (``pos``). Returns the orders."""
    for r, (a, b) in enumerate(m.roads):
        c["rt"][r] = (a, b)
    ccw = [m.ccw_roads(t) for t in range(m.num_towns)]
    for t in range(m.num_towns):
        c["deg"][t] = len(ccw[t])
        for k, r in enumerate(ccw[t]):
            x = 0 if m.roads[r][0] == t else 1
            c["inc"][t, k] = r
            c["inc_end"][t, k] = x
            c["pos"][r, x] = k
    return ccw


def fill_pushed_exits(c: np.void, m: Map) -> None:
    """For each road end, the exits a pushed car tries in order (``st``, ``st_end``)
    and the first of them as a half-edge (``st_h``, J7)."""
    for r in range(m.num_roads):
        for x in range(2):
            t = m.roads[r][x]
            order = m.pushed_order(r, x)
            for k, cand in enumerate(order):
                c["st"][r, x, k] = cand
                c["st_end"][r, x, k] = 0 if m.roads[cand][0] == t else 1
            c["st_h"][r, x] = 2 * order[0] + c["st_end"][r, x, 0]


def fill_moves(c: np.void, m: Map, ccw: list[list[int]]) -> list[tuple[int, int, int]]:
    """The move actions: for each road end its first action (``mv_base``) and the
    exits other than its own road (``mv_tpl``, a byte per exit); per action its road,
    end and exit (``mv_road``, ``mv_end``, ``mv_k``) and ``n_moves``. Returns the
    actions as ``(road, end, k)``, in action order."""
    move_table: list[tuple[int, int, int]] = []
    for r in range(m.num_roads):
        for x in range(2):
            t = m.roads[r][x]
            c["mv_base"][r, x] = len(move_table)
            c["mv_tpl"][r, x] = sum(1 << (8 * k) for k in range(len(ccw[t]))
                                    if k != c["pos"][r, x])
            for k in range(len(ccw[t])):
                n = len(move_table)
                c["mv_road"][n] = r
                c["mv_end"][n] = x
                c["mv_k"][n] = k
                move_table.append((r, x, k))
    assert len(move_table) <= MAX_MOVES
    c["n_moves"] = len(move_table)
    return move_table


def town_distances(m: Map) -> np.ndarray:
    """``D[a, b]``: the fewest roads between towns ``a`` and ``b`` (breadth-first search
    on the map; the pieces are not on it, the map is connected)."""
    T = m.num_towns
    nbr: list[list[int]] = [[] for _ in range(T)]
    for a, b in m.roads:
        nbr[a].append(b)
        nbr[b].append(a)
    D = np.full((T, T), -1, np.int64)
    for s in range(T):
        D[s, s] = 0
        frontier = [s]
        while frontier:
            nxt = []
            for u in frontier:
                for v in nbr[u]:
                    if D[s, v] < 0:
                        D[s, v] = D[s, u] + 1
                        nxt.append(v)
            frontier = nxt
    return D


def fill_distances(c: np.void, m: Map) -> None:
    """The derived features' tables: ``rd8``, per road and town the fewest towns a car
    on the road passes to pass the town (counting it: 1 + the map distance from the
    nearer end of the road), ``lev`` the same as town sets per distance and
    ``dist_high`` the largest; ``ht`` and ``arr``, where each half-edge enters and
    which arrive at each town (the free runs of ``observe``)."""
    D = town_distances(m)
    T, R = m.num_towns, m.num_roads
    rd = np.zeros((R, T), np.int64)
    c["arr"][:] = 0
    c["lev"][:] = 0
    arr = [0] * T
    for r, (a, b) in enumerate(m.roads):
        rd[r] = 1 + np.minimum(D[a], D[b])
        c["ht"][2 * r] = a
        c["ht"][2 * r + 1] = b
        arr[b] |= 1 << (2 * r)  # entered at a, arrives at b
        arr[a] |= 1 << (2 * r + 1)
        for t in range(T):
            c["lev"][r, rd[r, t]] |= 1 << t
    table = np.zeros((c["rd8"].shape[0], 8 * c["rd8"].shape[1]), np.uint8)
    table[:R, :T] = rd
    c["rd8"][:] = table.view(np.uint64)
    c["dist_high"] = int(rd.max())
    for t in range(T):
        c["arr"][t] = (arr[t] & (2**64 - 1), arr[t] >> 64)


def road_distances(c: np.void, n_roads: int, n_towns: int) -> np.ndarray:
    """``rd[r, t]`` (the table ``rd8`` as a ``(R, T)`` array), for tests and tools."""
    return np.ascontiguousarray(c["rd8"]).view(np.uint8)[:n_roads, :n_towns].astype(np.int64)


def fill_map_tables(c: np.void, m: Map) -> tuple[list[list[int]], list[tuple[int, int, int]]]:
    """Every table of the map: incidence, pushed exits and moves (J1, J7), distances
    (the observation's derived features).

    Returns each town's roads counter-clockwise and the move actions as
    ``(road, end, k)`` (the Game keeps both to name and decode actions).
    """
    ccw = fill_incidence(c, m)
    fill_pushed_exits(c, m)
    fill_distances(c, m)
    return ccw, fill_moves(c, m, ccw)


def fill_layout_offsets(c: np.void, obs: Layout, actions: Layout) -> None:
    """The observation fields' offsets (``ob_*``), the seat part's, and the action
    ranges' starts (``a_*``) and their total."""
    for key, offset in obs.offsets().items():
        c[key] = offset
    if obs.field("road_neutral").offset != OB_ROAD_NEUTRAL:  # observe writes them there
        raise RuntimeError("road_neutral must come first in the observation layout")
    seats = obs.field("seats")
    for name in SEAT_PARTS:
        c[f"ob_seat_{name}"] = obs.at("seats", 0, name) - seats.offset
    c["ob_seat_stride"] = seats.stride
    c["obs_size"] = obs.size
    for name, key in CFG_ACTION_STARTS.items():
        c[key] = actions.field(name).offset
    c["num_actions"] = actions.size
