"""The end of a turn and of the game (K9): the end trigger, the round, the final score
and its tie-breaks, and the zero-sum result (C2).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.jakarta_traffic.rules.board import refresh_dest
from trafficenvs.jakarta_traffic.rules.layout import BUBBLE_BONUS, END_STARS, HONK


@kernel
def final_score(rec, p):
    """K9: star values + 1 per energy left + 1/3/5 for 1/2/3 speech bubbles."""
    return np.int64(rec.points[p]) + rec.energy[p] + BUBBLE_BONUS[rec.bubbles[p]]


@kernel
def final_key(rec, p):
    """K9: score, then the tie-breaks (passengers, star tokens, energy), packed into one
    comparable integer."""
    key = final_score(rec, p)
    key = key * 64 + rec.passengers[p]
    key = key * 64 + rec.nstars[p]
    key = key * 8 + rec.energy[p]
    return key


@kernel
def finish(rec, cfg):
    """K9: stars + energy + bubble bonus; ties by passengers, star count, energy (C2)."""
    n = cfg.num_players
    best = np.int64(-1)
    for p in range(n):
        key = final_key(rec, p)
        if key > best:
            best = key
    for p in range(n):
        rec.winner[p] = 1 if final_key(rec, p) == best else 0
    rec.over = 1
    write_zero_sum(rec.reward, rec.winner, n)


@kernel
def end_turn(rec, cfg):
    """K9: the mover's turn ends (the end is triggered at 4 stars); the next seat's turn
    starts, or, after the last seat's turn of a triggered round, the game ends."""
    n = cfg.num_players
    p = rec.cur
    rec.pending = -1
    if rec.nstars[p] >= END_STARS:
        rec.trigger = 1
    if p == n - 1:
        rec.round += 1
        if rec.trigger:
            rec.phase = HONK
            rec.cur = 0
            rec.start = rec.pos[0]
            refresh_dest(rec, cfg)
            finish(rec, cfg)
            return
    q = p + 1
    if q >= n:
        q = 0
    rec.cur = q
    rec.phase = HONK
    rec.start = rec.pos[q]
    refresh_dest(rec, cfg)
