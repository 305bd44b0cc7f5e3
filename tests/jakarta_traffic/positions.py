"""Drawing Jakarta Traffic positions in tests: a board in a short code, the rest filled in.

A board is five lines of five cells. A cell is ``<kind><pattern><rotation>[address]``:
kind ``P`` pick-up, ``C`` charging, ``B`` building; pattern ``h`` hub, ``b`` bend,
``s`` bridge ("straight across"); rotation 0-3 quarter turns clockwise; a building
ends with its address ``BC Sp Re Wo Ma``. At rotation 0 a bend links N and E to its
parking spot and curves S-W; a bridge links N and S and crosses E-W.

Tests use :data:`TEST_TILES`, the default tiles with more pick-up and charging tiles of
every pattern, so boards can be drawn freely (the buildings are the default ones).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trafficenvs.jakarta_traffic.rules.layout import (
    A_CELL,
    A_DELIVER,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    ADDRESSES,
    STAR_VALUES,
    TYPES,
)
from trafficenvs.registry import make_game, make_vec

PATTERN = {"h": "hub", "b": "bend", "s": "bridge"}
KIND = {"P": "pickup", "C": "charging", "B": "building"}
ADDR = {"BC": "Business Center", "Sp": "Spa", "Re": "Residency", "Wo": "Workshop",
        "Ma": "Mall"}

TEST_TILES = {
    "patterns": {
        "hub": {"N": "C", "E": "C", "S": "C", "W": "C"},
        "bend": {"N": "C", "E": "C", "S": "W", "W": "S"},
        "bridge": {"N": "C", "S": "C", "E": "W", "W": "E"},
    },
    "tiles": [
        {"kind": "pickup", "pattern": "hub", "count": 16},
        {"kind": "pickup", "pattern": "bend", "count": 14},
        {"kind": "pickup", "pattern": "bridge", "count": 14},
        {"kind": "charging", "pattern": "hub", "count": 5},
        {"kind": "charging", "pattern": "bend", "count": 4},
        {"kind": "charging", "pattern": "bridge", "count": 4},
        {"kind": "building", "pattern": "hub", "address": "Business Center"},
        {"kind": "building", "pattern": "bend", "address": "Spa"},
        {"kind": "building", "pattern": "bend", "address": "Residency"},
        {"kind": "building", "pattern": "bridge", "address": "Workshop"},
        {"kind": "building", "pattern": "bridge", "address": "Mall"},
    ],
}

#: a plain board: hubs everywhere (every path ends on the next tile)
PLAIN = """
Ch0 Ph0 Ph0 Bh0BC Ph0
Ph0 Ph0 Ph0 Ph0 Ch0
Bb0Sp Ph0 Ph0 Ph0 Bs0Wo
Ph0 Bb0Re Ph0 Ch0 Ph0
Ch0 Ph0 Ph0 Bs0Ma Ch0
"""


def game(n: int = 2):
    return make_game("jakarta_traffic", num_players=n, tiles=TEST_TILES)


def cell_spec(code: str) -> str:
    kind, pat, rot, addr = code[0], code[1], code[2], code[3:]
    s = f"{KIND[kind]} {PATTERN[pat]} {rot}"
    return f"{s} {ADDR[addr]}" if addr else s


def board(text: str) -> list[list[str]]:
    rows = [line.split() for line in text.strip().splitlines()]
    assert len(rows) == 5 and all(len(r) == 5 for r in rows), rows
    return [[cell_spec(c) for c in r] for r in rows]


def cell(x: tuple[int, int]) -> int:
    return x[0] * 5 + x[1]


def position(g, text: str = PLAIN, mopeds: list[tuple[int, int]] | None = None,
             players: list[dict] | None = None, stacks: dict | None = None,
             **fields: Any) -> dict[str, Any]:
    """A state dict. ``players`` entries override the defaults (energy 3, nothing held);
    ``stacks`` maps a type to ``((row, col), count)``; the other order tokens are stacked
    on free pick-up tiles from the bottom-right corner up (away from the mopeds)."""
    n = g.num_players
    b = board(text)
    mopeds = mopeds or [(0, 0), (4, 0), (4, 4), (1, 4)][:n]
    pl = []
    for p in range(n):
        d = {"energy": 3, "bubbles": 0, "orders": [], "stars": [], "delivered": []}
        if players and p < len(players):
            d.update(players[p])
        pl.append(d)
    stacks = dict(stacks or {})
    used = {tuple(m) for m in mopeds} | {tuple(v[0]) for v in stacks.values() if v[0]}
    out_stacks = {}
    free = [(r, c) for r in range(4, -1, -1) for c in range(4, -1, -1)
            if b[r][c].startswith("pickup") and (r, c) not in used]
    for name in TYPES:
        if name in stacks:
            at, count = stacks[name]
        else:
            count = n + 1 - sum(name in d["orders"] for d in pl) - sum(
                d["delivered"].count(name) for d in pl)
            at = free.pop(0) if count > 0 else None
        out_stacks[name] = {"at": list(at) if at else None, "count": count}
    state: dict[str, Any] = {
        "game": "jakarta_traffic", "num_players": n, "round": 0, "to_move": 0,
        "phase": "honk", "board": b, "spares": ["pickup bridge"] * n,
        "mopeds": [list(m) for m in mopeds], "players": pl, "stacks": out_stacks,
        "marker": None,
        "order_board": {"orders": list(TYPES), "addresses": list(ADDRESSES),
                        "star_piles": [5, 5, 5, 5, 5]},
    }
    state.update(fields)
    return state


def vec_at(g, state: dict):
    """A one-game vectorised env of ``g``'s options set to ``state``."""
    venv = make_vec("jakarta_traffic", num_envs=1, num_players=g.num_players, tiles=g.tiles_spec)
    venv.reset(seed=0)
    venv.load_state_dict(0, state)
    return venv


def legal(venv) -> list[int]:
    return np.flatnonzero(venv._buf.action_mask[0]).tolist()  # noqa: SLF001


def play(venv, action: int):
    assert action in legal(venv), (action, venv.game.action_name(venv.records[0], action))
    return venv.step(np.array([action]))


def drive(edge: str) -> int:
    return A_DRIVE + "NESW".index(edge)


def rotate(x: tuple[int, int], quarter_turns: int) -> int:
    return A_ROTATE + 3 * cell(x) + quarter_turns - 1


def swap(x: tuple[int, int], rotation: int) -> int:
    return A_SWAP + 4 * cell(x) + rotation


def pick(x: tuple[int, int]) -> int:
    return A_CELL + cell(x)


def deliver(lowest: str) -> int:
    return A_DELIVER + TYPES.index(lowest)


def star_piles(*star_lists: list[int]) -> list[int]:
    """Pile sizes left when the players hold these stars (equal stars: upper pile first)."""
    piles = [5, 5, 5, 5, 5]
    for stars in star_lists:
        for v in stars:
            slot = [i for i in range(5) if STAR_VALUES[i] == v and piles[i] > 0][0]
            piles[slot] -= 1
    return piles
