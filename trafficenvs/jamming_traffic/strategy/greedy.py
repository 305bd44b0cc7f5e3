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

It reads only the observation, by the layout's names (the record it rebuilds holds
nothing the observation does not show: every car on every road, the pieces, and in
the stop phase the paused jam's road and entry end), so it is a fair player, and it
only plays actions the mask allows.

The player is in three modules: ``position.py`` rebuilds the record from the
observation, ``estimate.py`` holds the race estimate, and this module the
decision (which actions to simulate, and the best of them) and the player class.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trafficenvs.core.game import Game
from trafficenvs.core.jit import kernel
from trafficenvs.core.player import GreedyPlayer
from trafficenvs.core.records import as_kernel_array
from trafficenvs.core.threads import batched
from trafficenvs.jamming_traffic.rules.layout import MOVE as MOVE_PHASE
from trafficenvs.jamming_traffic.rules.layout import OVER as OVER_PHASE
from trafficenvs.jamming_traffic.rules.layout import PLACE as PLACE_PHASE
from trafficenvs.jamming_traffic.rules.layout import RECORD_DTYPE
from trafficenvs.jamming_traffic.rules.layout import SETUP as SETUP_PHASE
from trafficenvs.jamming_traffic.rules.layout import STOP as STOP_PHASE
from trafficenvs.jamming_traffic.rules.observe import observe
from trafficenvs.jamming_traffic.rules.turns import current_player, step
from trafficenvs.jamming_traffic.strategy.estimate import (
    ALPHA,
    OPP_BLOCK,
    VISIT,
    WIN,
    dijkstra,
    locate,
    unvisited,
    value,
)
from trafficenvs.jamming_traffic.strategy.position import (
    SCRATCH_FIELDS,
    copy_state,
    rebuild,
    rebuild_batch,
    state_words,
    v0_stop_view,
)

__all__ = ["SCRATCH_DTYPE", "SCRATCH_FIELDS", "JammingTrafficGreedy", "greedy_batch",
           "rebuild_batch", "state_words"]

#: the margin by which a move must beat ending the turn (ties go to ending it)
EPS = 1e-6


@kernel
def _after(work, side, rawa, rawb, cfg, N, sc):
    """Value of ``work`` after a step; an endless jam is stopped at its best town."""
    if work.phase != STOP_PHASE:
        return value(work, cfg, N, sc)
    best = -WIN * 10
    lt = work.loop_towns
    for t in range(cfg.n_towns):
        if (lt >> np.uint32(t)) & np.uint32(1):
            copy_state(rawa, rawb)
            step(side, cfg, cfg.a_stop + t)
            v = value(side, cfg, N, sc)
            if v > best:
                best = v
    return best


@kernel
def _prepare(rec, cfg, N, sc):
    """Per decision: every seat's distance field and the roads that matter to a car."""
    locate(rec, cfg, N, sc.cr, sc.ci)
    for r in range(cfg.n_roads):
        sc.rel[r] = 0
    for t in range(cfg.n_towns):
        sc.relt[t] = 0
    for s in range(N):
        unv = unvisited(rec, cfg, s)
        sc.unv[s] = unv
        dijkstra(rec, cfg, unv, sc.E[s], sc.done)
        r = sc.cr[s]
        if r < 0:
            continue
        sc.rel[r] = 1
        for x in range(2):
            u = cfg.rt[r, x]
            sc.relt[u] = 1
            for k in range(cfg.deg[u]):
                sc.rel[cfg.inc[u, k]] = 1


@kernel
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


@kernel
def _action_range(ph, cfg):
    """The actions ``lo..hi - 1`` a decision of phase ``ph`` chooses among (none when
    the game is over)."""
    if ph == MOVE_PHASE:
        return 0, cfg.n_moves
    if ph == PLACE_PHASE:
        return cfg.a_rb, cfg.a_setup
    if ph == SETUP_PHASE:
        return cfg.a_setup, cfg.a_stop
    if ph == STOP_PHASE:
        return cfg.a_stop, cfg.a_end
    return 0, 0


@kernel
def _stand_ins(base, mrow, cfg, sc, lo, hi):
    """Place phase: the first legal roundabout and the first legal one-way placement
    that touch no car's surroundings (-1: none). All such placements have one value
    (the old piece is gone in each), so the first of each kind stands for them all."""
    rep_rb = -1
    rep_ow = -1
    for a in range(lo, hi):
        if mrow[a] and not _worth_trying(base, cfg, sc, a):
            if a < cfg.a_ow and rep_rb < 0:
                rep_rb = a
            elif a >= cfg.a_ow and rep_ow < 0:
                rep_ow = a
    return rep_rb, rep_ow


@kernel
def _search(ph, mrow, cfg, N, base, work, side, rb, rw, rs, sc, best, best_a):
    """The best action of the phase, each simulated on ``work`` (a copy of ``base``
    through its words ``rb`` -> ``rw``); ``best``/``best_a``: the value to beat and
    the action kept if none beats it."""
    lo, hi = _action_range(ph, cfg)
    sift = ph == MOVE_PHASE or ph == PLACE_PHASE
    rep_rb = -1
    rep_ow = -1
    if ph == PLACE_PHASE:
        rep_rb, rep_ow = _stand_ins(base, mrow, cfg, sc, lo, hi)
    for a in range(lo, hi):
        if not mrow[a]:
            continue
        if sift and not _worth_trying(base, cfg, sc, a) and a != rep_rb and a != rep_ow:
            continue
        copy_state(rb, rw)
        step(work, cfg, a)
        v = _after(work, side, rw, rs, cfg, N, sc)
        if v > best:
            best = v
            best_a = a
            if v >= WIN:
                break  # a win: nothing beats it
    return best_a


@kernel
def _decide(ob, mrow, cfg, N, base, work, side, rb, rw, rs, sc, stop_as_v0):
    """The greedy action for one decision (``base``/``work``/``side``: scratch records)."""
    rebuild(ob, cfg, N, base)
    ph = base.phase
    if ph == STOP_PHASE and stop_as_v0:
        v0_stop_view(base, cfg)
    if ph == STOP_PHASE and base.js_road < 0:
        ph = OVER_PHASE
    _prepare(base, cfg, N, sc)
    best = -WIN * 100
    best_a = -1
    if ph == MOVE_PHASE:  # a move must beat ending the turn
        best = value(base, cfg, N, sc) + EPS
        best_a = cfg.a_end
    best_a = _search(ph, mrow, cfg, N, base, work, side, rb, rw, rs, sc, best, best_a)
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


@batched
@njit(cache=True, parallel=True)
def greedy_batch(obs, mask, cfg_arr, N, recs, raw, scratch, out, stop_as_v0):
    """The greedy action of every row (one compiled loop over the batch)."""
    for i in prange(obs.shape[0]):
        out[i] = _decide(obs[i], mask[i], cfg_arr[0], N, recs[3 * i], recs[3 * i + 1],
                         recs[3 * i + 2], raw[3 * i], raw[3 * i + 1], raw[3 * i + 2],
                         scratch[i], stop_as_v0)


@kernel
def rollout_move(rec, cfg, mask, gs, i):
    """The ``greedy`` verb: this player's move for the seat to move in ``rec`` (a search's
    determinized copy), through that seat's observation like every other decision;
    ``gs``: :meth:`JammingTrafficGreedy.rollout_scratch`, row ``i``."""
    recs, raw, sc, ob = gs
    observe(rec, cfg, current_player(rec, cfg), ob[i])
    k = 3 * i
    return _decide(ob[i], mask, cfg, cfg.num_players, recs[k], recs[k + 1], recs[k + 2],
                   raw[k], raw[k + 1], raw[k + 2], sc[i], False)


class JammingTrafficGreedy(GreedyPlayer):
    """The rule-based Jamming Traffic player (strategy in the module docstring).

    ``weights`` holds the strategy's three numbers (a town still to visit, in moves;
    an opponent's car in the way, in moves; the weight of the leading opponent's
    standing): change them to try a variant, e.g. in a greedy-against-greedy arena.
    The player keeps scratch records between calls (sized for the largest batch seen)
    but no game state: any batch of positions may be passed.

    ``stop_as_v0`` (default True): in the stop phase, see the position as the v0
    observation showed it, which did not show the paused jam nor a road's fifth
    place: the paused road is guessed as the first road over 3 cars whose loop is
    the observed one, and a fifth car is not seen (``position.v0_stop_view``).
    That keeps every choice of the v0 player (the play digests check it). False uses
    what v1 shows; it differs only at endless-jam stops where two roads hold 4 or
    more cars and the guess was wrong (or a fifth car mattered).
    """

    game_name = "jamming_traffic"

    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy",
                 stop_as_v0: bool = True):
        super().__init__(game, seed, name)
        self.cfg = game.cfg
        self._recs = as_kernel_array(np.zeros(0, RECORD_DTYPE))
        self.weights = np.array([VISIT, OPP_BLOCK, ALPHA], np.float64)
        self._words = state_words()
        self.stop_as_v0 = bool(stop_as_v0)

    def position(self, observation: np.ndarray) -> np.ndarray:
        """The records this player rebuilds from observation rows ``(B, obs_dim)``.

        Seat 0 of each record is the seat to move, the others follow in turn order
        (C4). Everything the rules read is there (in the stop phase the paused jam
        too); the generator, the turn counter and the scratch fields are not the
        game's. For tests and analysis.
        """
        obs = np.ascontiguousarray(np.atleast_2d(observation), self.game.obs_dtype)
        recs = as_kernel_array(np.zeros(obs.shape[0], RECORD_DTYPE))
        rebuild_batch(obs, self.cfg, self.num_players, recs)
        return recs

    def rollout_scratch(self, b: int) -> tuple[np.ndarray, ...]:
        """Scratch for :func:`rollout_move` in ``b`` rows (search agents' rollouts):
        three look-ahead records per row, their state words, the estimate's scratch
        (with this player's weights) and an observation row. It sees v1 as it is
        (``stop_as_v0`` is for the digests of the arena player only)."""
        recs = as_kernel_array(np.zeros(3 * b, RECORD_DTYPE))
        raw = recs.view(np.uint64).reshape(3 * b, RECORD_DTYPE.itemsize // 8)[:, :self._words]
        sc = as_kernel_array(np.zeros(b, SCRATCH_DTYPE))
        sc["w"][:, : len(self.weights)] = self.weights
        return recs, raw, sc, np.zeros((b, self.game.obs_dim), self.game.obs_dtype)

    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        B = obs.shape[0]
        if self._recs.shape[0] < 3 * B:
            self._recs = as_kernel_array(np.zeros(3 * B, RECORD_DTYPE))
            self._scratch = as_kernel_array(np.zeros(B, SCRATCH_DTYPE))
        self._scratch["w"][:B, : len(self.weights)] = self.weights
        recs = self._recs[: 3 * B]
        raw = recs.view(np.uint64).reshape(3 * B, RECORD_DTYPE.itemsize // 8)[:, :self._words]
        greedy_batch(obs, mask, self.cfg, self.num_players, recs, raw, self._scratch, out,
                     self.stop_as_v0)
