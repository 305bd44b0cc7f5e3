"""Search over game records, in numba: flat Monte Carlo and determinized UCT (IS-MCTS).

Both work on copies of a game's record, never on the record itself, and every copy is
first **determinized** for the deciding seat (``k_determinize``: everything that seat
cannot observe is redrawn), so a search sees only what its seat sees. A rollout plays
uniformly random legal moves (or, with a rule-based player's scratch ``gs``, that
player's moves for every seat: ``k_greedy``) until the game ends or ``depth`` moves
have been played, then adds the game's heuristic value (``k_evaluate``, in the scale
of the final result) for positions that did not end. A rollout's value for a seat is the sum of its
rewards along the way (the zero-sum result at the end, C2) plus that estimate.

Every row of a batch is one decision with its own scratch records, masks and tree, so
rows are independent (``prange``) and a row's decision depends only on its record, the
seat and the row's generator state: the same seed gives the same decision, alone or
in a batch, on any thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import mix64, rng_next
from trafficenvs.core.sampler import pick_legal
from trafficenvs.core.threads import batched
from trafficenvs.core.verbs import (
    k_current_player,
    k_determinize,
    k_evaluate,
    k_greedy,
    k_is_over,
    k_is_truncated,
    k_legal_mask,
    k_step,
)


@kernel(inline="never")
def play_move(w, cfg, a, nplayers, ret):
    """Play action ``a`` in ``w`` (counting the move) and add its rewards into ``ret``."""
    k_step(w, cfg, a)
    w.moves += 1
    for j in range(nplayers):
        ret[j] += w.reward[j]


@kernel(inline="never")
def rollout_value(w, cfg, nplayers, depth, mask, state, ret, gs, i, evs, seat, turns, first):
    """Play from ``w`` for at most ``depth`` moves (the rule-based player's moves if
    ``gs`` holds its scratch, else random ones); adds each seat's rewards and, if the
    game has not ended, its heuristic value into ``ret`` (``evs``: its scratch).

    With ``turns`` > 0 the rollout also stops when ``seat``'s ``turns``-th next turn
    begins (``seat`` to move after another seat moved): the estimate then always sees
    the position at the same point of the round. Cut off at a move count instead, one
    rollout ends in the middle of ``seat``'s turn and another in an opponent's,
    and a race estimate favours whoever is moving, so the moves compared would be
    judged at different points of the turn order.

    ``first`` >= 0 is the first move, already chosen by the caller (the rule-based
    player's move at ``w``, which a search that used it as a prior has in hand)."""
    away = False
    seen = 0
    for _ in range(depth):
        if k_is_over(w, cfg) or k_is_truncated(w, cfg):
            return
        if turns > 0:
            p = k_current_player(w, cfg)
            if p != seat:
                away = True
            elif away:
                away = False
                seen += 1
                if seen >= turns:
                    break
        if first >= 0:
            a = first
            first = -1
        else:
            k_legal_mask(w, cfg, mask)
            a = k_greedy(w, cfg, mask, gs, i)
            if a < 0 or not mask[a]:
                a = pick_legal(mask, rng_next(state))
        if a < 0:
            return
        play_move(w, cfg, a, nplayers, ret)
    if not (k_is_over(w, cfg) or k_is_truncated(w, cfg)):
        k_evaluate(w, cfg, ret, evs)


@kernel(inline="never")
def one_step_scores(recs, cfg, i, seat, mask, nplayers, key, work, ret, evs, score):
    """``score[a]``: for each legal action ``a`` of ``mask``, what ``seat`` gets one move
    later (the move's rewards plus ``evaluate`` if the game goes on) on the
    determinization ``key`` of row ``i``'s record; -inf for an illegal action. A
    glance at every move, for shortlists and priors (``ret``, ``evs``: scratch)."""
    for a in range(mask.shape[0]):
        score[a] = -np.inf
        if not mask[a]:
            continue
        work[i] = recs[i]
        w = work[i]
        k_determinize(w, cfg, seat, key)
        for j in range(nplayers):
            ret[j] = 0.0
        play_move(w, cfg, a, nplayers, ret)
        if not (k_is_over(w, cfg) or k_is_truncated(w, cfg)):
            k_evaluate(w, cfg, ret, evs)
        score[a] = ret[seat]


@kernel(inline="never")
def _shortlist(recs, cfg, i, seat, mask, top, nplayers, key, work, wmask, ret, gs, evs,
               score, keep):
    """``keep[a]``: the ``top`` legal actions whose position one move later (the move's
    rewards plus ``evaluate``, on one determinization) is best for ``seat``, and the
    rule-based player's own move when ``gs`` holds it; all legal actions if ``top`` is
    0 or at least their number. Returns how many are kept.

    A search over a hundred legal moves spends its budget thinly; this keeps it on the
    moves that look best at a glance (and on the move the rollout player would make,
    so the search can only do better than the rollout player by its own measure)."""
    n_legal = 0
    for a in range(mask.shape[0]):
        keep[a] = mask[a]
        n_legal += mask[a]
    if top <= 0 or top >= n_legal:
        return n_legal
    one_step_scores(recs, cfg, i, seat, mask, nplayers, key, work, ret, evs, score)
    for a in range(mask.shape[0]):
        keep[a] = False
    kept = 0
    for _ in range(top):
        b = -1
        for a in range(mask.shape[0]):
            if mask[a] and not keep[a] and (b < 0 or score[a] > score[b]):
                b = a
        keep[b] = True
        kept += 1
    work[i] = recs[i]
    w = work[i]
    k_determinize(w, cfg, seat, key)
    k_legal_mask(w, cfg, wmask)
    g = k_greedy(w, cfg, wmask, gs, i)
    if g >= 0 and mask[g] and not keep[g]:
        keep[g] = True
        kept += 1
    return kept


@batched
@njit(cache=True, parallel=True)
def flat_mc(recs, cfg, seats, masks, n, depth, nplayers, states, work, wmask, ret, out,
            values, gs, evs, top, keep, turns):
    """For each row: ``n`` rollouts per legal action from determinized copies; the
    action with the best mean value for ``seats[i]`` goes to ``out[i]``. With
    ``top`` > 0 only the shortlist of :func:`_shortlist` is rolled out (``keep``:
    its (B, A) scratch; the others' values are NaN).

    Common random numbers: the k-th rollout of every action starts from the same
    determinization (key ``k`` of the row's draw), so actions are compared on the
    same hidden cards and dice. ``values[i, a]`` gets each action's mean (NaN if
    illegal). Scratch: ``work`` (B,) records, ``wmask`` (B, A), ``ret`` (B, N),
    ``evs`` (B, EVAL_SCRATCH); ``gs`` the rollout player's (``()``: random moves).
    """
    for i in prange(recs.shape[0]):
        seat = seats[i]
        base = rng_next(states[i])
        best = -np.inf
        besta = -1
        _shortlist(recs, cfg[0], i, seat, masks[i], top, nplayers, mix64(base), work,
                   wmask[i], ret[i], gs, evs[i], values[i], keep[i])
        for a in range(masks.shape[1]):
            if not keep[i, a]:
                values[i, a] = np.nan
                continue
            total = 0.0
            for k in range(n):
                work[i] = recs[i]
                w = work[i]
                k_determinize(w, cfg[0], seat, mix64(base + np.uint64(k)))
                for j in range(nplayers):
                    ret[i, j] = 0.0
                play_move(w, cfg[0], a, nplayers, ret[i])
                rollout_value(w, cfg[0], nplayers, depth, wmask[i], states[i], ret[i], gs, i,
                         evs[i], seat, turns, -1)
                total += ret[i, seat]
            values[i, a] = total / n
            if total > best:
                best = total
                besta = a
        out[i] = besta


@kernel(inline="never")
def _child(first, sib, act, node, a):
    """The child of ``node`` reached by action ``a``, or -1."""
    c = first[node]
    while c >= 0:
        if act[c] == a:
            return c
        c = sib[c]
    return -1


@kernel(inline="never")
def _select(first, sib, act, visits, value, avail, node, mask, c_uct):
    """UCB1 over the children of ``node`` legal in this determinization (their
    availability counts go up by one); -1 if some legal action has no child yet."""
    best = -np.inf
    bestc = -1
    for a in range(mask.shape[0]):
        if mask[a] and _child(first, sib, act, node, a) < 0:
            return -1
    c = first[node]
    while c >= 0:
        if mask[act[c]]:
            avail[c] += 1
            u = value[c] / visits[c] + c_uct * np.sqrt(np.log(avail[c]) / visits[c])
            if u > best:
                best = u
                bestc = c
        c = sib[c]
    return bestc


@kernel(inline="never")
def _untried(first, sib, act, node, mask, bits):
    """A uniformly chosen legal action of ``mask`` with no child at ``node``."""
    n = 0
    for a in range(mask.shape[0]):
        if mask[a] and _child(first, sib, act, node, a) < 0:
            n += 1
    k = np.int64(((bits >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))
    for a in range(mask.shape[0]):
        if mask[a] and _child(first, sib, act, node, a) < 0:
            if k == 0:
                return a
            k -= 1
    return -1


@batched
@njit(cache=True, parallel=True)
def ismcts(recs, cfg, seats, masks, sims, c_uct, depth, nplayers, states, work, wmask, ret,
           parent, first, sib, act, mover, visits, value, avail, path, out, root_visits,
           gs, evs, top, keep, turns):
    """Single-observer information-set MCTS (Cowling et al.), one tree per row.

    Each simulation determinizes a fresh copy for ``seats[i]``, descends the tree by
    UCB1 among the children legal in that determinization (availability counts
    replace the parent's visits), expands one untried legal action, rolls out as
    :func:`rollout_value`, and backs each node's value up for the seat that moved into
    it. The decision is the root's most visited child (a tie: the better mean
    value, so a budget of one simulation per move is flat Monte Carlo's choice);
    ``root_visits[i, a]`` gets the visit count of each root action (a teacher's
    target). Trees live in the
    ``(B, sims + 1)`` node arrays; ``path`` is ``(B, sims + 1)`` scratch.
    """
    for i in prange(recs.shape[0]):
        seat = seats[i]
        base = rng_next(states[i])
        first[i, 0] = -1
        n_nodes = 1
        _shortlist(recs, cfg[0], i, seat, masks[i], top, nplayers, mix64(base), work,
                   wmask[i], ret[i], gs, evs[i], root_visits[i], keep[i])
        for s in range(sims):
            work[i] = recs[i]
            w = work[i]
            k_determinize(w, cfg[0], seat, mix64(base + np.uint64(s)))
            for j in range(nplayers):
                ret[i, j] = 0.0
            node = 0
            plen = 0
            m = wmask[i]
            while True:
                if k_is_over(w, cfg[0]) or k_is_truncated(w, cfg[0]):
                    break
                k_legal_mask(w, cfg[0], m)
                if node == 0:  # the root: only the shortlist (all legal moves if top=0)
                    for a in range(m.shape[0]):
                        m[a] = m[a] and keep[i, a]
                p = k_current_player(w, cfg[0])
                c = _select(first[i], sib[i], act[i], visits[i], value[i], avail[i], node, m,
                            c_uct)
                if c < 0:  # expand one untried action, then roll out
                    a = _untried(first[i], sib[i], act[i], node, m, rng_next(states[i]))
                    c = n_nodes
                    n_nodes += 1
                    parent[i, c] = node
                    act[i, c] = a
                    mover[i, c] = p
                    visits[i, c] = 0.0
                    value[i, c] = 0.0
                    avail[i, c] = 1
                    first[i, c] = -1
                    sib[i, c] = first[i, node]
                    first[i, node] = c
                    play_move(w, cfg[0], a, nplayers, ret[i])
                    path[i, plen] = c
                    plen += 1
                    rollout_value(w, cfg[0], nplayers, depth, m, states[i], ret[i], gs, i,
                             evs[i], seat, turns, -1)
                    break
                play_move(w, cfg[0], act[i, c], nplayers, ret[i])
                path[i, plen] = c
                plen += 1
                node = c
            for k in range(plen):
                c = path[i, k]
                visits[i, c] += 1.0
                value[i, c] += ret[i, mover[i, c]]
        best = -1.0
        bestv = -np.inf
        besta = -1
        for a in range(root_visits.shape[1]):
            root_visits[i, a] = 0.0
        c = first[i, 0]
        while c >= 0:  # the most visited; a tie goes to the better mean value
            root_visits[i, act[i, c]] = visits[i, c]
            v = value[i, c] / max(visits[i, c], 1.0)
            if visits[i, c] > best or (visits[i, c] == best and v > bestv):
                best = visits[i, c]
                bestv = v
                besta = act[i, c]
            c = sib[i, c]
        out[i] = besta


@batched
@njit(cache=True, parallel=True)
def evaluate_rows(recs, cfg, seats, ret, evs, out):
    """``out[i]``: the game's heuristic value (``k_evaluate``, in the scale of the final
    result) of row ``i``'s position for seat ``seats[i]``; 0 for a game that is over
    (its result is the reward). ``ret`` (B, N) and ``evs`` (B, EVAL_SCRATCH) are
    scratch. The potential of :class:`~trafficenvs.agents.sb3_bridge.SelfPlayVecEnv`'s
    shaping."""
    for i in prange(recs.shape[0]):
        if k_is_over(recs[i], cfg[0]):
            out[i] = 0.0
            continue
        for j in range(ret.shape[1]):
            ret[i, j] = 0.0
        k_evaluate(recs[i], cfg[0], ret[i], evs[i])
        out[i] = ret[i, seats[i]]
