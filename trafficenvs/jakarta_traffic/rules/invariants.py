"""Rule-level invariants of a record, as a compiled check (tests run it after every
step): tiles, tokens, stars, limits and the derived caches (K2-K9).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.board import conn_at, drive_target, trace
from trafficenvs.jakarta_traffic.rules.layout import (
    BAPAK,
    BUILDING,
    CENTRE,
    DELIVER,
    DRIVE,
    END_STARS,
    HONK,
    IBU,
    MAX_BUBBLES,
    MAX_ENERGY,
    NADDR,
    NCELLS,
    NO_DRIVE,
    NSLOTS,
    NTYPES,
    PICKUP,
    STAR_VALUES,
    STARS_PER_SLOT,
)

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
    "the cached tile links, drive ends or drive targets are out of date",
)


@kernel
def _check_tiles(rec, cfg):
    """Every tile once, the five buildings on the board (codes 1-3)."""
    seen = np.int64(0)
    nb = 0
    for i in range(NCELLS + cfg.num_players):
        t = rec.cell_tile[i] if i < NCELLS else rec.spare[i - NCELLS]
        if t >= cfg.num_tiles or (seen >> t) & 1:
            return 1
        seen |= np.int64(1) << t
        if cfg.tile_kind[t] == BUILDING:
            if i >= NCELLS:
                return 3
            nb += 1
    return 0 if nb == NADDR else 2


@kernel
def _check_players(rec, cfg):
    """Energy, bubbles, orders held, passengers and mopeds per seat (codes 4-8, 13)."""
    for p in range(cfg.num_players):
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
    return 0


@kernel
def _check_orders(rec, cfg):
    """Order tokens conserved, stacks on distinct pick-up tiles, the order board a
    permutation (codes 8-10)."""
    n = cfg.num_players
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
    return 0


@kernel
def _check_stars(rec, cfg):
    """Star tokens conserved and counted; returns (code 11/12 or 0, most stars held)."""
    n = cfg.num_players
    for s in range(NSLOTS):
        tot = np.int64(rec.star_left[s])
        for p in range(n):
            tot += rec.stars[p, s]
        if tot != STARS_PER_SLOT:
            return 11, 0
    most = 0
    for p in range(n):
        c = 0
        pts = 0
        for s in range(NSLOTS):
            c += rec.stars[p, s]
            pts += rec.stars[p, s] * STAR_VALUES[s]
        if c != rec.nstars[p] or pts != rec.points[p]:
            return 12, 0
        most = max(most, c)
    return 0, most


@kernel
def _check_caches(rec, cfg):
    """The derived caches (links, code, drive_to, dest) match the board (code 16)."""
    for x in range(NCELLS):
        code = cfg.tile_kind[rec.cell_tile[x]] << 4
        for e in range(4):
            if rec.links[x, e] != conn_at(rec, cfg, x, e):
                return 16
            if rec.links[x, e] == CENTRE:
                code |= 1 << e
        if rec.code[x] != code:
            return 16
    for x in range(NCELLS):
        for e in range(4):
            d = trace(rec, cfg, x, e)
            if rec.drive_to[x, e] != (d if d >= 0 and d != x else NO_DRIVE):
                return 16
    if rec.phase == HONK or rec.phase == DRIVE:
        for e in range(4):
            if rec.dest[e] != drive_target(rec, cfg, e):
                return 16
    return 0


@kernel
def check(rec, cfg):
    """0 if ``rec`` keeps every rule-level invariant, else the index of the broken one in
    :data:`INVARIANT_MESSAGES` (a compiled check, so tests can run it after every step)."""
    code = _check_tiles(rec, cfg)
    if code == 0:
        code = _check_players(rec, cfg)
    if code == 0:
        code = _check_orders(rec, cfg)
    if code != 0:
        return code
    code, most = _check_stars(rec, cfg)
    if code != 0:
        return code
    if rec.marker < -1 or rec.marker >= NCELLS:
        return 13
    if rec.cur < 0 or rec.cur >= cfg.num_players or rec.phase < 0 or rec.phase > DELIVER:
        return 14
    if rec.phase == HONK and rec.start != rec.pos[rec.cur]:
        return 14
    if (rec.trigger != 0) != (most >= END_STARS) or (rec.over and not rec.trigger):
        return 15
    return _check_caches(rec, cfg)
