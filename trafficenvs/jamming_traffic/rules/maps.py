"""Jamming Traffic maps (ruling J1): towns with coordinates, roads as town pairs.

A map is plain data: ``{"name": str, "towns": [[x, y] | {"name", "x", "y"}, ...],
"roads": [[a, b], ...]}``. :func:`load_map` accepts a shipped name (``"default"``,
``"small"``, ``"wheel"``, ``"grid"``), a path to such a JSON file, a dict, or a
:class:`Map`. Validation refuses, with a message naming the fault, maps that are
not connected, not planar as drawn (two roads crossing, or a road running through a
town), with duplicate or self roads, or larger than the kernels' fixed sizes.

Everything the rules need about the geometry is derived here once, so the kernels
only look up tables: each town's roads in counter-clockwise order (the roundabout),
and for each road end the order in which a pushed car tries the exits ("straight
on" first, J7).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# the kernel limits (record and config sizes are fixed for every map), from their one copy
from trafficenvs.core.files import option_name, read_json
from trafficenvs.jamming_traffic.rules.layout import MAX_DEGREE, MAX_ROADS, MAX_TOWNS

DATA = Path(__file__).resolve().parent.parent / "data"
SHIPPED = ("default", "small", "wheel", "grid")


@dataclass(frozen=True)
class Map:
    """A validated map; ``towns`` are (x, y) with x east, y north."""

    name: str
    towns: tuple[tuple[float, float], ...]
    roads: tuple[tuple[int, int], ...]
    town_names: tuple[str, ...] = field(default=())

    @property
    def num_towns(self) -> int:
        return len(self.towns)

    @property
    def num_roads(self) -> int:
        return len(self.roads)

    def to_dict(self) -> dict[str, Any]:
        names = self.town_names or tuple(str(i) for i in range(self.num_towns))
        return {
            "name": self.name,
            "towns": [{"name": n, "x": x, "y": y} for n, (x, y) in zip(names, self.towns)],
            "roads": [list(r) for r in self.roads],
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")

    # -- geometry for the kernels ---------------------------------------------
    def angle(self, t: int, u: int) -> float:
        (x0, y0), (x1, y1) = self.towns[t], self.towns[u]
        return math.atan2(y1 - y0, x1 - x0)

    def other(self, r: int, t: int) -> int:
        a, b = self.roads[r]
        return b if a == t else a

    def ccw_roads(self, t: int) -> list[int]:
        """Roads at town ``t`` sorted counter-clockwise by the angle they leave at (J1)."""
        rs = [r for r, (a, b) in enumerate(self.roads) if t in (a, b)]
        return sorted(rs, key=lambda r: (self.angle(t, self.other(r, t)) % (2 * math.pi), r))

    def pushed_order(self, r: int, x: int) -> list[int]:
        """Exits a car pushed off road ``r`` through its end ``x`` tries, in order (J7).

        Straight on first (smallest turn from the direction of travel; on a tie the
        clockwise, i.e. right, turn first); the U-turn back onto ``r`` last.
        """
        t = self.roads[r][x]
        came_from = self.roads[r][1 - x]
        heading = self.angle(came_from, t)
        keyed = []
        for c in self.ccw_roads(t):
            if c == r:
                continue
            turn = (self.angle(t, self.other(c, t)) - heading + math.pi) % (2 * math.pi) - math.pi
            keyed.append((round(abs(turn), 9), 0 if turn < 0 else 1, c))
        return [c for *_, c in sorted(keyed)] + [r]


MapSpec = str | Path | dict | Map | None


def _fail(name: str, msg: str) -> None:
    raise ValueError(f"map {name!r}: {msg}")


def _segments_cross(p1, p2, p3, p4) -> bool:
    """Whether two segments with no shared end point intersect (touching included)."""

    def orient(a, b, c):
        v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        return 0 if abs(v) < 1e-12 else (1 if v > 0 else -1)

    def on_seg(a, b, c):
        return (min(a[0], b[0]) - 1e-12 <= c[0] <= max(a[0], b[0]) + 1e-12
                and min(a[1], b[1]) - 1e-12 <= c[1] <= max(a[1], b[1]) + 1e-12)

    o1, o2, o3, o4 = orient(p1, p2, p3), orient(p1, p2, p4), orient(p3, p4, p1), orient(p3, p4, p2)
    if o1 != o2 and o3 != o4:
        return True
    return ((o1 == 0 and on_seg(p1, p2, p3)) or (o2 == 0 and on_seg(p1, p2, p4))
            or (o3 == 0 and on_seg(p3, p4, p1)) or (o4 == 0 and on_seg(p3, p4, p2)))


def _through_town(p, q, c) -> bool:
    """Whether town ``c`` lies on the segment p-q (strictly between its ends)."""
    cross = (q[0] - p[0]) * (c[1] - p[1]) - (q[1] - p[1]) * (c[0] - p[0])
    if abs(cross) > 1e-9 * max(1.0, math.dist(p, q)):
        return False
    dot = (c[0] - p[0]) * (q[0] - p[0]) + (c[1] - p[1]) * (q[1] - p[1])
    return 0 < dot < (q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2


def validate(name: str, towns: list, roads: list) -> None:
    """Raise ``ValueError`` naming the first fault of the map (see the module doc)."""
    n = len(towns)
    if n < 2:
        _fail(name, f"needs at least 2 towns, has {n}")
    if n > MAX_TOWNS:
        _fail(name, f"has {n} towns; at most {MAX_TOWNS} are supported")
    if not roads:
        _fail(name, "has no roads")
    if len(roads) > MAX_ROADS:
        _fail(name, f"has {len(roads)} roads; at most {MAX_ROADS} are supported")
    for i, (x, y) in enumerate(towns):
        # NaN compares false with everything, so it would slip past the planarity test
        if not (math.isfinite(x) and math.isfinite(y)):
            _fail(name, f"town {i} has coordinates ({x}, {y}); they must be finite numbers")
    if len(set(towns)) != n:
        _fail(name, "two towns share the same coordinates")
    seen = set()
    deg = [0] * n
    for i, (a, b) in enumerate(roads):
        if not (0 <= a < n and 0 <= b < n):
            _fail(name, f"road {i} ({a}, {b}) names a town outside 0..{n - 1}")
        if a == b:
            _fail(name, f"road {i} joins town {a} to itself")
        key = (min(a, b), max(a, b))
        if key in seen:
            _fail(name, f"road {i} ({a}, {b}) duplicates another road")
        seen.add(key)
        deg[a] += 1
        deg[b] += 1
    big = [t for t in range(n) if deg[t] > MAX_DEGREE]
    if big:
        _fail(name, f"town {big[0]} has {deg[big[0]]} roads; at most {MAX_DEGREE} are supported")
    # connected
    adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in roads:
        adj[a].append(b)
        adj[b].append(a)
    reach = {0}
    todo = [0]
    while todo:
        for u in adj[todo.pop()]:
            if u not in reach:
                reach.add(u)
                todo.append(u)
    if len(reach) != n:
        _fail(name, f"is not connected: town {min(set(range(n)) - reach)} cannot be reached "
                    "from town 0")
    # planar as drawn
    for i, (a, b) in enumerate(roads):
        for c in range(n):
            if c not in (a, b) and _through_town(towns[a], towns[b], towns[c]):
                _fail(name, f"road {i} ({a}, {b}) runs through town {c}")
        for j in range(i + 1, len(roads)):
            c, d = roads[j]
            if len({a, b, c, d}) < 4:
                continue
            if _segments_cross(towns[a], towns[b], towns[c], towns[d]):
                _fail(name, f"roads {i} ({a}, {b}) and {j} ({c}, {d}) cross: "
                            "the map is not planar as drawn")


def _coord(v: Any, name: str, i: int, axis: str) -> float:
    """A town coordinate: a finite int or float (a string or a bool is not a number)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"map {name!r}: town {i} coordinate {axis} must be a number, got {v!r}")
    x = float(v)
    if not math.isfinite(x):
        _fail(name, f"town {i} coordinate {axis} is {v!r}; coordinates must be finite numbers")
    return x


def from_dict(d: dict, default_name: str = "custom") -> Map:
    """Build and validate a :class:`Map` from its JSON form."""
    if not isinstance(d, dict) or "towns" not in d or "roads" not in d:
        raise ValueError("a map is a dict with the keys 'towns' and 'roads' (and 'name')")
    unknown = set(d) - {"name", "towns", "roads"}
    if unknown:
        raise ValueError(f"map: unknown keys {sorted(unknown)}")
    name = option_name(d.get("name", default_name), "map")
    towns: list[tuple[float, float]] = []
    names: list[str] = []
    for i, t in enumerate(d["towns"]):
        if isinstance(t, dict):
            if "x" not in t or "y" not in t:
                _fail(name, f"town {i} needs x and y")
            towns.append((_coord(t["x"], name, i, "x"), _coord(t["y"], name, i, "y")))
            names.append(option_name(t["name"], f"map {name!r}: town {i}") if "name" in t
                         else str(i))
        elif isinstance(t, (list, tuple)) and len(t) == 2:
            towns.append((_coord(t[0], name, i, "x"), _coord(t[1], name, i, "y")))
            names.append(str(i))
        else:
            _fail(name, f"town {i} must be [x, y] or {{'name', 'x', 'y'}}, got {t!r}")
    roads: list[tuple[int, int]] = []
    for i, r in enumerate(d["roads"]):
        if (not isinstance(r, (list, tuple)) or len(r) != 2
                or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                           for v in r)):
            _fail(name, f"road {i} must be a pair of town indices, got {r!r}")
        roads.append((int(r[0]), int(r[1])))
    validate(name, towns, roads)
    return Map(name, tuple(towns), tuple(roads), tuple(names))


def load_map(spec: MapSpec) -> Map:
    """A validated map from a shipped name, a JSON path, a dict or a :class:`Map`."""
    if spec is None:
        spec = "default"
    if isinstance(spec, Map):
        validate(spec.name, list(spec.towns), list(spec.roads))
        return spec
    if isinstance(spec, dict):
        return from_dict(spec)
    if isinstance(spec, (str, Path)):
        if str(spec) in SHIPPED:
            path = DATA / f"{spec}.json"
        else:
            path = Path(spec)
            if not path.is_file():
                raise ValueError(f"no map named {spec!r}: shipped maps are {list(SHIPPED)}, "
                                 "or give the path of a JSON map file")
        return from_dict(read_json(path, "map file"), default_name=path.stem)
    raise TypeError(f"map must be a name, a path, a dict or a Map, got {type(spec).__name__}")


def random_map(towns: int = 14, seed: int = 0, density: float = 1.7,
               max_degree: int = 6) -> Map:
    """A random connected planar map: ``towns`` towns, about ``density * towns`` roads.

    Towns are scattered with a minimum spacing; roads are the Euclidean minimum
    spanning tree (planar, connected) plus the shortest further town pairs that
    cross no road, pass through no town and keep every town at ``max_degree`` roads
    or fewer. The same ``(towns, seed, density)`` always gives the same map.
    """
    if not 2 <= towns <= MAX_TOWNS:
        raise ValueError(f"towns must be in 2..{MAX_TOWNS}, got {towns}")
    rng = np.random.default_rng(seed)
    side = math.sqrt(towns) * 2.0
    pts: list[tuple[float, float]] = []
    spacing = 1.2
    while len(pts) < towns:
        p = (round(float(rng.uniform(0, side)), 3), round(float(rng.uniform(0, side)), 3))
        if all(math.dist(p, q) >= spacing for q in pts):
            pts.append(p)
        else:
            spacing *= 0.999
    pairs = sorted((math.dist(pts[a], pts[b]), a, b)
                   for a in range(towns) for b in range(a + 1, towns))
    parent = list(range(towns))

    def find(u: int) -> int:
        while parent[u] != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        return u

    roads: list[tuple[int, int]] = []
    deg = [0] * towns

    def fits(a: int, b: int) -> bool:
        if any(_through_town(pts[a], pts[b], pts[c]) for c in range(towns) if c not in (a, b)):
            return False
        return not any(len({a, b, c, d}) == 4 and _segments_cross(pts[a], pts[b], pts[c], pts[d])
                       for c, d in roads)

    for _, a, b in pairs:  # Kruskal: the Euclidean MST is planar
        if find(a) != find(b) and fits(a, b):
            parent[find(a)] = find(b)
            roads.append((a, b))
            deg[a] += 1
            deg[b] += 1
    target = min(MAX_ROADS, int(round(density * towns)))
    for _, a, b in pairs:
        if len(roads) >= target:
            break
        if (a, b) in roads or deg[a] >= max_degree or deg[b] >= max_degree:
            continue
        if fits(a, b):
            roads.append((a, b))
            deg[a] += 1
            deg[b] += 1
    m = Map(f"random-{towns}-{seed}", tuple(pts), tuple(roads),
            tuple(f"T{i}" for i in range(towns)))
    validate(m.name, list(m.towns), list(m.roads))
    return m
