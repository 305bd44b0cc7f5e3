"""The rule-based ("greedy") Traffic Jam player: a one-trip look-ahead on the odds.

Strategy (also on docs/rules/traffic_jam.md):

* Card counting. From the observation it knows its hand, the cards on the roads (the
  stage-1 card each seat revealed) and the *unseen* cards per kind (the observation's
  derived ``unseen``: the deck list less its hand, the roads, the discard pile and
  every victory pile; so the deck, the others' hands and their hidden picks). From the unseen
  cards it estimates, per road, how much size one unseen card adds on average, and
  how likely an unseen card is a balloon or an ice cream truck of that time.
* Odds of a car scoring. The cards still to come this trip are ``m`` unseen cards
  (``2(N-1)`` in stage 2, ``3(N-1)`` when looking ahead from stage 1). The extra
  size they bring to a road is taken as Poisson with mean ``m * P(time) * mean
  size``. A free-flowing car on a road of known size ``S`` scores with probability
  ``P(extra <= N - S)``, a jam car (ice cream) with the rest; motorcycles and
  balloons score either way; a balloon or an ice cream truck also needs to stay
  the only one of its kind on its road (``(1 - q)^m``, zero if one is already there).
  The value of a car is its joy times that probability.
* Stage 2: of the legal (car, surprise) pairs, play the one whose car has the best
  value, counting the car and the surprise on the roads (so the surprise goes where
  it does not spoil the car, or onto the car's road when the car wants a jam); ties
  go to the pair that spends the least joy on the surprise.
* Stage 1: play the card after which the best stage-2 pair of the rest of the hand
  is worth most (the card itself counted on its road); ties: the least joyful card.

It reads only the observation, by layout names (plus the deck list, which every player
knows), so
it is a fair player; the whole batch is one compiled loop.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from trafficenvs.core.game import Game
from trafficenvs.core.jit import kernel
from trafficenvs.core.player import GreedyPlayer
from trafficenvs.core.threads import batched
from trafficenvs.traffic_jam.rules.layout import (
    BALLOON,
    BUS,
    EITHER,
    FREE,
    ICE_CREAM,
    JAM,
    MOTORCYCLE,
    TRUCK,
    VAN,
)
from trafficenvs.traffic_jam.rules.observe import observe
from trafficenvs.traffic_jam.rules.scoring import size_of_counts
from trafficenvs.traffic_jam.rules.turns import current_player


@kernel
def _poisson_cdf(x, lam):
    """P(X <= x) for X ~ Poisson(lam); 0 for x < 0."""
    if x < 0:
        return 0.0
    term = math.exp(-lam)
    total = term
    for j in range(1, int(x) + 1):
        term *= lam / j
        total += term
    return min(total, 1.0)


@kernel
def _car_value(cnt, car, m, N, K, ktime, ktype, kcond, kjoy, lam_unit, q_type):
    """Expected joy of riding ``car`` when the roads hold ``cnt`` and ``m`` unseen
    cards are still to come (see the module docstring)."""
    t = ktime[car]
    ty = ktype[car]
    p = 1.0
    if ty == BALLOON or ty == ICE_CREAM:
        same = 0.0
        for k in range(K):
            if ktime[k] == t and ktype[k] == ty:
                same += cnt[k]
        if same > 1:
            return 0.0
        q = q_type[t, ty]
        p = (1.0 - q) ** m
    cond = kcond[car]
    if cond != EITHER:
        size = size_of_counts(cnt, t, ktime, ktype, K)
        free = _poisson_cdf(N - size, m * lam_unit[t])
        if cond == FREE:
            p *= free
        elif cond == JAM:
            p *= 1.0 - free
    return kjoy[car] * p


@kernel
def _best_pair(hand, cnt, m, N, K, ktime, ktype, kcond, kjoy, lam_unit, q_type, mask_row, use_mask,
               a_pair):
    """(value, action) of the best stage-2 pair from ``hand`` (``cnt``: the roads)."""
    best = -1e9
    best_a = -1
    for car in range(K):
        if hand[car] < 1:
            continue
        hand[car] -= 1
        for sur in range(K):
            if hand[sur] < 1:
                continue
            a = a_pair + car * K + sur
            if use_mask and not mask_row[a]:
                continue
            cnt[car] += 1
            cnt[sur] += 1
            v = _car_value(cnt, car, m, N, K, ktime, ktype, kcond, kjoy, lam_unit, q_type)
            cnt[car] -= 1
            cnt[sur] -= 1
            v -= 0.001 * kjoy[sur]
            if v > best:
                best = v
                best_a = a
        hand[car] += 1
    return best, best_a


@kernel
def _unseen_odds(ob, N, K, ktime, ktype, o_hand, o_first, stride, o_unseen, hand, cnt,
                 lam_unit, q_type):
    """Card counting from one observation: fills ``hand`` and ``cnt`` (the roads: the
    stage-1 cards every seat revealed), and per road the mean size one unseen card adds
    (``lam_unit[t]``) and the share of unseen cards of each type (``q_type[t, ty]``); the
    unseen cards per kind are the observation's own ``unseen`` entries."""
    unseen_total = 0.0
    for k in range(K):
        hand[k] = ob[o_hand + k]
        c = 0.0
        for j in range(N):
            c += ob[o_first + j * stride + k]
        cnt[k] = c
        u = np.float64(ob[o_unseen + k])
        unseen_total += u
        t = ktime[k]
        ty = ktype[k]
        if ty == VAN:
            s = 2.0
        elif ty == TRUCK:
            s = 1.5
        elif ty == BUS or ty == MOTORCYCLE:
            s = 0.5
        elif ty == BALLOON:
            s = 0.0  # truck 1.5: first 1, then 2; bus, motorcycle: 0 or 1
        else:
            s = 1.0
        lam_unit[t] += u * s
        q_type[t, ty] += u
    if unseen_total > 0:
        for t in range(3):
            lam_unit[t] /= unseen_total
            for ty in range(8):
                q_type[t, ty] /= unseen_total


@kernel
def decide(ob, mrow, N, K, ktime, ktype, kcond, kjoy, off, hand, cnt, lam_unit, q_type):
    """The greedy action for one observation row (``hand``, ``cnt`` (K,), ``lam_unit``
    (3,), ``q_type`` (3, 8): float64 scratch, overwritten)."""
    o_hand, o_first, stride, o_unseen = off[0], off[1], off[2], off[3]
    o_stage, a_pair = off[4], off[5]
    for t in range(3):
        lam_unit[t] = 0.0
        for ty in range(8):
            q_type[t, ty] = 0.0
    _unseen_odds(ob, N, K, ktime, ktype, o_hand, o_first, stride, o_unseen, hand, cnt,
                 lam_unit, q_type)
    stage = 1 if ob[o_stage + 1] > 0.5 else 0
    if stage == 1:
        m = 2 * (N - 1)
        _, a = _best_pair(hand, cnt, m, N, K, ktime, ktype, kcond, kjoy, lam_unit, q_type,
                          mrow, True, a_pair)
        return a
    m = 3 * (N - 1)
    best = -1e9
    best_a = -1
    for c in range(K):
        if not mrow[c]:
            continue
        hand[c] -= 1
        cnt[c] += 1
        v, _ = _best_pair(hand, cnt, m, N, K, ktime, ktype, kcond, kjoy, lam_unit, q_type,
                          mrow, False, a_pair)
        cnt[c] -= 1
        hand[c] += 1
        v -= 0.001 * kjoy[c]
        if v > best:
            best = v
            best_a = c
    return best_a


@batched
@njit(cache=True, parallel=True)
def greedy_batch(obs, mask, N, K, ktime, ktype, kcond, kjoy, off, hand, cnt, lam_unit, q_type,
                 out):
    """The greedy action of every row (one compiled loop over the batch); ``off`` holds
    the offsets it reads, by layout name (:func:`read_offsets`); the scratch arrays have
    one row per batch row."""
    for i in prange(obs.shape[0]):
        out[i] = decide(obs[i], mask[i], N, K, ktime, ktype, kcond, kjoy, off, hand[i],
                        cnt[i], lam_unit[i], q_type[i])


@kernel
def rollout_move(rec, cfg, mask, gs, i):
    """The ``greedy`` verb: this player's move for the seat to move in ``rec`` (a search's
    determinized copy), through that seat's observation; ``gs``:
    :meth:`TrafficJamGreedy.rollout_scratch`, row ``i``."""
    ob, hand, cnt, lam_unit, q_type, ktime, ktype, kcond, kjoy, off = gs
    observe(rec, cfg, current_player(rec, cfg), ob[i])
    return decide(ob[i], mask, cfg.num_players, ktime.shape[0], ktime, ktype, kcond, kjoy, off,
                  hand[i], cnt[i], lam_unit[i], q_type[i])


def read_offsets(game: Game) -> np.ndarray:
    """What the greedy reads, by layout name, in the order ``greedy_batch`` takes them: my
    hand, seat 0's ``first`` part and the seats' stride (every seat's revealed stage-1
    card: the roads), the unseen cards, the stage; and the first pair action."""
    obs, acts = game.obs_layout, game.action_layout
    return np.array([obs.field("hand").offset, obs.at("seats", 0, "first"),
                     obs.field("seats").stride, obs.field("unseen").offset,
                     obs.field("stage").offset, acts.field("car_surprise").offset], np.int64)


class TrafficJamGreedy(GreedyPlayer):
    """The rule-based Traffic Jam player (strategy in the module docstring)."""

    game_name = "traffic_jam"

    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy"):
        super().__init__(game, seed, name)
        kinds = game.deck.kinds
        self.K = len(kinds)
        self.ktime = np.array([c.time for c in kinds], np.int64)
        self.ktype = np.array([c.type for c in kinds], np.int64)
        self.kcond = np.array([c.condition for c in kinds], np.int64)
        self.kjoy = np.array([c.joy for c in kinds], np.float64)
        self.off = read_offsets(game)

    def _scratch(self, b: int) -> tuple[np.ndarray, ...]:
        return (np.zeros((b, self.K)), np.zeros((b, self.K)), np.zeros((b, 3)),
                np.zeros((b, 3, 8)))

    def rollout_scratch(self, b: int) -> tuple[np.ndarray, ...]:
        """Scratch for :func:`rollout_move` in ``b`` rows (search agents' rollouts): an
        observation row, the card-counting arrays and this player's card tables."""
        ob = np.zeros((b, self.game.obs_dim), self.game.obs_dtype)
        return (ob, *self._scratch(b), self.ktime, self.ktype, self.kcond, self.kjoy,
                self.off)

    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        greedy_batch(obs, mask, self.num_players, self.K, self.ktime, self.ktype, self.kcond,
                     self.kjoy, self.off, *self._scratch(obs.shape[0]), out)
