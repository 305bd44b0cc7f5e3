"""Jakarta Traffic as a :class:`~trafficenvs.core.game.Game`: config, names, state dicts."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from trafficenvs.core.game import Game
from trafficenvs.core.statedict import (
    StateDictError,
    StateReader,
    fail,
    read_dict,
    read_int,
    read_int_list,
    read_list,
)
from trafficenvs.jakarta_traffic import kernels as K
from trafficenvs.jakarta_traffic.layout import action_layout, obs_layout
from trafficenvs.jakarta_traffic.spec import SPEC
from trafficenvs.jakarta_traffic.tiles import Tile, TileSet, TileSpec, check_tiles_fit, fill_cfg
from trafficenvs.jakarta_traffic.tiles import load_tiles as _load_tiles

STATE_KEYS = {
    "game", "num_players", "round", "to_move", "phase", "over", "end_triggered", "moves",
    "rng", "forced_dice", "last_dice", "turn_start", "pending", "board", "spares", "mopeds",
    "players", "stacks", "marker", "order_board",
}
OPTIONAL_KEYS = {"moves", "rng", "forced_dice", "last_dice", "over", "end_triggered",
                 "pending", "turn_start"}
PLAYER_KEYS = {"energy", "bubbles", "orders", "stars", "delivered"}
EDGE_NAMES = ("north", "east", "south", "west")
TURN_NAMES = ("a quarter turn clockwise", "a half turn", "a quarter turn anticlockwise")


def _bad(path: str, why: str) -> StateDictError:
    """The error for a value of the right type that breaks a rule: ``state dict: <path>: <why>``."""
    return StateDictError(f"state dict: {path}: {why}")


def cell_name(x: int) -> str:
    """``"r2c4"``: row and column counted from 1, as the detour dice count them."""
    r, c = divmod(int(x), K.SIDE)
    return f"r{r + 1}c{c + 1}"


class JakartaTrafficGame(Game):
    """Jakarta Traffic for 2-4 players (K1) on a 5x5 board of a given tile set (K2).

    Options: ``tiles`` (None for the shipped default, a JSON path or a dict, see
    :mod:`~trafficenvs.jakarta_traffic.tiles`) and ``shaping`` (reward star points as
    they are taken and speech-bubble bonus as it grows, on top of the zero-sum
    result; off by default, C2) and ``max_rounds`` (K9's cap: the game is truncated
    once that many rounds are complete; 0, the default, for none).
    """

    spec = SPEC
    record_dtype = K.RECORD_DTYPE
    min_players = 2
    max_players = K.MAX_PLAYERS
    #: truncation: decisions per player (a turn is 1-5 decisions; random play ends in ~600)
    default_max_cycles = 450

    def __init__(self, num_players: int = 4, tiles: TileSpec = None, shaping: bool = False,
                 max_rounds: int = 0):
        self.num_players = self.check_num_players(num_players)
        #: the ``tiles`` option as given (to make more envs of this configuration)
        self.tiles_spec = tiles
        self.tiles: TileSet = _load_tiles(tiles)
        check_tiles_fit(self.tiles, self.num_players)
        self.shaping = bool(shaping)
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer)) or (
            max_rounds < 0
        ):
            raise ValueError(f"max_rounds must be an int >= 0 (0: no cap), got {max_rounds!r}")
        self.max_rounds = int(max_rounds)
        self.obs_layout = obs_layout(self.num_players)
        self.action_layout = action_layout()
        self.num_actions = self.action_layout.size
        self.obs_dim = self.obs_layout.size
        cfg = np.zeros(1, K.CFG_DTYPE)
        c = cfg[0]
        c["num_players"] = self.num_players
        c["shaping"] = self.shaping
        c["max_rounds"] = self.max_rounds
        for name, offset in self.obs_layout.offsets().items():
            c[name] = offset
        fill_cfg(c, self.tiles)
        self.cfg = cfg

    @property
    def obs_high(self) -> float:
        return float(K.OBS_ROUND_CAP)

    # -- names -----------------------------------------------------------------
    def action_name(self, rec: np.void, action: int) -> str:
        a = int(action)
        if not 0 <= a < K.NUM_ACTIONS:
            raise ValueError(f"action {a} out of range 0..{K.NUM_ACTIONS - 1}")
        if a < K.A_SWAP:
            x, k = divmod(a - K.A_ROTATE, 3)
            return f"honk: rotate {cell_name(x)} {TURN_NAMES[k]}"
        if a < K.A_DRIVE:
            x, r = divmod(a - K.A_SWAP, 4)
            return f"honk: swap your spare tile into {cell_name(x)}, rotation {r}"
        if a < K.A_DETOUR:
            e = a - K.A_DRIVE
            p = int(rec["cur"])
            dest = int(K.trace(rec, self.cfg[0], rec["pos"][p], e))
            to = f" to {cell_name(dest)}" if dest >= 0 else ""
            return f"drive out {EDGE_NAMES[e]}{to}"
        if a == K.A_DETOUR:
            return "detour (roll the dice)"
        if a < K.A_ACCEPT:
            x = a - K.A_CELL
            if rec["phase"] == K.PLACE:
                return f"put the rest of the stack on {cell_name(x)}"
            return f"park on {cell_name(x)} (double 6)"
        if a == K.A_ACCEPT:
            t = int(rec["pending"])
            return f"accept the {K.TYPES[t]} order" if t >= 0 else "accept the order"
        if a == K.A_DECLINE:
            return "decline" if rec["phase"] != K.DELIVER else "do not deliver"
        t = a - K.A_DELIVER
        return f"deliver ({K.TYPES[t]} goes to the bottom)"

    def scores(self, rec: np.void) -> np.ndarray:
        """K9 final scores as they stand (stars + energy + bubble bonus)."""
        return np.array([int(K.final_score(rec, p)) for p in range(self.num_players)], float)

    # -- state dicts -----------------------------------------------------------
    def _cell(self, x: int) -> list[int] | None:
        return None if x < 0 else list(divmod(int(x), K.SIDE))

    def tile_spec(self, tile_id: int) -> str:
        return self.tiles.tiles[tile_id].spec(self.tiles)

    def to_dict(self, rec: np.void) -> dict[str, Any]:
        n = self.num_players
        board = []
        for r in range(K.SIDE):
            row = []
            for c in range(K.SIDE):
                x = r * K.SIDE + c
                tile = self.tiles.tiles[rec["cell_tile"][x]]
                s = f"{K.KINDS[tile.kind]} {self.tiles.patterns[tile.pattern].name}"
                s += f" {int(rec['cell_rot'][x])}"
                if tile.address >= 0:
                    s += f" {K.ADDRESSES[tile.address]}"
                row.append(s)
            board.append(row)
        players = []
        for p in range(n):
            stars: list[int] = []
            for s in range(K.NSLOTS):
                stars += [int(K.STAR_VALUES[s])] * int(rec["stars"][p, s])
            delivered: list[str] = []
            for t in range(K.NTYPES):
                delivered += [K.TYPES[t]] * int(rec["delivered"][p, t])
            players.append({
                "energy": int(rec["energy"][p]),
                "bubbles": int(rec["bubbles"][p]),
                "orders": [K.TYPES[t] for t in range(K.NTYPES) if rec["held"][p, t]],
                "stars": sorted(stars, reverse=True),
                "delivered": delivered,
            })
        return {
            "game": self.name,
            "num_players": n,
            "round": int(rec["round"]),
            "to_move": int(rec["cur"]),
            "phase": K.PHASES[rec["phase"]],
            "over": bool(rec["over"]),
            "end_triggered": bool(rec["trigger"]),
            "moves": int(rec["moves"]),
            "rng": self.rng_to_dict(rec),
            "forced_dice": [int(d) for d in rec["forced"][: rec["forced_n"]]],
            "last_dice": [int(rec["dice"][0]), int(rec["dice"][1])],
            "turn_start": self._cell(rec["start"]),
            "pending": None if rec["pending"] < 0 else K.TYPES[rec["pending"]],
            "board": board,
            "spares": [self.tile_spec(rec["spare"][p]) for p in range(n)],
            "mopeds": [self._cell(rec["pos"][p]) for p in range(n)],
            "players": players,
            "stacks": {
                K.TYPES[t]: {
                    "at": self._cell(rec["stack_cell"][t]) if rec["stack_n"][t] > 0 else None,
                    "count": int(rec["stack_n"][t]),
                }
                for t in range(K.NTYPES)
            },
            "marker": self._cell(rec["marker"]),
            "order_board": {
                "orders": [K.TYPES[t] for t in rec["ord_slot"]],
                "addresses": [K.ADDRESSES[a] for a in rec["addr_slot"]],
                "star_piles": [int(s) for s in rec["star_left"]],
            },
        }

    @staticmethod
    def _at(v: Any, path: str) -> int:
        """The cell of a ``[row, col]`` pair (0-4 each)."""
        row, col = read_int_list(v, path, 0, K.SIDE - 1, length=2)
        return row * K.SIDE + col

    @staticmethod
    def _index(v: Any, names: tuple[str, ...], path: str) -> int:
        """The index of the name ``v`` in ``names``."""
        if not isinstance(v, str) or v not in names:
            raise _bad(path, f"{v!r} is not one of {names}")
        return names.index(v)

    def _tile(self, spec: Any, path: str) -> Tile:
        """The tile of ``"<kind> <pattern>[ <address>]"`` (the tile set's own errors)."""
        try:
            return self.tiles.parse_spec(spec)
        except ValueError as e:
            raise _bad(path, str(e)) from None

    def from_dict(self, state: dict[str, Any]) -> np.ndarray:
        st = self.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
        n = self.num_players
        recs = self.new_records(1)
        r = recs[0]
        self.load_rng(r, state)
        r["moves"] = st.int("moves", 0, 2**31 - 1, default=0)
        r["round"] = st.int("round", 0, 2**31 - 1)
        r["cur"] = cur = st.int("to_move", 0, n - 1)
        r["phase"] = phase = K.PHASES.index(st.choice("phase", K.PHASES))
        r["over"] = over = st.bool("over", default=False)
        r["trigger"] = st.bool("end_triggered", default=False)
        if over and (phase != K.HONK or cur != 0 or not r["trigger"]):
            raise _bad("over", "a finished game has phase 'honk', to_move 0 and end_triggered")
        forced = st.list("forced_dice", default=[], max_length=K.MAX_FORCED)
        for i, d in enumerate(forced):
            r["forced"][i] = read_int(d, f"forced_dice[{i}]", 1, 6, what="a forced die")
        r["forced_n"] = len(forced)
        r["dice"][:] = st.int_list("last_dice", 0, 6, length=2, default=[0, 0])
        kinds = self._load_board(r, st)
        stars, order_total = self._load_players(r, st)
        self._load_stacks(r, st, kinds, order_total)
        self._load_order_board(r, st, stars)
        if bool(r["trigger"]) != bool((r["nstars"][:n] >= K.END_STARS).any()):
            raise _bad("end_triggered", "true exactly when a player holds 4 or more stars")
        marker = st.raw("marker")
        r["marker"] = -1 if marker is None else self._at(marker, "marker")
        start = st.raw("turn_start", None)
        r["start"] = r["pos"][cur] if start is None else self._at(start, "turn_start")
        if phase == K.HONK and r["start"] != r["pos"][cur]:
            raise _bad("turn_start", "before driving, turn_start is the mover's own tile")
        pend = st.raw("pending", None)
        r["pending"] = -1 if pend is None else self._index(pend, K.TYPES, "pending")
        K.refresh(r, self.cfg[0])
        self._check_phase(r)
        if over:
            K.finish(r, self.cfg[0])  # winners from the final position
            r["reward"][:] = 0
        return recs

    def _load_board(self, r: np.void, st: StateReader) -> list[int]:
        """Board cells and spare tiles, each taken out of the tile set (K2); the cell kinds."""
        board = st.list("board", K.SIDE)
        pool: dict[Tile, list[int]] = {}
        for i, t in enumerate(self.tiles.tiles):
            pool.setdefault(t, []).append(i)

        def take(tile: Tile, path: str) -> int:
            if not pool.get(tile):
                raise _bad(path, f"the tile set has no more {tile.spec(self.tiles)!r}")
            return pool[tile].pop(0)

        for row, cells in enumerate(board):
            for col, spec in enumerate(read_list(cells, f"board[{row}]", K.SIDE)):
                path = f"board[{row}][{col}]"
                parts = spec.split(" ", 3) if isinstance(spec, str) else []
                if len(parts) < 3 or parts[2] not in ("0", "1", "2", "3"):
                    raise fail(path, "a cell '<kind> <pattern> <rotation 0-3>[ <address>]'", spec)
                x = row * K.SIDE + col
                r["cell_tile"][x] = take(self._tile(" ".join(parts[:2] + parts[3:]), path), path)
                r["cell_rot"][x] = int(parts[2])
        kinds = [self.tiles.tiles[i].kind for i in r["cell_tile"]]
        if kinds.count(K.BUILDING) != K.SIDE:
            raise _bad("board", "the board holds all five buildings (they are never swapped)")
        r["spare"][:] = 255
        for p, spec in enumerate(st.list("spares", self.num_players)):
            tile = self._tile(spec, f"spares[{p}]")
            if tile.kind == K.BUILDING:
                raise _bad(f"spares[{p}]", "a building is never a spare tile")
            r["spare"][p] = take(tile, f"spares[{p}]")
        for x in range(K.NCELLS):
            t = self.tiles.tiles[r["cell_tile"][x]]
            if t.kind == K.BUILDING:
                r["addr_cell"][t.address] = x
        return kinds

    def _load_players(self, r: np.void, st: StateReader) -> tuple[list[list[int]], Counter]:
        """Mopeds, energy, bubbles, orders held and delivered, stars; the star values held
        per player and the order tokens counted so far per type."""
        n = self.num_players
        r["pos"][:] = -1
        for p, m in enumerate(st.list("mopeds", n)):
            r["pos"][p] = self._at(m, f"mopeds[{p}]")
        stars, order_total = [], Counter()
        for p, pl in enumerate(st.list("players", n)):
            path = f"players[{p}]"
            pl = read_dict(pl, path, PLAYER_KEYS)
            r["energy"][p] = read_int(pl["energy"], f"{path}.energy", 0, K.MAX_ENERGY)
            r["bubbles"][p] = read_int(pl["bubbles"], f"{path}.bubbles", 0, K.MAX_BUBBLES)
            orders = [self._index(o, K.TYPES, f"{path}.orders[{i}]")
                      for i, o in enumerate(read_list(pl["orders"], f"{path}.orders"))]
            if len(orders) > 2 or len(set(orders)) != len(orders):
                raise _bad(f"{path}.orders", "at most two orders, not two of one type (K7)")
            if K.IBU in orders and K.BAPAK in orders:
                raise _bad(f"{path}.orders", "at most one passenger at a time (K7)")
            for t in orders:
                r["held"][p, t] = 1
                order_total[t] += 1
            r["nheld"][p] = len(orders)
            for i, o in enumerate(read_list(pl["delivered"], f"{path}.delivered")):
                t = self._index(o, K.TYPES, f"{path}.delivered[{i}]")
                r["delivered"][p, t] += 1
                order_total[t] += 1
            r["passengers"][p] = int(r["delivered"][p, K.IBU]) + int(r["delivered"][p, K.BAPAK])
            mine = read_int_list(pl["stars"], f"{path}.stars")
            for i, v in enumerate(mine):
                if v not in K.STAR_VALUES:
                    raise _bad(f"{path}.stars[{i}]", f"no star is worth {v!r}")
            r["nstars"][p] = len(mine)
            r["points"][p] = sum(mine)
            stars.append(mine)
        return stars, order_total

    def _load_stacks(self, r: np.void, st: StateReader, kinds: list[int],
                     order_total: Counter) -> None:
        """Order stacks; players + 1 tokens per type over stacks, phones, deliveries (K4, K7)."""
        n = self.num_players
        stacks = st.dict("stacks", K.TYPES)
        r["stack_cell"][:] = -1
        for t, name in enumerate(K.TYPES):
            path = f"stacks.{name}"
            stack = read_dict(stacks[name], path, ("at", "count"))
            r["stack_n"][t] = cnt = read_int(stack["count"], f"{path}.count", 0, n + 1)
            if cnt == 0:
                if stack["at"] is not None:
                    raise fail(f"{path}.at", "None: an empty stack lies nowhere", stack["at"])
                continue
            x = self._at(stack["at"], f"{path}.at")
            if kinds[x] != K.PICKUP:
                raise _bad(f"{path}.at", "orders lie only on pick-up tiles")
            if x in r["stack_cell"]:
                raise _bad(f"{path}.at", "two stacks on one tile")
            r["stack_cell"][t] = x
            order_total[t] += cnt
        for t, name in enumerate(K.TYPES):
            if order_total[t] != n + 1:
                raise _bad(f"stacks.{name}", f"{name} orders are not conserved: {order_total[t]} "
                           f"in stacks, phones and delivered, {n + 1} in the game")

    def _load_order_board(self, r: np.void, st: StateReader, stars: list[list[int]]) -> None:
        """The order board (K8) and the star tokens: equal stars are interchangeable, so each
        pile's gap is filled in slot order."""
        ob = st.dict("order_board", ("orders", "addresses", "star_piles"))
        ords = [self._index(o, K.TYPES, f"order_board.orders[{i}]")
                for i, o in enumerate(read_list(ob["orders"], "order_board.orders"))]
        addrs = [self._index(a, K.ADDRESSES, f"order_board.addresses[{i}]")
                 for i, a in enumerate(read_list(ob["addresses"], "order_board.addresses"))]
        if sorted(ords) != list(range(K.NTYPES)) or sorted(addrs) != list(range(K.NADDR)):
            raise _bad("order_board", "each order type and each address exactly once")
        r["ord_slot"][:] = ords
        r["addr_slot"][:] = addrs
        r["star_left"][:] = read_int_list(ob["star_piles"], "order_board.star_piles", 0,
                                          K.STARS_PER_SLOT, length=K.NSLOTS)
        for v in dict.fromkeys(int(v) for v in K.STAR_VALUES):  # 7, 5, 4, 3
            slots = [s for s in range(K.NSLOTS) if K.STAR_VALUES[s] == v]
            out = sum(mine.count(v) for mine in stars)
            left = sum(int(r["star_left"][s]) for s in slots)
            if out + left != K.STARS_PER_SLOT * len(slots):
                raise _bad("order_board.star_piles", f"{v}-point stars are not conserved: "
                           f"{out} taken, {left} left")
            gaps = [K.STARS_PER_SLOT - int(r["star_left"][s]) for s in slots]
            k = 0
            for p, mine in enumerate(stars):
                for _ in range(mine.count(v)):
                    while gaps[k] == 0:
                        k += 1
                    gaps[k] -= 1
                    r["stars"][p, slots[k]] += 1

    def _check_phase(self, r: np.void) -> None:
        """A decision point must be one the rules can reach."""
        c = self.cfg[0]
        p = int(r["cur"])
        x = int(r["pos"][p])
        phase = int(r["phase"])
        t = int(r["pending"])
        if phase in (K.ACCEPT, K.PLACE) and t < 0:
            raise _bad("pending", f"phase {K.PHASES[phase]!r} needs the pending order type")
        if phase not in (K.ACCEPT, K.PLACE) and t >= 0:
            raise _bad("pending", "only set while accepting or placing a stack")
        if phase == K.ACCEPT:
            if K.stack_at(r, x) != t or not K.can_accept(r, p, t):
                raise _bad("phase", "accept: the mover must stand on that stack and may accept it")
        elif phase == K.PLACE:
            if K.stack_at(r, x) != t or not r["held"][p, t]:
                raise _bad("phase", "place_stack: the mover stands on the stack of an order held")
        elif phase == K.DELIVER:
            if x == r["start"] or r["energy"][p] < 1 or K.deliverable(r, c, p, x) == 0:
                raise _bad("phase", "deliver: the mover must be able to deliver on this tile")
        elif phase == K.DETOUR_PICK and (r["dice"][0], r["dice"][1]) != (6, 6):
            raise _bad("phase", "detour_pick follows a double 6 (last_dice [6, 6])")

    # -- checks ----------------------------------------------------------------
    def check_invariants(self, rec: np.void) -> None:
        """Tiles, tokens, stars and limits are where the rules allow (a compiled check)."""
        code = int(K.check(rec, self.cfg[0]))
        assert code == 0, f"jakarta_traffic invariant broken: {K.INVARIANT_MESSAGES[code]}"

    # -- renders ---------------------------------------------------------------
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        from trafficenvs.jakarta_traffic.render import render_text

        return render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        from trafficenvs.jakarta_traffic.render import render_image

        return render_image(self, rec, seat)
