"""The observation, v1 (C4: everything is open; seats are ordered from the observer's),
written by the layout of ``layout.obs_layout`` into a ``uint8`` row: every category
one-hot, every count a small integer within its layout bound (``high``).

The row is zeroed first, then the blocks are written in increasing offset order. Runs
of bytes that come from a table (a cell's tile features, the row and column one-hots
of a cell) or that pack a few counts are written 8 at a time
(:func:`~trafficenvs.jakarta_traffic.rules.rowbytes.put8`, one unaligned store; the packing
below is checked against the layout's part offsets at import). A put8 may spill zeros
past its field only into entries written later. Offsets and indices are unsigned
(``U``): a signed index costs a wraparound check per store.

The derived ``drives`` block reads where each drive parks from the rules' own cache
``rec.drive_to`` (:func:`~trafficenvs.jakarta_traffic.rules.board.trace` of every cell and
edge, kept up to date along the paths through a honked tile,
:func:`~trafficenvs.jakarta_traffic.rules.board.update_drive_to`), and judges the end by K7:
the chat's energy first (:func:`~trafficenvs.jakarta_traffic.rules.drive.park`'s order),
then a pick-up by :func:`~trafficenvs.jakarta_traffic.rules.orders.acceptable` and a
delivery at the current address of a held order
(:func:`~trafficenvs.jakarta_traffic.rules.orders.points_at`, the K8 mapping that
:func:`~trafficenvs.jakarta_traffic.rules.orders.deliverable` inverts).
"""

from __future__ import annotations

import sys

import numpy as np

from trafficenvs.core.clock import horizon_left
from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.layout import (
    AD_COL,
    AD_ROW,
    ADDR_F,
    BUBBLE_BONUS,
    CELL_F,
    CELL_KIND,
    CELL_MARKER,
    CELL_ME,
    CELL_OTHERS,
    CELL_STACK,
    CELL_TILE_F,
    DIE_FACES,
    DR_COL,
    DR_DELIVER,
    DR_KIND,
    DR_MOPEDS,
    DR_PICKUP,
    DR_ROW,
    DR_STACK,
    DRIVE_F,
    MAX_POINTS,
    MAX_SCORE,
    MAX_STARS,
    NCELLS,
    NSLOTS,
    NTYPES,
    OB_CELLS,
    OB_PLAYERS,
    OBS_ROUND_CAP,
    OBS_ROUNDS_LEFT_CAP,
    PL_BUBBLES,
    PL_COL,
    PL_ENERGY,
    PL_HOLDS,
    PL_PASSENGERS,
    PL_POINTS,
    PL_ROW,
    PL_SCORE,
    PL_SPARE_CHARGING,
    PL_SPARE_ENDS,
    PL_STARS,
    PLAYER_F,
    SIDE,
    STAR_VALUES,
    TY_ADDR_COL,
    TY_ADDR_ROW,
    TY_PAYS,
    TY_SLOT,
    TY_STACK_N,
    TYPE_F,
)
from trafficenvs.jakarta_traffic.rules.orders import acceptable, points_at, slot_pays
from trafficenvs.jakarta_traffic.rules.rowbytes import get8, put8

U = np.uint64
_SIDE = U(SIDE)
_ONE = U(1)

# The packing below writes parts by position; it holds for this layout (checked here,
# so a layout change that breaks it fails at import, not silently).
assert sys.byteorder == "little", "observe packs bytes little-endian (rowbytes.put8)"
assert (CELL_KIND, CELL_TILE_F) == (4, 7)
assert (PL_ROW, PL_COL, PL_ENERGY, PL_BUBBLES, PL_STARS, PL_POINTS, PL_PASSENGERS,
        PL_SCORE, PL_HOLDS, PL_SPARE_ENDS, PL_SPARE_CHARGING, PLAYER_F) == (
    0, 5, 10, 11, 12, 13, 14, 15, 16, 21, 25, 26)
assert (DR_ROW, DR_COL, DR_KIND, DR_STACK, DR_MOPEDS, DR_DELIVER, DR_PICKUP, DRIVE_F) == (
    0, 5, 10, 13, 18, 19, 20, 21)
assert TY_ADDR_COL == TY_ADDR_ROW + SIDE
assert (CELL_STACK, CELL_MARKER, CELL_ME, CELL_OTHERS, CELL_F) == (7, 12, 13, 14, 15)
assert AD_COL == AD_ROW + SIDE


@kernel(inline="always")
def observe_cells(rec, cfg, seat, out):
    """The ``cells`` block: each cell's tile features (8 bytes from ``cfg.feat64`` by its
    code: the path ends, the kind, and a zero for the first stack byte), the stacks by
    type, the marker and the mopeds (the row is zero before)."""
    o0 = U(OB_CELLS)
    cf = U(CELL_F)
    for x in range(U(NCELLS)):
        put8(out, o0 + x * cf, cfg.feat64[rec.code[x]])
    for t in range(U(NTYPES)):
        if rec.stack_n[t] > 0:
            out[o0 + U(rec.stack_cell[t]) * cf + U(CELL_STACK) + t] = 1
    if rec.marker >= 0:
        out[o0 + U(rec.marker) * cf + U(CELL_MARKER)] = 1
    for q in range(cfg.num_players):
        o = o0 + U(rec.pos[q]) * cf
        if q == seat:
            out[o + U(CELL_ME)] = 1
        else:
            out[o + U(CELL_OTHERS)] += 1


@kernel(inline="always")
def observe_players(rec, cfg, seat, out):
    """The ``players`` block: one entry per seat, the observer's first (C4); counts
    capped at their bounds (reached only by state dicts the rules cannot reach)."""
    n = cfg.num_players
    max_pass = 2 * (n + 1)
    o = U(OB_PLAYERS)
    for j in range(n):
        s = seat + j
        if s >= n:
            s -= n
        x = rec.pos[s]
        en = np.int64(rec.energy[s])
        bub = np.int64(rec.bubbles[s])
        pts = min(np.int64(rec.points[s]), MAX_POINTS)
        score = min(pts + en + BUBBLE_BONUS[bub], MAX_SCORE)
        put8(out, o, cfg.rc_lo[x])  # row one-hot, col bytes 0-2
        put8(out, o + U(8), cfg.rc_hi[x] | U(en) << U(16) | U(bub) << U(24)
             | U(min(rec.nstars[s], MAX_STARS)) << U(32) | U(pts) << U(40)
             | U(min(rec.passengers[s], max_pass)) << U(48) | U(score) << U(56))
        held = U(0)
        for t in range(U(NTYPES)):
            held |= U(rec.held[s, t]) << (U(8) * t)
        f = cfg.feat64[cfg.tile_code[rec.spare[s]]]  # the spare at rotation 0
        put8(out, o + U(PL_HOLDS), held | (f & U(0xFFFFFF)) << U(40))
        # spare end W and "is a charging station" (the feature's charging byte); the
        # six zero bytes after them spill into the next block, written later
        put8(out, o + U(PL_SPARE_ENDS + 3), (f >> U(24)) & U(0xFF) | (f >> U(32)) & U(0xFF00))
        o += U(PLAYER_F)


@kernel(inline="always")
def observe_board(rec, cfg, out):
    """The order board: the ``types`` block (each type's slot, pay, current address and
    stack size) and the ``addresses`` block (each address slot's building). Returns each
    type's current address cell, 5 bits per type (``observe_drives`` reads it)."""
    ob = U(cfg.ob_types)
    want = U(0)
    for i in range(U(NSLOTS)):
        t = U(rec.ord_slot[i])
        b = ob + t * U(TYPE_F)
        out[b + U(TY_SLOT) + i] = 1
        j = slot_pays(rec, i)
        if j >= 0:
            out[b + U(TY_PAYS)] = STAR_VALUES[j]
        x = U(rec.addr_cell[rec.addr_slot[points_at(i)]])
        want |= x << (U(5) * t)
        r = x // _SIDE
        out[b + U(TY_ADDR_ROW) + r] = 1
        out[b + U(TY_ADDR_COL) + (x - r * _SIDE)] = 1
    for t in range(U(NTYPES)):
        out[ob + t * U(TYPE_F) + U(TY_STACK_N)] = max(rec.stack_n[t], 0)
    b = U(cfg.ob_addresses)
    for k in range(U(NSLOTS)):
        x = rec.addr_cell[rec.addr_slot[k]]
        put8(out, b, cfg.rc_lo[x])
        put8(out, b + U(8), cfg.rc_hi[x])  # its zeros spill into later entries
        b += U(ADDR_F)
    return want


@kernel(inline="always")
def observe_drives(rec, cfg, seat, out, want):
    """The derived ``drives`` block: per seat (the observer's first) and exit edge, where
    the drive parks (the rules' drive ends, cached in ``rec.drive_to``), that tile's kind and
    stack, the other mopeds there, and whether the seat could deliver or accept an order
    there (K7: the chat's energy comes first; ``want``: each type's address cell, from
    ``observe_board``). Three 8-byte stores per entry, all zero for no drive."""
    n = cfg.num_players
    cells = U(OB_CELLS)
    o = U(cfg.ob_drives)
    for j in range(n):
        s = seat + j
        if s >= n:
            s -= n
        dmask = U(0)  # cells where s could deliver (given energy)
        for t in range(U(NTYPES)):
            dmask |= U(rec.held[s, t]) << ((want >> (U(5) * t)) & U(31))
        # the types s may take (given energy), one byte each like a stack one-hot
        accb = cfg.bit_bytes[acceptable(rec, s)]
        en0 = U(rec.energy[s])
        x0 = rec.pos[s]
        for e in range(4):
            # the rules' drive end (board.trace; NO_DRIVE: none), cached; every table
            # has an all-zero entry at NO_DRIVE, and ``keep`` (all ones, or 0 there)
            # masks the rest, so an entry costs no branch
            x = U(rec.drive_to[x0, e])
            keep = cfg.keep[x]
            c = cells + x * U(CELL_F)  # at NO_DRIVE: bytes after `cells`, masked
            # that cell's kind (3 bytes) and stack one-hot (5 bytes), from `cells`
            ks = get8(out, c + U(CELL_KIND))
            # the mopeds there: "me" and "others" of `cells` (s is not there)
            m = U(out[c + U(CELL_ME)]) + U(out[c + U(CELL_OTHERS)])
            can = U(en0 + m > U(0))  # 1 energy after the chat (K7: it comes first)
            pick = can & U((ks >> U(24)) & accb != U(0))
            dlv = can & (dmask >> x) & _ONE
            put8(out, o, cfg.rc_lo[x])
            put8(out, o + U(8), (cfg.rc_hi[x] | ks << U(16)) & keep)
            put8(out, o + U(16), (ks >> U(48) | m << U(16) | dlv << U(24)
                                  | pick << U(32)) & keep)
            o += U(DRIVE_F)


@kernel(inline="always")
def observe_turn(rec, cfg, seat, out):
    """The fields after the blocks: phase, whose turn, my seat, end trigger, marker, star
    piles, dice, the round and the clocks."""
    out[U(cfg.ob_phase) + U(rec.phase)] = 1
    n = cfg.num_players
    rel = rec.cur - seat
    out[U(cfg.ob_to_move) + U(rel + n if rel < 0 else rel)] = 1
    out[U(cfg.ob_seat) + U(seat)] = 1
    out[U(cfg.ob_end_triggered)] = rec.trigger
    out[U(cfg.ob_marker_off)] = np.uint8(rec.marker < 0)
    o = U(cfg.ob_star_piles)
    for i in range(U(NSLOTS)):
        out[o + i] = rec.star_left[i]
    o = U(cfg.ob_dice)
    for k in range(U(2)):
        f = rec.dice[k]
        if f > 0:
            out[o + k * U(DIE_FACES) + U(f - 1)] = 1
    rd = rec.round
    out[U(cfg.ob_round)] = rd if rd < OBS_ROUND_CAP else OBS_ROUND_CAP
    if cfg.max_rounds > 0:
        left = max(cfg.max_rounds - rd, 0)
        out[U(cfg.ob_rounds_left)] = min(left, OBS_ROUNDS_LEFT_CAP)
    else:
        out[U(cfg.ob_rounds_left)] = 1
    out[U(cfg.ob_horizon_left)] = horizon_left(rec.moves, cfg.horizon)


@kernel
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (everything is open information; C4 seat order)."""
    out[:] = 0
    observe_cells(rec, cfg, seat, out)
    observe_players(rec, cfg, seat, out)
    want = observe_board(rec, cfg, out)
    observe_drives(rec, cfg, seat, out, want)
    observe_turn(rec, cfg, seat, out)
