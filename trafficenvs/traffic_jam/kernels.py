"""Traffic Jam's kernel verbs over one game record (rulings T1-T6, C1-C4).

A trip is played as 2N decisions (C3): stage 1, each seat in turn picks one card
(hidden until the last seat has picked, then all are revealed onto their roads);
stage 2, each seat picks an ordered pair (car card, surprise card), revealed
together, and the trip is scored at once (``scoring.score_trip``). The action
ranges and the observation fields are named in ``layout.py``
(``action_layout``, ``obs_layout``): ``play`` ``[0, K)``, ``car_surprise``
``K + car * K + surprise``.

Only the player's own hand decides legality, so hidden choices never leak. The
game's other modules: ``layout.py`` (dtypes, limits, layouts), ``deal.py``
(shuffle, deal, reshuffle), ``scoring.py`` (sizes, joy, the end).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.clock import horizon_left
from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import rng_seed
from trafficenvs.traffic_jam.deal import deal, fill_deck
from trafficenvs.traffic_jam.determinize import determinize
from trafficenvs.traffic_jam.layout import (
    BALLOON,
    BUGGY,
    BUS,
    CABRIOLET,
    CFG_DTYPE,
    CONDITIONS,
    EITHER,
    FREE,
    HAND_SIZE,
    ICE_CREAM,
    JAM,
    JOY_CAP,
    MAX_CARDS,
    MAX_KINDS,
    MAX_PLAYERS,
    MOTORCYCLE,
    NUM_TIMES,
    NUM_TYPES,
    RECORD_DTYPE,
    ROUNDS,
    SEAT_CARDS,
    SEAT_HEAD,
    SEAT_JOY,
    SEAT_PICKED,
    SEAT_SCORED,
    TIMES,
    TRIPS,
    TRUCK,
    TYPES,
    VAN,
    num_actions,
    obs_dim,
)
from trafficenvs.traffic_jam.scoring import (
    card_scores,
    finish,
    road_size,
    score_trip,
    size_of_counts,
    size_of_slots,
)


@kernel
def init(rec, cfg, seed):
    """Set-up: a shuffled deck and 6 cards to every seat (T3, C1)."""
    rng_seed(rec, seed)
    rec.round = 0
    rec.trip = 0
    rec.stage = 0
    rec.cur = 0
    rec.over = False
    rec.discard_n = 0
    rec.hand[:, :] = 0
    rec.hand_n[:] = 0
    rec.road[:] = 0
    rec.discard[:] = 0
    rec.victory[:, :] = 0
    rec.vtotal[:] = 0
    rec.joy[:] = 0
    rec.vcount[:] = 0
    rec.pick1[:] = -1
    rec.pick_car[:] = -1
    rec.pick_sur[:] = -1
    rec.last_jam[:] = -1
    rec.shown1[:] = -1
    rec.last_car[:] = -1
    rec.last_first[:] = -1
    rec.last_sur[:] = -1
    rec.last_scored[:] = -1
    rec.winner[:] = False
    fill_deck(rec, cfg)
    deal(rec, cfg)


@kernel
def current_player(rec, cfg):
    return np.int64(rec.cur)


@kernel
def is_over(rec, cfg):
    return rec.over


@kernel
def is_legal(rec, cfg, action):
    if rec.over:
        return False
    K = cfg.num_kinds
    p = rec.cur
    if rec.stage == 0:
        return 0 <= action < K and rec.hand[p, action] > 0
    b = action - cfg.a_pair
    if b < 0 or b >= K * K:
        return False
    car = b // K
    sur = b - car * K
    if car == sur:
        return rec.hand[p, car] >= 2
    return rec.hand[p, car] >= 1 and rec.hand[p, sur] >= 1


@kernel
def legal_mask(rec, cfg, out):
    out[:] = 0
    if rec.over:
        return
    K = cfg.num_kinds
    hand = rec.hand[rec.cur]
    if rec.stage == 0:
        for k in range(K):
            if hand[k] > 0:
                out[k] = 1
        return
    # Stage 2: ordered pairs over the (at most 5) kinds in hand, listed once.
    held = rec.scratch
    n = 0
    for k in range(K):
        if hand[k] > 0:
            held[n] = k
            n += 1
    for i in range(n):
        car = np.int64(held[i])
        base = cfg.a_pair + car * K
        for j in range(n):
            sur = np.int64(held[j])
            if sur != car or hand[car] >= 2:
                out[base + sur] = 1


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


@kernel
def _reveal_first(rec, cfg):
    """Stage 1 done: every hidden first card onto its road."""
    for q in range(cfg.num_players):
        rec.road[rec.pick1[q]] += 1
        rec.shown1[q] = rec.pick1[q]
        rec.pick1[q] = -1
    rec.stage = 1
    rec.cur = 0


@kernel
def _end_trip(rec, cfg):
    """Stage 2 done: reveal every pair, score the trip, then the next trip, round or end."""
    for q in range(cfg.num_players):
        rec.road[rec.pick_car[q]] += 1
        rec.road[rec.pick_sur[q]] += 1
        rec.last_first[q] = rec.shown1[q]
        rec.last_sur[q] = rec.pick_sur[q]
        rec.shown1[q] = -1
    score_trip(rec, cfg)
    rec.stage = 0
    rec.cur = 0
    if rec.trip + 1 < TRIPS:
        rec.trip += 1
        return
    if rec.round + 1 < ROUNDS:
        rec.trip = 0
        rec.round += 1
        deal(rec, cfg)
        return
    finish(rec, cfg)


@kernel
def step(rec, cfg, action):
    """The mover's hidden pick (C3); the last seat's pick reveals (and scores) the stage."""
    N = cfg.num_players
    K = cfg.num_kinds
    for j in range(N):
        rec.reward[j] = 0.0
    p = rec.cur
    if rec.stage == 0:
        rec.hand[p, action] -= 1
        rec.hand_n[p] -= 1
        rec.pick1[p] = action
        if p + 1 < N:
            rec.cur = p + 1
        else:
            _reveal_first(rec, cfg)
        return
    b = action - cfg.a_pair
    car = b // K
    sur = b - car * K
    rec.hand[p, car] -= 1
    rec.hand[p, sur] -= 1
    rec.hand_n[p] -= 2
    rec.pick_car[p] = car
    rec.pick_sur[p] = sur
    if p + 1 < N:
        rec.cur = p + 1
    else:
        _end_trip(rec, cfg)


__all__ = [
    "init", "step", "is_legal", "legal_mask", "observe", "current_player", "is_over",
    "determinize", "RECORD_DTYPE", "CFG_DTYPE", "obs_dim", "num_actions", "size_of_counts",
    "road_size",
    "card_scores", "MAX_PLAYERS", "MAX_KINDS", "MAX_CARDS", "HAND_SIZE", "ROUNDS", "TRIPS",
    "NUM_TIMES", "TIMES", "TYPES", "CONDITIONS", "VAN", "CABRIOLET", "BUGGY", "TRUCK", "BUS",
    "MOTORCYCLE", "BALLOON", "ICE_CREAM", "FREE", "JAM", "EITHER",
]
