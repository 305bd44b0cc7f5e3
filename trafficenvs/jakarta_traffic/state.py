"""Jakarta Traffic's state dicts: a record to a plain JSON-able dict and back.

The format is documented on the rules page (docs/rules/jakarta_traffic.md, "State
dict"). :class:`~trafficenvs.jakarta_traffic.game.JakartaTrafficGame`'s ``to_dict``
and ``from_dict`` delegate here. Reading refuses, naming the offending path, anything of
the wrong type (``StateDictTypeError``: a ``TypeError`` and a ``ValueError``; no
coercion, ``1.5`` is not an int, ``False`` not a list) and every position that cannot
arise in play (``StateDictError``, a ``ValueError``; K1-K9 of the rules page): tiles,
order tokens, star tokens and the order board conserved; energy and bubbles 0-3; at most
5 stars a seat; buildings never side by side; the round within ``max_rounds``; the
marker never under a moped; whose turn, the phase, the turn's start, the dice and the
end trigger as play leaves them (see :func:`_check_turn`). The kernels trust the record,
so every value they use as an index (cells, rotations, tile ids, order types, phases,
seats) is range-checked here before any compiled code runs on it."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from trafficenvs.core.statedict import (
    StateDictError,
    StateDictTypeError,
    StateReader,
    fail,
    read_dict,
    read_int,
    read_int_list,
    read_list,
)
from trafficenvs.jakarta_traffic.rules.board import refresh, stack_at
from trafficenvs.jakarta_traffic.rules.invariants import INVARIANT_MESSAGES, check
from trafficenvs.jakarta_traffic.rules.layout import (
    ACCEPT,
    ADDRESSES,
    BAPAK,
    BUILDING,
    DELIVER,
    DETOUR_PICK,
    DRIVE,
    END_STARS,
    HONK,
    IBU,
    KINDS,
    MAX_BUBBLES,
    MAX_ENERGY,
    MAX_FORCED,
    MAX_ROUNDS,
    MAX_STARS,
    NADDR,
    NCELLS,
    NSLOTS,
    NTYPES,
    PHASES,
    PICKUP,
    PLACE,
    SIDE,
    STAR_VALUES,
    STARS_PER_SLOT,
    TYPES,
)
from trafficenvs.jakarta_traffic.rules.orders import can_accept, deliverable
from trafficenvs.jakarta_traffic.rules.scoring import finish
from trafficenvs.jakarta_traffic.rules.tiles import Tile

if TYPE_CHECKING:
    from trafficenvs.jakarta_traffic.game import JakartaTrafficGame

STATE_KEYS = {
    "game", "num_players", "round", "to_move", "phase", "over", "end_triggered", "moves",
    "rng", "forced_dice", "last_dice", "turn_start", "pending", "board", "spares", "mopeds",
    "players", "stacks", "marker", "order_board",
}
OPTIONAL_KEYS = {"moves", "rng", "forced_dice", "last_dice", "over", "end_triggered",
                 "pending", "turn_start"}
PLAYER_KEYS = {"energy", "bubbles", "orders", "stars", "delivered"}
INT32_MAX = 2**31 - 1  # the record's round and move counters are int32
#: the rulebook's set-up (step 3): "buildings are not placed adjacent to each other
#: orthogonally", and no honk ever moves a building (K5: only rotated, never swapped)
_NEIGHBOURS = ((0, 1), (1, 0))


def _bad(path: str, why: str) -> StateDictError:
    """The error for a value of the right type that breaks a rule: ``state dict: <path>: <why>``."""
    return StateDictError(f"state dict: {path}: {why}")


# -- writing ------------------------------------------------------------------
def _cell(x: int) -> list[int] | None:
    """``[row, col]`` of cell ``x`` (None for -1: nowhere)."""
    return None if x < 0 else list(divmod(int(x), SIDE))


def to_dict(game: JakartaTrafficGame, rec: np.void) -> dict[str, Any]:
    """The whole game as a plain JSON-able dict (documented on the rules page)."""
    n = game.num_players
    return {
        "game": game.name,
        "num_players": n,
        "round": int(rec["round"]),
        "to_move": int(rec["cur"]),
        "phase": PHASES[rec["phase"]],
        "over": bool(rec["over"]),
        "end_triggered": bool(rec["trigger"]),
        "moves": int(rec["moves"]),
        "rng": game.rng_to_dict(rec),
        "forced_dice": [int(d) for d in rec["forced"][: rec["forced_n"]]],
        "last_dice": [int(rec["dice"][0]), int(rec["dice"][1])],
        "turn_start": _cell(rec["start"]),
        "pending": None if rec["pending"] < 0 else TYPES[rec["pending"]],
        "board": _board_to_list(game, rec),
        "spares": [game.tile_spec(rec["spare"][p]) for p in range(n)],
        "mopeds": [_cell(rec["pos"][p]) for p in range(n)],
        "players": [_player_to_dict(rec, p) for p in range(n)],
        "stacks": _stacks_to_dict(rec),
        "marker": _cell(rec["marker"]),
        "order_board": _order_board_to_dict(rec),
    }


def _board_to_list(game: JakartaTrafficGame, rec: np.void) -> list[list[str]]:
    """The board by rows: ``"<kind> <pattern> <rotation>[ <address>]"`` per cell."""
    board = []
    for r in range(SIDE):
        row = []
        for c in range(SIDE):
            x = r * SIDE + c
            tile = game.tiles.tiles[rec["cell_tile"][x]]
            s = f"{KINDS[tile.kind]} {game.tiles.patterns[tile.pattern].name}"
            s += f" {int(rec['cell_rot'][x])}"
            if tile.address >= 0:
                s += f" {ADDRESSES[tile.address]}"
            row.append(s)
        board.append(row)
    return board


def _player_to_dict(rec: np.void, p: int) -> dict[str, Any]:
    """Player ``p``'s energy, bubbles, orders held, stars (highest first), deliveries."""
    stars: list[int] = []
    for s in range(NSLOTS):
        stars += [int(STAR_VALUES[s])] * int(rec["stars"][p, s])
    delivered: list[str] = []
    for t in range(NTYPES):
        delivered += [TYPES[t]] * int(rec["delivered"][p, t])
    return {
        "energy": int(rec["energy"][p]),
        "bubbles": int(rec["bubbles"][p]),
        "orders": [TYPES[t] for t in range(NTYPES) if rec["held"][p, t]],
        "stars": sorted(stars, reverse=True),
        "delivered": delivered,
    }


def _stacks_to_dict(rec: np.void) -> dict[str, dict[str, Any]]:
    """Per order type its stack's cell (None when empty) and count."""
    return {
        TYPES[t]: {
            "at": _cell(rec["stack_cell"][t]) if rec["stack_n"][t] > 0 else None,
            "count": int(rec["stack_n"][t]),
        }
        for t in range(NTYPES)
    }


def _order_board_to_dict(rec: np.void) -> dict[str, list[Any]]:
    """The order board (K8): orders and addresses in slot order, stars left per pile."""
    return {
        "orders": [TYPES[t] for t in rec["ord_slot"]],
        "addresses": [ADDRESSES[a] for a in rec["addr_slot"]],
        "star_piles": [int(s) for s in rec["star_left"]],
    }


# -- reading ------------------------------------------------------------------
def from_dict(game: JakartaTrafficGame, state: dict[str, Any]) -> np.ndarray:
    """The 1-element record array of a state dict (:func:`to_dict`'s format;
    ``StateDictError`` on anything the rules do not allow)."""
    st = game.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
    read_int(st.raw("num_players"), "num_players")  # the header compares by ==: 2.0 != 2
    n = game.num_players
    recs = game.new_records(1)
    r = recs[0]
    game.load_rng(r, state)
    r["moves"] = st.int("moves", 0, INT32_MAX, default=0)
    r["round"] = st.int("round", 0, MAX_ROUNDS)  # (one more round must not wrap the int32)
    r["cur"] = cur = st.int("to_move", 0, n - 1)
    if not isinstance(st.raw("phase"), str):
        raise StateDictTypeError(f"state dict: phase must be one of {list(PHASES)}, "
                                 f"got {st.raw('phase')!r}")
    r["phase"] = phase = PHASES.index(st.choice("phase", PHASES))
    r["over"] = over = st.bool("over", default=False)
    r["trigger"] = st.bool("end_triggered", default=False)
    if over and (phase != HONK or cur != 0 or not r["trigger"]):
        raise _bad("over", "a finished game has phase 'honk', to_move 0 and end_triggered")
    forced = st.list("forced_dice", default=[], max_length=MAX_FORCED)
    for i, d in enumerate(forced):
        r["forced"][i] = read_int(d, f"forced_dice[{i}]", 1, 6, what="a forced die")
    r["forced_n"] = len(forced)
    dice = st.int_list("last_dice", 0, 6, length=2, default=[0, 0])
    if (dice[0] == 0) != (dice[1] == 0):
        raise _bad("last_dice", f"{dice}: [0, 0] before any detour, else two dice 1-6 "
                   "(a detour rolls both, K6)")
    r["dice"][:] = dice
    kinds = _load_board(game, r, st)
    stars, order_total = _load_players(game, r, st)
    _load_stacks(game, r, st, kinds, order_total)
    _load_order_board(game, r, st, stars)
    if bool(r["trigger"]) != bool((r["nstars"][:n] >= END_STARS).any()):
        raise _bad("end_triggered", "true exactly when a player holds 4 or more stars")
    marker = st.raw("marker")
    r["marker"] = -1 if marker is None else _at(marker, "marker")
    start = st.raw("turn_start", None)
    r["start"] = r["pos"][cur] if start is None else _at(start, "turn_start")
    if phase in (HONK, DRIVE, DETOUR_PICK) and r["start"] != r["pos"][cur]:
        raise _bad("turn_start", "before driving, turn_start is the mover's own tile (it "
                   "has not parked yet in the honk, drive and detour_pick phases)")
    pend = st.raw("pending", None)
    r["pending"] = -1 if pend is None else _index(pend, TYPES, "pending")
    refresh(r, game.cfg[0])
    _check_phase(game, r)
    _check_turn(game, r)
    if over:
        finish(r, game.cfg[0])  # winners from the final position
        r["reward"][:] = 0
    return recs


def _at(v: Any, path: str) -> int:
    """The cell of a ``[row, col]`` pair (0-4 each)."""
    row, col = read_int_list(v, path, 0, SIDE - 1, length=2)
    return row * SIDE + col


def _index(v: Any, names: tuple[str, ...], path: str) -> int:
    """The index of the name ``v`` in ``names`` (a ``StateDictTypeError`` if ``v`` is not
    a string at all)."""
    if not isinstance(v, str):
        raise StateDictTypeError(f"state dict: {path}: {v!r} is not one of {names} "
                                 "(a name, a string)")
    if v not in names:
        raise _bad(path, f"{v!r} is not one of {names}")
    return names.index(v)


def _tile(game: JakartaTrafficGame, spec: Any, path: str) -> Tile:
    """The tile of ``"<kind> <pattern>[ <address>]"`` (the tile set's own errors)."""
    if not isinstance(spec, str):
        raise StateDictTypeError(f"state dict: {path} must be a tile '<kind> <pattern>"
                                 f"[ <address>]', got {spec!r}")
    try:
        return game.tiles.parse_spec(spec)
    except ValueError as e:
        raise _bad(path, str(e)) from None


def _load_board(game: JakartaTrafficGame, r: np.void, st: StateReader) -> list[int]:
    """Board cells and spare tiles, each taken out of the tile set (K2); the cell kinds."""
    board = st.list("board", SIDE)
    pool: dict[Tile, list[int]] = {}
    for i, t in enumerate(game.tiles.tiles):
        pool.setdefault(t, []).append(i)

    def take(tile: Tile, path: str) -> int:
        if not pool.get(tile):
            raise _bad(path, f"the tile set has no more {tile.spec(game.tiles)!r}")
        return pool[tile].pop(0)

    for row, cells in enumerate(board):
        for col, spec in enumerate(read_list(cells, f"board[{row}]", SIDE)):
            path = f"board[{row}][{col}]"
            if not isinstance(spec, str):
                raise StateDictTypeError(f"state dict: {path} must be a cell '<kind> "
                                         f"<pattern> <rotation 0-3>[ <address>]', got {spec!r}")
            parts = spec.split(" ", 3)
            if len(parts) < 3 or parts[2] not in ("0", "1", "2", "3"):
                raise fail(path, "a cell '<kind> <pattern> <rotation 0-3>[ <address>]'", spec)
            x = row * SIDE + col
            r["cell_tile"][x] = take(_tile(game, " ".join(parts[:2] + parts[3:]), path), path)
            r["cell_rot"][x] = int(parts[2])
    kinds = [game.tiles.tiles[i].kind for i in r["cell_tile"]]
    if kinds.count(BUILDING) != SIDE:
        raise _bad("board", "the board holds all five buildings (they are never swapped)")
    for x in range(NCELLS):
        row, col = divmod(x, SIDE)
        for dr, dc in _NEIGHBOURS:
            rr, cc = row + dr, col + dc
            if rr < SIDE and cc < SIDE and kinds[x] == kinds[rr * SIDE + cc] == BUILDING:
                raise _bad(f"board[{rr}][{cc}]", f"buildings side by side (with board[{row}]"
                           f"[{col}]): the set-up never places them so and no honk moves one "
                           "(rulebook set-up step 3; K5)")
    r["spare"][:] = 255
    for p, spec in enumerate(st.list("spares", game.num_players)):
        tile = _tile(game, spec, f"spares[{p}]")
        if tile.kind == BUILDING:
            raise _bad(f"spares[{p}]", "a building is never a spare tile")
        r["spare"][p] = take(tile, f"spares[{p}]")
    for x in range(NCELLS):
        t = game.tiles.tiles[r["cell_tile"][x]]
        if t.kind == BUILDING:
            r["addr_cell"][t.address] = x
    return kinds


def _load_players(game: JakartaTrafficGame, r: np.void,
                  st: StateReader) -> tuple[list[list[int]], Counter]:
    """Mopeds, energy, bubbles, orders held and delivered, stars; the star values held
    per player and the order tokens counted so far per type."""
    n = game.num_players
    r["pos"][:] = -1
    for p, m in enumerate(st.list("mopeds", n)):
        r["pos"][p] = _at(m, f"mopeds[{p}]")
    stars, order_total = [], Counter()
    for p, pl in enumerate(st.list("players", n)):
        path = f"players[{p}]"
        pl = read_dict(pl, path, PLAYER_KEYS)
        r["energy"][p] = read_int(pl["energy"], f"{path}.energy", 0, MAX_ENERGY)
        r["bubbles"][p] = read_int(pl["bubbles"], f"{path}.bubbles", 0, MAX_BUBBLES)
        orders = [_index(o, TYPES, f"{path}.orders[{i}]")
                  for i, o in enumerate(read_list(pl["orders"], f"{path}.orders"))]
        if len(orders) > 2 or len(set(orders)) != len(orders):
            raise _bad(f"{path}.orders", "at most two orders, not two of one type (K7)")
        if IBU in orders and BAPAK in orders:
            raise _bad(f"{path}.orders", "at most one passenger at a time (K7)")
        for t in orders:
            r["held"][p, t] = 1
            order_total[t] += 1
        r["nheld"][p] = len(orders)
        delivered = read_list(pl["delivered"], f"{path}.delivered",
                              max_length=NTYPES * (n + 1))
        for i, o in enumerate(delivered):
            t = _index(o, TYPES, f"{path}.delivered[{i}]")
            r["delivered"][p, t] += 1
            order_total[t] += 1
        r["passengers"][p] = int(r["delivered"][p, IBU]) + int(r["delivered"][p, BAPAK])
        mine = read_int_list(pl["stars"], f"{path}.stars")
        if len(mine) > MAX_STARS:
            raise _bad(f"{path}.stars", f"{len(mine)} stars: a seat holds at most {MAX_STARS} "
                       "(3 before the turn that triggers the end, which delivers at most 2; "
                       "K7, K9)")
        for i, v in enumerate(mine):
            if v not in STAR_VALUES:
                raise _bad(f"{path}.stars[{i}]", f"no star is worth {v!r}")
        r["nstars"][p] = len(mine)
        r["points"][p] = sum(mine)
        stars.append(mine)
    return stars, order_total


def _load_stacks(game: JakartaTrafficGame, r: np.void, st: StateReader, kinds: list[int],
                 order_total: Counter) -> None:
    """Order stacks; players + 1 tokens per type over stacks, phones, deliveries (K4, K7)."""
    n = game.num_players
    stacks = st.dict("stacks", TYPES)
    r["stack_cell"][:] = -1
    for t, name in enumerate(TYPES):
        path = f"stacks.{name}"
        stack = read_dict(stacks[name], path, ("at", "count"))
        r["stack_n"][t] = cnt = read_int(stack["count"], f"{path}.count", 0, n + 1)
        if cnt == 0:
            if stack["at"] is not None:
                raise fail(f"{path}.at", "None: an empty stack lies nowhere", stack["at"])
            continue
        x = _at(stack["at"], f"{path}.at")
        if kinds[x] != PICKUP:
            raise _bad(f"{path}.at", "orders lie only on pick-up tiles")
        if x in r["stack_cell"]:
            raise _bad(f"{path}.at", "two stacks on one tile")
        r["stack_cell"][t] = x
        order_total[t] += cnt
    for t, name in enumerate(TYPES):
        if order_total[t] != n + 1:
            raise _bad(f"stacks.{name}", f"{name} orders are not conserved: {order_total[t]} "
                       f"in stacks, phones and delivered, {n + 1} in the game")


def _load_order_board(game: JakartaTrafficGame, r: np.void, st: StateReader,
                      stars: list[list[int]]) -> None:
    """The order board (K8) and the star tokens: equal stars are interchangeable, so each
    pile's gap is filled in slot order."""
    ob = st.dict("order_board", ("orders", "addresses", "star_piles"))
    ords = [_index(o, TYPES, f"order_board.orders[{i}]")
            for i, o in enumerate(read_list(ob["orders"], "order_board.orders"))]
    addrs = [_index(a, ADDRESSES, f"order_board.addresses[{i}]")
             for i, a in enumerate(read_list(ob["addresses"], "order_board.addresses"))]
    if sorted(ords) != list(range(NTYPES)) or sorted(addrs) != list(range(NADDR)):
        raise _bad("order_board", "each order type and each address exactly once")
    r["ord_slot"][:] = ords
    r["addr_slot"][:] = addrs
    r["star_left"][:] = read_int_list(ob["star_piles"], "order_board.star_piles", 0,
                                      STARS_PER_SLOT, length=NSLOTS)
    for v in dict.fromkeys(int(v) for v in STAR_VALUES):  # 7, 5, 4, 3
        slots = [s for s in range(NSLOTS) if STAR_VALUES[s] == v]
        out = sum(mine.count(v) for mine in stars)
        left = sum(int(r["star_left"][s]) for s in slots)
        if out + left != STARS_PER_SLOT * len(slots):
            raise _bad("order_board.star_piles", f"{v}-point stars are not conserved: "
                       f"{out} taken, {left} left")
        gaps = [STARS_PER_SLOT - int(r["star_left"][s]) for s in slots]
        k = 0
        for p, mine in enumerate(stars):
            for _ in range(mine.count(v)):
                while gaps[k] == 0:
                    k += 1
                gaps[k] -= 1
                r["stars"][p, slots[k]] += 1


def _check_phase(game: JakartaTrafficGame, r: np.void) -> None:
    """A decision point must be one the rules can reach."""
    c = game.cfg[0]
    p = int(r["cur"])
    x = int(r["pos"][p])
    phase = int(r["phase"])
    t = int(r["pending"])
    if phase in (ACCEPT, PLACE) and t < 0:
        raise _bad("pending", f"phase {PHASES[phase]!r} needs the pending order type")
    if phase not in (ACCEPT, PLACE) and t >= 0:
        raise _bad("pending", "only set while accepting or placing a stack")
    if phase == ACCEPT:
        if stack_at(r, x) != t or not can_accept(r, p, t):
            raise _bad("phase", "accept: the mover must stand on that stack and may accept it")
    elif phase == PLACE:
        if stack_at(r, x) != t or not r["held"][p, t]:
            raise _bad("phase", "place_stack: the mover stands on the stack of an order held")
    elif phase == DELIVER:
        if x == r["start"] or r["energy"][p] < 1 or deliverable(r, c, p, x) == 0:
            raise _bad("phase", "deliver: the mover must be able to deliver on this tile")
    elif phase == DETOUR_PICK and (r["dice"][0], r["dice"][1]) != (6, 6):
        raise _bad("phase", "detour_pick follows a double 6 (last_dice [6, 6])")


def _check_turn(game: JakartaTrafficGame, r: np.void) -> None:
    """The round, the end trigger, the marker and the phase as play leaves them (each
    refusal is a position no sequence of moves reaches)."""
    n = game.num_players
    cap = game.max_rounds
    cur, phase, rnd = int(r["cur"]), int(r["phase"]), int(r["round"])
    over = bool(r["over"])
    if cap and rnd > cap:
        raise _bad("round", f"{rnd} rounds complete: the game is cut off once max_rounds={cap} "
                   "rounds are (K9's cap)")
    if cap and rnd == cap and not over and (cur != 0 or phase != HONK):
        raise _bad("round", f"{rnd} rounds complete is the max_rounds={cap} cut: the position "
                   "the last round left (to_move 0, phase 'honk'), not a turn of another round")
    if over and rnd < 1:
        raise _bad("round", "a finished game has completed its last round (round >= 1, K9)")
    if r["trigger"] and not over:
        first = min(p for p in range(n) if r["nstars"][p] >= END_STARS)
        if first >= cur:
            raise _bad("to_move", f"seat {first} holds {int(r['nstars'][first])} stars, so it "
                       "triggered the end with its turn in this round, and the round ends "
                       f"after the last seat: the seat to move comes after it, not {cur} (K9)")
    marker = int(r["marker"])
    stacks = {int(r["stack_cell"][t]) for t in range(NTYPES) if r["stack_n"][t] > 0}
    mopeds = [int(r["pos"][p]) for p in range(n)]
    if marker >= 0 and marker in mopeds:
        raise _bad("marker", f"the marker lies under seat {mopeds.index(marker)}'s moped: a "
                   "honk needs a tile without mopeds (K5) and a moped parking on the marker "
                   "takes it off (K7)")
    if phase == DRIVE and (marker < 0 or marker in stacks):
        raise _bad("marker", "the 'drive' phase follows a honk, which put the marker on the "
                   "tile it changed, a tile with no order stack or moped (K5)")
    if phase == PLACE:
        kinds = [game.tiles.tiles[i].kind for i in r["cell_tile"]]
        if not any(kinds[x] == PICKUP and x not in stacks and x not in mopeds
                   for x in range(NCELLS)):
            raise _bad("phase", "place_stack: no vacant pick-up tile (no stack, no moped) for "
                       "the rest of the stack, so the mover would have no legal action")


def check_invariants(game: JakartaTrafficGame, rec: np.void) -> None:
    """Tiles, tokens, stars and limits are where the rules allow (the compiled check of
    ``rules/invariants.py``); the conformance tests run it after every step."""
    code = int(check(rec, game.cfg[0]))
    assert code == 0, f"jakarta_traffic invariant broken: {INVARIANT_MESSAGES[code]}"
