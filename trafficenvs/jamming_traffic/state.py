"""Jamming Traffic's state dicts: a record to a JSON-ready dict and back.

The dict names cars by seat (``"n"`` a neutral car), roads and towns by index,
die faces by number or ``"roundabout"`` / ``"one-way"`` and the roundabout's
direction by ``"ccw"`` / ``"cw"``; :func:`from_dict` checks every rule a position
must keep (two cars a road, one car a seat, held roads, the paused jam, J2-J9) and
says which key breaks one. The Game's ``to_dict`` and ``from_dict`` call these.
The names of faces and directions are here too (the Game's options use them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from trafficenvs.core.statedict import (
    StateDictError,
    StateReader,
    read_choice,
    read_int,
    read_int_list,
    read_list,
)
from trafficenvs.jamming_traffic import kernels as K

if TYPE_CHECKING:
    from trafficenvs.jamming_traffic.game import JammingTrafficGame

FACE_ALIASES = {"roundabout": K.ROUNDABOUT, "r": K.ROUNDABOUT, "one-way": K.ONE_WAY,
                "one_way": K.ONE_WAY, "oneway": K.ONE_WAY, "o": K.ONE_WAY}
DIRECTIONS = ("ccw", "cw")

STATE_KEYS = {
    "game", "num_players", "map", "phase", "to_move", "turn", "moves", "rng", "homes",
    "roads", "held", "visited", "roundabout", "one_way", "dice", "moves_left", "pending",
    "forced_dice", "jam", "winner",
}
OPTIONAL_KEYS = {"moves", "rng", "held", "forced_dice", "jam", "winner", "turn", "map",
                 "dice", "moves_left", "pending", "roundabout", "one_way", "visited"}


def _bad(key: str, message: str) -> StateDictError:
    """A state dict error naming ``key`` (the message says what is wrong)."""
    return StateDictError(f"state dict: {key}: {message}")


def face_value(face: int | str) -> int:
    """A die face as the kernels store it: a number 1..60 or ROUNDABOUT / ONE_WAY."""
    if isinstance(face, str):
        key = face.strip().lower()
        if key in FACE_ALIASES:
            return FACE_ALIASES[key]
        if key.isdigit():
            face = int(key)
        else:
            raise ValueError(f"unknown die face {face!r}: a number or 'roundabout'/'one-way'")
    if isinstance(face, bool) or not isinstance(face, (int, np.integer)) or not 1 <= face <= 60:
        raise ValueError(f"a number face must be an int in 1..60, got {face!r}")
    return int(face)


def face_label(v: int) -> int | str:
    return "roundabout" if v == K.ROUNDABOUT else ("one-way" if v == K.ONE_WAY else int(v))


def _car_label(c: int) -> int | str:
    return "n" if c == 0 else int(c) - 1


def to_dict(game: JammingTrafficGame, rec: np.void) -> dict[str, Any]:
    """The state dict of ``rec``, a record of ``game`` (``JammingTrafficGame.to_dict``)."""
    n = game.num_players
    T, R = game.map.num_towns, game.map.num_roads
    phase = K.PHASES[int(rec["phase"])]
    roads = [[_car_label(int(c)) for c in rec["q"][r][: rec["cnt"][r]]]
             for r in range(R)]
    rb = None
    if rec["rb_town"] >= 0:
        rb = {"town": int(rec["rb_town"]), "direction": DIRECTIONS[int(rec["rb_dir"])]}
    ow = None
    if rec["ow_road"] >= 0:
        r = int(rec["ow_road"])
        ow = {"road": r, "enter_at": int(game.map.roads[r][int(rec["ow_entry"])])}
    pending = []
    if rec["pend_rb"]:
        pending.append("roundabout")
    if rec["pend_ow"]:
        pending.append("one-way")
    forced = None
    if rec["forced"][0] >= 0:
        forced = [face_label(game.faces[int(f)]) for f in rec["forced"]]
    dice = None
    if rec["dice"][0] >= 0:
        dice = [face_label(game.faces[int(f)]) for f in rec["dice"]]
    jam = None
    if phase == "stop":
        jam = {"road": int(rec["js_road"]), "entry_end": int(rec["js_end"])}
    return {
        "game": game.name,
        "num_players": n,
        "map": game.map.name,
        "phase": phase,
        "to_move": int(rec["cur"]),
        "turn": int(rec["turn"]),
        "moves": int(rec["moves"]),
        "rng": game.rng_to_dict(rec),
        "homes": [int(h) for h in rec["home"][:n]],
        "roads": roads,
        "held": [r for r in range(R) if rec["held"][r]],
        "visited": [[t for t in range(T) if int(rec["visited"][p]) >> t & 1]
                    for p in range(n)],
        "roundabout": rb,
        "one_way": ow,
        "dice": dice,
        "moves_left": int(rec["moves_left"]),
        "pending": pending,
        "forced_dice": forced,
        "jam": jam,
        "winner": [p for p in range(n) if rec["winner"][p]],
    }


def face_index(game: JammingTrafficGame, f: Any) -> int:
    """The index among ``game.faces`` of the face named ``f`` (how the record stores a die)."""
    v = face_value(f)
    if v not in game.faces:
        raise ValueError(f"forced die face {f!r} is not a face of this game's dice "
                         f"{[face_label(x) for x in game.faces]}")
    return game.faces.index(v)


def from_dict(game: JammingTrafficGame, state: dict[str, Any]) -> np.ndarray:
    """One record of ``game`` holding ``state`` (``JammingTrafficGame.from_dict``)."""
    rd = game.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
    n = game.num_players
    T = game.map.num_towns
    if rd.raw("map", game.map.name) != game.map.name:
        raise _bad("map", f"state is on map {state['map']!r}, this env on {game.map.name!r}")
    phase = rd.raw("phase")
    if phase not in K.PHASES:
        raise _bad("phase", f"phase must be one of {K.PHASES}, got {phase!r}")
    ph = K.PHASES.index(phase)
    cur = rd.int("to_move", 0, n - 1)
    recs = game.new_records(1)
    r = recs[0]
    game.load_rng(r, state)
    r["moves"] = rd.int("moves", 0, default=0)
    r["turn"] = rd.int("turn", 0, default=0)
    r["phase"] = ph
    r["cur"] = cur
    r["home"][:] = -1
    r["home"][:n] = rd.int_list("homes", 0, T - 1, length=n, distinct=True)
    _read_roads(game, rd, r, ph, cur)
    visited = rd.list("visited", n, default=[[] for _ in range(n)])
    for p, towns in enumerate(visited):
        r["visited"][p] = sum({1 << t for t in read_int_list(towns, f"visited[{p}]", 0, T - 1)})
    _read_pieces(game, rd, r)
    _read_turn(game, rd, r, ph, phase)
    _read_jam_and_winner(game, rd, r, ph)
    return recs


def _read_roads(game: JammingTrafficGame, rd: StateReader, r: np.void, ph: int, cur: int) -> None:
    """``roads`` and ``held``: the queues, the car count (2 a road) and each seat's
    one car (J2, J3, J8)."""
    n, R = game.num_players, game.map.num_roads
    roads = rd.list("roads", R)
    held = set(rd.int_list("held", 0, R - 1, default=[]))
    r["q"][:] = -1
    r["car_road"][:] = -1
    owned = [0] * n
    total = 0
    for i, cars in enumerate(roads):
        read_list(cars, f"roads[{i}]")
        limit = 5 if ph in (K.STOP, K.OVER) else (4 if i in held else 3)
        if len(cars) > limit or (i in held and len(cars) != 4):
            raise _bad(f"roads[{i}]", f"road {i} holds {len(cars)} cars: a road holds at "
                       "most 3, exactly 4 if it is held by an endless jam (listed in 'held')")
        for j, car in enumerate(cars):
            if car == "n":
                r["q"][i, j] = 0
            else:
                owner = read_int(car, f"roads[{i}][{j}]", 0, n - 1, what="'n' or a seat")
                r["q"][i, j] = owner + 1
                r["car_road"][owner + 1] = i
                owned[owner] += 1
        r["cnt"][i] = len(cars)
        r["held"][i] = i in held
        total += len(cars)
    if total != 2 * R:
        raise _bad("roads", f"the roads hold {total} cars; the game has {2 * R} (2 a road)")
    for p in range(n):
        want = 0 if (ph == K.SETUP and p >= cur) else 1
        if owned[p] != want:
            raise _bad("roads", f"seat {p} has {owned[p]} cars on the roads; at this point "
                       f"it has {want}")

def _read_pieces(game: JammingTrafficGame, rd: StateReader, r: np.void) -> None:
    """``roundabout`` and ``one_way`` (J4)."""
    T, R = game.map.num_towns, game.map.num_roads
    rb = rd.dict("roundabout", ("town", "direction"), default=None)
    r["rb_town"], r["rb_dir"] = -1, 0
    if rb is not None:
        r["rb_town"] = read_int(rb["town"], "roundabout.town", 0, T - 1)
        r["rb_dir"] = DIRECTIONS.index(read_choice(rb["direction"], "roundabout.direction",
                                                   DIRECTIONS))
    ow = rd.dict("one_way", ("road", "enter_at"), default=None)
    r["ow_road"], r["ow_entry"] = -1, 0
    if ow is not None:
        road = read_int(ow["road"], "one_way.road", 0, R - 1)
        ends = game.map.roads[road]
        r["ow_road"] = road
        r["ow_entry"] = ends.index(read_choice(ow["enter_at"], "one_way.enter_at", ends))

def _read_turn(game: JammingTrafficGame, rd: StateReader, r: np.void, ph: int, phase: str) -> None:
    """``dice``, ``forced_dice``, ``pending`` and ``moves_left`` (J4, J5)."""
    r["dice"][:] = -1
    r["forced"][:] = -1
    dice = rd.raw("dice", None)
    if dice is not None:
        r["dice"][:] = [face_index(game, f) for f in read_list(dice, "dice", 2)]
    forced = rd.raw("forced_dice", None)
    if forced is not None:  # the next roll (chance control)
        r["forced"][:] = [face_index(game, f) for f in read_list(forced, "forced_dice", 2)]
    pending = rd.list("pending", default=[])
    for i, piece in enumerate(pending):
        read_choice(piece, f"pending[{i}]", ("roundabout", "one-way"))
    r["pend_rb"] = "roundabout" in pending
    r["pend_ow"] = "one-way" in pending
    if (ph == K.PLACE) != bool(pending):
        raise _bad("pending", "placements are pending exactly in the 'place' phase")
    ml = rd.int("moves_left", 0, 120, default=0)
    r["moves_left"] = ml
    if ph == K.MOVE and ml == 0:
        raise _bad("moves_left", "a player in the 'move' phase has at least one move left")
    if ph in (K.PLACE, K.MOVE, K.STOP) and dice is None:
        raise _bad("dice", f"the '{phase}' phase needs the dice of this turn")

def _read_jam_and_winner(game: JammingTrafficGame, rd: StateReader, r: np.void, ph: int) -> None:
    """``jam`` (the paused endless jam, J8) and ``winner`` (J9); roads over 3."""
    n, R = game.num_players, game.map.num_roads
    r["js_road"], r["js_end"] = -1, -1
    r["loop_towns"] = 0
    if ph == K.STOP:
        jam = rd.dict("jam", ("road", "entry_end"), default=None)
        if jam is None:
            raise _bad("jam", "the 'stop' phase needs jam = {'road': r, 'entry_end': 0|1}")
        jr = read_int(jam["road"], "jam.road", 0, R - 1)
        je = read_int(jam["entry_end"], "jam.entry_end", 0, 1)
        r["js_road"], r["js_end"] = jr, je
        r["loop_towns"] = K.loop_towns_of(r, game.cfg[0], jr, je)
        # the paused jam's road and held roads it disturbed hold 4
        if r["cnt"][jr] < 4:
            raise _bad("jam", "the paused jam's road must hold more than 3 cars")
    elif rd.raw("jam", None) is not None:
        raise _bad("jam", "jam is only set in the 'stop' phase")
    if ph not in (K.STOP, K.OVER):  # a win ends the game at once, even mid-jam
        stray = [i for i in range(R) if r["cnt"][i] > 3 and not r["held"][i]]
        if stray:
            raise _bad("held", f"roads {stray} hold more than 3 cars without being held")
    r["winner"][:] = 0
    winner = rd.int_list("winner", 0, n - 1, default=[])
    if ph == K.OVER:
        if len(winner) > 1:
            raise _bad("winner", f"winner must list at most one seat in 0..{n - 1}")
        for p in winner:
            r["winner"][p] = 1
    elif winner:
        raise _bad("winner", "winner is only set when the game is over")
