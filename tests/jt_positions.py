"""Drawing Jamming Traffic positions in tests: a small map, then the cars on each road."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from trafficenvs.jamming_traffic.game import JammingTrafficGame
from trafficenvs.jamming_traffic.maps import from_dict
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
