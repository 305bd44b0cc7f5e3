"""The turn flow (J3-J5, J9): set-up, dice, placements, moves, the end of a turn, and
the verbs ``init``, ``step``, ``current_player``, ``is_over``, ``is_truncated``."""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import rng_below, rng_seed
from trafficenvs.jamming_traffic.rules.jams import jam, stop_jam
from trafficenvs.jamming_traffic.rules.layout import (
    MOVE,
    ONE_WAY,
    OVER,
    PLACE,
    ROUNDABOUT,
    SETUP,
    STOP,
)
from trafficenvs.jamming_traffic.rules.queues import put, take, visit


@kernel
def start_turn(rec, cfg):
    """Roll the two dice (or take the forced ones) for the player to move (J4)."""
    moves = 0
    rec.pend_rb = 0
    rec.pend_ow = 0
    for d in range(2):
        if rec.forced[d] >= 0:
            f = rec.forced[d]
            rec.forced[d] = -1
        else:
            f = rng_below(rec, cfg.n_faces)
        rec.dice[d] = f
        v = cfg.face_val[f]
        if v == ROUNDABOUT:
            rec.pend_rb = 1
        elif v == ONE_WAY:
            rec.pend_ow = 1
        else:
            moves += v
    rec.moves_left = moves
    # every face is a placement or a number >= 1 (checked by the Game), so a roll
    # without moves always has a placement to make
    rec.phase = PLACE if (rec.pend_rb or rec.pend_ow) else MOVE


@kernel
def end_turn(rec, cfg):
    """The turn passes to the next seat (J4), unless ``max_turns`` cuts the game (J9)."""
    rec.turn += 1
    if cfg.max_turns > 0 and rec.turn >= cfg.max_turns:
        rec.phase = OVER  # cut off, nobody wins: ``is_truncated`` (J9, C2: reward 0)
        for j in range(cfg.num_players):
            rec.winner[j] = 0
        return
    p = rec.cur + 1
    if p >= cfg.num_players:
        p = 0
    rec.cur = p
    start_turn(rec, cfg)


@kernel
def _after_move(rec, cfg):
    if rec.phase == MOVE and rec.moves_left <= 0:
        end_turn(rec, cfg)


@kernel
def init(rec, cfg, seed):
    """A new game (J2, J3): 2 neutral cars a road, homes given or drawn, set-up phase."""
    rng_seed(rec, seed)
    N = cfg.num_players
    R = cfg.n_roads
    rec.turn = 0
    rec.visited[:] = 0
    rec.winner[:] = 0
    rec.loop_towns = 0
    rec.q[:, :] = -1
    rec.car_road[:] = -1
    rec.held[:] = 0
    rec.laste[:] = 0
    rec.cnt[:] = 0
    for r in range(R):
        rec.q[r, 0] = 0
        rec.q[r, 1] = 0
        rec.cnt[r] = 2
    rec.home[:] = -1
    used = np.uint32(0)
    for p in range(N):
        t = cfg.home_given[p]
        if t < 0:
            while True:
                t = rng_below(rec, cfg.n_towns)
                if not used & (np.uint32(1) << np.uint32(t)):
                    break
        used |= np.uint32(1) << np.uint32(t)
        rec.home[p] = t
    rec.phase = SETUP
    rec.cur = 0
    rec.moves_left = 0
    rec.pend_rb = 0
    rec.pend_ow = 0
    rec.dice[:] = -1
    rec.forced[:] = -1
    rec.rb_town = -1
    rec.rb_dir = 0
    rec.ow_road = -1
    rec.ow_entry = 0
    rec.js_road = -1
    rec.js_end = -1


@kernel
def current_player(rec, cfg):
    return np.int64(rec.cur)


@kernel
def _capped(rec, cfg):
    """The game stopped at the ``max_turns`` cap with no winner (J9's truncation)."""
    if rec.phase != OVER or cfg.max_turns <= 0 or rec.turn < cfg.max_turns:
        return False
    for j in range(cfg.num_players):
        if rec.winner[j]:
            return False
    return True


@kernel
def is_over(rec, cfg):
    return rec.phase == OVER and not _capped(rec, cfg)


@kernel
def is_truncated(rec, cfg):
    return _capped(rec, cfg)


@kernel
def _setup_step(rec, cfg, action):
    """J3: the seat to choose starts on road ``action - a_setup`` at its home."""
    r = action - cfg.a_setup
    h = rec.home[rec.cur]
    x = 0 if cfg.rt[r, 0] == h else 1
    if x == 0:
        rec.q[r, 0] = rec.cur + 1
    else:
        rec.q[r, rec.cnt[r] - 1] = rec.cur + 1
    rec.car_road[rec.cur + 1] = r
    if rec.cur + 1 < cfg.num_players:
        rec.cur += 1
    else:
        rec.cur = 0
        start_turn(rec, cfg)


@kernel
def _place_step(rec, cfg, action):
    """J4: place the roundabout or the one-way sign (moving it if on the board)."""
    if action < cfg.a_ow:
        a = action - cfg.a_rb
        rec.rb_town = a >> 1
        rec.rb_dir = a & 1
        rec.pend_rb = 0
    else:
        a = action - cfg.a_ow
        rec.ow_road = a >> 1
        rec.ow_entry = a & 1
        rec.pend_ow = 0
    if not (rec.pend_rb or rec.pend_ow):
        rec.phase = MOVE
        _after_move(rec, cfg)


@kernel
def step(rec, cfg, action):
    """Play a legal ``action`` (C3); this step's rewards go to ``rec.reward``."""
    N = cfg.num_players
    for j in range(N):
        rec.reward[j] = 0.0
    ph = rec.phase
    if ph == SETUP:
        _setup_step(rec, cfg, action)
        return
    if ph == PLACE:
        _place_step(rec, cfg, action)
        return
    if ph == STOP:
        stop_jam(rec, cfg, action - cfg.a_stop)
        if rec.phase != OVER:
            _after_move(rec, cfg)
        return
    if action == cfg.a_end:
        end_turn(rec, cfg)
        return
    move(rec, cfg, action, True)


@kernel
def move(rec, cfg, action, laps_at_once):
    """Play move ``action`` and its jam (J5-J8); ``laps_at_once`` as in
    :func:`~trafficenvs.jamming_traffic.rules.jams.jam`."""
    r = cfg.mv_road[action]
    x = cfg.mv_end[action]
    t = cfg.rt[r, x]
    o = cfg.inc[t, cfg.mv_k[action]]
    oe = cfg.inc_end[t, cfg.mv_k[action]]
    rec.moves_left -= 1
    car = take(rec, r, x)
    put(rec, o, oe, car)
    if visit(rec, cfg, car, t):
        return
    if rec.cnt[o] > 3:
        if not jam(rec, cfg, o, oe, laps_at_once):
            return  # paused: the mover picks where the endless jam stops
        if rec.phase == OVER:
            return
    _after_move(rec, cfg)
