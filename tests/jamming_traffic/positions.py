"""Drawing Jamming Traffic positions in tests: a small map, then the cars on each road;
and the observation table of the rules page read in plain Python (:func:`observation`).

The reading is written for clarity, not speed, and independently of the kernels: the
distances come from a breadth-first search on the map, the free runs from a search
over the steered moves as the rules page states them (J7: not back onto its own
road; at the roundabout the next road round that may be entered, its own road last;
the one-way sign).
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Any

import numpy as np

from trafficenvs.core.clock import horizon_left
from trafficenvs.jamming_traffic.game import DIRECTIONS, JammingTrafficGame
from trafficenvs.jamming_traffic.rules.layout import PHASES, QLEN
from trafficenvs.jamming_traffic.rules.maps import from_dict
from trafficenvs.registry import make


def small_map(towns: dict[str, tuple[float, float]], roads: list[str], name: str = "test"):
    """``towns={"A": (0, 0), ...}``, ``roads=["A-B", ...]`` -> (map dict, town index)."""
    names = list(towns)
    idx = {n: i for i, n in enumerate(names)}
    d = {
        "name": name,
        "towns": [{"name": n, "x": towns[n][0], "y": towns[n][1]} for n in names],
        "roads": [[idx[r.split("-")[0]], idx[r.split("-")[1]]] for r in roads],
    }
    from_dict(d)  # validate early, with the map's own message
    return d, idx


class Table:
    """A raw AEC env on a drawn map, with names for towns and roads.

    The AEC env (not the vectorised one) so a finished game stays on the table.
    """

    def __init__(self, towns: dict[str, tuple[float, float]], roads: list[str],
                 num_players: int = 2, homes: list[str] | None = None, **options: Any):
        self.map, self.t = small_map(towns, roads)
        self.roads = {r: i for i, r in enumerate(roads)}
        self.homes = homes or list(towns)[-num_players:]
        self.options = dict(num_players=num_players, map=self.map,
                            homes=[self.t[h] for h in self.homes], **options)
        self.env = make("jamming_traffic", wrapped=False, **self.options)
        self.env.reset(seed=0)
        self.game: JammingTrafficGame = self.env.game

    def r(self, road: str) -> int:
        return self.roads[road]

    def set(self, cars: dict[str, str], phase: str = "move", to_move: int = 0,
            moves_left: int = 3, **fields: Any) -> Table:
        """Cars per road, written from the road's first town to its second
        (``"n n 0"``: two neutral cars then seat 0's car at the second town's end)."""
        state: dict[str, Any] = {
            "game": "jamming_traffic", "num_players": self.game.num_players,
            "phase": phase, "to_move": to_move, "homes": [self.t[h] for h in self.homes],
            "roads": [[]] * len(self.roads), "moves_left": moves_left,
            "dice": [1, 2] if phase in ("move", "place", "stop") else None,
        }
        roads = [[] for _ in self.roads]
        for road, spec in cars.items():
            roads[self.r(road)] = [c if c == "n" else int(c) for c in spec.split()]
        state["roads"] = roads
        for key in ("visited",):
            if key in fields:
                fields[key] = [[self.t[x] for x in v] for v in fields[key]]
        state.update(fields)
        self.env.load_state_dict(state)
        return self

    def state(self) -> dict[str, Any]:
        return self.env.state_dict()

    def cars(self, road: str) -> str:
        return " ".join(str(c) for c in self.state()["roads"][self.r(road)])

    def move(self, road: str, through: str, onto: str) -> int:
        return self.game.move_action(self.r(road), self.t[through], self.r(onto))

    def legal(self) -> set[int]:
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        return set(np.flatnonzero(mask).tolist())

    def legal_names(self) -> list[str]:
        return [self.env.action_name(a) for a in sorted(self.legal())]

    def moves_from(self, road: str, through: str) -> set[str]:
        """Roads onto which the car at ``road``'s ``through`` end may legally be moved."""
        out = set()
        for a in self.legal():
            kind, args = self.game.decode(a)
            if kind == "move" and args[0] == self.r(road) \
                    and self.game.map.roads[args[0]][args[1]] == self.t[through]:
                out.add(next(k for k, v in self.roads.items() if v == args[2]))
        return out

    def play(self, action: int) -> dict[str, float]:
        """Play one action; returns this step's rewards per agent."""
        self.env.step(int(action))
        return dict(self.env.rewards)

    @property
    def over(self) -> bool:
        return any(self.env.terminations.values())

    def visited(self, seat: int) -> set[str]:
        names = list(self.t)
        return {names[t] for t in self.state()["visited"][seat]}


def leaf_roads(m) -> list[tuple[int, int]]:
    """(road, the end town away from the leaf) for every road into a degree-1 town."""
    deg = Counter(t for r in m.roads for t in r)
    out = []
    for r, (a, b) in enumerate(m.roads):
        if deg[b] == 1:
            out.append((r, a))
        if deg[a] == 1:
            out.append((r, b))
    return out


# --------------------------------------------------------------------------- the table



_DISTANCES: dict[str, list[list[int]]] = {}


def town_distances(game: JammingTrafficGame) -> list[list[int]]:
    """Fewest roads between every two towns (BFS on the map; kept per map)."""
    key = repr((game.map.num_towns, game.map.roads))
    if key not in _DISTANCES:
        _DISTANCES[key] = _bfs_all(game)
    return _DISTANCES[key]


def _bfs_all(game: JammingTrafficGame) -> list[list[int]]:
    T = game.map.num_towns
    nbr = [[] for _ in range(T)]
    for a, b in game.map.roads:
        nbr[a].append(b)
        nbr[b].append(a)
    out = []
    for s in range(T):
        d = [-1] * T
        d[s] = 0
        todo = deque([s])
        while todo:
            u = todo.popleft()
            for v in nbr[u]:
                if d[v] < 0:
                    d[v] = d[u] + 1
                    todo.append(v)
        out.append(d)
    return out


def car_distance(game: JammingTrafficGame, road: int, town: int) -> int:
    """The fewest towns a car on ``road`` passes to pass ``town``, counting it."""
    D = town_distances(game)
    a, b = game.map.roads[road]
    return 1 + min(D[a][town], D[b][town])


class Pieces:
    """The steered-move rules of J7 with the pieces of a state dict."""

    def __init__(self, game: JammingTrafficGame, s: dict[str, Any]):
        self.game = game
        roads = game.map.roads
        rb, ow = s["roundabout"], s["one_way"]
        self.rb_town = None if rb is None else rb["town"]
        self.rb_cw = rb is not None and rb["direction"] == "cw"
        self.ow = None if ow is None else ow["road"]
        self.ow_entry = None if ow is None else roads[ow["road"]].index(ow["enter_at"])

    def can_leave(self, r: int, x: int) -> bool:
        return not (r == self.ow and x == self.ow_entry)

    def can_enter(self, r: int, e: int) -> bool:
        return not (r == self.ow and e != self.ow_entry)

    def exits(self, r: int, x: int) -> list[tuple[int, int]]:
        """Where a steered car leaving road ``r`` through its end ``x`` may go: (road,
        end entered at)."""
        if not self.can_leave(r, x):
            return []
        roads = self.game.map.roads
        u = roads[r][x]
        order = self.game.ccw[u]

        def end(o):
            return roads[o].index(u)

        if u == self.rb_town:
            p = order.index(r)
            step = -1 if self.rb_cw else 1
            for k in range(1, len(order) + 1):  # the next road round, its own road last
                o = order[(p + step * k) % len(order)]
                if self.can_enter(o, end(o)):
                    return [(o, end(o))]
            return []
        return [(o, end(o)) for o in order if o != r and self.can_enter(o, end(o))]


def reach(game: JammingTrafficGame, s: dict[str, Any], seat: int) -> list[int]:
    """Per road end (2 r + x): my car is at that end and, taken there, passes a town I
    still need within the moves left on a free run (move phase, my turn)."""
    R = game.map.num_roads
    out = [0] * (2 * R)
    need = set(range(game.map.num_towns)) - {s["homes"][seat]} - set(s["visited"][seat])
    if s["phase"] != "move" or s["to_move"] != seat or not need:
        return out
    ml = s["moves_left"]
    pieces = Pieces(game, s)
    roads = game.map.roads
    empty = {r for r in range(R) if not s["roads"][r]}
    for r, cars in enumerate(s["roads"]):
        for x in range(2):
            if not cars or cars[0 if x == 0 else -1] != seat:
                continue
            first = pieces.exits(r, x)
            if not first:
                continue
            if roads[r][x] in need:
                out[2 * r + x] = 1
                continue
            # breadth first over (road, end entered at), the car alone on empty roads
            seen = set()
            todo = deque((o, e, 1) for o, e in first if o in empty)
            while todo:
                o, e, used = todo.popleft()
                if (o, e) in seen or used >= ml:
                    continue
                seen.add((o, e))
                nxt = pieces.exits(o, 1 - e)
                if nxt and roads[o][1 - e] in need:
                    out[2 * r + x] = 1
                    break
                todo.extend((o2, e2, used + 1) for o2, e2 in nxt if o2 in empty)
    return out


def observation(game: JammingTrafficGame, rec: np.void, seat: int) -> np.ndarray:
    """The v1 observation of ``seat`` as the rules page's table says, entry by entry."""
    s = game.to_dict(rec)
    n, T, R = game.num_players, game.map.num_towns, game.map.num_roads
    c = game.cfg[0]
    obs: list[int] = []
    for cars in s["roads"]:  # road_neutral: 5 places a road from its first town
        obs += [1 if i < len(cars) and cars[i] == "n" else 0 for i in range(QLEN)]
    obs += [len(cars) for cars in s["roads"]]  # road_cars
    for j in range(n):  # per relative seat
        p = (seat + j) % n
        visited = set(s["visited"][p])
        home = s["homes"][p]
        need = set(range(T)) - visited - {home}
        where = [(r, cars.index(p)) for r, cars in enumerate(s["roads"]) if p in cars]
        block = [1 if t in visited else 0 for t in range(T)]
        block += [1 if t == home else 0 for t in range(T)]
        road = [0] * R
        slot = [0] * QLEN
        ends = [0, 0]
        dist = [0] * T
        nearest = 0
        if where:
            r, i = where[0]
            road[r] = 1
            slot[i] = 1
            ends = [int(i == 0), int(i == len(s["roads"][r]) - 1)]
            dist = [car_distance(game, r, t) if t in need else 0 for t in range(T)]
            nearest = min((d for d in dist if d), default=0)
        block += road + slot + ends + [len(need)] + dist + [nearest]
        obs += block
    obs += reach(game, s, seat)
    stop = s["phase"] == "stop"
    loop = int(rec["loop_towns"])
    obs += [loop >> t & 1 if stop else 0 for t in range(T)]
    jam = s["jam"]
    obs += [1 if stop and jam["road"] == r else 0 for r in range(R)]
    obs += [1 if stop and jam["entry_end"] == e else 0 for e in range(2)]
    obs += [1 if s["phase"] == ph else 0 for ph in PHASES]
    obs += [s["moves_left"]]
    for f in s["dice"] or [None, None]:
        obs += [f if isinstance(f, int) else 0, int(f == "roundabout"), int(f == "one-way")]
    obs += [int("roundabout" in s["pending"]), int("one-way" in s["pending"])]
    rb, ow = s["roundabout"], s["one_way"]
    obs += [1 if rb is not None and rb["town"] == t else 0 for t in range(T)]
    obs += [1 if rb is not None and DIRECTIONS.index(rb["direction"]) == d else 0
            for d in range(2)]
    obs += [1 if ow is not None and ow["road"] == r else 0 for r in range(R)]
    entry = None if ow is None else game.map.roads[ow["road"]].index(ow["enter_at"])
    obs += [1 if entry == e else 0 for e in range(2)]
    cap = min(game.max_turns, 255) if game.max_turns else 255
    obs += [min(s["turn"], cap)]
    obs += [min(game.max_turns - s["turn"], cap) if game.max_turns else 255]
    obs += [int(horizon_left(int(rec["moves"]), int(c["horizon"])))]
    return np.array(obs, np.int64)
