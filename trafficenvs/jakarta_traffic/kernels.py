"""Jakarta Traffic's verbs over one game record (rulings K1-K9), gathered from the
rules modules for ``core.verbs`` (``spec.kernels`` points here):

=============  ==============================================================
``layout``     limits, vocabulary, dtypes, observation and action layouts
``board``      tile links, path tracing and the derived caches (K2, K3, K6)
``setup``      the deal and :func:`init` (K4)
``honk``       rotate and swap (K5)
``drive``      drive, detour and the encounters where a moped parks (K6, K7)
``orders``     accepting, placing stacks, the order board, delivering (K7, K8)
``scoring``    end of a turn, end trigger, final score and result (K9, C2)
``observe``    the observation (C4)
``invariants`` the compiled rule-level check
``evaluate``   the projected-score estimate search agents cut rollouts off with
=============  ==============================================================

A turn is a few decisions, each one action of a fixed space (C3, table on the rules
page): honk (rotate/swap) or drive at once; then drive or detour; then, if the stop
offers a choice, accept/decline an order and place the rest of its stack, or deliver.
Stops that offer no choice resolve at once. The names below that tests, the greedy
player, ``render.py`` and ``game.py`` use stay importable from here.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.board import (
    blocked_bits,
    conn_at,
    follow,
    occupied_bits,
    path_end,
    refresh,
    refresh_dest,
    set_links,
    stack_at,
    trace,
)
from trafficenvs.jakarta_traffic.drive import detour, drive, park, roll_die
from trafficenvs.jakarta_traffic.evaluate import evaluate
from trafficenvs.jakarta_traffic.honk import honk_legal, honk_mask, rotate, swap
from trafficenvs.jakarta_traffic.invariants import INVARIANT_MESSAGES, check
from trafficenvs.jakarta_traffic.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DELIVER,
    A_DETOUR,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    ACCEPT,
    ADDRESSES,
    BAPAK,
    BUBBLE_BONUS,
    BUILDING,
    CELL_F,
    CENTRE,
    CFG_DTYPE,
    CHARGING,
    DELIVER,
    DETOUR_PICK,
    DRIVE,
    EDGES,
    END_STARS,
    HONK,
    IBU,
    KINDS,
    MAX_BUBBLES,
    MAX_ENERGY,
    MAX_FORCED,
    MAX_PATTERNS,
    MAX_PLAYERS,
    MAX_TILES,
    NADDR,
    NCELLS,
    NSLOTS,
    NTYPES,
    NUM_ACTIONS,
    OBS_ROUND_CAP,
    PHASES,
    PICKUP,
    PLACE,
    PLAYER_F,
    RECORD_DTYPE,
    SIDE,
    STAR_VALUES,
    STARS_PER_SLOT,
    TYPE_F,
    TYPES,
    obs_dim,
)
from trafficenvs.jakarta_traffic.observe import observe
from trafficenvs.jakarta_traffic.orders import (
    accept,
    acceptable,
    can_accept,
    deliver,
    deliverable,
    place_stack,
    slot_pays,
    wanted_slots,
)
from trafficenvs.jakarta_traffic.scoring import end_turn, final_score, finish
from trafficenvs.jakarta_traffic.setup import init

__all__ = [
    # verbs
    "init", "step", "is_legal", "legal_mask", "observe", "current_player", "is_over",
    "is_truncated", "evaluate", "RECORD_DTYPE", "CFG_DTYPE",
    # rules functions
    "blocked_bits", "conn_at", "follow", "occupied_bits", "path_end", "refresh",
    "refresh_dest", "set_links", "stack_at", "trace", "detour", "drive", "park", "roll_die",
    "honk_legal", "honk_mask", "rotate", "swap", "INVARIANT_MESSAGES", "check", "accept",
    "can_accept", "acceptable", "deliver", "deliverable", "place_stack", "slot_pays",
    "wanted_slots", "end_turn", "final_score", "finish", "obs_dim",
    # layout constants
    "A_ACCEPT", "A_CELL", "A_DECLINE", "A_DELIVER", "A_DETOUR", "A_DRIVE", "A_ROTATE",
    "A_SWAP", "ACCEPT", "ADDRESSES", "BAPAK", "BUBBLE_BONUS", "BUILDING", "CELL_F", "CENTRE",
    "CHARGING", "DELIVER", "DETOUR_PICK", "DRIVE", "EDGES", "END_STARS", "HONK",
    "IBU", "KINDS", "MAX_BUBBLES", "MAX_ENERGY", "MAX_FORCED", "MAX_PATTERNS", "MAX_PLAYERS",
    "MAX_TILES", "NADDR", "NCELLS", "NSLOTS", "NTYPES", "NUM_ACTIONS", "OBS_ROUND_CAP",
    "PHASES", "PICKUP", "PLACE", "PLAYER_F", "SIDE", "STAR_VALUES", "STARS_PER_SLOT",
    "TYPE_F", "TYPES",
]


@kernel
def current_player(rec, cfg):
    return np.int64(rec.cur)


@kernel
def is_over(rec, cfg):
    return rec.over != 0


@kernel
def is_truncated(rec, cfg):
    """K9's round cap: ``max_rounds`` rounds played and the game not over (0: no cap)."""
    return cfg.max_rounds > 0 and rec.round >= cfg.max_rounds and rec.over == 0


@kernel
def step(rec, cfg, action):
    """Play ``action`` (legal, C3) for the mover; this step's rewards go to ``rec.reward``."""
    for j in range(cfg.num_players):
        rec.reward[j] = 0.0
    if action < A_SWAP:  # K5
        rotate(rec, cfg, action - A_ROTATE)
    elif action < A_DRIVE:  # K5
        swap(rec, cfg, action - A_SWAP)
    elif action < A_DETOUR:  # K6
        drive(rec, cfg, action - A_DRIVE)
    elif action == A_DETOUR:  # K6
        detour(rec, cfg)
    elif action < A_ACCEPT:
        if rec.phase == DETOUR_PICK:  # K6 double 6
            park(rec, cfg, action - A_CELL)
        else:  # K7
            place_stack(rec, cfg, action - A_CELL)
    elif action == A_ACCEPT:  # K7
        accept(rec, cfg)
    elif action == A_DECLINE:
        end_turn(rec, cfg)
    else:  # K7, K8
        deliver(rec, cfg, action - A_DELIVER)
        end_turn(rec, cfg)


@kernel
def vacant_pickup(rec, cfg, x):
    """K7: a tile the rest of a stack may go to: a pick-up tile with no stack or moped."""
    return cfg.tile_kind[rec.cell_tile[x]] == PICKUP and (occupied_bits(rec, cfg) >> x) & 1 == 0


@kernel
def is_legal(rec, cfg, action):
    """Whether ``action`` is legal for the mover (the mask's entry, computed alone)."""
    if rec.over or action < 0 or action >= NUM_ACTIONS:
        return False
    ph = rec.phase
    if action < A_DRIVE:
        return ph == HONK and honk_legal(rec, cfg, action)
    if action < A_DETOUR:
        return (ph == HONK or ph == DRIVE) and rec.dest[action - A_DRIVE] >= 0
    if action == A_DETOUR:
        return ph == HONK or ph == DRIVE
    if action < A_ACCEPT:
        if ph == DETOUR_PICK:
            return True
        return ph == PLACE and vacant_pickup(rec, cfg, action - A_CELL)
    if action == A_ACCEPT:
        return ph == ACCEPT
    if action == A_DECLINE:
        return ph == ACCEPT or ph == DELIVER
    if ph != DELIVER:
        return False
    p = rec.cur
    return (deliverable(rec, cfg, p, rec.pos[p]) >> (action - A_DELIVER)) & 1 == 1


@kernel
def legal_mask(rec, cfg, out):
    """The mover's legal actions as 0/1 in ``out`` (all zeros once the game is over)."""
    out[:] = 0
    if rec.over:
        return
    ph = rec.phase
    if ph == HONK or ph == DRIVE:
        for e in range(4):
            if rec.dest[e] >= 0:
                out[A_DRIVE + e] = 1
        out[A_DETOUR] = 1
        if ph == HONK:
            honk_mask(rec, cfg, out)
    elif ph == DETOUR_PICK:
        for x in range(NCELLS):
            out[A_CELL + x] = 1
    elif ph == ACCEPT:
        out[A_ACCEPT] = 1
        out[A_DECLINE] = 1
    elif ph == PLACE:
        taken = occupied_bits(rec, cfg)
        for x in range(NCELLS):
            if (taken >> x) & 1 == 0 and cfg.tile_kind[rec.cell_tile[x]] == PICKUP:
                out[A_CELL + x] = 1
    else:  # DELIVER
        out[A_DECLINE] = 1
        p = rec.cur
        bits = deliverable(rec, cfg, p, rec.pos[p])
        for t in range(NTYPES):
            if (bits >> t) & 1:
                out[A_DELIVER + t] = 1
