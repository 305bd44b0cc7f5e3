"""The honk phase (K5): rotate any street tile, or swap the spare tile in; which cells
may be honked; the honk part of the mask.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.views import as_bytes
from trafficenvs.jakarta_traffic.rules.board import (
    blocked_bits,
    refresh_dest,
    set_links,
    update_drive_to,
)
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ROTATE,
    A_SWAP,
    BUILDING,
    DRIVE,
    NCELLS,
    NO_SPARE,
)

U = np.uint64


@kernel
def _honked(rec, cfg, x):
    """After a honk of cell ``x``: its links, the drive ends through it and the drive
    targets anew, the marker on ``x``, and the drive phase."""
    set_links(rec, cfg, x)
    update_drive_to(rec, cfg, x)
    refresh_dest(rec, cfg)
    rec.marker = x
    rec.phase = DRIVE


@kernel
def rotate(rec, cfg, b):
    """K5: rotate cell ``b // 3`` by ``b % 3 + 1`` quarter turns clockwise."""
    x = b // 3
    rec.cell_rot[x] = (np.int64(rec.cell_rot[x]) + b - 3 * x + 1) & 3
    _honked(rec, cfg, x)


@kernel
def swap(rec, cfg, b):
    """K5: swap the mover's spare into cell ``b // 4`` at rotation ``b % 4``; the tile
    taken off the board becomes the spare."""
    p = rec.cur
    x = b // 4
    old = rec.cell_tile[x]
    rec.cell_tile[x] = rec.spare[p]
    rec.cell_rot[x] = b - 4 * x
    rec.spare[p] = old
    _honked(rec, cfg, x)


@kernel
def honk_legal(rec, cfg, action):
    """K5: whether rotate/swap ``action`` is legal (the honk phase is checked by the
    caller): no stack, moped or marker on the cell; a swap needs a spare and no building."""
    if action < A_SWAP:
        x = (action - A_ROTATE) // 3
        return (blocked_bits(rec, cfg) >> x) & 1 == 0
    x = (action - A_SWAP) // 4
    if rec.spare[rec.cur] == NO_SPARE or cfg.tile_kind[rec.cell_tile[x]] == BUILDING:
        return False
    return (blocked_bits(rec, cfg) >> x) & 1 == 0


@kernel
def honk_mask(rec, cfg, out):
    """K5: set the legal rotate and swap actions in ``out`` (zero there before).

    Branch-free: which cells are blocked is unpredictable from row to row, so every
    cell's 3 rotate and 4 swap entries are stored as 0 or 1 (a branch per cell cost
    more than the stores; measured at batch 4096). Indices are unsigned (no
    negative-index check per store), and ``as_bytes`` stores bytes, not bools.
    """
    free = ~U(blocked_bits(rec, cfg))
    spare = np.uint8(rec.spare[rec.cur] != NO_SPARE)
    o = as_bytes(out)
    kind = cfg.tile_kind
    tile = rec.cell_tile
    for x in range(U(NCELLS)):
        v = np.uint8((free >> x) & U(1))
        a = U(A_ROTATE) + U(3) * x
        o[a] = v
        o[a + U(1)] = v
        o[a + U(2)] = v
        s = v & spare & np.uint8(kind[tile[x]] != BUILDING)
        b = U(A_SWAP) + U(4) * x
        o[b] = s
        o[b + U(1)] = s
        o[b + U(2)] = s
        o[b + U(3)] = s
