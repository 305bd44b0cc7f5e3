"""Traffic Jam's assessment and joy (T2, T5): road sizes, which cars score, the end.

``size_of_counts`` is public: the greedy player evaluates expected road sizes with
the very same size rules.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.traffic_jam.rules.layout import (
    BALLOON,
    BUGGY,
    BUS,
    CABRIOLET,
    EITHER,
    FREE,
    ICE_CREAM,
    JAM,
    MOTORCYCLE,
    NUM_TIMES,
    NUM_TYPES,
    TRUCK,
    VAN,
)


@kernel
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
    return size_of_types(van, ones, truck, bus, moto)


@kernel
def size_of_types(van, ones, truck, bus, moto):
    """T2: the space of a road holding ``van`` vans, ``ones`` cards of size one
    (cabriolets, buggies, ice-cream trucks), and so many trucks, buses and motorcycles."""
    size = 2 * van + ones
    if truck > 0:
        size += 2 * truck - 1
    if bus > 0:
        size += 1
    if moto >= 2:
        size += moto
    return size


@kernel
def size_of_slots(work, t):
    """T2: the space road ``t`` takes, from a tally of its cards per type (slot
    ``8 t + type``, as :func:`_tally` and the observation's stage-1 sizes fill it)."""
    b = t * NUM_TYPES
    return size_of_types(np.int64(work[b + VAN]),
                         np.int64(work[b + CABRIOLET]) + np.int64(work[b + BUGGY])
                         + np.int64(work[b + ICE_CREAM]),
                         np.int64(work[b + TRUCK]), np.int64(work[b + BUS]),
                         np.int64(work[b + MOTORCYCLE]))


@kernel
def road_size(rec, cfg, t):
    """The space road ``t`` takes, from the cards on it (an integer)."""
    return np.int64(size_of_counts(rec.road, t, cfg.kind_time, cfg.kind_type, cfg.num_kinds))


@kernel
def _count_type(rec, cfg, t, ty):
    n = 0
    for k in range(cfg.num_kinds):
        if cfg.kind_time[k] == t and cfg.kind_type[k] == ty:
            n += rec.road[k]
    return n


@kernel
def card_scores(rec, cfg, k, jam):
    """Whether a car on a card of kind ``k`` earns its joy on its road (T2)."""
    ty = cfg.kind_type[k]
    same = 0
    if ty == BALLOON or ty == ICE_CREAM:
        same = _count_type(rec, cfg, cfg.kind_time[k], ty)
    return _scores(cfg, k, jam, same)


@kernel
def _scores(cfg, k, jam, same):
    """:func:`card_scores` given ``same``, the cards of ``k``'s type on its road (a
    balloon or an ice-cream truck scores only alone of its type there)."""
    cond = cfg.kind_cond[k]
    ok = cond == EITHER or (cond == FREE and not jam) or (cond == JAM and jam)
    ty = cfg.kind_type[k]
    if ok and (ty == BALLOON or ty == ICE_CREAM):
        ok = same == 1
    return ok


@kernel
def _tally(rec, cfg):
    """The cards on the roads per (road, type), in ``rec.scratch`` (slot ``8 t + type``,
    the kinds' ``kind_slot``): one pass over the kinds with no branch, where a size per
    road by :func:`size_of_counts` walked the kinds three times with a branch per kind
    (which kinds lie on the roads is unpredictable; it was a tenth of a step)."""
    work = rec.scratch
    for i in range(NUM_TIMES * NUM_TYPES):
        work[i] = 0
    slot = cfg.kind_slot
    road = rec.road
    for k in range(cfg.num_kinds):
        work[slot[k]] += road[k]


@kernel
def score_trip(rec, cfg):
    """Assess every road, then pay every car; leftover road cards are discarded."""
    N = cfg.num_players
    _tally(rec, cfg)
    work = rec.scratch
    for t in range(NUM_TIMES):
        rec.last_jam[t] = 1 if size_of_slots(work, t) > N else 0
    for q in range(N):
        c = rec.pick_car[q]
        rec.last_car[q] = c
        rec.last_scored[q] = 0
        jam = rec.last_jam[cfg.kind_time[c]] == 1
        if _scores(cfg, c, jam, work[cfg.kind_slot[c]]):
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


@kernel
def finish(rec, cfg):
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
