"""Jakarta Traffic street tiles as data (rulings K2, K3): loading, validation, tables.

A tile set is a JSON object (the shipped default is ``data/default_tiles.json``):

``patterns``
    name -> ``{"N": .., "E": .., "S": .., "W": ..}``: where each edge's path end
    leads inside the tile at rotation 0, ``"C"`` for the parking spot in the centre
    or another edge letter. Every edge end leads somewhere (no dead ends), joins are
    mutual, and at least one path reaches the parking spot.
``tiles``
    rows ``{"kind": pickup|charging|building, "pattern": name, "count": n}``;
    a building row names its ``"address"`` (one of the five) and has count 1.

A set fits ``N`` players when it holds exactly five buildings (one per address), at
least five charging stations and at least ``15 + N`` pick-up tiles (15 on the board,
one spare per player). Users pass a path, a dict of that shape, or ``None``.

Rotation turns a tile clockwise by quarter turns: with rotation ``r`` the path end at
physical edge ``e`` is the pattern's end at edge ``(e - r) % 4``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trafficenvs.core.files import option_name, read_json
from trafficenvs.jakarta_traffic.rules.layout import (
    ADDRESSES,
    BUILDING,
    CENTRE,
    CHARGING,
    EDGES,
    KINDS,
    MAX_PATTERNS,
    MAX_TILES,
    NCELLS,
    PICKUP,
    SIDE,
)

DEFAULT_TILES = Path(__file__).resolve().parent.parent / "data" / "default_tiles.json"
TileSpec = str | Path | dict | None

#: K3: the 20 outer path ends, clockwise from the top-left corner, as (cell, edge)
FRAME_ENDS: tuple[tuple[int, int], ...] = (
    tuple((c, 0) for c in range(SIDE))  # top edge, left to right: N ends
    + tuple((r * SIDE + SIDE - 1, 1) for r in range(SIDE))  # right edge, downwards: E
    + tuple(((SIDE - 1) * SIDE + c, 2) for c in range(SIDE - 1, -1, -1))  # bottom: S
    + tuple((r * SIDE, 3) for r in range(SIDE - 1, -1, -1))  # left edge, upwards: W
)


@dataclass(frozen=True)
class Pattern:
    name: str
    #: ``links[e]``: the edge that edge ``e`` leads to at rotation 0, or CENTRE
    links: tuple[int, int, int, int]

    def conn(self, rot: int) -> tuple[int, ...]:
        """Links at rotation ``rot`` (physical edges)."""
        out = []
        for e in range(4):
            b = self.links[(e - rot) % 4]
            out.append(CENTRE if b == CENTRE else (b + rot) % 4)
        return tuple(out)


@dataclass(frozen=True)
class Tile:
    kind: int
    pattern: int
    address: int  # -1 unless a building

    def spec(self, tiles: TileSet) -> str:
        """``"pickup bend"`` or ``"building hub Spa"`` (state dicts and tests)."""
        s = f"{KINDS[self.kind]} {tiles.patterns[self.pattern].name}"
        return s if self.address < 0 else f"{s} {ADDRESSES[self.address]}"


@dataclass(frozen=True)
class TileSet:
    patterns: tuple[Pattern, ...]
    #: one entry per physical tile (counts expanded); tile ids index this
    tiles: tuple[Tile, ...]

    def count(self, kind: int) -> int:
        return sum(t.kind == kind for t in self.tiles)

    def pattern_index(self, name: str) -> int:
        for i, p in enumerate(self.patterns):
            if p.name == name:
                return i
        raise ValueError(f"unknown tile pattern {name!r}; known: {[p.name for p in self.patterns]}")

    def parse_spec(self, spec: str) -> Tile:
        """The tile of ``"<kind> <pattern>[ <address>]"``; ValueError if malformed."""
        if not isinstance(spec, str):
            raise ValueError(f"a tile is a string '<kind> <pattern>[ <address>]', got {spec!r}")
        parts = spec.split(" ", 2)
        if len(parts) < 2 or parts[0] not in KINDS:
            raise ValueError(f"bad tile {spec!r}: '<kind> <pattern>[ <address>]', kind in {KINDS}")
        kind = KINDS.index(parts[0])
        pat = self.pattern_index(parts[1])
        addr = -1
        if kind == BUILDING:
            if len(parts) < 3 or parts[2] not in ADDRESSES:
                raise ValueError(f"bad tile {spec!r}: a building names its address {ADDRESSES}")
            addr = ADDRESSES.index(parts[2])
        elif len(parts) > 2:
            raise ValueError(f"bad tile {spec!r}: only buildings have an address")
        return Tile(kind, pat, addr)


def _parse_pattern(name: Any, links: Any) -> Pattern:
    where = f"pattern {name!r}"
    if isinstance(name, str):
        option_name(name, where)
    if not isinstance(name, str) or not name or " " in name:
        raise ValueError(f"{where}: a pattern name is a non-empty word")
    if not isinstance(links, dict) or set(links) != set(EDGES):
        raise ValueError(f"{where}: give the link of each edge N, E, S, W")
    out = []
    for e in EDGES:
        v = links[e]
        if v == "C":
            out.append(CENTRE)
        elif v in tuple(EDGES):
            if v == e:
                raise ValueError(f"{where}: edge {e} cannot lead to itself")
            out.append(EDGES.index(v))
        else:
            raise ValueError(f"{where}: edge {e} leads to {v!r}; use 'C' or an edge letter")
    for e, v in enumerate(out):
        if v != CENTRE and out[v] != e:
            raise ValueError(f"{where}: edge {EDGES[e]} leads to {EDGES[v]} but not back")
    if CENTRE not in out:
        raise ValueError(f"{where}: no path reaches the parking spot")
    return Pattern(name, tuple(out))


def load_tiles(spec: TileSpec = None) -> TileSet:
    """Read and validate a tile set; ``None`` is the shipped default."""
    if spec is None:
        spec = DEFAULT_TILES
    if isinstance(spec, (str, Path)):
        spec = read_json(Path(spec), "tile set file")
    if not isinstance(spec, dict) or set(spec) != {"patterns", "tiles"}:
        raise ValueError("a tile set is a dict with the keys 'patterns' and 'tiles'")
    pats = spec["patterns"]
    if not isinstance(pats, dict) or not pats:
        raise ValueError("'patterns' maps pattern names to their edge links")
    if len(pats) > MAX_PATTERNS:
        raise ValueError(f"a tile set has at most {MAX_PATTERNS} patterns, got {len(pats)}")
    patterns = tuple(_parse_pattern(k, v) for k, v in pats.items())
    names = [p.name for p in patterns]
    rows = spec["tiles"]
    if not isinstance(rows, list):
        raise ValueError("'tiles' is a list of rows")
    tiles: list[Tile] = []
    for i, row in enumerate(rows):
        where = f"tiles[{i}]"
        if not isinstance(row, dict):
            raise ValueError(f"{where}: a row is a dict")
        unknown = set(row) - {"kind", "pattern", "count", "address"}
        if unknown or not {"kind", "pattern"} <= set(row):
            raise ValueError(f"{where}: keys kind, pattern[, count][, address]; got {sorted(row)}")
        if row["kind"] not in KINDS:
            raise ValueError(f"{where}: kind must be one of {KINDS}, got {row['kind']!r}")
        if row["pattern"] not in names:
            raise ValueError(f"{where}: unknown pattern {row['pattern']!r}; known: {names}")
        kind = KINDS.index(row["kind"])
        count = row.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"{where}: count must be a non-negative int, got {count!r}")
        if len(tiles) + count > MAX_TILES:  # checked before the list is built
            raise ValueError(f"a tile set holds at most {MAX_TILES} tiles, got "
                             f"{len(tiles) + count} by {where}")
        addr = -1
        if kind == BUILDING:
            if row.get("address") not in ADDRESSES:
                raise ValueError(f"{where}: a building needs an address from {ADDRESSES}")
            if count != 1:
                raise ValueError(f"{where}: each building is one tile (count 1)")
            addr = ADDRESSES.index(row["address"])
        elif "address" in row:
            raise ValueError(f"{where}: only buildings have an address")
        tiles += [Tile(kind, names.index(row["pattern"]), addr)] * count
    if len(tiles) > MAX_TILES:
        raise ValueError(f"a tile set holds at most {MAX_TILES} tiles, got {len(tiles)}")
    addrs = sorted(t.address for t in tiles if t.kind == BUILDING)
    if addrs != list(range(len(ADDRESSES))):
        raise ValueError(
            f"a tile set has exactly five buildings, one per address {ADDRESSES}"
        )
    ts = TileSet(patterns, tuple(tiles))
    if ts.count(CHARGING) < SIDE:
        raise ValueError(f"a tile set needs at least {SIDE} charging stations (one per row)")
    if ts.count(PICKUP) < 3 * SIDE:
        raise ValueError(f"a tile set needs at least {3 * SIDE} pick-up tiles (3 per row)")
    return ts


def check_tiles_fit(tiles: TileSet, num_players: int) -> None:
    """K2: 15 pick-up tiles on the board and one spare per player."""
    need = 3 * SIDE + num_players
    if tiles.count(PICKUP) < need:
        raise ValueError(
            f"{num_players} players need {need} pick-up tiles (15 on the board, one spare "
            f"each); this tile set has {tiles.count(PICKUP)}"
        )


def exit_table() -> np.ndarray:
    """``exit_to[x, e] = cell * 4 + edge`` entered when leaving cell ``x`` by edge ``e``.

    Inside the grid that is the neighbour's opposite edge; on the rim, the other end
    of the frame's alley (K3: the 20 rim ends clockwise from the top-left corner,
    joined 1st-2nd, 3rd-4th, ...).
    """
    out = np.full((NCELLS, 4), -1, np.int16)
    step = ((-1, 0), (0, 1), (1, 0), (0, -1))
    for x in range(NCELLS):
        r, c = divmod(x, SIDE)
        for e, (dr, dc) in enumerate(step):
            rr, cc = r + dr, c + dc
            if 0 <= rr < SIDE and 0 <= cc < SIDE:
                out[x, e] = (rr * SIDE + cc) * 4 + (e + 2) % 4
    for i in range(0, len(FRAME_ENDS), 2):
        (x1, e1), (x2, e2) = FRAME_ENDS[i], FRAME_ENDS[i + 1]
        out[x1, e1] = x2 * 4 + e2
        out[x2, e2] = x1 * 4 + e1
    assert (out >= 0).all()
    return out


def fill_cfg(c: np.void, tiles: TileSet) -> None:
    """Write the tile tables of a config record."""
    c["num_tiles"] = len(tiles.tiles)
    counts = [0, 0, 0]
    for i, t in enumerate(tiles.tiles):
        c["tile_kind"][i] = t.kind
        c["tile_pat"][i] = t.pattern
        c["tile_addr"][i] = t.address
        c["kind_ids"][t.kind, counts[t.kind]] = i
        counts[t.kind] += 1
    c["n_kind"][:] = counts
    for p, pat in enumerate(tiles.patterns):
        for rot in range(4):
            c["conn"][p, rot] = pat.conn(rot)
    c["exit_to"] = exit_table()
    # observation features of a cell by its code (kind << 4 | spot-linked edge bits):
    # bytes N, E, S, W, pick-up, charging, building of a little-endian word
    for code in range(64):
        kind, bits = divmod(code, 16)
        feat = [bits & 1, bits >> 1 & 1, bits >> 2 & 1, bits >> 3 & 1,
                kind == PICKUP, kind == CHARGING, kind == BUILDING, 0]
        c["feat64"][code] = np.array(feat, np.uint8).view("<u8")[0]
    for i, t in enumerate(tiles.tiles):
        bits = sum(1 << e for e in range(4) if tiles.patterns[t.pattern].links[e] == CENTRE)
        c["tile_code"][i] = t.kind << 4 | bits
    for x in range(NCELLS):
        rc = np.zeros(16, np.uint8)
        rc[x // SIDE] = 1
        rc[SIDE + x % SIDE] = 1
        c["rc_lo"][x], c["rc_hi"][x] = rc.view("<u8")
        c["keep"][x] = np.uint64(2**64 - 1)
    c["rc_lo"][NCELLS] = c["rc_hi"][NCELLS] = c["keep"][NCELLS] = 0  # NO_DRIVE
    for b in range(len(c["bit_bytes"])):
        c["bit_bytes"][b] = sum(((b >> t) & 1) << (8 * t) for t in range(8))
    c["perms"] = np.array(list(itertools.permutations(range(SIDE))), np.int8)
