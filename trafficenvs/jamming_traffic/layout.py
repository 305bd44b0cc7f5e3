"""Jamming Traffic's data: limits, constants, the record and config dtypes, and the
observation and action layouts (plain numpy; the rules that read them are in the other
modules of this package, see ``docs/rules/jamming_traffic.md``, "Where each rule lives").

Conventions used by every field below:

- a *car* is ``0`` (neutral) or ``p + 1`` (the car of seat ``p``); an empty queue slot
  holds ``-1``;
- road ``r`` runs from its end 0 (town ``rt[r, 0]``) to its end 1 (town ``rt[r, 1]``);
  a *half-edge* ``h = 2 * r + x`` is road ``r`` seen from its end ``x`` (a jam *state*
  ``(r, e)``, the over-full road and the end it was entered at, is the half-edge
  ``2 * r + e``);
- a town set is a ``uint32`` bit set (bit ``t`` for town ``t``), a road set a ``uint64``.

This module is the only copy of the size limits (``maps.py`` and ``game.py`` import
them).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.layout import Field, Layout, Part, block, part_offsets

# ----------------------------------------------------------------------------- limits

MAX_PLAYERS = 10  # J1: 2..10 seats
MAX_TOWNS = 32  # towns of a map (town sets are uint32)
MAX_ROADS = 64  # roads of a map (road sets are uint64; 2 * 64 half-edges)
MAX_DEGREE = 8  # roads at one town (a road end's moves fit one 8-byte mask word)
MAX_MOVES = 1024  # move actions: the sum over towns of (roads at the town)^2
MAX_FACES = 12  # faces of a die (J4)
#: observed queue places per road: a road holds at most 4 cars between decisions
ROAD_SLOTS = 4
QLEN = 5  # queue places of a road: 3 cars, 4 on a held road, 5 for an instant (J8)
#: a chain that has not repeated its configuration after this many pushes is
#: treated as repeated (never reached on the shipped maps; see the rules page)
MAX_CHAIN_PUSHES = 200_000

# ----------------------------------------------------------------------------- constants

#: die face values (``cfg.face_val``) of the two special faces (J4); number faces are 1..60
ROUNDABOUT = -1
ONE_WAY = -2

#: phases (``rec.phase``), in the order of the observation's phase one-hot
SETUP, PLACE, MOVE, STOP, OVER = range(5)
PHASES = ("setup", "place", "move", "stop", "over")

#: ``rec.ch_code[h]``, legal_mask's memo of the jam one more car entering full road
#: ``h >> 1`` at end ``h & 1`` starts (walked on the counts as they are, jam_check.py):
CH_UNKNOWN = 0  # not walked yet in this mask
CH_PLAYS_OUT = 1  # the jam ends on a road with room, or is endless (both legal)
CH_DEAD_END = 2  # a pushed car has no exit after the roads in ``ch_roads[h]``
CH_HELD = 3  # the jam reaches a held road: decided move by move on scratch counts
CH_WALKING = 4  # on the walk in progress (meeting it again: the jam is endless)

# ----------------------------------------------------------------------------- layouts


def obs_layout(num_players: int, n_towns: int, n_roads: int) -> Layout:
    """The observation row of a seat (C4): ``4R + N(T + 2) + T + 15`` floats."""
    N, T, R = num_players, n_towns, n_roads
    return Layout("Jamming Traffic observation", [
        block("roads", R, [Part("cars", ROAD_SLOTS, "its queue places from its first town "
                                "to its second: 0 empty, 1 neutral car, `2 + j` the car of "
                                "relative seat `j` (0 me, 1 the next player, ...)")],
              "per road", "4 R"),
        block("seats", N, seat_parts(T),
              "per relative seat (me first, then the others in turn order after me)",
              "N (T + 2)"),
        Field("loop_towns", T, "towns on the endless loop being stopped (stop phase), "
              "else 0", "T"),
        Field("phase", 5, "phase one-hot: set-up, place, move, stop, over"),
        Field("moves_left", 1, "moves left this turn"),
        Field("pending", 2, "to place: the roundabout, the one-way sign (1 each if rolled "
              "and not placed yet)"),
        Field("dice", 2, "the two dice: a number face as is, 5 roundabout, 6 one-way, "
              "0 not rolled"),
        Field("roundabout", 2, "roundabout town + 1 (0 none), its direction (0 ccw, 1 cw)"),
        Field("one_way", 2, "one-way road + 1 (0 none), its entry end"),
        Field("held", 1, "number of held roads"),
    ])


def seat_parts(n_towns: int) -> list[Part]:
    """The parts of one seat's repeat in the observation (offsets depend on T, so the
    config record holds them: ``ob_seat_home``, ``ob_seat_left``, ``ob_seat_stride``)."""
    return [Part("visited", n_towns, "visited each town (T flags)"),
            Part("home", 1, "its home town"),
            Part("towns_left", 1, "towns it still has to visit")]


#: offset of a road's cars inside its repeat of "roads" (the stride is ROAD_SLOTS)
OB_ROAD_CARS = part_offsets(obs_layout(2, 2, 1).field("roads").parts)["cars"]
#: offset of the "roads" field: it comes first in every configuration, so observe may
#: use a constant (measured: a base read from ``cfg`` made observe 5% slower); the
#: Game checks it against each configuration's layout
OB_ROADS = obs_layout(2, 2, 1).field("roads").offset

#: the observation fields, in order: the config record holds each one's offset as
#: ``ob_<name>`` (filled from :func:`obs_layout` by the Game), and ``observe`` writes by it
OBS_FIELDS = tuple(obs_layout(2, 2, 1).names())


def action_layout(n_moves: int, n_towns: int, n_roads: int) -> Layout:
    """The action space (C3): one range per kind of decision."""
    M, T, R = n_moves, n_towns, n_roads
    return Layout("Jamming Traffic actions", [
        Field("move", M, "move phase: `mv_base[r, x] + k`, take the car at end `x` (0: "
              "the road's first town, 1: its second) of road `r` through that town onto "
              "the `k`-th road there (counter-clockwise order); legal when the car is "
              "yours or neutral, may leave `r` there, the exit is legal for a steered "
              "car (J7) and the jam it starts plays out", "M"),
        Field("roundabout", 2 * T, "place phase: `2t + d`, the roundabout on town `t`, "
              "`d` 0 counter-clockwise, 1 clockwise; legal when a roundabout was rolled "
              "and not placed yet", "2 T"),
        Field("one_way", 2 * R, "place phase: `2r + e`, the one-way sign on road `r`, "
              "entered at its end `e`; legal when a one-way was rolled and not placed yet",
              "2 R"),
        Field("setup", R, "set-up: start on road `r`; legal when `r` ends at your home",
              "R"),
        Field("stop", T, "stop phase: stop the endless jam at town `t`; legal when `t` "
              "is on the loop", "T"),
        Field("end", 1, "move phase: end the turn; always legal then"),
    ])


#: the action ranges, in order; the config record holds the start of each as
#: ``a_rb``, ``a_ow``, ``a_setup``, ``a_stop``, ``a_end`` (the Game fills them from
#: :func:`action_layout`; the moves start at 0)
ACTION_FIELDS = tuple(action_layout(1, 1, 1).names())
CFG_ACTION_STARTS = {"roundabout": "a_rb", "one_way": "a_ow", "setup": "a_setup",
                     "stop": "a_stop", "end": "a_end"}


def obs_dim(num_players: int, n_towns: int, n_roads: int) -> int:
    """Length of one observation row (the layout's size)."""
    return obs_layout(num_players, n_towns, n_roads).size


# ----------------------------------------------------------------------------- dtypes

CFG_DTYPE = np.dtype(
    [
        ("num_players", np.int64),  # N
        ("n_towns", np.int64),  # T, the map's towns
        ("n_roads", np.int64),  # R, the map's roads
        ("n_moves", np.int64),  # M, move actions (= a_move + M is the roundabout range)
        # the start of each action range, from action_layout (Game): "roundabout",
        # "one_way", "setup", "stop", "end" ("move" starts at 0)
        ("a_rb", np.int64),
        ("a_ow", np.int64),
        ("a_setup", np.int64),
        ("a_stop", np.int64),
        ("a_end", np.int64),
        ("num_actions", np.int64),  # the action layout's size
        # the observation field offsets, from obs_layout (Game): ob_roads, ob_seats, ...
        # (uint32: the compiler then knows them non-negative; a signed index costs a
        # negative-index check per store)
        *[(f"ob_{name}", np.uint32) for name in OBS_FIELDS],
        # inside one repeat of the "seats" block: the offsets of its parts "home" and
        # "towns_left", and the block's stride (they depend on T)
        ("ob_seat_home", np.uint32),
        ("ob_seat_left", np.uint32),
        ("ob_seat_stride", np.uint32),
        ("max_turns", np.int64),  # the truncation cap in turns (J9), 0 none
        ("n_faces", np.int64),  # faces of each die (J4)
        ("shaping", np.bool_),  # pay 1 per needed town first passed (C2 option)
        ("all_towns", np.uint32),  # town set of every town of the map
        ("face_val", np.int8, MAX_FACES),  # per face: 1..60, ROUNDABOUT or ONE_WAY
        ("home_given", np.int8, MAX_PLAYERS),  # per seat its home town, -1 drawn (J3)
        ("rt", np.int8, (MAX_ROADS, 2)),  # road r's towns: rt[r, x] at its end x
        ("deg", np.int8, MAX_TOWNS),  # roads at each town
        # the roads at town t in counter-clockwise order: the k-th is road inc[t, k],
        # which meets t at its end inc_end[t, k]
        ("inc", np.int8, (MAX_TOWNS, MAX_DEGREE)),
        ("inc_end", np.int8, (MAX_TOWNS, MAX_DEGREE)),
        ("pos", np.int8, (MAX_ROADS, 2)),  # road end (r, x)'s index k in inc[rt[r, x]]
        # a car pushed off road r through end x tries these roads in turn (straight on
        # first, ties clockwise first, its own road last, J7): road st[r, x, k], entered
        # at its end st_end[r, x, k]; st_h[r, x] is the first try as a half-edge
        ("st", np.int8, (MAX_ROADS, 2, MAX_DEGREE)),
        ("st_end", np.int8, (MAX_ROADS, 2, MAX_DEGREE)),
        ("st_h", np.int16, (MAX_ROADS, 2)),
        # the moves of road end (r, x) are actions mv_base[r, x] + k, k < deg[rt[r, x]]
        ("mv_base", np.int16, (MAX_ROADS, 2)),
        # per move action: its road, end and k (the inverse of mv_base)
        ("mv_road", np.int8, MAX_MOVES),
        ("mv_end", np.int8, MAX_MOVES),
        ("mv_k", np.int8, MAX_MOVES),
        # the moves of road end (r, x) as 8 mask bytes (little-endian): 1 for every
        # road at that end's town but the U-turn (see mask_without_dead_ends)
        ("mv_tpl", np.uint64, (MAX_ROADS, 2)),
    ],
    align=True,
)

RECORD_DTYPE = np.dtype(
    [
        ("rng_key", np.uint64),  # the game's generator (C1)
        ("rng_ctr", np.uint64),
        ("moves", np.int32),  # moves made (kept by the drivers, for truncation)
        ("turn", np.int32),  # turns played (J9's max_turns)
        ("reward", np.float32, MAX_PLAYERS),  # this step's reward per seat
        ("visited", np.uint32, MAX_PLAYERS),  # per seat: town set its car has passed (J9)
        # stop phase: town set of the paused endless loop (the legal stop towns), else 0
        ("loop_towns", np.uint32),
        # road r's cars q[r, 0..cnt[r]-1], from its end 0 to its end 1; -1 past them
        ("q", np.int8, (MAX_ROADS, QLEN)),
        ("cnt", np.int8, MAX_ROADS),  # cars on each road
        ("held", np.uint8, MAX_ROADS),  # 1: left with 4 cars by an endless jam's stop (J8)
        # the end (0/1) each road was last entered at: a held road that takes a car
        # jams again from there (J8)
        ("laste", np.int8, MAX_ROADS),
        ("home", np.int8, MAX_PLAYERS),  # per seat its home town (J3), -1 past N
        ("winner", np.uint8, MAX_PLAYERS),  # per seat 1 if it won (over phase)
        ("phase", np.int8),  # SETUP .. OVER
        ("cur", np.int8),  # the seat to move
        ("moves_left", np.int8),  # moves left this turn (J4, J5)
        ("pend_rb", np.uint8),  # 1: a rolled roundabout still to place
        ("pend_ow", np.uint8),  # 1: a rolled one-way sign still to place
        ("dice", np.int8, 2),  # this turn's faces (indices into face_val), -1 not rolled
        ("forced", np.int8, 2),  # the next roll's faces (state dicts, tests), -1 random
        ("rb_town", np.int8),  # the roundabout's town, -1 not on the board
        ("rb_dir", np.int8),  # its direction: 0 counter-clockwise, 1 clockwise
        ("ow_road", np.int8),  # the one-way road, -1 no sign on the board
        ("ow_entry", np.int8),  # the end (0/1) at which the one-way road is entered
        # stop phase: the paused jam's state (over-full road, end it was entered at);
        # -1 otherwise
        ("js_road", np.int8),
        ("js_end", np.int8),
        # ---- scratch from here on (not game state; every kernel writes before it reads)
        # the legality simulation's copy of cnt / held / laste (jam_check.sim_jam)
        ("sc_cnt", np.int8, MAX_ROADS),
        ("sc_held", np.uint8, MAX_ROADS),
        ("sc_laste", np.int8, MAX_ROADS),
        # an endless chain's configuration (q) at its loop's first state, to see when
        # the laps played push by push are back (jams.jam)
        ("snap", np.int8, (MAX_ROADS, QLEN)),
        # legal_mask's memo per half-edge: a CH_* code, for CH_DEAD_END the road set
        # reached before the dead end, and the half-edges of the walk in progress
        ("ch_code", np.int8, 2 * MAX_ROADS),
        ("ch_roads", np.uint64, 2 * MAX_ROADS),
        ("ch_path", np.int8, 2 * MAX_ROADS),
    ],
    align=True,
)
