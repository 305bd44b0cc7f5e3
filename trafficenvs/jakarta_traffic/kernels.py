"""Jakarta Traffic rules as numba kernels over one game record (rulings K1-K9).

The board is a 5x5 grid of street tiles, cell ``x = row * 5 + col`` (row 0 at the
top, col 0 at the left). Tile edges are numbered N=0, E=1, S=2, W=3. A tile's paths
are looked up in ``cfg.conn[pattern, rotation, edge]``: the edge that path end leads
to inside the tile, or ``CENTRE`` (the parking spot). ``cfg.exit_to[x, e]`` says
where a moped leaving cell ``x`` through edge ``e`` enters next (``cell * 4 + edge``):
the neighbouring cell, or across the frame's alley (K3). So driving is table lookups
in a loop that ends after at most one visit per path end.

Derived caches kept in the record (so masks and observations cost no path tracing):
``links`` (each cell's ``conn`` at its rotation), ``code`` (each cell's observation
code) and ``dest`` (where each exit of the mover's tile parks, -1 if not a legal
drive). They are refreshed on every tile change and every change of mover, and
rebuilt by ``refresh`` when a state dict is loaded; ``check`` verifies them.

A turn is a few decisions, each one action of a fixed space (C3, table on the rules
page): honk (rotate/swap) or drive at once; then drive or detour; then, if the stop
offers a choice, accept/decline an order and place the rest of its stack, or deliver.
Stops that offer no choice resolve at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.core.rng import rng_below, rng_seed

MAX_PLAYERS = 4
SIDE = 5
NCELLS = SIDE * SIDE
MAX_TILES = 64
MAX_PATTERNS = 8
NTYPES = 5
NADDR = 5
NSLOTS = 5
MAX_FORCED = 16
CENTRE = 4
MAX_ENERGY = 3
MAX_BUBBLES = 3
END_STARS = 4

TYPES = ("Bakso", "Nasi Goreng", "Sate", "Ibu", "Bapak")
IBU, BAPAK = 3, 4
ADDRESSES = ("Business Center", "Spa", "Residency", "Workshop", "Mall")
KINDS = ("pickup", "charging", "building")
PICKUP, CHARGING, BUILDING = 0, 1, 2
EDGES = "NESW"
PHASES = ("honk", "drive", "detour_pick", "accept", "place_stack", "deliver")
HONK, DRIVE, DETOUR_PICK, ACCEPT, PLACE, DELIVER = range(6)

#: K8, side A: the star each order slot pays, top to bottom (5 tokens each)
STAR_VALUES = np.array([7, 5, 4, 3, 3], np.int64)
STARS_PER_SLOT = 5
#: K9: bonus points for 0, 1, 2, 3 speech bubbles
BUBBLE_BONUS = np.array([0, 1, 3, 5], np.int64)

# ----------------------------------------------------------------------------- actions
A_ROTATE = 0  # + cell * 3 + (quarter turns clockwise - 1)
A_SWAP = A_ROTATE + 3 * NCELLS  # + cell * 4 + rotation of the placed tile
A_DRIVE = A_SWAP + 4 * NCELLS  # + exit edge
A_DETOUR = A_DRIVE + 4
A_CELL = A_DETOUR + 1  # + cell (double-6 detour target, or new place of a stack)
A_ACCEPT = A_CELL + NCELLS
A_DECLINE = A_ACCEPT + 1
A_DELIVER = A_DECLINE + 1  # + order type that goes to the very bottom
NUM_ACTIONS = A_DELIVER + NTYPES

# ----------------------------------------------------------------------------- observation
CELL_F = 10  # per cell: 4 path bits, charging, building, stack size, marker, me, others
PLAYER_F = 17
TYPE_F = 6
GLOBAL_F = 16
OBS_ROUND_CAP = 100


def obs_dim(num_players: int) -> int:
    """Length of one observation row (layout on docs/rules/jakarta_traffic.md)."""
    return NCELLS * CELL_F + PLAYER_F * num_players + TYPE_F * NTYPES + GLOBAL_F


CFG_DTYPE = np.dtype(
    [
        ("num_players", np.int64),
        ("shaping", np.bool_),
        ("max_rounds", np.int64),
        ("num_tiles", np.int64),
        ("tile_kind", np.int8, MAX_TILES),
        ("tile_pat", np.int8, MAX_TILES),
        ("tile_addr", np.int8, MAX_TILES),
        ("n_kind", np.int64, 3),
        ("kind_ids", np.uint8, (3, MAX_TILES)),
        ("conn", np.int8, (MAX_PATTERNS, 4, 4)),
        ("exit_to", np.int16, (NCELLS, 4)),
        ("perms", np.int8, (120, SIDE)),
        ("feat", np.float32, (64, 6)),
    ],
    align=True,
)

RECORD_DTYPE = np.dtype(
    [
        ("rng_key", np.uint64),
        ("rng_ctr", np.uint64),
        ("moves", np.int32),
        ("reward", np.float32, MAX_PLAYERS),
        ("round", np.int32),
        ("cur", np.int8),
        ("phase", np.int8),
        ("over", np.uint8),
        ("trigger", np.uint8),
        ("start", np.int8),
        ("marker", np.int8),
        ("pending", np.int8),
        ("forced_n", np.int8),
        ("dice", np.int8, 2),
        ("forced", np.int8, MAX_FORCED),
        ("cell_tile", np.uint8, NCELLS),
        ("cell_rot", np.uint8, NCELLS),
        ("links", np.int8, (NCELLS, 4)),
        ("code", np.uint8, NCELLS),
        ("dest", np.int8, 4),
        ("spare", np.uint8, MAX_PLAYERS),
        ("pos", np.int8, MAX_PLAYERS),
        ("energy", np.int8, MAX_PLAYERS),
        ("bubbles", np.int8, MAX_PLAYERS),
        ("nheld", np.int8, MAX_PLAYERS),
        ("held", np.uint8, (MAX_PLAYERS, NTYPES)),
        ("delivered", np.uint8, (MAX_PLAYERS, NTYPES)),
        ("stars", np.uint8, (MAX_PLAYERS, NSLOTS)),
        ("nstars", np.int8, MAX_PLAYERS),
        ("points", np.int16, MAX_PLAYERS),
        ("passengers", np.int8, MAX_PLAYERS),
        ("stack_cell", np.int8, NTYPES),
        ("stack_n", np.int8, NTYPES),
        ("ord_slot", np.int8, NSLOTS),
        ("addr_slot", np.int8, NSLOTS),
        ("addr_cell", np.int8, NADDR),
        ("star_left", np.int8, NSLOTS),
        ("winner", np.uint8, MAX_PLAYERS),
        ("scratch", np.uint8, MAX_TILES),
    ],
    align=True,
)


# ----------------------------------------------------------------------------- chance


@njit(cache=True)
def roll_die(rec):
    """One die (1-6): the next forced value if a test or user queued one, else the RNG."""
    if rec.forced_n > 0:
        d = rec.forced[0]
        for i in range(rec.forced_n - 1):
            rec.forced[i] = rec.forced[i + 1]
        rec.forced_n -= 1
        rec.forced[rec.forced_n] = 0
        return np.int64(d)
    return rng_below(rec, 6) + 1


@njit(cache=True)
def _shuffle_scratch(rec, n):
    for i in range(n - 1, 0, -1):
        j = rng_below(rec, i + 1)
        t = rec.scratch[i]
        rec.scratch[i] = rec.scratch[j]
        rec.scratch[j] = t


# ----------------------------------------------------------------------------- board queries


@njit(cache=True)
def conn_at(rec, cfg, x, e):
    """Where path end ``e`` of cell ``x`` leads inside its tile (an edge or CENTRE)."""
    return cfg.conn[cfg.tile_pat[rec.cell_tile[x]], rec.cell_rot[x], e]


@njit(cache=True)
def set_links(rec, cfg, x):
    """Cache cell ``x``'s links at its rotation in ``rec.links`` (after any tile change)."""
    pat = cfg.tile_pat[rec.cell_tile[x]]
    rot = rec.cell_rot[x]
    code = cfg.tile_kind[rec.cell_tile[x]] << 4
    for e in range(4):
        g = cfg.conn[pat, rot, e]
        rec.links[x, e] = g
        if g == CENTRE:
            code |= 1 << e
    rec.code[x] = code


@njit(cache=True)
def trace(rec, cfg, x, e):
    """K6: the cell whose parking spot ends the path leaving ``x`` through edge ``e``.

    -1 if edge ``e`` of ``x`` does not lead to its parking spot (no path to take). Each
    path end is passed at most once, so the loop is bounded by their number.
    """
    if rec.links[x, e] != CENTRE:
        return -1
    for _ in range(4 * NCELLS + 1):
        t = cfg.exit_to[x, e]
        x = t >> 2
        g = rec.links[x, t & 3]
        if g == CENTRE:
            return x
        e = g
    return -1


@njit(cache=True)
def refresh(rec, cfg):
    """Recompute the derived caches: every cell's links and the mover's drive targets.

    ``dest[e]`` is where driving out of edge ``e`` parks, -1 if that is no legal drive
    (no path, or the path returns to the turn's start, K6). Valid while the mover is
    to honk or drive; refreshed whenever the board or the mover changes.
    """
    for x in range(NCELLS):
        set_links(rec, cfg, x)
    refresh_dest(rec, cfg)


@njit(cache=True)
def refresh_dest(rec, cfg):
    x0 = rec.pos[rec.cur]
    for e in range(4):
        d = trace(rec, cfg, x0, e)
        rec.dest[e] = d if d >= 0 and d != rec.start else -1


@njit(cache=True)
def stack_at(rec, x):
    """The order type whose stack lies on cell ``x``, or -1."""
    for t in range(NTYPES):
        if rec.stack_cell[t] == x and rec.stack_n[t] > 0:
            return t
    return -1


@njit(cache=True)
def _occupied_bits(rec, cfg):
    """Cells holding an order stack or a moped, as bits of an int64 (K7 "vacant")."""
    b = np.int64(0)
    for t in range(NTYPES):
        if rec.stack_n[t] > 0 and rec.stack_cell[t] >= 0:
            b |= np.int64(1) << rec.stack_cell[t]
    for q in range(cfg.num_players):
        b |= np.int64(1) << rec.pos[q]
    return b


@njit(cache=True)
def _blocked_bits(rec, cfg):
    """Cells holding an order stack, a moped or the marker: not to be honked (K5)."""
    b = _occupied_bits(rec, cfg)
    if rec.marker >= 0:
        b |= np.int64(1) << rec.marker
    return b


@njit(cache=True)
def can_accept(rec, p, t):
    """K7: 1 energy, at most 2 orders, not two of one type, at most one passenger."""
    if rec.energy[p] < 1 or rec.nheld[p] >= 2 or rec.held[p, t]:
        return False
    if t == IBU and rec.held[p, BAPAK]:
        return False
    if t == BAPAK and rec.held[p, IBU]:
        return False
    return True


@njit(cache=True)
def wanted_slots(rec, a):
    """K8: the order slots pointing at address ``a`` (slot i -> address slot min(i+1, 4)).

    Returns (first, second) order slots, -1 where none; the top address slot is out.
    """
    j = -1
    for k in range(NSLOTS):
        if rec.addr_slot[k] == a:
            j = k
    if j <= 0:
        return -1, -1
    if j == NSLOTS - 1:
        return NSLOTS - 2, NSLOTS - 1
    return j - 1, -1


@njit(cache=True)
def deliverable(rec, cfg, p, x):
    """Bits (1 << type) of the orders ``p`` holds whose current address is cell ``x``."""
    if cfg.tile_kind[rec.cell_tile[x]] != BUILDING:
        return 0
    s1, s2 = wanted_slots(rec, cfg.tile_addr[rec.cell_tile[x]])
    bits = 0
    if s1 >= 0 and rec.held[p, rec.ord_slot[s1]]:
        bits |= 1 << rec.ord_slot[s1]
    if s2 >= 0 and rec.held[p, rec.ord_slot[s2]]:
        bits |= 1 << rec.ord_slot[s2]
    return bits


@njit(cache=True)
def slot_pays(rec, i):
    """K8: the pile slot ``i`` pays from: its own, else the best non-empty one below."""
    for j in range(i, NSLOTS):
        if rec.star_left[j] > 0:
            return j
    return -1


# ----------------------------------------------------------------------------- set-up (K4)


@njit(cache=True)
def _deal_board(rec, cfg):
    """One random deal of the tiles into rows; returns the number of legal stack layouts."""
    n = cfg.num_players
    # pick-up tiles: 15 on the board, then one spare per player
    npk = cfg.n_kind[PICKUP]
    for i in range(npk):
        rec.scratch[i] = cfg.kind_ids[PICKUP, i]
    _shuffle_scratch(rec, npk)
    for p in range(n):
        rec.spare[p] = rec.scratch[15 + p]
    for p in range(n, MAX_PLAYERS):
        rec.spare[p] = 255
    for r in range(SIDE):  # parked in columns 0-2 of their row; arranged below
        for k in range(3):
            rec.cell_tile[r * SIDE + k] = rec.scratch[r * 3 + k]
    # charging stations and buildings: 5 of each at random
    for kind in (CHARGING, BUILDING):
        nk = cfg.n_kind[kind]
        for i in range(nk):
            rec.scratch[i] = cfg.kind_ids[kind, i]
        _shuffle_scratch(rec, nk)
        for r in range(SIDE):
            rec.cell_tile[r * SIDE + 3 + (kind - CHARGING)] = rec.scratch[r]
    # each row: the building's column differs from the row above (no two buildings
    # orthogonally adjacent), the charging station one of the other four columns
    prev = -1
    for r in range(SIDE):
        base = r * SIDE
        p0 = rec.cell_tile[base]
        p1 = rec.cell_tile[base + 1]
        p2 = rec.cell_tile[base + 2]
        ch = rec.cell_tile[base + 3]
        bd = rec.cell_tile[base + 4]
        if prev < 0:
            b = rng_below(rec, SIDE)
        else:
            b = rng_below(rec, SIDE - 1)
            if b >= prev:
                b += 1
        c = rng_below(rec, SIDE - 1)
        if c >= b:
            c += 1
        k = 0
        for col in range(SIDE):
            if col == b:
                rec.cell_tile[base + col] = bd
            elif col == c:
                rec.cell_tile[base + col] = ch
            else:
                rec.cell_tile[base + col] = p0 if k == 0 else (p1 if k == 1 else p2)
                k += 1
        prev = b
    for x in range(NCELLS):
        rec.cell_rot[x] = rng_below(rec, 4)
    count = 0
    for i in range(120):
        ok = True
        for r in range(SIDE):
            if cfg.tile_kind[rec.cell_tile[r * SIDE + cfg.perms[i, r]]] != PICKUP:
                ok = False
                break
        if ok:
            count += 1
    return count


@njit(cache=True)
def init(rec, cfg, seed):
    rng_seed(rec, seed)
    n = cfg.num_players
    count = _deal_board(rec, cfg)
    for _ in range(10_000):  # a deal with no stack layout is dealt again (rare)
        if count > 0:
            break
        count = _deal_board(rec, cfg)
    # order stacks: one per type, exactly one per row and per column, on pick-ups
    k = rng_below(rec, count)
    perm = -1
    for i in range(120):
        ok = True
        for r in range(SIDE):
            if cfg.tile_kind[rec.cell_tile[r * SIDE + cfg.perms[i, r]]] != PICKUP:
                ok = False
                break
        if ok:
            if k == 0:
                perm = i
                break
            k -= 1
    for t in range(NTYPES):
        rec.scratch[t] = t
    _shuffle_scratch(rec, NTYPES)
    for r in range(SIDE):
        t = rec.scratch[r]
        rec.stack_cell[t] = r * SIDE + cfg.perms[perm, r]
        rec.stack_n[t] = n + 1
    # order board: one token per type in the order slots, the addresses in theirs
    for t in range(NTYPES):
        rec.scratch[t] = t
    _shuffle_scratch(rec, NTYPES)
    for i in range(NSLOTS):
        rec.ord_slot[i] = rec.scratch[i]
    for a in range(NADDR):
        rec.scratch[a] = a
    _shuffle_scratch(rec, NADDR)
    for i in range(NSLOTS):
        rec.addr_slot[i] = rec.scratch[i]
        rec.star_left[i] = STARS_PER_SLOT
    for x in range(NCELLS):
        if cfg.tile_kind[rec.cell_tile[x]] == BUILDING:
            rec.addr_cell[cfg.tile_addr[rec.cell_tile[x]]] = x
    # mopeds on distinct charging stations, full batteries
    m = 0
    for x in range(NCELLS):
        if cfg.tile_kind[rec.cell_tile[x]] == CHARGING:
            rec.scratch[m] = x
            m += 1
    _shuffle_scratch(rec, m)
    for p in range(MAX_PLAYERS):
        rec.pos[p] = rec.scratch[p] if p < n else -1
        rec.energy[p] = MAX_ENERGY if p < n else 0
        rec.bubbles[p] = 0
        rec.nheld[p] = 0
        rec.nstars[p] = 0
        rec.points[p] = 0
        rec.passengers[p] = 0
        rec.winner[p] = 0
        for t in range(NTYPES):
            rec.held[p, t] = 0
            rec.delivered[p, t] = 0
        for s in range(NSLOTS):
            rec.stars[p, s] = 0
    rec.round = 0
    rec.cur = 0
    rec.phase = HONK
    rec.over = 0
    rec.trigger = 0
    rec.marker = -1
    rec.pending = -1
    rec.start = rec.pos[0]
    rec.dice[0] = 0
    rec.dice[1] = 0
    rec.forced_n = 0
    for i in range(MAX_FORCED):
        rec.forced[i] = 0
    for i in range(MAX_TILES):
        rec.scratch[i] = 0
    refresh(rec, cfg)


# ----------------------------------------------------------------------------- verbs


@njit(cache=True)
def current_player(rec, cfg):
    return np.int64(rec.cur)


@njit(cache=True)
def is_over(rec, cfg):
    return rec.over != 0


@njit(cache=True)
def is_truncated(rec, cfg):
    """K9's round cap: ``max_rounds`` rounds played and the game not over (0: no cap)."""
    return cfg.max_rounds > 0 and rec.round >= cfg.max_rounds and rec.over == 0


@njit(cache=True)
def is_legal(rec, cfg, action):
    if rec.over or action < 0 or action >= NUM_ACTIONS:
        return False
    p = rec.cur
    ph = rec.phase
    if action < A_DRIVE:
        if ph != HONK:
            return False
        if action < A_SWAP:
            x = action // 3
            return (_blocked_bits(rec, cfg) >> x) & 1 == 0
        x = (action - A_SWAP) // 4
        if rec.spare[p] == 255 or cfg.tile_kind[rec.cell_tile[x]] == BUILDING:
            return False
        return (_blocked_bits(rec, cfg) >> x) & 1 == 0
    if action < A_DETOUR:
        if ph != HONK and ph != DRIVE:
            return False
        return rec.dest[action - A_DRIVE] >= 0
    if action == A_DETOUR:
        return ph == HONK or ph == DRIVE
    if action < A_ACCEPT:
        x = action - A_CELL
        if ph == DETOUR_PICK:
            return True
        if ph == PLACE:
            return cfg.tile_kind[rec.cell_tile[x]] == PICKUP \
                and (_occupied_bits(rec, cfg) >> x) & 1 == 0
        return False
    if action == A_ACCEPT:
        return ph == ACCEPT
    if action == A_DECLINE:
        return ph == ACCEPT or ph == DELIVER
    if ph != DELIVER:
        return False
    return (deliverable(rec, cfg, p, rec.pos[p]) >> (action - A_DELIVER)) & 1 == 1


@njit(cache=True)
def legal_mask(rec, cfg, out):
    out[:] = 0
    if rec.over:
        return
    p = rec.cur
    ph = rec.phase
    if ph == HONK or ph == DRIVE:
        for e in range(4):
            if rec.dest[e] >= 0:
                out[A_DRIVE + e] = 1
        out[A_DETOUR] = 1
        if ph == DRIVE:
            return
        blocked = _blocked_bits(rec, cfg)
        has_spare = rec.spare[p] != 255
        for x in range(NCELLS):
            if (blocked >> x) & 1:
                continue
            a = A_ROTATE + 3 * x
            out[a] = 1
            out[a + 1] = 1
            out[a + 2] = 1
            if has_spare and cfg.tile_kind[rec.cell_tile[x]] != BUILDING:
                a = A_SWAP + 4 * x
                out[a] = 1
                out[a + 1] = 1
                out[a + 2] = 1
                out[a + 3] = 1
        return
    if ph == DETOUR_PICK:
        for x in range(NCELLS):
            out[A_CELL + x] = 1
        return
    if ph == ACCEPT:
        out[A_ACCEPT] = 1
        out[A_DECLINE] = 1
        return
    if ph == PLACE:
        taken = _occupied_bits(rec, cfg)
        for x in range(NCELLS):
            if (taken >> x) & 1 == 0 and cfg.tile_kind[rec.cell_tile[x]] == PICKUP:
                out[A_CELL + x] = 1
        return
    # DELIVER
    out[A_DECLINE] = 1
    bits = deliverable(rec, cfg, p, rec.pos[p])
    for t in range(NTYPES):
        if (bits >> t) & 1:
            out[A_DELIVER + t] = 1


# ----------------------------------------------------------------------------- rules


@njit(cache=True)
def _finish(rec, cfg):
    """K9: stars + energy + bubble bonus; ties by passengers, star count, energy (C2)."""
    n = cfg.num_players
    best = np.int64(-1)
    for p in range(n):
        key = _final_key(rec, p)
        if key > best:
            best = key
    for p in range(n):
        rec.winner[p] = 1 if _final_key(rec, p) == best else 0
    rec.over = 1
    write_zero_sum(rec.reward, rec.winner, n)


@njit(cache=True)
def final_score(rec, p):
    """K9: star values + 1 per energy left + 1/3/5 for 1/2/3 speech bubbles."""
    return np.int64(rec.points[p]) + rec.energy[p] + BUBBLE_BONUS[rec.bubbles[p]]


@njit(cache=True)
def _final_key(rec, p):
    """Score, then the tie-breaks, packed into one comparable integer."""
    key = final_score(rec, p)
    key = key * 64 + rec.passengers[p]
    key = key * 64 + rec.nstars[p]
    key = key * 8 + rec.energy[p]
    return key


@njit(cache=True)
def _end_turn(rec, cfg):
    n = cfg.num_players
    p = rec.cur
    rec.pending = -1
    if rec.nstars[p] >= END_STARS:
        rec.trigger = 1
    if p == n - 1:
        rec.round += 1
        if rec.trigger:
            rec.phase = HONK
            rec.cur = 0
            rec.start = rec.pos[0]
            refresh_dest(rec, cfg)
            _finish(rec, cfg)
            return
    q = p + 1
    if q >= n:
        q = 0
    rec.cur = q
    rec.phase = HONK
    rec.start = rec.pos[q]
    refresh_dest(rec, cfg)


@njit(cache=True)
def _park(rec, cfg, x):
    """K7: every encounter where the mover parks, in the rulebook's order."""
    p = rec.cur
    rec.pos[p] = x
    if rec.marker == x:
        rec.marker = -1
    others = 0
    for q in range(cfg.num_players):
        if q != p and rec.pos[q] == x:
            others += 1
            if rec.energy[q] < MAX_ENERGY:
                rec.energy[q] += 1
    if others > 0:
        if rec.energy[p] < MAX_ENERGY:
            rec.energy[p] += 1
        if rec.bubbles[p] < MAX_BUBBLES:
            rec.bubbles[p] += 1
            if cfg.shaping:
                rec.reward[p] += BUBBLE_BONUS[rec.bubbles[p]] - BUBBLE_BONUS[rec.bubbles[p] - 1]
    kind = cfg.tile_kind[rec.cell_tile[x]]
    if kind == CHARGING:
        rec.energy[p] = MAX_ENERGY
    elif kind == PICKUP:
        t = stack_at(rec, x)
        if t >= 0 and can_accept(rec, p, t):
            rec.phase = ACCEPT
            rec.pending = t
            return
    elif x != rec.start and rec.energy[p] >= 1 and deliverable(rec, cfg, p, x) != 0:
        rec.phase = DELIVER
        return
    _end_turn(rec, cfg)


@njit(cache=True)
def _take_star(rec, cfg, p, i):
    j = slot_pays(rec, i)
    if j < 0:
        return
    rec.star_left[j] -= 1
    rec.stars[p, j] += 1
    rec.nstars[p] += 1
    rec.points[p] += STAR_VALUES[j]
    if cfg.shaping:
        rec.reward[p] += STAR_VALUES[j]


@njit(cache=True)
def _deliver(rec, cfg, lowest):
    """K7/K8: deliver every matching order for 1 energy, then shift the order board."""
    p = rec.cur
    x = rec.pos[p]
    bits = deliverable(rec, cfg, p, x)
    rec.energy[p] -= 1
    # stars first, top slot first, before anything moves
    for i in range(NSLOTS):
        t = rec.ord_slot[i]
        if (bits >> t) & 1:
            _take_star(rec, cfg, p, i)
            rec.held[p, t] = 0
            rec.nheld[p] -= 1
            rec.delivered[p, t] += 1
            if t == IBU or t == BAPAK:
                rec.passengers[p] += 1
    # the delivered orders go to the bottom (the chosen one lowest), the others move up
    k = 0
    other = -1
    for i in range(NSLOTS):
        t = rec.ord_slot[i]
        if (bits >> t) & 1:
            if t != lowest:
                other = t
        else:
            rec.ord_slot[k] = t
            k += 1
    if other >= 0:
        rec.ord_slot[k] = other
        k += 1
    rec.ord_slot[k] = lowest
    # the address delivered to goes to the top slot, the ones above it move down
    a = cfg.tile_addr[rec.cell_tile[x]]
    j = 0
    for i in range(NSLOTS):
        if rec.addr_slot[i] == a:
            j = i
    for i in range(j, 0, -1):
        rec.addr_slot[i] = rec.addr_slot[i - 1]
    rec.addr_slot[0] = a


@njit(cache=True)
def step(rec, cfg, action):
    n = cfg.num_players
    for j in range(n):
        rec.reward[j] = 0.0
    p = rec.cur
    if action < A_SWAP:  # K5 rotate
        x = action // 3
        rec.cell_rot[x] = (np.int64(rec.cell_rot[x]) + action - 3 * x + 1) & 3
        set_links(rec, cfg, x)
        refresh_dest(rec, cfg)
        rec.marker = x
        rec.phase = DRIVE
        return
    if action < A_DRIVE:  # K5 swap the spare tile in
        b = action - A_SWAP
        x = b // 4
        old = rec.cell_tile[x]
        rec.cell_tile[x] = rec.spare[p]
        rec.cell_rot[x] = b - 4 * x
        rec.spare[p] = old
        set_links(rec, cfg, x)
        refresh_dest(rec, cfg)
        rec.marker = x
        rec.phase = DRIVE
        return
    if action < A_DETOUR:  # K6 drive
        _park(rec, cfg, rec.dest[action - A_DRIVE])
        return
    if action == A_DETOUR:  # K6 detour: column die, row die; a 6 copies the other
        c = roll_die(rec)
        r = roll_die(rec)
        rec.dice[0] = c
        rec.dice[1] = r
        if c == 6 and r == 6:
            rec.phase = DETOUR_PICK
            return
        if c == 6:
            c = r
        elif r == 6:
            r = c
        _park(rec, cfg, (r - 1) * SIDE + (c - 1))
        return
    if action < A_ACCEPT:
        x = action - A_CELL
        if rec.phase == DETOUR_PICK:
            _park(rec, cfg, x)
            return
        rec.stack_cell[rec.pending] = x  # PLACE: the rest of the stack moves
        _end_turn(rec, cfg)
        return
    if action == A_ACCEPT:
        t = rec.pending
        rec.energy[p] -= 1
        rec.held[p, t] = 1
        rec.nheld[p] += 1
        rec.stack_n[t] -= 1
        if rec.stack_n[t] > 0:
            rec.phase = PLACE
            return
        rec.stack_cell[t] = -1
        _end_turn(rec, cfg)
        return
    if action == A_DECLINE:
        _end_turn(rec, cfg)
        return
    _deliver(rec, cfg, action - A_DELIVER)
    _end_turn(rec, cfg)


@njit(cache=True)
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (everything is open information; C4 seat order)."""
    n = cfg.num_players
    for x in range(NCELLS):
        o = x * CELL_F
        code = rec.code[x]  # the cell's first six features, precomputed per code
        for k in range(6):
            out[o + k] = cfg.feat[code, k]
        out[o + 6] = 0.0
        out[o + 7] = 0.0
        out[o + 8] = 0.0
        out[o + 9] = 0.0
    for t in range(NTYPES):
        if rec.stack_n[t] > 0:
            out[np.int64(rec.stack_cell[t]) * CELL_F + 6] = rec.stack_n[t]
    if rec.marker >= 0:
        out[np.int64(rec.marker) * CELL_F + 7] = 1.0
    for q in range(n):
        if q == seat:
            out[np.int64(rec.pos[q]) * CELL_F + 8] = 1.0
        else:
            out[np.int64(rec.pos[q]) * CELL_F + 9] += 1.0
    o = NCELLS * CELL_F
    for j in range(n):
        s = seat + j
        if s >= n:
            s -= n
        x = rec.pos[s]
        r = x // SIDE
        out[o] = r
        out[o + 1] = x - r * SIDE
        out[o + 2] = rec.energy[s]
        out[o + 3] = rec.bubbles[s]
        out[o + 4] = rec.nstars[s]
        out[o + 5] = rec.points[s]
        out[o + 6] = rec.passengers[s]
        for t in range(NTYPES):
            out[o + 7 + t] = rec.held[s, t]
        sp = rec.spare[s]
        if sp == 255:
            for k in range(5):
                out[o + 12 + k] = 0.0
        else:
            for e in range(4):
                out[o + 12 + e] = 1.0 if cfg.conn[cfg.tile_pat[sp], 0, e] == CENTRE else 0.0
            out[o + 16] = 1.0 if cfg.tile_kind[sp] == CHARGING else 0.0
        o += PLAYER_F
    for i in range(NSLOTS):
        t = np.int64(rec.ord_slot[i])
        b = o + t * TYPE_F
        j = slot_pays(rec, i)
        out[b] = 0.0 if j < 0 else STAR_VALUES[j]
        k = i + 1 if i + 1 < NSLOTS else NSLOTS - 1
        x = rec.addr_cell[rec.addr_slot[k]]
        r = x // SIDE
        out[b + 1] = r
        out[b + 2] = x - r * SIDE
        sn = rec.stack_n[t]
        out[b + 3] = sn
        if sn > 0:
            x = rec.stack_cell[t]
            r = x // SIDE
            out[b + 4] = r
            out[b + 5] = x - r * SIDE
        else:
            out[b + 4] = 0.0
            out[b + 5] = 0.0
    o += TYPE_F * NTYPES
    for k in range(6):
        out[o + k] = 0.0
    out[o + np.int64(rec.phase)] = 1.0
    out[o + 6] = rec.trigger
    out[o + 7] = rec.round if rec.round < OBS_ROUND_CAP else OBS_ROUND_CAP
    out[o + 8] = 1.0 if rec.marker < 0 else 0.0
    for i in range(NSLOTS):
        out[o + 9 + i] = rec.star_left[i]
    out[o + 14] = rec.dice[0]
    out[o + 15] = rec.dice[1]


# ----------------------------------------------------------------------------- invariants

INVARIANT_MESSAGES = (
    "ok",
    "a tile is in two places or unknown",
    "the board does not hold the five buildings",
    "a building became a spare tile",
    "energy outside 0-3",
    "speech bubbles outside 0-3",
    "order counts disagree or more than two orders",
    "two passengers on one moped",
    "order tokens not conserved",
    "an order stack off a pick-up tile, or two stacks on one tile",
    "the order board is not a permutation of types and addresses",
    "star tokens not conserved",
    "star counts or points disagree with the stars held",
    "the marker or a moped is off the board",
    "mover, phase or turn start out of range",
    "the end is triggered (or the game over) exactly when a player holds 4 stars",
    "the cached tile links or drive targets are out of date",
)


@njit(cache=True)
def check(rec, cfg):
    """0 if ``rec`` keeps every rule-level invariant, else the index of the broken one in
    :data:`INVARIANT_MESSAGES` (a compiled check, so tests can run it after every step)."""
    n = cfg.num_players
    seen = np.int64(0)
    nb = 0
    for i in range(NCELLS + n):
        t = rec.cell_tile[i] if i < NCELLS else rec.spare[i - NCELLS]
        if t >= cfg.num_tiles or (seen >> t) & 1:
            return 1
        seen |= np.int64(1) << t
        if cfg.tile_kind[t] == BUILDING:
            if i >= NCELLS:
                return 3
            nb += 1
    if nb != NADDR:
        return 2
    for p in range(n):
        if rec.energy[p] < 0 or rec.energy[p] > MAX_ENERGY:
            return 4
        if rec.bubbles[p] < 0 or rec.bubbles[p] > MAX_BUBBLES:
            return 5
        h = 0
        for t in range(NTYPES):
            h += rec.held[p, t]
        if h != rec.nheld[p] or h > 2:
            return 6
        if rec.held[p, IBU] and rec.held[p, BAPAK]:
            return 7
        if rec.passengers[p] != rec.delivered[p, IBU] + rec.delivered[p, BAPAK]:
            return 8
        if rec.pos[p] < 0 or rec.pos[p] >= NCELLS:
            return 13
    cells = np.int64(0)
    for t in range(NTYPES):
        tot = np.int64(rec.stack_n[t])
        for p in range(n):
            tot += rec.held[p, t] + rec.delivered[p, t]
        if tot != n + 1 or rec.stack_n[t] < 0:
            return 8
        if rec.stack_n[t] > 0:
            x = rec.stack_cell[t]
            if x < 0 or x >= NCELLS or cfg.tile_kind[rec.cell_tile[x]] != PICKUP:
                return 9
            if (cells >> x) & 1:
                return 9
            cells |= np.int64(1) << x
    so = 0
    sa = 0
    for i in range(NSLOTS):
        so |= 1 << rec.ord_slot[i]
        sa |= 1 << rec.addr_slot[i]
    if so != (1 << NTYPES) - 1 or sa != (1 << NADDR) - 1:
        return 10
    for s in range(NSLOTS):
        tot = np.int64(rec.star_left[s])
        for p in range(n):
            tot += rec.stars[p, s]
        if tot != STARS_PER_SLOT:
            return 11
    most = 0
    for p in range(n):
        c = 0
        pts = 0
        for s in range(NSLOTS):
            c += rec.stars[p, s]
            pts += rec.stars[p, s] * STAR_VALUES[s]
        if c != rec.nstars[p] or pts != rec.points[p]:
            return 12
        most = max(most, c)
    if rec.marker < -1 or rec.marker >= NCELLS:
        return 13
    if rec.cur < 0 or rec.cur >= n or rec.phase < 0 or rec.phase > DELIVER:
        return 14
    if rec.phase == HONK and rec.start != rec.pos[rec.cur]:
        return 14
    if (rec.trigger != 0) != (most >= END_STARS) or (rec.over and not rec.trigger):
        return 15
    for x in range(NCELLS):
        code = cfg.tile_kind[rec.cell_tile[x]] << 4
        for e in range(4):
            if rec.links[x, e] != conn_at(rec, cfg, x, e):
                return 16
            if rec.links[x, e] == CENTRE:
                code |= 1 << e
        if rec.code[x] != code:
            return 16
    if rec.phase == HONK or rec.phase == DRIVE:
        for e in range(4):
            d = trace(rec, cfg, rec.pos[rec.cur], e)
            if rec.dest[e] != (d if d >= 0 and d != rec.start else -1):
                return 16
    return 0
