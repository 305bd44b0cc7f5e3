"""Jakarta Traffic's v1 observation: exact bounds, what a player at the table
sees and nothing else, and the derived drive features, each held against a plain-Python
reading of the state dict.

Boards are drawn in the code of ``jk_positions`` (``Ph0`` = pick-up hub, ``Bb0Sp`` = the
Spa building, a bend at rotation 0). Cells in code are ``(row, col)`` from 0.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import trafficenvs
from tests.jakarta_traffic.positions import PLAIN, TEST_TILES, game, position, vec_at
from trafficenvs.agents import make_greedy
from trafficenvs.core import driver, sampler
from trafficenvs.jakarta_traffic.rules.layout import (
    A_DRIVE,
    CENTRE,
    MAX_POINTS,
    MAX_SCORE,
    MAX_STARS,
    PHASES,
    STAR_VALUES,
    TYPES,
)
from trafficenvs.registry import make_vec

EDGES = "NESW"
STEP = ((-1, 0), (0, 1), (1, 0), (0, -1))

# --------------------------------------------------------------------------- the reference


def _frame():
    """K3 from the rules page: the 20 rim ends clockwise from the top-left corner, joined
    1st-2nd, 3rd-4th, ...: ``{(cell, edge): (cell, edge)}``."""
    rim = ([(c, 0) for c in range(5)] + [(r * 5 + 4, 1) for r in range(5)]
           + [(20 + c, 2) for c in range(4, -1, -1)] + [(r * 5, 3) for r in range(4, -1, -1)])
    out = {}
    for i in range(0, 20, 2):
        out[rim[i]] = rim[i + 1]
        out[rim[i + 1]] = rim[i]
    return out


FRAME = _frame()


def _enter(x, e):
    """The (cell, edge) a path leaving cell ``x`` through edge ``e`` enters."""
    r, c = divmod(x, 5)
    dr, dc = STEP[e]
    if 0 <= r + dr < 5 and 0 <= c + dc < 5:
        return (r + dr) * 5 + c + dc, (e + 2) % 4
    return FRAME[(x, e)]


def _tile_links(g, spec):
    """A board cell ``"<kind> <pattern> <rotation>[ <address>]"``: its kind, its links by
    physical edge (an edge or "C", K2: the pattern turned clockwise), its address."""
    kind, pat, rot, *addr = spec.split(" ", 3)
    p = g.tiles.patterns[g.tiles.pattern_index(pat)]
    r = int(rot)
    links = []
    for e in range(4):
        b = p.links[(e - r) % 4]
        links.append("C" if b == CENTRE else (b + r) % 4)
    return kind, links, addr[0] if addr else None


def _follow(links, x, e):
    """K6: the cell where the path out of ``x`` by edge ``e`` parks (None: no path)."""
    if links[x][e] != "C":
        return None
    x, g = _enter(x, e)
    for _ in range(200):
        h = links[x][g]
        if h == "C":
            return x
        x, g = _enter(x, h)
    raise AssertionError("a path from a parking spot never ended")


def cell_of_rc(rc):
    return None if rc is None else rc[0] * 5 + rc[1]


class Position:
    """A state dict read the way a player reads the table."""

    def __init__(self, g, st):
        self.g, self.st, self.n = g, st, g.num_players
        self.kind, self.links, self.building = [], [], {}
        for x in range(25):
            kind, links, addr = _tile_links(g, st["board"][x // 5][x % 5])
            self.kind.append(kind)
            self.links.append(links)
            if addr:
                self.building[addr] = x
        self.pos = [cell_of_rc(m) for m in st["mopeds"]]
        self.stack_at = {cell_of_rc(v["at"]): t for t, v in st["stacks"].items() if v["count"] > 0}
        ob = st["order_board"]
        # K8: order slot i points at address slot i + 1 (the lowest also at the lowest)
        self.address_of = {t: self.building[ob["addresses"][min(i + 1, 4)]]
                           for i, t in enumerate(ob["orders"])}

    def pays(self, t):
        """K8: the star the slot of type ``t`` pays (the best left at or below it)."""
        piles = self.st["order_board"]["star_piles"]
        i = self.st["order_board"]["orders"].index(t)
        return next((int(STAR_VALUES[j]) for j in range(i, 5) if piles[j] > 0), 0)

    def may_take(self, s, t, energy):
        """K7's limits on accepting type ``t``."""
        held = self.st["players"][s]["orders"]
        if energy < 1 or len(held) >= 2 or t in held:
            return False
        return not (t in ("Ibu", "Bapak") and ({"Ibu", "Bapak"} & set(held)))

    def drive(self, s, e):
        """What the drive of seat ``s`` out of edge ``e`` finds: None for no drive, else
        (cell, kind, stack type or None, mopeds there, could deliver, could pick up)."""
        x0 = self.pos[s]
        d = _follow(self.links, x0, e)
        if d is None or d == x0:
            return None
        pl = self.st["players"][s]
        mopeds = sum(p == d for p in self.pos)
        energy = min(3, pl["energy"] + (mopeds > 0))  # K7: the chat comes first
        stack = self.stack_at.get(d)
        deliver = (self.kind[d] == "building" and energy >= 1
                   and any(self.address_of[t] == d for t in pl["orders"]))
        pickup = self.kind[d] == "pickup" and stack is not None and self.may_take(s, stack, energy)
        return d, self.kind[d], stack, mopeds, deliver, pickup


def horizon_left(moves, horizon):
    if horizon <= 0:
        return 255
    left = horizon - moves
    if left <= 0:
        return 0
    return 255 if left >= horizon else -(-left * 255 // horizon)


def reference(g, st, seat, horizon=0):
    """Seat ``seat``'s v1 observation, entry by layout name, from the state dict alone."""
    P = Position(g, st)
    n = P.n
    lay = g.obs_layout
    ob = np.zeros(g.obs_dim, np.int64)

    def put(name, value, index=0, part=None, at=0):
        ob[lay.at(name, index, part) + at] = value

    def rowcol(name, index, x, row="row", col="col"):
        put(name, 1, index, row, x // 5)
        put(name, 1, index, col, x % 5)

    kinds = ("pickup", "charging", "building")
    for x in range(25):
        for e in range(4):
            put("cells", P.links[x][e] == "C", x, "ends", e)
        put("cells", 1, x, "kind", kinds.index(P.kind[x]))
        if x in P.stack_at:
            put("cells", 1, x, "stack", TYPES.index(P.stack_at[x]))
    if st["marker"] is not None:
        put("cells", 1, cell_of_rc(st["marker"]), "marker")
    for q in range(n):
        ob[lay.at("cells", P.pos[q], "me" if q == seat else "others")] += 1
    for j in range(n):
        s = (seat + j) % n
        pl = st["players"][s]
        rowcol("players", j, P.pos[s])
        pts = min(sum(pl["stars"]), MAX_POINTS)
        put("players", pl["energy"], j, "energy")
        put("players", pl["bubbles"], j, "bubbles")
        put("players", min(len(pl["stars"]), MAX_STARS), j, "stars")
        put("players", pts, j, "points")
        put("players", sum(t in ("Ibu", "Bapak") for t in pl["delivered"]), j, "passengers")
        put("players", min(pts + pl["energy"] + [0, 1, 3, 5][pl["bubbles"]], MAX_SCORE), j,
            "score")
        for t in pl["orders"]:
            put("players", 1, j, "holds", TYPES.index(t))
        kind, links, _ = _tile_links(g, st["spares"][s] + " 0")
        for e in range(4):
            put("players", links[e] == "C", j, "spare_ends", e)
        put("players", kind == "charging", j, "spare_charging")
        for e in range(4):
            found = P.drive(s, e)
            if found is None:
                continue
            d, kind, stack, mopeds, deliver, pickup = found
            i = 4 * j + e
            rowcol("drives", i, d)
            put("drives", 1, i, "kind", kinds.index(kind))
            if stack is not None:
                put("drives", 1, i, "stack", TYPES.index(stack))
            put("drives", mopeds, i, "mopeds")
            put("drives", deliver, i, "deliver")
            put("drives", pickup, i, "pickup")
    board = st["order_board"]
    for t, name in enumerate(TYPES):
        put("types", 1, t, "slot", board["orders"].index(name))
        put("types", P.pays(name), t, "pays")
        rowcol("types", t, P.address_of[name], "addr_row", "addr_col")
        put("types", st["stacks"][name]["count"], t, "stack_n")
    for k, a in enumerate(board["addresses"]):
        rowcol("addresses", k, P.building[a])
    put("phase", 1, PHASES.index(st["phase"]))
    put("to_move", 1, (st["to_move"] - seat) % n)
    put("seat", 1, seat)
    put("end_triggered", st["end_triggered"])
    put("marker_off", st["marker"] is None)
    for i, v in enumerate(board["star_piles"]):
        put("star_piles", v, i)
    for k, f in enumerate(st["last_dice"]):
        if f:
            put("dice", 1, 6 * k + f - 1)
    put("round", min(st["round"], 100))
    cap = g.max_rounds
    put("rounds_left", min(max(cap - st["round"], 0), 255) if cap else 1)
    put("horizon_left", horizon_left(st["moves"], horizon))
    return ob


# --------------------------------------------------------------------------- random play

CONFIGS = [
    ({"num_players": 2}, 0),
    ({"num_players": 3, "shaping": True}, 0),
    ({"num_players": 4, "max_rounds": 12}, 0),
    ({"num_players": 2, "tiles": TEST_TILES, "max_rounds": 300}, 40),
    ({"num_players": 3, "tiles": TEST_TILES}, 150),
    ({"num_players": 4, "tiles": TEST_TILES, "shaping": True}, 0),
]
IDS = ["2p", "3p-shaping", "4p-rounds", "2p-tiles-rounds-cycles", "3p-tiles-cycles",
       "4p-tiles-shaping"]


def random_games(options, max_cycles=0, num_envs=16, steps=300, seed=0, greedy_share=0.5):
    """(vectorised env, step result) after each step of games where a share of the
    decisions are the greedy player's (so orders get delivered and stars taken) and the
    rest uniformly random."""
    kw = {"max_cycles": max_cycles} if max_cycles else {}
    venv = make_vec("jakarta_traffic", num_envs=num_envs, **options, **kw)
    out = venv.reset(seed=seed)
    greedy = make_greedy(venv.game)
    rng = np.random.default_rng(seed)
    states = sampler.rng_states(num_envs, seed + 1)
    actions = np.zeros(num_envs, np.int64)
    for _ in range(steps):
        yield venv, out
        sampler.sample_legal(out.action_mask, states, actions)
        smart = greedy.act(out.observation, out.action_mask, out.current_player)
        pick = rng.random(num_envs) < greedy_share
        out = venv.step(np.where(pick, smart, actions))


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize(("options", "cycles"), CONFIGS, ids=IDS)
def test_every_entry_stays_within_its_bound_for_every_seat(options, cycles):
    """Random games of every player count and option set (tile sets, shaping, round cap,
    move limit), every seat's view: every entry in [0, high] (so every one-hot entry is 0
    or 1), and the bounds are reached where play reaches them (energy, bubbles, every
    phase and die face, stack sizes, star piles, the clocks)."""
    seen = None
    for venv, out in random_games(options, cycles, steps=250):
        g = venv.game
        high = g.obs_high.astype(np.int64)
        assert out.observation.dtype == np.uint8
        for seat in range(g.num_players):
            obs = venv.observe(np.full(venv.num_envs, seat)).astype(np.int64)
            assert (obs <= high).all(), np.flatnonzero((obs > high).any(0))
            top = obs.max(0)
            seen = top if seen is None else np.maximum(seen, top)
    lay = g.obs_layout
    for name in ("phase", "dice", "marker_off", "cells", "drives", "addresses"):
        assert (lay.slice(seen, name) == lay.slice(high, name)).any(), name
    assert (lay.slice(seen, "phase") == 1).all()
    assert lay.slice(seen, "dice").tolist() == [1] * 12
    if not cycles and options.get("max_rounds", 0) in (0, 300):  # games that end
        assert seen[lay.at("end_triggered", 0)] == 1
        assert seen[lay.at("players", 0, "stars")] >= 4
    for part, bound in (("energy", 3), ("bubbles", 3), ("row", 1), ("col", 1)):
        assert seen[lay.at("players", 0, part)] == bound
    assert lay.slice(seen, "star_piles").max() == 5
    assert seen[lay.at("types", 0, "stack_n")] == g.num_players + 1
    assert lay.slice(seen, "horizon_left")[0] == 255
    assert seen[lay.at("rounds_left", 0)] == high[lay.at("rounds_left", 0)]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_aec_observation_space_contains_every_observation(n):
    env = trafficenvs.make("jakarta_traffic", num_players=n, max_rounds=20, max_cycles=120)
    env.reset(seed=n)
    space = env.observation_space("player_0")["observation"]
    assert space.dtype == np.uint8 and (space.high == env.unwrapped.game.obs_high).all()
    rng = np.random.default_rng(n)
    for _agent in env.agent_iter():
        for a in env.agents:
            assert space.contains(env.observe(a)["observation"])
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_bounds_are_the_exact_maxima_of_the_rules():
    """Star tokens: at most 3 before the end is triggered, then a turn delivers at most 2
    (5); points: four 7s (28); passengers: all Ibu and Bapak tokens (2 (N + 1)); stack
    sizes N + 1; mopeds on one cell besides one's own: N - 1."""
    for n in (2, 3, 4):
        lay = game(n).obs_layout
        high = game(n).obs_high
        assert high[lay.at("players", 0, "stars")] == 5
        assert high[lay.at("players", 0, "points")] == 28
        assert high[lay.at("players", 0, "score")] == 28 + 3 + 5
        assert high[lay.at("players", 0, "passengers")] == 2 * (n + 1)
        assert high[lay.at("types", 0, "stack_n")] == n + 1
        assert high[lay.at("cells", 0, "others")] == n - 1
        assert high[lay.at("drives", 0, "mopeds")] == n - 1
        assert high[lay.at("round", 0)] == 100
        assert high[lay.at("rounds_left", 0)] == 1
    lay = make_vec("jakarta_traffic", num_envs=1, num_players=2, max_rounds=12).game
    assert lay.obs_high[lay.obs_layout.at("rounds_left", 0)] == 12
    g = trafficenvs.make_game("jakarta_traffic", num_players=2, max_rounds=1000)
    assert g.obs_high[g.obs_layout.at("rounds_left", 0)] == 255


# --------------------------------------------------------------------------- the reference


@pytest.mark.parametrize(("options", "cycles"), CONFIGS, ids=IDS)
def test_every_entry_is_what_the_table_shows(options, cycles):
    """On a few thousand positions of random and greedy play, every seat's observation
    equals the plain-Python reading of the state dict (`reference`): cells, seats, order
    board, the derived drives, the turn fields and the clocks."""
    checked = 0
    for t, (venv, _out) in enumerate(random_games(options, cycles, steps=200, seed=7)):
        if t % 4:
            continue
        g = venv.game
        horizon = int(g.cfg[0]["horizon"])
        seats = np.arange(venv.num_envs) % g.num_players
        obs = venv.observe(seats)
        for i in range(venv.num_envs):
            st = venv.state_dict(i)
            want = reference(g, st, int(seats[i]), horizon)
            got = obs[i].astype(np.int64)
            if not (got == want).all():
                bad = np.flatnonzero(got != want)
                names = {f.name for f in g.obs_layout if any(f.offset <= b < f.stop for b in bad)}
                raise AssertionError(f"row {i} step {t}: {sorted(names)} differ at {bad[:8]}")
            checked += 1
    assert checked >= 700


@pytest.mark.parametrize("n", [2, 3, 4])
def test_drive_features_match_the_traced_paths_on_random_positions(n):
    """The derived ``drives`` block against the plain reference (`Position.drive`) on
    thousands of (position, seat, edge) triples; also: a legal drive of the mover is
    exactly a drive the mask allows, and it ends where the game's drive parks."""
    triples = legal = 0
    for venv, out in random_games({"num_players": n}, steps=240, seed=11 + n):
        g = venv.game
        lay = g.obs_layout
        for i in range(venv.num_envs):
            st = venv.state_dict(i)
            if st["over"]:
                continue
            P = Position(g, st)
            me = st["to_move"]
            row = out.observation[i]
            for j in range(n):
                s = (me + j) % n
                for e in range(4):
                    k = 4 * j + e
                    found = P.drive(s, e)
                    rows = row[lay.at("drives", k, "row"):][:5]
                    cols = row[lay.at("drives", k, "col"):][:5]
                    if found is None:
                        assert not row[lay.at("drives", k, "row"):][:21].any()
                        continue
                    d, kind, stack, mopeds, deliver, pickup = found
                    assert (rows.argmax() * 5 + cols.argmax(), rows.sum(), cols.sum()) == (d, 1, 1)
                    assert row[lay.at("drives", k, "kind") + ("pickup", "charging",
                                                                   "building").index(kind)]
                    st_oh = row[lay.at("drives", k, "stack"):][:5]
                    assert st_oh.tolist() == [int(stack == t) for t in TYPES]
                    assert row[lay.at("drives", k, "mopeds")] == mopeds
                    assert row[lay.at("drives", k, "deliver")] == deliver
                    assert row[lay.at("drives", k, "pickup")] == pickup
                    triples += 1
                    if j == 0 and st["phase"] in ("honk", "drive"):
                        assert out.action_mask[i, A_DRIVE + e]
                        legal += 1
            if st["phase"] in ("honk", "drive"):
                drives = [e for e in range(4) if out.action_mask[i, A_DRIVE + e]]
                assert all(P.drive(me, e) is not None for e in drives)
    assert triples >= 3000 and legal >= 300


# --------------------------------------------------------------------------- drawn positions


def _obs(g, st, seat=0):
    venv = vec_at(g, st)
    return venv.observe(np.array([seat]))[0], venv.game.obs_layout


def test_drives_show_where_each_exit_parks_and_what_waits_there():
    """Seat 0 on r3c2 (a hub) of the plain board (hubs everywhere), holding Bakso (top
    slot: wants the Spa, r3c1), with no energy left; seat 1 stands on r2c2 north of it.

        r2:  [ ]      [seat 1]   [ ]
        r3:  [Spa] <- [me, hub] -> [Sate stack]
        r4:  [ ]      [Residency]

    West parks on the Spa: a building where it could deliver, but without energy it
    cannot. North parks on seat 1's tile: a chat first gives 1 energy, and an order
    there... none. East parks on the Sate stack: no energy, so no pick-up."""
    g = game(2)
    st = position(g, PLAIN, mopeds=[(2, 1), (1, 1)], stacks={"Sate": ((2, 2), 3)},
                  players=[{"energy": 0, "orders": ["Bakso"]}])
    ob, lay = _obs(g, st)

    def entry(e, part):
        return ob[lay.at("drives", "NESW".index(e), part):]

    assert entry("W", "row")[:5].tolist() == [0, 0, 1, 0, 0]  # r3
    assert entry("W", "col")[:5].tolist() == [1, 0, 0, 0, 0]  # c1: the Spa
    assert entry("W", "kind")[:3].tolist() == [0, 0, 1]  # a building
    assert entry("W", "deliver")[0] == 0  # no energy, nobody to chat with
    assert entry("N", "mopeds")[0] == 1 and entry("N", "kind")[:3].tolist() == [1, 0, 0]
    assert entry("E", "stack")[:5].tolist() == [0, 0, 1, 0, 0]  # Sate
    assert entry("E", "pickup")[0] == 0
    st["players"][0]["energy"] = 1
    ob, lay = _obs(g, st)
    assert entry("W", "deliver")[0] == 1 and entry("E", "pickup")[0] == 1


def test_a_chat_on_arrival_gives_the_energy_to_deliver():
    """K7: the chat comes before the delivery. Seat 0 (no energy, holding Bakso for the
    Spa) drives west onto the Spa where seat 1 stands: the chat's energy pays for the
    delivery, so the entry says it could deliver."""
    g = game(2)
    st = position(g, PLAIN, mopeds=[(2, 1), (2, 0)],
                  players=[{"energy": 0, "orders": ["Bakso"]}])
    ob, lay = _obs(g, st)
    w = "NESW".index("W")
    assert ob[lay.at("drives", w, "mopeds")] == 1
    assert ob[lay.at("drives", w, "deliver")] == 1
    venv = vec_at(g, st)
    venv.step(np.array([A_DRIVE + w]))
    assert venv.state_dict(0)["phase"] == "deliver"  # the rules agree


def test_opponents_drives_are_judged_for_the_opponent():
    """Seat 1 holds Bakso (wants the Spa) and stands east of it; seat 0 holds nothing.
    From seat 0's view, the second seat's west exit says "could deliver"."""
    g = game(2)
    st = position(g, PLAIN, mopeds=[(4, 4), (2, 1)], players=[{}, {"orders": ["Bakso"]}])
    ob, lay = _obs(g, st, seat=0)
    w = "NESW".index("W")
    assert ob[lay.at("drives", 4 + w, "deliver")] == 1
    assert ob[lay.at("drives", 4 + w, "col")] == 1  # column 1: the Spa
    ob1, _ = _obs(g, st, seat=1)  # the same drive is seat 1's own first block
    assert ob1[lay.at("drives", w, "deliver")] == 1


def test_a_path_back_to_its_own_tile_is_no_drive():
    """r1c5 is a bend with its spot on N and E: the frame's alley joins r1c5 N to r1c5 E,
    so both exits come back to r1c5 (K6: not a drive). All 21 entries stay 0."""
    g = game(2)
    board = PLAIN.replace("Bh0BC Ph0\n", "Bh0BC Pb0\n", 1)
    st = position(g, board, mopeds=[(0, 4), (4, 0)])
    ob, lay = _obs(g, st)
    for e in (0, 1):
        assert not ob[lay.at("drives", e, "row"):][:21].any()
    venv = vec_at(g, st)
    assert not venv.last.action_mask[A_DRIVE:A_DRIVE + 2].any()


# --------------------------------------------------------------------------- twins


def _twins(g, a, b, seat=0):
    oa, _ = _obs(g, a, seat)
    ob, _ = _obs(g, b, seat)
    return oa, ob


def test_order_slots_with_equal_pays_and_addresses_are_told_apart():
    """The v0 observation's gap: the two lowest order slots both want the lowest address slot and
    both pay 3. Swapping their orders changes nothing v0 showed, but after the next
    delivery they move differently; v1 shows each type's slot."""
    g = game(2)
    a = position(g)
    b = copy.deepcopy(a)
    o = b["order_board"]["orders"]
    o[3], o[4] = o[4], o[3]
    oa, ob = _twins(g, a, b)
    lay = g.obs_layout
    assert (oa != ob).any()
    diff = {f.name for f in lay if (oa[f.slice] != ob[f.slice]).any()}
    assert diff == {"types"}
    for t in (TYPES.index(o[3]), TYPES.index(o[4])):
        assert oa[lay.at("types", t, "pays")] == ob[lay.at("types", t, "pays")] == 3


def _twins_g(g, a, b, seat=0):
    """Seat ``seat``'s observations of two state dicts in envs of ``g``'s options."""
    venv = make_vec("jakarta_traffic", num_envs=2, num_players=g.num_players,
                    tiles=g.tiles_spec, max_rounds=g.max_rounds)
    venv.reset(seed=0)
    venv.load_state_dict(0, a)
    venv.load_state_dict(1, b)
    obs = venv.observe(np.array([seat, seat]))
    return obs[0], obs[1]


def _differ(g, oa, ob):
    return {f.name for f in g.obs_layout if (oa[f.slice] != ob[f.slice]).any()}


def _deliveries(a, b):
    """Seat 1 delivered one order for a 7-star in both: Bakso in ``a``, Ibu in ``b``."""
    for s, t in ((a, "Bakso"), (b, "Ibu")):
        s["players"][1]["stars"] = [7]
        s["players"][1]["delivered"] = [t]
        s["order_board"]["star_piles"] = [4, 5, 5, 5, 5]
        s["stacks"][t]["count"] -= 1


TWINS = {
    # which address is "out" (and so which address comes back in after a delivery)
    "address_out": (lambda b: b["order_board"]["addresses"].insert(
        0, b["order_board"]["addresses"].pop(4)), {"addresses"}),
    "spare": (lambda b: b["spares"].__setitem__(1, "charging bend"), {"players"}),
    "dice": (lambda b: b.__setitem__("last_dice", [2, 5]), {"dice"}),
    "round": (lambda b: b.__setitem__("round", 3), {"round", "rounds_left"}),
    "stack_place": (lambda b: b["stacks"]["Ibu"].__setitem__("at", [1, 2]), {"cells"}),
    "marker": (lambda b: b.__setitem__("marker", [1, 2]), {"cells", "marker_off"}),
    "bubbles": (lambda b: b["players"][1].__setitem__("bubbles", 2), {"players"}),
}


@pytest.mark.parametrize("change", sorted(TWINS) + ["passenger_delivered"])
def test_what_a_player_sees_changes_the_observation(change):
    """Twins differing in one thing on the table: the observations differ, in the field
    that shows it (and in those derived from it)."""
    g = make_vec("jakarta_traffic", num_envs=1, num_players=2, tiles=TEST_TILES,
                 max_rounds=30).game
    a = position(g)
    b = copy.deepcopy(a)
    if change == "passenger_delivered":  # the first tie-break (K9) is on the table
        _deliveries(a, b)
        want = {"players", "types"}
    else:
        edit, want = TWINS[change]
        edit(b)
    oa, ob = _twins_g(g, a, b)
    assert want <= _differ(g, oa, ob)
    if change == "passenger_delivered":
        lay = g.obs_layout
        at = lay.at("players", 1, "passengers")
        assert (oa[at], ob[at]) == (0, 1)


def test_the_move_limit_and_the_round_cap_are_shown():
    g = game(2)
    st = position(g)
    for field, kw in (("horizon_left", {"max_cycles": 10}), ("rounds_left", {"max_rounds": 5})):
        venv = make_vec("jakarta_traffic", num_envs=2, num_players=2, tiles=TEST_TILES, **kw)
        venv.reset(seed=0)
        a = dict(st, moves=0, round=0)
        b = dict(st, moves=6, round=2)
        venv.load_state_dict(0, a)
        venv.load_state_dict(1, b)
        obs = venv.observe(np.array([0, 0]))
        lay = venv.game.obs_layout
        assert obs[0, lay.at(field, 0)] > obs[1, lay.at(field, 0)], field
    venv = make_vec("jakarta_traffic", num_envs=1, num_players=2, tiles=TEST_TILES,
                    max_rounds=5)
    venv.reset(seed=0)
    venv.load_state_dict(0, dict(st, round=2))
    assert venv.observe(np.array([0]))[0, venv.game.obs_layout.at("rounds_left", 0)] == 3


@pytest.mark.parametrize("change", ["generator", "forced_dice", "moves_without_limit"])
def test_what_no_player_sees_leaves_the_observation_alone(change):
    """Hidden at the table: the generator (future dice, the next deal) and dice queued by
    a state dict; the move count matters only through a move limit (none here)."""
    g = game(3)
    a = position(g)
    b = copy.deepcopy(a)
    if change == "generator":
        a["rng"] = {"key": 1, "counter": 0}
        b["rng"] = {"key": 987654321, "counter": 77}
    elif change == "forced_dice":
        b["forced_dice"] = [6, 6, 2]
    else:  # the game itself, outside an env: no move limit (``cfg.horizon`` 0)
        b["moves"] = 40
    for seat in range(3):
        if change == "moves_without_limit":
            recs = np.concatenate([g.from_dict(a), g.from_dict(b)])
            out = np.zeros((2, g.obs_dim), np.uint8)
            driver.batch_observe(recs, g.cfg, np.array([seat, seat]), out)
            oa, ob = out
        else:
            oa, ob = _twins_g(g, a, b, seat)
        assert (oa == ob).all()


def test_whose_turn_it_is_and_my_seat_in_the_round_are_shown():
    """Seen from seat 0: seat 1 to move instead of seat 0 is a different position. And the
    same table seen by the mover, once as seat 0 (the start player) and once as seat 1
    (the round's last seat, K9: after the end is triggered its turn is the last), differs
    only in `seat`."""
    g = game(2)
    a = position(g, mopeds=[(0, 0), (4, 0)])
    b = dict(copy.deepcopy(a), to_move=1)
    oa, ob = _twins_g(g, a, b, seat=0)
    assert _differ(g, oa, ob) >= {"to_move"}
    c = copy.deepcopy(a)
    c["mopeds"] = a["mopeds"][::-1]
    c["players"] = a["players"][::-1]
    c["spares"] = a["spares"][::-1]
    c["to_move"] = 1
    oa, _ = _twins_g(g, a, a, seat=0)
    oc, _ = _twins_g(g, c, c, seat=1)
    assert _differ(g, oa, oc) == {"seat"}
