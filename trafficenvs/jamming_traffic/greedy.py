"""The rule-based ("greedy") Jamming Traffic player: each decision simulated, then judged.

Strategy (also on docs/rules/jamming_traffic.md, "Strategy of the greedy player"):

* **Look one decision ahead, with the game's own rules.** The game is open
  information, so the observation holds the whole position. The player rebuilds a
  game record from it (seat to move as seat 0, the others in turn order) and plays
  each candidate action on a copy with the game's compiled ``step`` kernel: jams,
  endless jams, roundabout and one-way exits, visits and wins come out exactly as
  the game plays them (the distance estimate below also asks the kernels for the
  roundabout's forced exit). An action that starts an endless
  jam is judged by its best stop town (each tried with ``step`` too).
* **Judge a position by a race estimate.** A seat's standing is
  ``-(12 * towns it still has to visit + moves its car needs to pass its next new
  town)``. The moves are estimated on the queues: every car between the car and the
  road end it leaves by costs one move (a neutral car is moved off, 1) or two (an
  opponent's car cannot be taken, only pushed), passing a town costs one, and each
  further road costs one plus the cars on it (they must be cleared first). The
  distances from every town to the seat's nearest unvisited town come from a
  Dijkstra search on the map (one-way sign respected); the car's own first step
  honours the one-way sign and the roundabout's forced exit exactly. A dead-end
  town is passed only by a push (a steered car may not turn back, J7): a car at
  its end counts the cars still needed behind it to make the road jam, cars
  between it and the dead end block that way for good, and a dead end seen from
  afar costs 4 moves. The weight 12 makes a visit now worth more than any better
  route (take a visit now over later).
* **Race and hinder.** The value of a position is my standing minus 0.4 times the
  standing of the leading opponent. So a move that pushes my car through new towns
  (a jam, or an endless jam that carries it round a loop) wins over all, a neutral
  car cleared from in front of my car is worth a move, and when my car cannot gain,
  moves that put cars in front of the leader's car, or push it away from its next
  town, are taken, but not at the price of my own progress (0.4 < 1). Pushing an
  opponent through a town it still needs counts against the move, as it should.
* **Move phase:** play the best move if it is strictly better than ending the turn,
  else end the turn (moves are "up to", J5; a move that changes nothing is not
  played). **Place phase:** the roundabout (town and direction) or one-way sign
  (road and direction) whose position is judged best: it may free my car, force my
  car's exit the way it wants to go, or block the leader's road. **Set-up:** the
  road at home whose start is judged best. **Endless-jam stop:** the loop town whose
  stop leaves the best position.
* **Speed.** Only actions that can change the value are simulated: moves from or
  onto a road a car is on or could enter next, moves onto a full road (they start a
  jam), and placements near a car (plus one placement elsewhere, which stands for
  all the others: the old piece is gone in each). The distance fields are computed
  once per decision and only recomputed for a seat whose visits changed. The whole
  batch is one compiled loop (``prange`` over rows, each with its own scratch
  records); no Python runs per game.
* **Ties** go to ending the turn, then to the lowest action id: the player is
  deterministic (``seed`` is accepted for the common interface and not used).

It reads only the observation (the record it rebuilds holds nothing the observation
does not show; the endless jam's paused road is found as the road over 3 cars whose
loop is the observed loop), so it is a fair player, and it only plays actions the
mask allows.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trafficenvs.core.game import Game
from trafficenvs.core.player import GreedyPlayer
from trafficenvs.jamming_traffic.kernels import (
    RECORD_DTYPE,
    loop_towns_of,
    needed_towns,
    rb_exit,
    step,
)
from trafficenvs.jamming_traffic.layout import MOVE as MOVE_PHASE
from trafficenvs.jamming_traffic.layout import OB_ROAD_CARS, ROAD_SLOTS
from trafficenvs.jamming_traffic.layout import OVER as OVER_PHASE
from trafficenvs.jamming_traffic.layout import PLACE as PLACE_PHASE
from trafficenvs.jamming_traffic.layout import SETUP as SETUP_PHASE
from trafficenvs.jamming_traffic.layout import STOP as STOP_PHASE

BIG = 1e6
WIN = 1e9
#: weight of one town still to visit, in moves (a visit now beats any nearer route)
VISIT = 12.0
#: an opponent's car between my car and its exit: I cannot take it, only push it
OPP_BLOCK = 2.0
#: weight of the leading opponent's position against my own
ALPHA = 0.4
EPS = 1e-6
#: moves to pass an unvisited dead-end town from the road into it (empty it, enter,
#: fill it behind the car so that a jam pushes the car through and back)
DEAD_END = 4.0


#: fields of the game record that are the kernels' scratch space, not game state:
#: a copy for a look-ahead need not carry them (``step`` writes them before reading)
SCRATCH_FIELDS = ("sc_cnt", "sc_held", "sc_laste", "snap", "ch_code", "ch_roads", "ch_path")


def state_words(dtype: np.dtype = RECORD_DTYPE) -> int:
    """64-bit words from the start of a record that cover every non-scratch field.

    Computed from the dtype, so a field added or moved later is still copied.
    """
    end = 0
    for name in dtype.names:
        if name not in SCRATCH_FIELDS:
            ftype, off = dtype.fields[name][:2]
            end = max(end, off + ftype.itemsize)
    return (end + 7) // 8


@njit(cache=True)
def _copy(src, dst):
    """Copy the state part of one record (64-bit words: numba's byte-slice copy is
    15x slower, and the scratch fields after the state are 3/4 of the record)."""
    for k in range(src.shape[0]):
        dst[k] = src[k]


@njit(cache=True)
def _rebuild(ob, cfg, N, rec):
    """The game record seen from ``ob`` (seat to move = seat 0, the others in turn order)."""
    T = cfg.n_towns
    R = cfg.n_roads
    rec.rng_key = np.uint64(0x9E3779B97F4A7C15)
    rec.rng_ctr = np.uint64(0)
    rec.moves = 0
    rec.turn = 0
    for j in range(rec.reward.shape[0]):
        rec.reward[j] = 0.0
        rec.visited[j] = 0
        rec.home[j] = -1
        rec.winner[j] = 0
    for r in range(rec.q.shape[0]):
        for i in range(rec.q.shape[1]):
            rec.q[r, i] = -1
        rec.cnt[r] = 0
        rec.held[r] = 0
        rec.laste[r] = 0
    # every offset below is the observation layout's (cfg.ob_*, layout.obs_layout)
    for r in range(R):
        n = 0
        o = cfg.ob_roads + ROAD_SLOTS * r + OB_ROAD_CARS
        for i in range(ROAD_SLOTS):
            v = ob[o + i]
            if v > 0.5:
                rec.q[r, n] = 0 if v < 1.5 else np.int8(int(v + 0.5) - 1)
                n += 1
        rec.cnt[r] = n
        rec.held[r] = 1 if n >= 4 else 0
    o = cfg.ob_seats
    for j in range(N):
        v = np.uint32(0)
        for t in range(T):  # the part "visited" starts each seat's repeat
            if ob[o + t] > 0.5:
                v |= np.uint32(1) << np.uint32(t)
        rec.visited[j] = v
        rec.home[j] = int(ob[o + cfg.ob_seat_home] + 0.5)
        o += cfg.ob_seat_stride
    lt = np.uint32(0)
    o = cfg.ob_loop_towns
    for t in range(T):
        if ob[o + t] > 0.5:
            lt |= np.uint32(1) << np.uint32(t)
    rec.loop_towns = lt
    ph = 0
    for k in range(5):
        if ob[cfg.ob_phase + k] > 0.5:
            ph = k
    rec.phase = ph
    rec.cur = 0
    rec.moves_left = int(ob[cfg.ob_moves_left] + 0.5)
    rec.pend_rb = 1 if ob[cfg.ob_pending] > 0.5 else 0
    rec.pend_ow = 1 if ob[cfg.ob_pending + 1] > 0.5 else 0
    rec.dice[0] = 0
    rec.dice[1] = 0
    rec.forced[0] = -1
    rec.forced[1] = -1
    rec.rb_town = int(ob[cfg.ob_roundabout] + 0.5) - 1
    rec.rb_dir = int(ob[cfg.ob_roundabout + 1] + 0.5)
    rec.ow_road = int(ob[cfg.ob_one_way] + 0.5) - 1
    rec.ow_entry = int(ob[cfg.ob_one_way + 1] + 0.5)
    rec.js_road = -1
    rec.js_end = -1


@njit(cache=True)
def _locate(rec, cfg, N, cr, ci):
    """Road and queue index of every seat's car (-1: not on the board yet)."""
    for s in range(N):
        cr[s] = -1
        ci[s] = -1
    for r in range(cfg.n_roads):
        for i in range(rec.cnt[r]):
            c = rec.q[r, i]
            if c > 0:
                cr[c - 1] = r
                ci[c - 1] = i


@njit(cache=True)
def _unvisited(rec, cfg, s):
    return needed_towns(rec, cfg, s) & ~rec.visited[s]


@njit(cache=True)
def _dijkstra(rec, cfg, unv, E, done):
    """E[t]: moves from "at a road end facing town t, nothing ahead" to passing a town
    of ``unv``: 1 for such a town, else 1 + the cars on a road out of t + E[its other
    end], the shortest way (one-way sign respected; cars ahead cost a move each)."""
    T = cfg.n_towns
    for t in range(T):
        done[t] = 0
        if (unv >> np.uint32(t)) & np.uint32(1):
            # a dead end is passed only by a push (a steered car may not turn back):
            # the road into it must be emptied, entered, and filled behind the car
            E[t] = DEAD_END if cfg.deg[t] == 1 else 1.0
        else:
            E[t] = BIG
    for _ in range(T):
        b = -1
        bv = BIG
        for t in range(T):
            if done[t] == 0 and E[t] < bv:
                bv = E[t]
                b = t
        if b < 0:
            break
        done[b] = 1
        for k in range(cfg.deg[b]):
            o = cfg.inc[b, k]
            oe = cfg.inc_end[b, k]
            v = cfg.rt[o, 1 - oe]
            if done[v]:
                continue
            if o == rec.ow_road and rec.ow_entry != 1 - oe:
                continue
            c = 1.0 + rec.cnt[o] + bv
            if c < E[v]:
                E[v] = c


@njit(cache=True)
def _car_cost(rec, cfg, unv, cr, ci, E, opp_block):
    """Moves the car at queue index ``ci`` of road ``cr`` needs to pass a town of ``unv``."""
    n = rec.cnt[cr]
    best = BIG
    for x in range(2):
        if cr == rec.ow_road and rec.ow_entry == x:
            continue
        blk = 0.0
        if x == 0:
            for i in range(ci):
                blk += 1.0 if rec.q[cr, i] == 0 else opp_block
        else:
            for i in range(ci + 1, n):
                blk += 1.0 if rec.q[cr, i] == 0 else opp_block
        u = cfg.rt[cr, x]
        if (unv >> np.uint32(u)) & np.uint32(1):
            if cfg.deg[u] == 1:
                # a dead end: only a push takes the car through (J7's U-turn), and
                # the cars between it and the dead end can never leave that way
                if blk > 0:
                    continue
                c = 1.0 + max(0, 3 - n)  # fill the road behind it, then one more
            else:
                c = blk + 1.0
        elif u == rec.rb_town:
            ex = rb_exit(rec, cfg, cr, x)  # the game's own forced exit
            if ex < 0:
                continue
            o = ex >> 1
            oe = ex & 1
            c = blk + 1.0 + rec.cnt[o] + E[cfg.rt[o, 1 - oe]]
        else:
            c = BIG
            for k in range(cfg.deg[u]):
                o = cfg.inc[u, k]
                oe = cfg.inc_end[u, k]
                if o == cr or (o == rec.ow_road and oe != rec.ow_entry):
                    continue
                cc = blk + 1.0 + rec.cnt[o] + E[cfg.rt[o, 1 - oe]]
                if cc < c:
                    c = cc
        if c < best:
            best = c
    return min(best, 100.0)


@njit(cache=True)
def _value(rec, cfg, N, sc):
    """My standing (seat 0) less ALPHA times the leading opponent's.

    A seat's standing is -(VISIT * towns it still needs + moves to its next new
    town). The distance field E of a seat is the one computed for the decision's
    position (``sc.E``) unless the seat's visits changed, then it is recomputed.
    """
    _locate(rec, cfg, N, sc.cr, sc.ci)
    me = 0.0
    lead = -BIG * 10
    for s in range(N):
        unv = _unvisited(rec, cfg, s)
        if unv == 0:
            v = WIN
        else:
            left = 0
            for t in range(cfg.n_towns):
                left += (unv >> np.uint32(t)) & np.uint32(1)
            v = -sc.w[0] * left
            if sc.cr[s] >= 0:
                if unv == sc.unv[s]:
                    v -= _car_cost(rec, cfg, unv, sc.cr[s], sc.ci[s], sc.E[s], sc.w[1])
                else:
                    _dijkstra(rec, cfg, unv, sc.Et, sc.done)
                    v -= _car_cost(rec, cfg, unv, sc.cr[s], sc.ci[s], sc.Et, sc.w[1])
        if s == 0:
            if v >= WIN:
                return WIN
            me = v
        elif v > lead:
            lead = v
    if lead >= WIN:
        return -WIN
    return me - sc.w[2] * lead


@njit(cache=True)
def _after(work, side, rawa, rawb, cfg, N, sc):
    """Value of ``work`` after a step; an endless jam is stopped at its best town."""
    if work.phase != STOP_PHASE:
        return _value(work, cfg, N, sc)
    best = -WIN * 10
    lt = work.loop_towns
    for t in range(cfg.n_towns):
        if (lt >> np.uint32(t)) & np.uint32(1):
            _copy(rawa, rawb)
            step(side, cfg, cfg.a_stop + t)
            v = _value(side, cfg, N, sc)
            if v > best:
                best = v
    return best


@njit(cache=True)
def _prepare(rec, cfg, N, sc):
    """Per decision: every seat's distance field and the roads that matter to a car."""
    _locate(rec, cfg, N, sc.cr, sc.ci)
    for r in range(cfg.n_roads):
        sc.rel[r] = 0
    for t in range(cfg.n_towns):
        sc.relt[t] = 0
    for s in range(N):
        unv = _unvisited(rec, cfg, s)
        sc.unv[s] = unv
        _dijkstra(rec, cfg, unv, sc.E[s], sc.done)
        r = sc.cr[s]
        if r < 0:
            continue
        sc.rel[r] = 1
        for x in range(2):
            u = cfg.rt[r, x]
            sc.relt[u] = 1
            for k in range(cfg.deg[u]):
                sc.rel[cfg.inc[u, k]] = 1


@njit(cache=True)
def _worth_trying(rec, cfg, sc, a):
    """Whether action ``a`` can change the value at all (else it equals doing nothing).

    The value reads the counts of the roads in ``sc.rel`` (a car's road and the roads
    at the towns its road ends in), the pieces there, and visits. A move between two
    other roads that starts no jam changes none of these.
    """
    if a < cfg.n_moves:
        r = cfg.mv_road[a]
        t = cfg.rt[r, cfg.mv_end[a]]
        o = cfg.inc[t, cfg.mv_k[a]]
        return sc.rel[r] or sc.rel[o] or rec.cnt[o] >= 3
    if a < cfg.a_ow:
        return sc.relt[(a - cfg.a_rb) >> 1] != 0
    if a < cfg.a_setup:
        return sc.rel[(a - cfg.a_ow) >> 1] != 0
    return True


@njit(cache=True)
def _decide(ob, mrow, cfg, N, base, work, side, rb, rw, rs, sc):
    """The greedy action for one decision (``base``/``work``/``side``: scratch records)."""
    _rebuild(ob, cfg, N, base)
    ph = base.phase
    best = -WIN * 100
    best_a = -1
    lo = 0
    hi = 0
    rep_rb = -1
    rep_ow = -1
    if ph == STOP_PHASE:
        # the paused jam: a road over 3 on the loop whose loop is the observed one
        found = False
        for r in range(cfg.n_roads):
            if base.cnt[r] < 4 or found:
                continue
            for e in range(2):
                if loop_towns_of(base, cfg, r, e) == base.loop_towns:
                    base.js_road = r
                    base.js_end = e
                    base.held[r] = 0
                    found = True
                    break
        if not found:
            ph = OVER_PHASE
    _prepare(base, cfg, N, sc)
    if ph == MOVE_PHASE or ph == PLACE_PHASE:
        best = _value(base, cfg, N, sc)
        if ph == MOVE_PHASE:
            best += EPS
            best_a = cfg.a_end
            hi = cfg.n_moves
        else:
            lo = cfg.a_rb
            hi = cfg.a_setup
            # placements that touch no car's surroundings all have one value (the old
            # piece is gone in each): the first of each kind stands for them all
            best = -WIN * 100
            rep_rb = -1
            rep_ow = -1
            for a in range(lo, hi):
                if mrow[a] and not _worth_trying(base, cfg, sc, a):
                    if a < cfg.a_ow and rep_rb < 0:
                        rep_rb = a
                    elif a >= cfg.a_ow and rep_ow < 0:
                        rep_ow = a
    elif ph == SETUP_PHASE:
        lo = cfg.a_setup
        hi = cfg.a_stop
    elif ph == STOP_PHASE:
        lo = cfg.a_stop
        hi = cfg.a_end
    for a in range(lo, hi):
        if not mrow[a]:
            continue
        if (ph == MOVE_PHASE or ph == PLACE_PHASE) and not _worth_trying(base, cfg, sc, a) \
                and a != rep_rb and a != rep_ow:
            continue
        _copy(rb, rw)
        step(work, cfg, a)
        v = _after(work, side, rw, rs, cfg, N, sc)
        if v > best:
            best = v
            best_a = a
            if v >= WIN:
                break  # a win: nothing beats it
    if best_a < 0:
        for a in range(mrow.shape[0]):
            if mrow[a]:
                return a
    return best_a


SCRATCH_DTYPE = np.dtype([
    ("w", np.float64, 8),
    ("E", np.float64, (10, 32)),
    ("Et", np.float64, 32),
    ("done", np.uint8, 32),
    ("cr", np.int64, 10),
    ("ci", np.int64, 10),
    ("unv", np.uint32, 10),
    ("rel", np.uint8, 64),
    ("relt", np.uint8, 32),
], align=True)


@njit(cache=True, parallel=True)
def greedy_batch(obs, mask, cfg_arr, N, recs, raw, scratch, out):
    """The greedy action of every row (one compiled loop over the batch)."""
    for i in prange(obs.shape[0]):
        out[i] = _decide(obs[i], mask[i], cfg_arr[0], N, recs[3 * i], recs[3 * i + 1],
                         recs[3 * i + 2], raw[3 * i], raw[3 * i + 1], raw[3 * i + 2],
                         scratch[i])


@njit(cache=True)
def rebuild_batch(obs, cfg_arr, N, recs):
    """The game records the player sees in each observation row (seat to move = 0)."""
    for i in range(obs.shape[0]):
        _rebuild(obs[i], cfg_arr[0], N, recs[i])


class JammingTrafficGreedy(GreedyPlayer):
    """The rule-based Jamming Traffic player (strategy in the module docstring).

    ``weights`` holds the strategy's three numbers (a town still to visit, in moves;
    an opponent's car in the way, in moves; the weight of the leading opponent's
    standing): change them to try a variant, e.g. in a greedy-against-greedy arena.
    The player keeps scratch records between calls (sized for the largest batch seen)
    but no game state: any batch of positions may be passed.
    """

    game_name = "jamming_traffic"

    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy"):
        super().__init__(game, seed, name)
        self.cfg = game.cfg
        self._recs = np.zeros(0, RECORD_DTYPE)
        self.weights = np.array([VISIT, OPP_BLOCK, ALPHA], np.float64)
        self._words = state_words()

    def position(self, observation: np.ndarray) -> np.ndarray:
        """The records this player rebuilds from observation rows ``(B, obs_dim)``.

        Seat 0 of each record is the seat to move, the others follow in turn order
        (C4). Everything the rules read is there; the generator and the scratch
        fields are not the game's, nor (stop phase) the paused jam's road, which
        :meth:`act` finds itself. For tests and analysis.
        """
        obs = np.ascontiguousarray(np.atleast_2d(observation), np.float32)
        recs = np.zeros(obs.shape[0], RECORD_DTYPE)
        rebuild_batch(obs, self.cfg, self.num_players, recs)
        return recs

    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        B = obs.shape[0]
        if self._recs.shape[0] < 3 * B:
            self._recs = np.zeros(3 * B, RECORD_DTYPE)
            self._scratch = np.zeros(B, SCRATCH_DTYPE)
        self._scratch["w"][:B, : len(self.weights)] = self.weights
        recs = self._recs[: 3 * B]
        raw = recs.view(np.uint64).reshape(3 * B, RECORD_DTYPE.itemsize // 8)[:, :self._words]
        greedy_batch(obs, mask, self.cfg, self.num_players, recs, raw, self._scratch, out)
