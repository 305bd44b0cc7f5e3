"""Jamming Traffic as a :class:`~trafficenvs.core.game.Game`: config, names, state dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trafficenvs.core.game import Game
from trafficenvs.core.statedict import (
    StateDictError,
    StateReader,
    read_choice,
    read_int,
    read_int_list,
    read_list,
)
from trafficenvs.jamming_traffic import kernels as K
from trafficenvs.jamming_traffic.layout import (
    CFG_ACTION_STARTS,
    OB_ROADS,
    action_layout,
    obs_layout,
)
from trafficenvs.jamming_traffic.maps import Map, MapSpec, load_map
from trafficenvs.jamming_traffic.spec import SPEC

DEFAULT_FACES: tuple[int | str, ...] = (1, 2, 3, 4, "roundabout", "one-way")
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


class JammingTrafficGame(Game):
    """Jamming Traffic for 2-10 players on one map (J1-J9).

    Options: ``map`` (a shipped name, a JSON path, a dict or a
    :class:`~trafficenvs.jamming_traffic.maps.Map`), ``homes`` (one town per seat;
    None draws them from the reset seed, J3), ``faces`` (the faces of each of the
    two dice, J4), ``max_turns`` (truncate the game after this many turns, J9; the
    env's ``max_cycles`` also truncates, by moves) and ``shaping`` (reward 1 for each
    town a seat still needed that its car passes for the first time, whoever moved
    it, on top of the zero-sum result; off by default, C2: a learner otherwise waits
    about 2 000 moves for its first reward).
    """

    spec = SPEC
    record_dtype = K.RECORD_DTYPE
    min_players = 2
    max_players = K.MAX_PLAYERS
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
            homes = [int(h) for h in homes]
            if len(homes) != N or len(set(homes)) != N or not all(0 <= h < T for h in homes):
                raise ValueError(f"homes must be {N} distinct towns in 0..{T - 1}, got {homes}")
        self.homes = homes
        faces = list(faces)
        if not 1 <= len(faces) <= K.MAX_FACES:
            raise ValueError(f"a die has 1 to {K.MAX_FACES} faces, got {len(faces)}")
        self.faces = [face_value(f) for f in faces]
        if max_turns is not None and (not isinstance(max_turns, int) or max_turns < 1):
            raise ValueError(f"max_turns must be a positive int or None, got {max_turns!r}")
        self.max_turns = max_turns
        if not isinstance(shaping, (bool, np.bool_)):
            raise ValueError(f"shaping must be True or False, got {shaping!r}")
        self.shaping = bool(shaping)

        cfg = np.zeros(1, K.CFG_DTYPE)
        c = cfg[0]
        c["num_players"] = N
        c["n_towns"] = T
        c["n_roads"] = R
        c["max_turns"] = max_turns or 0
        c["shaping"] = self.shaping
        c["n_faces"] = len(self.faces)
        c["face_val"][: len(self.faces)] = self.faces
        c["home_given"][:] = -1
        if homes is not None:
            c["home_given"][:N] = homes
        c["all_towns"] = (1 << T) - 1
        for r, (a, b) in enumerate(m.roads):
            c["rt"][r] = (a, b)
        self.ccw = [m.ccw_roads(t) for t in range(T)]
        for t in range(T):
            c["deg"][t] = len(self.ccw[t])
            for k, r in enumerate(self.ccw[t]):
                x = 0 if m.roads[r][0] == t else 1
                c["inc"][t, k] = r
                c["inc_end"][t, k] = x
                c["pos"][r, x] = k
        n_moves = 0
        self.move_table: list[tuple[int, int, int]] = []
        for r in range(R):
            for x in range(2):
                t = m.roads[r][x]
                order = m.pushed_order(r, x)
                for k, cand in enumerate(order):
                    c["st"][r, x, k] = cand
                    c["st_end"][r, x, k] = 0 if m.roads[cand][0] == t else 1
                c["st_h"][r, x] = 2 * order[0] + c["st_end"][r, x, 0]
                c["mv_base"][r, x] = n_moves
                c["mv_tpl"][r, x] = sum(1 << (8 * k) for k in range(len(self.ccw[t]))
                                        if k != c["pos"][r, x])
                for k in range(len(self.ccw[t])):
                    c["mv_road"][n_moves] = r
                    c["mv_end"][n_moves] = x
                    c["mv_k"][n_moves] = k
                    self.move_table.append((r, x, k))
                    n_moves += 1
        assert n_moves <= K.MAX_MOVES
        c["n_moves"] = n_moves
        self.obs_layout = obs_layout(N, T, R)
        self.action_layout = action_layout(n_moves, T, R)
        for key, offset in self.obs_layout.offsets().items():
            c[key] = offset
        if self.obs_layout.field("roads").offset != OB_ROADS:  # observe writes them there
            raise RuntimeError("the roads field must come first in the observation layout")
        seats = self.obs_layout.field("seats")
        c["ob_seat_home"] = self.obs_layout.at("seats", 0, "home") - seats.offset
        c["ob_seat_left"] = self.obs_layout.at("seats", 0, "towns_left") - seats.offset
        c["ob_seat_stride"] = seats.stride
        for name, key in CFG_ACTION_STARTS.items():
            c[key] = self.action_layout.field(name).offset
        c["num_actions"] = self.action_layout.size
        self.cfg = cfg
        self.num_actions = self.action_layout.size
        self.obs_dim = self.obs_layout.size

    @property
    def obs_high(self) -> float:
        m = self.map
        return float(max(self.num_players + 1, m.num_towns, m.num_roads + 1, 60))

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

    # -- state dicts -----------------------------------------------------------
    @staticmethod
    def _car_label(c: int) -> int | str:
        return "n" if c == 0 else int(c) - 1

    def to_dict(self, rec: np.void) -> dict[str, Any]:
        n = self.num_players
        T, R = self.map.num_towns, self.map.num_roads
        phase = K.PHASES[int(rec["phase"])]
        roads = [[self._car_label(int(c)) for c in rec["q"][r][: rec["cnt"][r]]]
                 for r in range(R)]
        rb = None
        if rec["rb_town"] >= 0:
            rb = {"town": int(rec["rb_town"]), "direction": DIRECTIONS[int(rec["rb_dir"])]}
        ow = None
        if rec["ow_road"] >= 0:
            r = int(rec["ow_road"])
            ow = {"road": r, "enter_at": int(self.map.roads[r][int(rec["ow_entry"])])}
        pending = []
        if rec["pend_rb"]:
            pending.append("roundabout")
        if rec["pend_ow"]:
            pending.append("one-way")
        forced = None
        if rec["forced"][0] >= 0:
            forced = [face_label(self.faces[int(f)]) for f in rec["forced"]]
        dice = None
        if rec["dice"][0] >= 0:
            dice = [face_label(self.faces[int(f)]) for f in rec["dice"]]
        jam = None
        if phase == "stop":
            jam = {"road": int(rec["js_road"]), "entry_end": int(rec["js_end"])}
        return {
            "game": self.name,
            "num_players": n,
            "map": self.map.name,
            "phase": phase,
            "to_move": int(rec["cur"]),
            "turn": int(rec["turn"]),
            "moves": int(rec["moves"]),
            "rng": self.rng_to_dict(rec),
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

    def _face_index(self, f: Any) -> int:
        v = face_value(f)
        if v not in self.faces:
            raise ValueError(f"forced die face {f!r} is not a face of this game's dice "
                             f"{[face_label(x) for x in self.faces]}")
        return self.faces.index(v)

    def from_dict(self, state: dict[str, Any]) -> np.ndarray:
        rd = self.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
        n = self.num_players
        T = self.map.num_towns
        if rd.raw("map", self.map.name) != self.map.name:
            raise _bad("map", f"state is on map {state['map']!r}, this env on {self.map.name!r}")
        phase = rd.raw("phase")
        if phase not in K.PHASES:
            raise _bad("phase", f"phase must be one of {K.PHASES}, got {phase!r}")
        ph = K.PHASES.index(phase)
        cur = rd.int("to_move", 0, n - 1)
        recs = self.new_records(1)
        r = recs[0]
        self.load_rng(r, state)
        r["moves"] = rd.int("moves", 0, default=0)
        r["turn"] = rd.int("turn", 0, default=0)
        r["phase"] = ph
        r["cur"] = cur
        r["home"][:] = -1
        r["home"][:n] = rd.int_list("homes", 0, T - 1, length=n, distinct=True)
        self._read_roads(rd, r, ph, cur)
        visited = rd.list("visited", n, default=[[] for _ in range(n)])
        for p, towns in enumerate(visited):
            r["visited"][p] = sum({1 << t for t in read_int_list(towns, f"visited[{p}]", 0, T - 1)})
        self._read_pieces(rd, r)
        self._read_turn(rd, r, ph, phase)
        self._read_jam_and_winner(rd, r, ph)
        return recs

    def _read_roads(self, rd: StateReader, r: np.void, ph: int, cur: int) -> None:
        """``roads`` and ``held``: the queues, the car count (2 a road) and each seat's
        one car (J2, J3, J8)."""
        n, R = self.num_players, self.map.num_roads
        roads = rd.list("roads", R)
        held = set(rd.int_list("held", 0, R - 1, default=[]))
        r["q"][:] = -1
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

    def _read_pieces(self, rd: StateReader, r: np.void) -> None:
        """``roundabout`` and ``one_way`` (J4)."""
        T, R = self.map.num_towns, self.map.num_roads
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
            ends = self.map.roads[road]
            r["ow_road"] = road
            r["ow_entry"] = ends.index(read_choice(ow["enter_at"], "one_way.enter_at", ends))

    def _read_turn(self, rd: StateReader, r: np.void, ph: int, phase: str) -> None:
        """``dice``, ``forced_dice``, ``pending`` and ``moves_left`` (J4, J5)."""
        r["dice"][:] = -1
        r["forced"][:] = -1
        dice = rd.raw("dice", None)
        if dice is not None:
            r["dice"][:] = [self._face_index(f) for f in read_list(dice, "dice", 2)]
        forced = rd.raw("forced_dice", None)
        if forced is not None:  # the next roll (chance control)
            r["forced"][:] = [self._face_index(f) for f in read_list(forced, "forced_dice", 2)]
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

    def _read_jam_and_winner(self, rd: StateReader, r: np.void, ph: int) -> None:
        """``jam`` (the paused endless jam, J8) and ``winner`` (J9); roads over 3."""
        n, R = self.num_players, self.map.num_roads
        r["js_road"], r["js_end"] = -1, -1
        r["loop_towns"] = 0
        if ph == K.STOP:
            jam = rd.dict("jam", ("road", "entry_end"), default=None)
            if jam is None:
                raise _bad("jam", "the 'stop' phase needs jam = {'road': r, 'entry_end': 0|1}")
            jr = read_int(jam["road"], "jam.road", 0, R - 1)
            je = read_int(jam["entry_end"], "jam.entry_end", 0, 1)
            r["js_road"], r["js_end"] = jr, je
            r["loop_towns"] = K.loop_towns_of(r, self.cfg[0], jr, je)
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

    # -- checks ----------------------------------------------------------------
    def check_invariants(self, rec: np.void) -> None:
        n = self.num_players
        R = self.map.num_roads
        cnt = rec["cnt"][:R].astype(int)
        assert cnt.sum() == 2 * R, f"cars not conserved: {cnt.sum()} on the roads, not {2 * R}"
        q = rec["q"][:R]
        ph = int(rec["phase"])
        for r in range(R):
            # a road never holds more than its queue: a longer one would overwrite the
            # next road's queue in the record
            assert 0 <= cnt[r] <= K.QLEN, f"road {r} holds {cnt[r]} cars, its queue {K.QLEN}"
            assert (q[r][: cnt[r]] >= 0).all() and (q[r][cnt[r]:] == -1).all(), f"queue {r}"
            if rec["held"][r]:
                assert cnt[r] == 4, f"held road {r} holds {cnt[r]} cars"
            elif ph in (K.STOP, K.OVER):  # a paused jam, or one cut short by the win
                assert cnt[r] <= 5, f"road {r} holds {cnt[r]} cars"
            else:
                assert cnt[r] <= 3, f"road {r} holds {cnt[r]} cars and is not held"
        cars = q[q > 0]
        for p in range(n):
            want = 0 if (ph == K.SETUP and p >= rec["cur"]) else 1
            assert (cars == p + 1).sum() == want, f"seat {p} has {(cars == p + 1).sum()} cars"
        assert 0 <= rec["cur"] < n
        if ph == K.OVER:
            assert rec["winner"][:n].sum() <= 1
        if ph == K.MOVE:
            assert rec["moves_left"] > 0
        assert len(set(rec["home"][:n].tolist())) == n

    # -- renders ---------------------------------------------------------------
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        from trafficenvs.jamming_traffic.render import render_text

        return render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        from trafficenvs.jamming_traffic.render import render_image

        return render_image(self, rec, seat)
