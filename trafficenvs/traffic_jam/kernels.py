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
from numba import njit

from trafficenvs.core.rng import rng_seed
from trafficenvs.traffic_jam.deal import deal, fill_deck
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
    MAX_CARDS,
    MAX_KINDS,
    MAX_PLAYERS,
    MOTORCYCLE,
    NUM_TIMES,
    RECORD_DTYPE,
    ROUNDS,
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
)


@njit(cache=True)
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
    rec.last_car[:] = -1
    rec.last_scored[:] = -1
    rec.winner[:] = False
    fill_deck(rec, cfg)
    deal(rec, cfg)


@njit(cache=True)
def current_player(rec, cfg):
    return np.int64(rec.cur)


@njit(cache=True)
def is_over(rec, cfg):
    return rec.over


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (T6, C4), written field by field of ``layout.obs_layout``."""
    K = cfg.num_kinds
    N = cfg.num_players
    # offsets read once (stores into ``out`` could alias ``cfg`` for the compiler); they
    # are uint32, which tells the compiler they are never negative (see layout.py)
    o_hand, o_road, o_disc, o_vict = cfg.ob_hand, cfg.ob_road, cfg.ob_discard, cfg.ob_victory_total
    o_stage, o_trip, o_round = cfg.ob_stage, cfg.ob_trip, cfg.ob_round
    hand = rec.hand[seat]
    for k in range(K):
        out[o_hand + k] = hand[k]
        out[o_road + k] = rec.road[k]
        out[o_disc + k] = rec.discard[k]
        out[o_vict + k] = rec.vtotal[k]
    o = cfg.ob_scores
    for j in range(N):
        s = seat + j
        if s >= N:
            s -= N
        out[o + 2 * j] = rec.joy[s]
        out[o + 2 * j + 1] = rec.vcount[s]
    for j in range(2):
        out[o_stage + j] = 0.0
        out[o_trip + j] = 0.0
    for j in range(ROUNDS):
        out[o_round + j] = 0.0
    out[o_stage + rec.stage] = 1.0
    out[o_trip + rec.trip] = 1.0
    out[o_round + rec.round] = 1.0
    out[cfg.ob_deck_left] = rec.deck_n


@njit(cache=True)
def _reveal_first(rec, cfg):
    """Stage 1 done: every hidden first card onto its road."""
    for q in range(cfg.num_players):
        rec.road[rec.pick1[q]] += 1
        rec.pick1[q] = -1
    rec.stage = 1
    rec.cur = 0


@njit(cache=True)
def _end_trip(rec, cfg):
    """Stage 2 done: reveal every pair, score the trip, then the next trip, round or end."""
    for q in range(cfg.num_players):
        rec.road[rec.pick_car[q]] += 1
        rec.road[rec.pick_sur[q]] += 1
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


@njit(cache=True)
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
    "RECORD_DTYPE", "CFG_DTYPE", "obs_dim", "num_actions", "size_of_counts", "road_size",
    "card_scores", "MAX_PLAYERS", "MAX_KINDS", "MAX_CARDS", "HAND_SIZE", "ROUNDS", "TRIPS",
    "NUM_TIMES", "TIMES", "TYPES", "CONDITIONS", "VAN", "CABRIOLET", "BUGGY", "TRUCK", "BUS",
    "MOTORCYCLE", "BALLOON", "ICE_CREAM", "FREE", "JAM", "EITHER",
]
