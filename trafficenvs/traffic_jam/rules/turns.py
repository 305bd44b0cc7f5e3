"""Traffic Jam's turn flow (T3-T6, C1-C3): set-up, the seat to move, a decision, the end.

A trip is played as 2N decisions (C3): stage 1, each seat in turn picks one card
(hidden until the last seat has picked, then all are revealed onto their roads);
stage 2, each seat picks an ordered pair (car card, surprise card), revealed
together, and the trip is scored at once (``scoring.score_trip``). The action
ranges are named in ``layout.action_layout``: ``play`` ``[0, K)``, ``car_surprise``
``K + car * K + surprise``.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import rng_seed
from trafficenvs.traffic_jam.rules.deal import deal, fill_deck
from trafficenvs.traffic_jam.rules.layout import (
    ROUNDS,
    TRIPS,
)
from trafficenvs.traffic_jam.rules.scoring import (
    finish,
    score_trip,
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
