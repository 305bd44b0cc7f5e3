"""A seat's observation of Traffic Jam (C4), written by the layout ``layout.obs_layout``.

Hidden cards (the other seats' hands, face-down picks, the deck) never reach it.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.clock import horizon_left
from trafficenvs.core.jit import kernel
from trafficenvs.traffic_jam.rules.layout import (
    JOY_CAP,
    NUM_TIMES,
    NUM_TYPES,
    SEAT_CARDS,
    SEAT_HEAD,
    SEAT_JOY,
    SEAT_PICKED,
    SEAT_SCORED,
)
from trafficenvs.traffic_jam.rules.scoring import (
    size_of_slots,
)


@kernel
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (T6, C4), written field by field of ``layout.obs_layout``.

    Everything it writes is public, or this seat's own (its hand, its face-down cards);
    never another seat's hidden pick or the deck order. The derived features (road sizes,
    sizes with a kind added, unseen cards) come from the same public counts.
    """
    u64 = np.uint64
    N = cfg.num_players
    K = u64(cfg.num_kinds)
    # offsets read once (stores into ``out`` could alias ``cfg`` for the compiler), all
    # unsigned like the indices, which tells the compiler they are never negative (a
    # signed index costs a negative-index check per store; mixed ones run 3x slower)
    o_hand, o_pick, o_car = u64(cfg.ob_hand), u64(cfg.ob_my_pick), u64(cfg.ob_my_car)
    o_disc, o_unseen = u64(cfg.ob_discard), u64(cfg.ob_unseen)
    o_with, o_size = u64(cfg.ob_size_with), u64(cfg.ob_road_size)
    stride = u64(cfg.ob_seat_stride)
    for i in range(u64(out.shape[0])):
        out[i] = 0
    # my face-down cards of this stage (none for the seat to move)
    if rec.pick1[seat] >= 0:
        out[o_pick + u64(rec.pick1[seat])] = 1
    if rec.pick_car[seat] >= 0:
        out[o_car + u64(rec.pick_car[seat])] = 1
        out[o_pick + u64(rec.pick_sur[seat])] = 1
    hand = rec.hand[seat]
    road = rec.road
    disc = rec.discard
    vtotal = rec.vtotal
    kcount = cfg.kind_count
    for k in range(K):
        h = hand[k]
        d = disc[k]
        out[o_hand + k] = h
        out[o_disc + k] = d
        out[o_unseen + k] = kcount[k] - h - road[k] - d - vtotal[k]
    # ... less my own face-down cards (this stage's: a first card, or a car and surprise)
    if rec.pick1[seat] >= 0:
        out[o_unseen + u64(rec.pick1[seat])] -= 1
    if rec.pick_car[seat] >= 0:
        out[o_unseen + u64(rec.pick_car[seat])] -= 1
        out[o_unseen + u64(rec.pick_sur[seat])] -= 1
    # per road: its size now, and with one more card of each kind (T2). The cards on the
    # roads are the stage-1 cards shown: none in stage 0, when a card adds its own size
    kadd = cfg.kind_add
    if rec.stage == 0:
        for k in range(K):
            out[o_with + k] = kadd[u64(3) * k]
    else:
        # the N cards per (road, type), in the record's work space
        work = rec.scratch
        for i in range(u64(NUM_TIMES * NUM_TYPES)):
            work[i] = 0
        for q in range(N):
            work[cfg.kind_slot[rec.shown1[q]]] += 1
        for t in range(NUM_TIMES):
            out[o_size + u64(t)] = size_of_slots(work, t)
        kslot = cfg.kind_slot
        ktime = cfg.kind_time
        for k in range(K):
            c = work[kslot[k]]
            out[o_with + k] = out[o_size + u64(ktime[k])] + kadd[u64(3) * k + (c if c < 2 else 2)]
    # per seat, me first (C4)
    base = u64(cfg.ob_seats)
    stage1 = rec.stage == 1
    for j in range(N):
        s = seat + j
        if s >= N:
            s -= N
        joy = rec.joy[s]
        out[base + u64(SEAT_JOY)] = joy if joy < JOY_CAP else JOY_CAP
        out[base + u64(SEAT_CARDS)] = rec.vcount[s]
        picked = rec.pick_car[s] >= 0 if stage1 else rec.pick1[s] >= 0
        out[base + u64(SEAT_PICKED)] = picked
        out[base + u64(SEAT_SCORED)] = rec.last_scored[s] == 1
        o = base + u64(SEAT_HEAD)
        vict = rec.victory[s]
        for k in range(K):
            out[o + k] = vict[k]
        o += K
        if rec.shown1[s] >= 0:
            out[o + u64(rec.shown1[s])] = 1
        o += K
        if rec.last_first[s] >= 0:
            out[o + u64(rec.last_first[s])] = 1
        o += K
        if rec.last_car[s] >= 0:
            out[o + u64(rec.last_car[s])] = 1
        o += K
        if rec.last_sur[s] >= 0:
            out[o + u64(rec.last_sur[s])] = 1
        base += stride
    o = u64(cfg.ob_last_jam)
    for t in range(u64(NUM_TIMES)):
        out[o + t] = rec.last_jam[t] == 1
    out[u64(cfg.ob_stage) + u64(rec.stage)] = 1
    out[u64(cfg.ob_trip) + u64(rec.trip)] = 1
    out[u64(cfg.ob_round) + u64(rec.round)] = 1
    out[u64(cfg.ob_deck_left)] = rec.deck_n
    out[u64(cfg.ob_horizon_left)] = horizon_left(rec.moves, cfg.horizon)
