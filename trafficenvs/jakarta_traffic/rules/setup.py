"""Set-up (K4): dealing the tiles into rows, the order stacks (one per row and column),
the order board, the mopeds on charging stations, and :func:`init`.

Every draw comes from the record's generator (C1), in a fixed order, so a seed fixes
the whole deal.
"""

from __future__ import annotations

from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import rng_below, rng_seed, rng_shuffle
from trafficenvs.jakarta_traffic.rules.board import refresh
from trafficenvs.jakarta_traffic.rules.layout import (
    BUILDING,
    CHARGING,
    HONK,
    MAX_ENERGY,
    MAX_FORCED,
    MAX_PLAYERS,
    NADDR,
    NCELLS,
    NO_SPARE,
    NPERMS,
    NSLOTS,
    NTYPES,
    PICKUP,
    SIDE,
    STARS_PER_SLOT,
)


@kernel(inline="always")  # it returns a view: inlined, no NRT needed
def _work(rec):
    """The set-up's work space (shuffles): the ``drive_to`` cache's bytes, free until
    :func:`~trafficenvs.jakarta_traffic.rules.board.refresh` derives the drive ends at the end
    of :func:`init` (so the record needs no work space of its own)."""
    return rec.drive_to.reshape(NCELLS * 4)


@kernel
def _shuffle_ids(rec, cfg, kind):
    """The ids of the tiles of ``kind``, shuffled into ``_work(rec)``."""
    nk = cfg.n_kind[kind]
    for i in range(nk):
        _work(rec)[i] = cfg.kind_ids[kind, i]
    rng_shuffle(rec, _work(rec), nk)


@kernel
def deal_piles(rec, cfg):
    """K4: 3 pick-up tiles, 1 charging station and 1 building into each row (in columns
    0-2, 3 and 4; :func:`arrange_row` places them); one more pick-up tile per player as
    their spare."""
    n = cfg.num_players
    _shuffle_ids(rec, cfg, PICKUP)  # 15 on the board, then one spare per player
    for p in range(n):
        rec.spare[p] = _work(rec)[15 + p]
    for p in range(n, MAX_PLAYERS):
        rec.spare[p] = NO_SPARE
    for r in range(SIDE):
        for k in range(3):
            rec.cell_tile[r * SIDE + k] = _work(rec)[r * 3 + k]
    for kind in (CHARGING, BUILDING):  # 5 of each at random
        _shuffle_ids(rec, cfg, kind)
        for r in range(SIDE):
            rec.cell_tile[r * SIDE + 3 + (kind - CHARGING)] = _work(rec)[r]


@kernel
def arrange_row(rec, r, prev):
    """K4: row ``r``'s building goes to a column other than ``prev`` (the row above's:
    no two buildings orthogonally adjacent), its charging station to one of the other
    four, the pick-up tiles in order around them. Returns the building's column."""
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
    return b


@kernel
def layout_fits(rec, cfg, i):
    """K4: whether stack layout ``cfg.perms[i]`` (a column per row) puts every stack on
    a pick-up tile."""
    for r in range(SIDE):
        if cfg.tile_kind[rec.cell_tile[r * SIDE + cfg.perms[i, r]]] != PICKUP:
            return False
    return True


@kernel
def deal_board(rec, cfg):
    """One random deal of the tiles into rows, with random rotations; returns the number
    of legal stack layouts."""
    deal_piles(rec, cfg)
    prev = -1
    for r in range(SIDE):
        prev = arrange_row(rec, r, prev)
    for x in range(NCELLS):
        rec.cell_rot[x] = rng_below(rec, 4)
    count = 0
    for i in range(NPERMS):
        if layout_fits(rec, cfg, i):
            count += 1
    return count


@kernel
def place_stacks(rec, cfg, count):
    """K4: one stack of ``players + 1`` per type, exactly one per row and per column on
    pick-up tiles (uniform over the ``count`` layouts the deal allows)."""
    k = rng_below(rec, count)
    perm = -1
    for i in range(NPERMS):
        if layout_fits(rec, cfg, i):
            if k == 0:
                perm = i
                break
            k -= 1
    for t in range(NTYPES):
        _work(rec)[t] = t
    rng_shuffle(rec, _work(rec), NTYPES)
    for r in range(SIDE):
        t = _work(rec)[r]
        rec.stack_cell[t] = r * SIDE + cfg.perms[perm, r]
        rec.stack_n[t] = cfg.num_players + 1


@kernel
def set_order_board(rec, cfg):
    """K4/K8: one token per type in the order slots and the addresses in theirs, in
    random order; five stars per slot. Notes each address's building cell."""
    for t in range(NTYPES):
        _work(rec)[t] = t
    rng_shuffle(rec, _work(rec), NTYPES)
    for i in range(NSLOTS):
        rec.ord_slot[i] = _work(rec)[i]
    for a in range(NADDR):
        _work(rec)[a] = a
    rng_shuffle(rec, _work(rec), NADDR)
    for i in range(NSLOTS):
        rec.addr_slot[i] = _work(rec)[i]
        rec.star_left[i] = STARS_PER_SLOT
    for x in range(NCELLS):
        if cfg.tile_kind[rec.cell_tile[x]] == BUILDING:
            rec.addr_cell[cfg.tile_addr[rec.cell_tile[x]]] = x


@kernel
def seat_players(rec, cfg):
    """K4: mopeds on distinct random charging stations, full batteries, nothing held."""
    n = cfg.num_players
    m = 0
    for x in range(NCELLS):
        if cfg.tile_kind[rec.cell_tile[x]] == CHARGING:
            _work(rec)[m] = x
            m += 1
    rng_shuffle(rec, _work(rec), m)
    for p in range(MAX_PLAYERS):
        rec.pos[p] = _work(rec)[p] if p < n else -1
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


@kernel
def init(rec, cfg, seed):
    """A new game from ``seed`` (K4; C1): deal, stacks, order board, mopeds; seat 0 to
    honk, the marker off the board."""
    rng_seed(rec, seed)
    count = deal_board(rec, cfg)
    for _ in range(10_000):  # a deal with no stack layout is dealt again (rare)
        if count > 0:
            break
        count = deal_board(rec, cfg)
    place_stacks(rec, cfg, count)
    set_order_board(rec, cfg)
    seat_players(rec, cfg)
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
    refresh(rec, cfg)  # also overwrites the work space (the drive_to cache)
