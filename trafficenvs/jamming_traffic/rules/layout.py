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

from trafficenvs.core.layout import Field, Layout, Part, block

# ----------------------------------------------------------------------------- limits

MAX_PLAYERS = 10  # J1: 2..10 seats
MAX_TOWNS = 32  # towns of a map (town sets are uint32)
MAX_ROADS = 64  # roads of a map (road sets are uint64; 2 * 64 half-edges)
MAX_DEGREE = 8  # roads at one town (a road end's moves fit one 8-byte mask word)
MAX_MOVES = 1024  # move actions: the sum over towns of (roads at the town)^2
MAX_FACES = 12  # faces of a die (J4)
MAX_TURNS = 1_000_000  # the largest max_turns option (the int32 turn counter never wraps)
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

#: the high of a count the observation caps (turns played, turns left before the cap)
OBS_CAP = 255


def obs_layout(num_players: int, n_towns: int, n_roads: int, dist_high: int = 1,
               face_high: int = 1, max_turns: int = 0) -> Layout:
    """The v1 observation row of a seat (C4): uint8 entries with exact bounds.

    ``dist_high`` is the map's largest road-to-town distance (``cfg.rd``),
    ``face_high`` the largest number face of the dice (0 if none), ``max_turns`` the
    turn cap (0 none): the bounds of the fields that depend on them.
    """
    N, T, R = num_players, n_towns, n_roads
    turn_high = min(max_turns, OBS_CAP) if max_turns else OBS_CAP
    return Layout("Jamming Traffic observation", [
        block("road_neutral", R, [Part("slots", QLEN, "queue place `i` from the road's "
                                       "first town holds a neutral car")],
              "per road: its neutral cars", "5 R"),
        Field("road_cars", R, "per road: the cars on it (a held road 4; 5 only for an "
              "instant in the stop phase); the places past them are empty, and a place "
              "below it with no neutral car holds a player's car (whose: the seats' "
              "`road` and `slot`)", "R", high=QLEN),
        block("seats", N, seat_parts(T, R, dist_high),
              "per relative seat (me first, then the others in turn order after me)",
              "N (3 T + R + 9)"),
        block("reach", R, [Part("ends", 2, "end `x` (0: the first town, 1: the second): "
                                "my car is at that end and, taken there, would pass a town "
                                "I still need within the moves left on a free run (move "
                                "phase, my turn; else 0; see Derived features)")],
              "per road: its two ends", "2 R"),
        Field("loop_towns", T, "stop phase: the towns on the paused endless loop (the "
              "legal stop towns), else 0", "T"),
        Field("jam_road", R, "stop phase: one-hot, the paused jam's over-full road, else 0",
              "R"),
        Field("jam_end", 2, "stop phase: one-hot, the end of `jam_road` its last car "
              "entered at (the jam pushes on from the other end), else 0"),
        Field("phase", 5, "phase one-hot: set-up, place, move, stop, over"),
        Field("moves_left", 1, "moves left this turn", high=2 * face_high),
        block("dice", 2, [Part("value", 1, "its number face, 0 if a special face or not "
                               "rolled", high=face_high),
                          Part("roundabout", 1, "it shows the roundabout"),
                          Part("one_way", 1, "it shows the one-way sign")],
              "the two dice of this turn (all 0 before the first roll)"),
        Field("pending", 2, "to place: the roundabout, the one-way sign (1 each if rolled "
              "and not placed yet)"),
        Field("roundabout_town", T, "one-hot, the roundabout's town (all 0: not on the "
              "board)", "T"),
        Field("roundabout_dir", 2, "one-hot, its direction: counter-clockwise, clockwise "
              "(all 0: not on the board)"),
        Field("one_way_road", R, "one-hot, the one-way road (all 0: no sign on the board)",
              "R"),
        Field("one_way_entry", 2, "one-hot, the end (0, 1) at which the one-way road is "
              "entered (all 0: no sign)"),
        Field("turn", 1, f"turns played, capped at {turn_high}", high=turn_high),
        Field("turns_left", 1, f"turns left before the `max_turns` cap, capped at "
              f"{turn_high} ({OBS_CAP} when there is no cap)", high=turn_high),
        Field("horizon_left", 1, "share of the env's move limit left (`max_cycles`): "
              "255 all (or no limit), 0 none (`core.clock.horizon_left`)", high=255),
    ], ranges=True)


def seat_parts(n_towns: int, n_roads: int, dist_high: int = 1) -> list[Part]:
    """The parts of one seat's repeat in the observation (their offsets depend on T and
    R, so the config record holds them: ``ob_seat_<part>``, and ``ob_seat_stride``)."""
    T, R = n_towns, n_roads
    return [Part("visited", T, "visited each town (T flags)"),
            Part("home", T, "one-hot, its home town"),
            Part("road", R, "one-hot, the road its car is on (all 0 before it chose one)"),
            Part("slot", QLEN, "one-hot, its car's queue place on that road from the "
                 "road's first town"),
            Part("ends", 2, "its car is at the road's end 0, at its end 1 (both when "
                 "alone: it may be taken through either town)"),
            Part("towns_left", 1, "towns it still has to visit", high=max(T - 1, 1)),
            Part("dist", T, "per town it still needs: the fewest towns its car passes to "
                 "pass it, counting it (map distance, see Derived features); 0 for a "
                 "town it does not need or with no car on the board", high=dist_high),
            Part("nearest", 1, "the least of `dist` over the towns it still needs (0: "
                 "none, or no car)", high=dist_high)]


#: the parts of a seat's repeat, in order; the config record holds the offset of each
#: inside the repeat as ``ob_seat_<part>``
SEAT_PARTS = tuple(p.name for p in seat_parts(2, 1))
#: offset of the "road_neutral" field: it comes first in every configuration, so
#: observe may use a constant; the Game checks it against each configuration's layout
OB_ROAD_NEUTRAL = obs_layout(2, 2, 1).field("road_neutral").offset

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
    """Length of one observation row (the layout's size; bounds do not change it)."""
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
        # the observation field offsets, from obs_layout (Game): ob_road_neutral,
        # ob_road_cars, ob_seats, ... (uint32: the compiler then knows them
        # non-negative; a signed index costs a negative-index check per store)
        *[(f"ob_{name}", np.uint32) for name in OBS_FIELDS],
        # inside one repeat of the "seats" block: the offset of each part
        # (ob_seat_visited, ob_seat_home, ...) and the block's stride (they depend on T, R)
        *[(f"ob_seat_{name}", np.uint32) for name in SEAT_PARTS],
        ("ob_seat_stride", np.uint32),
        ("obs_size", np.uint32),  # the observation row's length
        ("max_turns", np.int64),  # the truncation cap in turns (J9), 0 none
        ("horizon", np.int64),  # the env's move limit (0 none), set by Game.with_horizon
        ("n_faces", np.int64),  # faces of each die (J4)
        ("shaping", np.bool_),  # pay 1 per needed town first passed (C2 option)
        ("all_towns", np.uint32),  # town set of every town of the map
        ("face_val", np.int8, MAX_FACES),  # per face: 1..60, ROUNDABOUT or ONE_WAY
        # the observation's view of a die showing face f (index f + 1; index 0: not
        # rolled): its number (0 for a special face), and the two special flags
        ("face_obs", np.uint8, (MAX_FACES + 1, 3)),
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
        # the observation's derived features (tables.fill_distances):
        # rd8[r]: per town t (byte t % 8 of word t // 8, little-endian) the fewest towns a
        # car on road r passes to pass t, counting t: 1 + the map distance (fewest
        # roads) from the nearer end of r; 0 past the map's towns
        ("rd8", np.uint64, (MAX_ROADS, MAX_TOWNS // 8)),
        # lev[r, d]: the town set at distance d from road r (d >= 1, as in rd8)
        ("lev", np.uint32, (MAX_ROADS, MAX_TOWNS + 1)),
        ("dist_high", np.int64),  # the largest distance in rd8 (the "dist" bound)
        # per half-edge h = 2 r + e: the town rt[r, e] at which a car enters road r
        # there (rt flattened)
        ("ht", np.uint8, 2 * MAX_ROADS),
        # per town t: the half-edges that arrive at t (2 r + e with rt[r, 1 - e] == t: a
        # car that entered road r at its other end), as a 128-bit set (two words)
        ("arr", np.uint64, (MAX_TOWNS, 2)),
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
        # car_road[c]: the road car c = p + 1 of seat p is on, -1 before it chose one
        # (an index of q, kept by queues.put: observe reads it rather than scanning
        # the queues); car_road[0] is -1 (the neutral cars' entry)
        ("car_road", np.int8, MAX_PLAYERS + 1),
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
