"""Traffic Jam rules as numba kernels over one game record (rulings T1-T6).

Cards are handled as *kinds*: the distinct (time, type, joy, condition) rows of the
deck. Identical cards are interchangeable, so a hand, a road or a pile is a vector
of counts per kind, and the deck is an ordered array of kinds.

A trip is played as 2N decisions (C3): stage 1, each seat in turn picks one card
(hidden until the last seat has picked, then all are revealed onto their roads);
stage 2, each seat picks an ordered pair (car card, surprise card), revealed
together, and the trip is scored at once. Actions:

* ``0 <= a < K``: stage 1, play a card of kind ``a``;
* ``K <= a < K + K*K``: stage 2, ``a - K = car * K + surprise``.

Only the player's own hand decides legality, so hidden choices never leak.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.core.rng import rng_below, rng_seed

MAX_PLAYERS = 6
MAX_KINDS = 32
MAX_CARDS = 128
HAND_SIZE = 6
ROUNDS = 3
TRIPS = 2
NUM_TIMES = 3

TIMES = ("morning", "day", "night")
TYPES = (
    "van", "cabriolet", "buggy", "truck", "bus", "motorcycle", "hot-air balloon",
    "ice cream truck",
)
CONDITIONS = ("free", "jam", "either")
VAN, CABRIOLET, BUGGY, TRUCK, BUS, MOTORCYCLE, BALLOON, ICE_CREAM = range(8)
FREE, JAM, EITHER = range(3)

CFG_DTYPE = np.dtype(
    [
        ("num_players", np.int64),
        ("num_kinds", np.int64),
        ("deck_size", np.int64),
        ("shaping", np.bool_),
        ("kind_time", np.int8, MAX_KINDS),
        ("kind_type", np.int8, MAX_KINDS),
        ("kind_cond", np.int8, MAX_KINDS),
        ("kind_joy", np.int16, MAX_KINDS),
        ("kind_count", np.uint8, MAX_KINDS),
    ],
    align=True,
)

RECORD_DTYPE = np.dtype(
    [
        ("rng_key", np.uint64),
        ("rng_ctr", np.uint64),
        ("moves", np.int32),
        ("reward", np.float32, MAX_PLAYERS),
        ("round", np.int8),
        ("trip", np.int8),
        ("stage", np.int8),
        ("cur", np.int8),
        ("over", np.bool_),
        ("deck_n", np.int16),
        ("discard_n", np.int16),
        ("deck", np.uint8, MAX_CARDS),
        ("hand", np.uint8, (MAX_PLAYERS, MAX_KINDS)),
        ("hand_n", np.uint8, MAX_PLAYERS),
        ("road", np.uint8, MAX_KINDS),
        ("discard", np.uint8, MAX_KINDS),
        ("victory", np.uint8, (MAX_PLAYERS, MAX_KINDS)),
        ("vtotal", np.uint8, MAX_KINDS),
        ("joy", np.int16, MAX_PLAYERS),
        ("vcount", np.int16, MAX_PLAYERS),
        ("pick1", np.int8, MAX_PLAYERS),
        ("pick_car", np.int8, MAX_PLAYERS),
        ("pick_sur", np.int8, MAX_PLAYERS),
        ("last_jam", np.int8, NUM_TIMES),
        ("last_car", np.int8, MAX_PLAYERS),
        ("last_scored", np.int8, MAX_PLAYERS),
        ("winner", np.uint8, MAX_PLAYERS),
        ("scratch", np.uint8, HAND_SIZE),  # kernel work space, not game state
    ],
    align=True,
)


def obs_dim(num_players: int, num_kinds: int) -> int:
    """Length of one observation row (see docs/rules/traffic_jam.md)."""
    return 4 * num_kinds + 2 * num_players + 8


def num_actions(num_kinds: int) -> int:
    return num_kinds + num_kinds * num_kinds


# ----------------------------------------------------------------------------- chance


@njit(cache=True)
def _shuffle_deck(rec, n):
    """Fisher-Yates over ``deck[:n]`` with the record's generator (C1)."""
    for i in range(n - 1, 0, -1):
        j = rng_below(rec, i + 1)
        t = rec.deck[i]
        rec.deck[i] = rec.deck[j]
        rec.deck[j] = t


@njit(cache=True)
def _reshuffle_discard(rec, cfg):
    """T4: the discard pile, shuffled, becomes the new deck."""
    n = 0
    for k in range(cfg.num_kinds):
        for _ in range(rec.discard[k]):
            rec.deck[n] = k
            n += 1
        rec.discard[k] = 0
    rec.discard_n = 0
    _shuffle_deck(rec, n)
    rec.deck_n = n


@njit(cache=True)
def _deal(rec, cfg):
    """Deal HAND_SIZE cards to every seat, one at a time in seat order."""
    for _ in range(HAND_SIZE):
        for p in range(cfg.num_players):
            if rec.deck_n == 0:
                _reshuffle_discard(rec, cfg)
            rec.deck_n -= 1
            k = rec.deck[rec.deck_n]
            rec.hand[p, k] += 1
            rec.hand_n[p] += 1


# ----------------------------------------------------------------------------- verbs


@njit(cache=True)
def init(rec, cfg, seed):
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
    n = 0
    for k in range(cfg.num_kinds):
        for _ in range(cfg.kind_count[k]):
            rec.deck[n] = k
            n += 1
    _shuffle_deck(rec, n)
    rec.deck_n = n
    _deal(rec, cfg)


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
    b = action - K
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
        base = K + car * K
        for j in range(n):
            sur = np.int64(held[j])
            if sur != car or hand[car] >= 2:
                out[base + sur] = 1


@njit(cache=True)
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (T6, C4); the layout is documented on the rules page."""
    K = cfg.num_kinds
    N = cfg.num_players
    for k in range(K):
        out[k] = rec.hand[seat, k]
        out[K + k] = rec.road[k]
        out[2 * K + k] = rec.discard[k]
        out[3 * K + k] = rec.vtotal[k]
    o = 4 * K
    for j in range(N):
        s = seat + j
        if s >= N:
            s -= N
        out[o + 2 * j] = rec.joy[s]
        out[o + 2 * j + 1] = rec.vcount[s]
    o += 2 * N
    for j in range(7):
        out[o + j] = 0.0
    out[o + rec.stage] = 1.0
    out[o + 2 + rec.trip] = 1.0
    out[o + 4 + rec.round] = 1.0
    out[o + 7] = rec.deck_n


# ----------------------------------------------------------------------------- rules


@njit(cache=True)
def size_of_counts(cnt, t, kind_time, kind_type, num_kinds):
    """T2 size rules: the space road ``t`` takes when ``cnt[k]`` cards of each kind
    ``k`` lie on the roads (counts may be expected values: the greedy player's)."""
    van = 0.0
    ones = 0.0
    truck = 0.0
    bus = 0.0
    moto = 0.0
    for k in range(num_kinds):
        n = cnt[k]
        if n == 0 or kind_time[k] != t:
            continue
        ty = kind_type[k]
        if ty == VAN:
            van += n
        elif ty == CABRIOLET or ty == BUGGY or ty == ICE_CREAM:
            ones += n
        elif ty == TRUCK:
            truck += n
        elif ty == BUS:
            bus += n
        elif ty == MOTORCYCLE:
            moto += n
    size = 2 * van + ones
    if truck > 0:
        size += 2 * truck - 1
    if bus > 0:
        size += 1
    if moto >= 2:
        size += moto
    return size


@njit(cache=True)
def road_size(rec, cfg, t):
    """The space road ``t`` takes, from the cards on it (an integer)."""
    return np.int64(size_of_counts(rec.road, t, cfg.kind_time, cfg.kind_type, cfg.num_kinds))


@njit(cache=True)
def _count_type(rec, cfg, t, ty):
    n = 0
    for k in range(cfg.num_kinds):
        if cfg.kind_time[k] == t and cfg.kind_type[k] == ty:
            n += rec.road[k]
    return n


@njit(cache=True)
def card_scores(rec, cfg, k, jam):
    """Whether a car on a card of kind ``k`` earns its joy on its road (T2)."""
    cond = cfg.kind_cond[k]
    ok = cond == EITHER or (cond == FREE and not jam) or (cond == JAM and jam)
    ty = cfg.kind_type[k]
    if ok and (ty == BALLOON or ty == ICE_CREAM):
        ok = _count_type(rec, cfg, cfg.kind_time[k], ty) == 1
    return ok


@njit(cache=True)
def _score_trip(rec, cfg):
    """Assess every road, then pay every car; leftover road cards are discarded."""
    N = cfg.num_players
    for t in range(NUM_TIMES):
        rec.last_jam[t] = 1 if road_size(rec, cfg, t) > N else 0
    for q in range(N):
        c = rec.pick_car[q]
        rec.last_car[q] = c
        rec.last_scored[q] = 0
        if card_scores(rec, cfg, c, rec.last_jam[cfg.kind_time[c]] == 1):
            rec.last_scored[q] = 1
    # Cards are taken only after every card has been judged: a scored balloon still
    # counted as "the only balloon" for the others' judgement above.
    for q in range(N):
        if rec.last_scored[q] == 1:
            c = rec.pick_car[q]
            rec.road[c] -= 1
            rec.victory[q, c] += 1
            rec.vtotal[c] += 1
            rec.joy[q] += cfg.kind_joy[c]
            rec.vcount[q] += 1
            if cfg.shaping:
                rec.reward[q] += cfg.kind_joy[c]
        rec.pick_car[q] = -1
        rec.pick_sur[q] = -1
    for k in range(cfg.num_kinds):
        n = rec.road[k]
        rec.discard[k] += n
        rec.discard_n += n
        rec.road[k] = 0


@njit(cache=True)
def _finish(rec, cfg):
    """T5: most joy wins; ties by victory-pile size; still tied share the win (C2)."""
    N = cfg.num_players
    best_joy = -1
    best_n = -1
    for p in range(N):
        if rec.joy[p] > best_joy or (rec.joy[p] == best_joy and rec.vcount[p] > best_n):
            best_joy = rec.joy[p]
            best_n = rec.vcount[p]
    for p in range(N):
        rec.winner[p] = rec.joy[p] == best_joy and rec.vcount[p] == best_n
    rec.over = True
    write_zero_sum(rec.reward, rec.winner, N)


@njit(cache=True)
def step(rec, cfg, action):
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
            return
        for q in range(N):
            rec.road[rec.pick1[q]] += 1
            rec.pick1[q] = -1
        rec.stage = 1
        rec.cur = 0
        return
    b = action - K
    car = b // K
    sur = b - car * K
    rec.hand[p, car] -= 1
    rec.hand[p, sur] -= 1
    rec.hand_n[p] -= 2
    rec.pick_car[p] = car
    rec.pick_sur[p] = sur
    if p + 1 < N:
        rec.cur = p + 1
        return
    for q in range(N):
        rec.road[rec.pick_car[q]] += 1
        rec.road[rec.pick_sur[q]] += 1
    _score_trip(rec, cfg)
    rec.stage = 0
    rec.cur = 0
    if rec.trip + 1 < TRIPS:
        rec.trip += 1
        return
    if rec.round + 1 < ROUNDS:
        rec.trip = 0
        rec.round += 1
        _deal(rec, cfg)
        return
    _finish(rec, cfg)
