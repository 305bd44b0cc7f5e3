"""Jakarta Traffic as a :class:`~trafficenvs.core.game.Game`: config, names, state dicts."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from trafficenvs.core.game import Game
from trafficenvs.jakarta_traffic import kernels as K
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
        self.num_actions = K.NUM_ACTIONS
        self.obs_dim = K.obs_dim(self.num_players)
        cfg = np.zeros(1, K.CFG_DTYPE)
        c = cfg[0]
        c["num_players"] = self.num_players
        c["shaping"] = self.shaping
        c["max_rounds"] = self.max_rounds
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
    def _parse_cell(v: Any, what: str) -> int:
        if (not isinstance(v, (list, tuple)) or len(v) != 2
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in v)
                or not all(0 <= i < K.SIDE for i in v)):
            raise ValueError(f"{what} must be a [row, col] pair with 0 <= row, col < 5, got {v!r}")
        return int(v[0]) * K.SIDE + int(v[1])

    @staticmethod
    def _int(v: Any, what: str, lo: int, hi: int) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"{what} must be an int in {lo}..{hi}, got {v!r}")
        return v

    @staticmethod
    def _name(v: Any, names: tuple[str, ...], what: str) -> int:
        if v not in names:
            raise ValueError(f"{what}: {v!r} is not one of {names}")
        return names.index(v)

    def from_dict(self, state: dict[str, Any]) -> np.ndarray:  # noqa: C901 (one check each)
        self.check_state_header(state, STATE_KEYS, OPTIONAL_KEYS)
        n = self.num_players
        recs = self.new_records(1)
        r = recs[0]
        self.load_rng(r, state)
        r["moves"] = self._int(state.get("moves", 0), "moves", 0, 2**31 - 1)
        r["round"] = self._int(state["round"], "round", 0, 2**31 - 1)
        cur = self._int(state["to_move"], "to_move", 0, n - 1)
        r["cur"] = cur
        phase = self._name(state["phase"], K.PHASES, "phase")
        r["phase"] = phase
        over = bool(state.get("over", False))
        r["over"] = over
        r["trigger"] = bool(state.get("end_triggered", False))
        if over and (phase != K.HONK or cur != 0 or not r["trigger"]):
            raise ValueError("a finished game has phase 'honk', to_move 0 and end_triggered")
        forced = state.get("forced_dice", [])
        if not isinstance(forced, list) or len(forced) > K.MAX_FORCED:
            raise ValueError(f"forced_dice must be a list of at most {K.MAX_FORCED} dice")
        for i, d in enumerate(forced):
            r["forced"][i] = self._int(d, "a forced die", 1, 6)
        r["forced_n"] = len(forced)
        dice = state.get("last_dice", [0, 0])
        if not isinstance(dice, list) or len(dice) != 2:
            raise ValueError("last_dice must be [column die, row die] ([0, 0] before any roll)")
        for i, d in enumerate(dice):
            r["dice"][i] = self._int(d, "last_dice", 0, 6)

        # board and tiles (K2): every tile placed must come out of the tile set
        board = state["board"]
        if not isinstance(board, list) or len(board) != K.SIDE or not all(
                isinstance(row, list) and len(row) == K.SIDE for row in board):
            raise ValueError("board must be 5 rows of 5 tiles")
        pool: dict[Tile, list[int]] = {}
        for i, t in enumerate(self.tiles.tiles):
            pool.setdefault(t, []).append(i)

        def take(tile: Tile, where: str) -> int:
            ids = pool.get(tile)
            if not ids:
                raise ValueError(f"{where}: the tile set has no more {tile.spec(self.tiles)!r}")
            return ids.pop(0)

        for row in range(K.SIDE):
            for col in range(K.SIDE):
                spec = board[row][col]
                where = f"board[{row}][{col}]"
                parts = spec.split(" ", 3) if isinstance(spec, str) else []
                if len(parts) < 3 or not parts[2].isdigit() or int(parts[2]) > 3:
                    raise ValueError(
                        f"{where}: a cell is '<kind> <pattern> <rotation 0-3>[ <address>]', "
                        f"got {spec!r}")
                tile = self.tiles.parse_spec(" ".join(parts[:2] + parts[3:]))
                x = row * K.SIDE + col
                r["cell_tile"][x] = take(tile, where)
                r["cell_rot"][x] = int(parts[2])
        kinds = [self.tiles.tiles[i].kind for i in r["cell_tile"]]
        if kinds.count(K.BUILDING) != K.SIDE:
            raise ValueError("the board holds all five buildings (they are never swapped)")
        spares = state["spares"]
        if not isinstance(spares, list) or len(spares) != n:
            raise ValueError("spares must list one tile per player")
        r["spare"][:] = 255
        for p, spec in enumerate(spares):
            tile = self.tiles.parse_spec(spec)
            if tile.kind == K.BUILDING:
                raise ValueError(f"spares[{p}]: a building is never a spare tile")
            r["spare"][p] = take(tile, f"spares[{p}]")
        for x in range(K.NCELLS):
            t = self.tiles.tiles[r["cell_tile"][x]]
            if t.kind == K.BUILDING:
                r["addr_cell"][t.address] = x

        # players
        mopeds = state["mopeds"]
        if not isinstance(mopeds, list) or len(mopeds) != n:
            raise ValueError("mopeds must list one [row, col] per player")
        r["pos"][:] = -1
        for p in range(n):
            r["pos"][p] = self._parse_cell(mopeds[p], f"mopeds[{p}]")
        players = state["players"]
        if not isinstance(players, list) or len(players) != n:
            raise ValueError("players must have one entry per player")
        value_slots = {int(v): [s for s in range(K.NSLOTS) if K.STAR_VALUES[s] == v]
                       for v in K.STAR_VALUES}
        order_total = Counter()
        for p, pl in enumerate(players):
            where = f"players[{p}]"
            if not isinstance(pl, dict) or set(pl) != PLAYER_KEYS:
                raise ValueError(f"{where} must have the keys {sorted(PLAYER_KEYS)}")
            r["energy"][p] = self._int(pl["energy"], f"{where} energy", 0, K.MAX_ENERGY)
            r["bubbles"][p] = self._int(pl["bubbles"], f"{where} bubbles", 0, K.MAX_BUBBLES)
            orders = [self._name(o, K.TYPES, f"{where} orders") for o in pl["orders"]]
            if len(orders) > 2 or len(set(orders)) != len(orders):
                raise ValueError(f"{where}: at most two orders, not two of one type (K7)")
            if K.IBU in orders and K.BAPAK in orders:
                raise ValueError(f"{where}: at most one passenger at a time (K7)")
            for t in orders:
                r["held"][p, t] = 1
                order_total[t] += 1
            r["nheld"][p] = len(orders)
            if not isinstance(pl["delivered"], list):
                raise ValueError(f"{where} delivered must be a list of order types")
            for o in pl["delivered"]:
                t = self._name(o, K.TYPES, f"{where} delivered")
                r["delivered"][p, t] += 1
                order_total[t] += 1
            r["passengers"][p] = int(r["delivered"][p, K.IBU]) + int(r["delivered"][p, K.BAPAK])
            if not isinstance(pl["stars"], list):
                raise ValueError(f"{where} stars must be a list of star values")
            for v in pl["stars"]:
                if v not in value_slots:
                    raise ValueError(f"{where}: no star is worth {v!r}")
            r["nstars"][p] = len(pl["stars"])
            r["points"][p] = sum(pl["stars"])

        # stacks and order tokens (K4, K7): players + 1 tokens per type in all
        stacks = state["stacks"]
        if not isinstance(stacks, dict) or set(stacks) != set(K.TYPES):
            raise ValueError(f"stacks must have one entry per order type {K.TYPES}")
        r["stack_cell"][:] = -1
        for t, name in enumerate(K.TYPES):
            st = stacks[name]
            if not isinstance(st, dict) or set(st) != {"at", "count"}:
                raise ValueError(f"stacks[{name!r}] must be {{'at': [row, col] or None, 'count'}}")
            cnt = self._int(st["count"], f"stacks[{name!r}] count", 0, n + 1)
            r["stack_n"][t] = cnt
            if cnt == 0:
                if st["at"] is not None:
                    raise ValueError(f"stacks[{name!r}]: an empty stack lies nowhere (at None)")
                continue
            x = self._parse_cell(st["at"], f"stacks[{name!r}] at")
            if kinds[x] != K.PICKUP:
                raise ValueError(f"stacks[{name!r}]: orders lie only on pick-up tiles")
            if x in r["stack_cell"]:
                raise ValueError(f"stacks[{name!r}]: two stacks on one tile")
            r["stack_cell"][t] = x
            order_total[t] += cnt
        for t, name in enumerate(K.TYPES):
            if order_total[t] != n + 1:
                raise ValueError(
                    f"{name} orders are not conserved: {order_total[t]} in stacks, phones and "
                    f"delivered, {n + 1} in the game")

        # order board (K8)
        ob = state["order_board"]
        if not isinstance(ob, dict) or set(ob) != {"orders", "addresses", "star_piles"}:
            raise ValueError("order_board must have the keys orders, addresses, star_piles")
        ords = [self._name(o, K.TYPES, "order_board orders") for o in ob["orders"]]
        addrs = [self._name(a, K.ADDRESSES, "order_board addresses") for a in ob["addresses"]]
        if sorted(ords) != list(range(K.NTYPES)) or sorted(addrs) != list(range(K.NADDR)):
            raise ValueError("order_board: each order type and each address exactly once")
        r["ord_slot"][:] = ords
        r["addr_slot"][:] = addrs
        piles = ob["star_piles"]
        if not isinstance(piles, list) or len(piles) != K.NSLOTS:
            raise ValueError("order_board star_piles must list 5 pile sizes")
        for s, v in enumerate(piles):
            r["star_left"][s] = self._int(v, "a star pile", 0, K.STARS_PER_SLOT)
        for v, slots in value_slots.items():
            out = sum(pl["stars"].count(v) for pl in players)
            left = sum(int(r["star_left"][s]) for s in slots)
            if out + left != K.STARS_PER_SLOT * len(slots):
                raise ValueError(f"{v}-point stars are not conserved: {out} taken, {left} left")
            # equal stars are interchangeable: fill each pile's gap in slot order
            gaps = [K.STARS_PER_SLOT - int(r["star_left"][s]) for s in slots]
            k = 0
            for p, pl in enumerate(players):
                for _ in range(pl["stars"].count(v)):
                    while gaps[k] == 0:
                        k += 1
                    gaps[k] -= 1
                    r["stars"][p, slots[k]] += 1

        if bool(r["trigger"]) != bool((r["nstars"][:n] >= K.END_STARS).any()):
            raise ValueError("end_triggered is true exactly when a player holds 4 or more stars")
        marker = state["marker"]
        r["marker"] = -1 if marker is None else self._parse_cell(marker, "marker")
        start = state.get("turn_start")
        r["start"] = r["pos"][cur] if start is None else self._parse_cell(start, "turn_start")
        if phase == K.HONK and r["start"] != r["pos"][cur]:
            raise ValueError("before driving, turn_start is the mover's own tile")
        pend = state.get("pending")
        r["pending"] = -1 if pend is None else self._name(pend, K.TYPES, "pending")
        K.refresh(r, self.cfg[0])
        self._check_phase(r)
        if over:
            K._finish(r, self.cfg[0])  # noqa: SLF001  (winners from the final position)
            r["reward"][:] = 0
        return recs

    def _check_phase(self, r: np.void) -> None:
        """A decision point must be one the rules can reach."""
        c = self.cfg[0]
        p = int(r["cur"])
        x = int(r["pos"][p])
        phase = int(r["phase"])
        t = int(r["pending"])
        if phase in (K.ACCEPT, K.PLACE) and t < 0:
            raise ValueError(f"phase {K.PHASES[phase]!r} needs the pending order type")
        if phase not in (K.ACCEPT, K.PLACE) and t >= 0:
            raise ValueError("pending is only set while accepting or placing a stack")
        if phase == K.ACCEPT:
            if K.stack_at(r, x) != t or not K.can_accept(r, p, t):
                raise ValueError("accept: the mover must stand on that stack and may accept it")
        elif phase == K.PLACE:
            if K.stack_at(r, x) != t or not r["held"][p, t]:
                raise ValueError("place_stack: the mover stands on the stack of an order held")
        elif phase == K.DELIVER:
            if x == r["start"] or r["energy"][p] < 1 or K.deliverable(r, c, p, x) == 0:
                raise ValueError("deliver: the mover must be able to deliver on this tile")
        elif phase == K.DETOUR_PICK and (r["dice"][0], r["dice"][1]) != (6, 6):
            raise ValueError("detour_pick follows a double 6 (last_dice [6, 6])")

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
