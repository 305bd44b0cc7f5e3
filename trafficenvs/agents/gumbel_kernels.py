"""Gumbel search over game records, in numba: priors, values, sequential halving.

The search of Danihelka et al. ("Policy improvement by planning with Gumbel", ICLR
2022; DeepMind's ``mctx.gumbel_muzero_policy``) on determinized copies, as the other
searches (``search_kernels.py``): every simulation starts from a copy determinized for
the deciding seat, so the search sees only what that seat sees.

- **Root.** ``m`` candidate moves are drawn without replacement by the Gumbel-top-k
  trick on the root's prior logits; sequential halving then spends the ``n``
  simulations on them in rounds, each round visiting every remaining candidate
  equally and keeping the better half by ``g + logit + sigma(q)``. The move played is
  the best remaining candidate by the same score, and the improved policy
  ``softmax(logit + sigma(completed q))`` over all root moves is kept (expert
  iteration's target: not an argmax label).
- **Below the root.** Gumbel MuZero's deterministic selection: the edge maximising
  ``pi'(a) - N(a) / (1 + sum N)`` with ``pi' = softmax(logit + sigma(completed q))``,
  among the edges legal in this simulation's determinization (an opponent's hidden
  hand changes what it can play; edges not legal now are skipped, and a node none of
  whose edges is legal is a leaf).
- **Common random numbers.** The k-th visit of every root candidate starts from the
  same determinization (key ``k`` of the row's draw), so candidates are compared on
  the same hidden cards and dice, as ``flatmc`` does.
- **The compiled evaluator** (no network): a node's prior logits are ``bonus`` on the
  game's rule-based move (the ``greedy`` verb) and 0 elsewhere; the root's also add
  ``beta`` times the standardised one-move-ahead score (the move's rewards plus the
  ``evaluate`` verb). A new leaf's value is the rewards on the way plus a rollout as
  ``flatmc``'s (``depth``, ``turns``, the rule-based player or random moves, then
  ``evaluate``).

``sigma(q) = (c_visit + max_b N(b)) * c_scale * q`` with ``q`` min-max normalised over
the node's completed values; an unvisited edge's completed value is its node's mean.

The tree of row ``i`` is two record arrays: ``nodes[i]`` (``NODE``: first edge, edge
count, mover, visits, value sum for the mover) and ``edges[i]`` (``EDGE``: action,
child node, prior logit, visits, value sum for the parent's mover). A row touches only
its own tree, scratch and generator, so the same seed gives the same decision alone or
in a batch on any thread count.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from trafficenvs.agents.search_kernels import one_step_scores, play_move, rollout_value
from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import mix64, rng_next
from trafficenvs.core.threads import batched
from trafficenvs.core.verbs import (
    k_current_player,
    k_determinize,
    k_greedy,
    k_is_over,
    k_is_truncated,
    k_legal_mask,
    k_observe,
)

NODE = np.dtype([("edge0", np.int32), ("nedge", np.int32), ("mover", np.int32),
                 ("visits", np.float64), ("vsum", np.float64)])
EDGE = np.dtype([("act", np.int32), ("child", np.int32), ("logit", np.float64),
                 ("n", np.float64), ("w", np.float64)])


def considered_visits(m: int, n: int) -> np.ndarray:
    """Sequential halving's schedule (``mctx``'s ``get_sequence_of_considered_visits``):
    for each of ``n`` simulations, the visit count a root candidate must have to be
    visited by it, for ``m`` candidates. Rounds visit every remaining candidate
    ``max(1, n // (ceil(log2 m) * remaining))`` times, then halve the remaining."""
    if m <= 1:
        return np.arange(n, dtype=np.int32)
    log2m = int(math.ceil(math.log2(m)))
    seq: list[int] = []
    visits = [0] * m
    k = m
    while len(seq) < n:
        extra = max(1, n // (log2m * k))
        for _ in range(extra):
            seq.extend(visits[:k])
            for j in range(k):
                visits[j] += 1
        k = max(2, k // 2)
    return np.asarray(seq[:n], np.int32)


@kernel(inline="never")
def schedule(m, n, out):
    """:func:`considered_visits` ``(m, n)`` into ``out[:n]``, compiled (each row of a
    search has its own candidates and budget). The remaining candidates always share
    one visit count, so one counter replaces the list of counts."""
    if m <= 1:
        for s in range(n):
            out[s] = s
        return
    log2m = 0
    while (1 << log2m) < m:
        log2m += 1
    s = 0
    v = 0
    k = m
    while s < n:
        extra = max(1, n // (log2m * k))
        for _ in range(extra):
            for _ in range(k):
                if s < n:
                    out[s] = v
                    s += 1
            v += 1
        k = max(2, k // 2)


@kernel(inline="never")
def _uniform(bits):
    """A float in (0, 1) from 64 random bits."""
    return ((bits >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)


@kernel(inline="never")
def _sigma(nodes, edges, node, mask, c_visit, c_scale, qn):
    """``qn[e - edge0]``: sigma of the completed, min-max normalised value of each edge
    of ``node`` legal in ``mask`` (others untouched). Returns how many are legal."""
    nd = nodes[node]
    v = nd.vsum / nd.visits if nd.visits > 0 else 0.0
    lo = v
    hi = v
    maxn = 0.0
    legal = 0
    for e in range(nd.edge0, nd.edge0 + nd.nedge):
        ed = edges[e]
        if not mask[ed.act]:
            continue
        legal += 1
        q = ed.w / ed.n if ed.n > 0 else v
        qn[e - nd.edge0] = q
        lo = min(lo, q)
        hi = max(hi, q)
        maxn = max(maxn, ed.n)
    scale = (c_visit + maxn) * c_scale
    for e in range(nd.edge0, nd.edge0 + nd.nedge):
        if mask[edges[e].act]:
            x = (qn[e - nd.edge0] - lo) / (hi - lo) if hi > lo else 0.5
            qn[e - nd.edge0] = scale * x
    return legal


@kernel(inline="never")
def _improved(nodes, edges, node, mask, c_visit, c_scale, qn):
    """``qn[e - edge0]`` becomes ``pi'`` = softmax(logit + sigma(completed q)) over the
    legal edges of ``node``; returns their total visits (0 if none is legal: -1)."""
    nd = nodes[node]
    if _sigma(nodes, edges, node, mask, c_visit, c_scale, qn) == 0:
        return -1.0
    top = -np.inf
    for e in range(nd.edge0, nd.edge0 + nd.nedge):
        if mask[edges[e].act]:
            qn[e - nd.edge0] += edges[e].logit
            top = max(top, qn[e - nd.edge0])
    z = 0.0
    total = 0.0
    for e in range(nd.edge0, nd.edge0 + nd.nedge):
        if mask[edges[e].act]:
            qn[e - nd.edge0] = np.exp(qn[e - nd.edge0] - top)
            z += qn[e - nd.edge0]
            total += edges[e].n
    for e in range(nd.edge0, nd.edge0 + nd.nedge):
        if mask[edges[e].act]:
            qn[e - nd.edge0] /= z
    return total


@kernel(inline="never")
def _interior(nodes, edges, node, mask, c_visit, c_scale, qn):
    """Gumbel MuZero's choice below the root: the legal edge with the largest
    ``pi'(a) - N(a) / (1 + sum N)``; -1 if no edge is legal in this determinization."""
    total = _improved(nodes, edges, node, mask, c_visit, c_scale, qn)
    if total < 0:
        return -1
    nd = nodes[node]
    best = -np.inf
    beste = -1
    for e in range(nd.edge0, nd.edge0 + nd.nedge):
        if mask[edges[e].act]:
            s = qn[e - nd.edge0] - edges[e].n / (1.0 + total)
            if s > best:
                best = s
                beste = e
    return beste


@kernel(inline="never")
def _expand(nodes, edges, node, n_edges, mask, logits, width, mover, sort):
    """Give ``node`` one edge per legal action of ``mask`` (logit ``logits[a]``), or the
    ``width`` best by logit when ``width`` > 0, as many as ``edges`` still holds;
    returns the tree's new edge count. The edges are in action order, or by falling
    logit if ``sort`` or some are left out."""
    nd = nodes[node]
    nd.edge0 = n_edges
    nd.nedge = 0
    nd.mover = mover
    legal = 0
    for a in range(mask.shape[0]):
        legal += mask[a]
    keep = legal if width <= 0 or width >= legal else width
    keep = min(keep, edges.shape[0] - n_edges)  # a full tree: fewer edges (or a leaf)
    ordered = sort or keep < legal  # else in action order: no selection sort
    nxt = 0
    for _ in range(keep):
        b = -1
        if ordered:
            for a in range(mask.shape[0]):
                if mask[a] and (b < 0 or logits[a] > logits[b]):
                    b = a
        else:
            while not mask[nxt]:
                nxt += 1
            b = nxt
        ed = edges[n_edges]
        ed.act = b
        ed.child = -1
        ed.logit = logits[b]
        ed.n = 0.0
        ed.w = 0.0
        mask[b] = False  # taken (the caller's mask is scratch)
        n_edges += 1
        nd.nedge += 1
    return n_edges


@kernel(inline="never")
def _new_node(nodes, node):
    nd = nodes[node]
    nd.edge0 = 0
    nd.nedge = 0
    nd.mover = -1
    nd.visits = 0.0
    nd.vsum = 0.0


@kernel(inline="never")
def _prior(w, cfg, mask, logits, gs, i, bonus):
    """The compiled evaluator's prior logits at ``w``: ``bonus`` on the rule-based
    player's move, 0 on the other legal moves. Returns that move (-1: none)."""
    for a in range(mask.shape[0]):
        logits[a] = 0.0
    g = k_greedy(w, cfg, mask, gs, i)
    if g >= 0 and mask[g]:
        logits[g] = bonus
        return g
    return -1


@kernel(inline="never")
def _root(recs, cfg, i, seat, mask, key, work, wmask, ret, gs, evs, logits, bonus, beta,
          score):
    """The root's prior logits into ``logits``: the rule-based move's ``bonus`` plus
    ``beta`` times the standardised one-move-ahead score (0 for ``beta`` = 0)."""
    work[i] = recs[i]
    w = work[i]
    k_determinize(w, cfg, seat, key)
    for a in range(mask.shape[0]):
        wmask[a] = mask[a]
    _prior(w, cfg, wmask, logits, gs, i, bonus)
    if beta == 0.0:
        return
    nplayers = ret.shape[0]
    one_step_scores(recs, cfg, i, seat, mask, nplayers, key, work, ret, evs, score)
    n = 0
    mean = 0.0
    for a in range(mask.shape[0]):
        if mask[a]:
            n += 1
            mean += score[a]
    mean /= max(n, 1)
    var = 0.0
    for a in range(mask.shape[0]):
        if mask[a]:
            var += (score[a] - mean) ** 2
    sd = np.sqrt(var / max(n, 1))
    if sd > 0:
        for a in range(mask.shape[0]):
            if mask[a]:
                logits[a] += beta * (score[a] - mean) / sd


@kernel(inline="never")
def _backup(nodes, edges, path, plen, ret):
    """Add this simulation's returns to the root, every edge on ``path`` and the node
    below it (each for the seat that moves there)."""
    nd = nodes[0]
    nd.visits += 1.0
    nd.vsum += ret[nd.mover]
    for k in range(plen):
        e = path[k]
        c = edges[e].child
        edges[e].n += 1.0
        # an edge's value is for the mover of the node it leaves: its sibling's
        # mover is the same, so the parent's mover is read from the path
        p = 0 if k == 0 else edges[path[k - 1]].child
        edges[e].w += ret[nodes[p].mover]
        if c >= 0:
            nodes[c].visits += 1.0
            if nodes[c].mover >= 0:
                nodes[c].vsum += ret[nodes[c].mover]


@kernel(inline="never")
def _root_pick(nodes, edges, cand, ncand, gum, target, mask, c_visit, c_scale, qn):
    """The root candidate to visit: among those with ``target`` visits (all of them if
    ``target`` < 0: the final choice, among the most visited), the largest
    ``g + logit + sigma(q)``."""
    _sigma(nodes, edges, 0, mask, c_visit, c_scale, qn)
    e0 = nodes[0].edge0
    want = float(target)
    if want < 0:
        for k in range(ncand):
            want = max(want, edges[cand[k]].n)
    best = -np.inf
    beste = -1
    for k in range(ncand):
        e = cand[k]
        if edges[e].n != want:
            continue
        s = gum[k] + edges[e].logit + qn[e - e0]
        if s > best:
            best = s
            beste = e
    if beste < 0:  # no candidate has the scheduled count: the least visited
        for k in range(ncand):
            e = cand[k]
            if beste < 0 or edges[e].n < edges[beste].n:
                beste = e
    return beste


#: a search row's progress between the calls of the network-evaluated search
STATE = np.dtype([("base", np.uint64), ("seat", np.int32), ("n", np.int32),
                  ("sim", np.int32), ("plen", np.int32), ("n_nodes", np.int32),
                  ("n_edges", np.int32), ("ncand", np.int32), ("leaf", np.int32),
                  ("mover", np.int32), ("status", np.int32)])
#: what a simulation's descent ended on: a result (back it up), a new node (give it
#: priors and a value), a node none of whose edges is legal here (a value only)
DONE, EXPAND, VALUE = 0, 1, 2


@kernel(inline="never")
def _start(recs, c0, i, seat, mask, st, work, m_, ret, gs, evs, lg, score, nd, ed, cand,
           gum, halving, state, bonus, beta, gscale, n, nper, m, compiled):
    """Row ``i``'s root: its prior logits (the compiled ones, or the network's that
    ``lg`` already holds), Gumbel-top-``m`` candidates, its edges and its schedule."""
    st.base = rng_next(state)
    st.seat = seat
    if compiled:
        _root(recs, c0, i, seat, mask, mix64(st.base), work, m_, ret, gs, evs, lg, bonus,
              beta, score)
    # the root's candidates: Gumbel-top-m of the logits (gscale 0: the top m)
    for a in range(mask.shape[0]):
        m_[a] = mask[a]
        score[a] = -np.inf
        if m_[a]:
            g = -np.log(-np.log(_uniform(rng_next(state))))
            score[a] = lg[a] + gscale * g
    _new_node(nd, 0)
    n_edges = _expand(nd, ed, 0, 0, m_, score, 0, seat, True)
    ncand = min(m, n_edges)
    for k in range(ncand):  # _expand sorted the root's edges by logit + g
        cand[k] = k
        gum[k] = score[ed[k].act] - lg[ed[k].act]
    for e in range(n_edges):  # the edges keep the prior's logit, not its + g
        ed[e].logit = lg[ed[e].act]
    st.n = 0 if ncand == 0 else (n if nper <= 0 else max(1, min(n, nper * n_edges)))
    schedule(ncand, st.n, halving)
    st.n_nodes = 1
    st.n_edges = n_edges
    st.ncand = ncand
    st.sim = 0


@kernel(inline="never")
def _descend(recs, c0, i, mask, st, work, m_, ret, nd, ed, path, cand, gum, halving, score,
             c_visit, c_scale):
    """One simulation of row ``i`` from the root down to where it needs an evaluation:
    ``DONE`` (the game ended: ``ret`` holds the result), ``EXPAND`` (a new node, whose
    position is ``work[i]`` with legal moves ``m_``) or ``VALUE`` (a node with no
    edge legal in this determinization). The path is kept in ``path`` and ``st``."""
    nplayers = ret.shape[0]
    for a in range(mask.shape[0]):
        m_[a] = mask[a]
    e = _root_pick(nd, ed, cand, st.ncand, gum, halving[st.sim], m_, c_visit, c_scale,
                   score)
    # common random numbers: the k-th visit of every candidate, the k-th draw
    work[i] = recs[i]
    w = work[i]
    k_determinize(w, c0, st.seat, mix64(st.base + np.uint64(1 + ed[e].n)))
    for j in range(nplayers):
        ret[j] = 0.0
    plen = 0
    while True:
        play_move(w, c0, ed[e].act, nplayers, ret)
        path[plen] = e
        plen += 1
        st.plen = plen
        c = ed[e].child
        if c < 0:  # a new node
            c = st.n_nodes
            st.n_nodes += 1
            ed[e].child = c
            _new_node(nd, c)
            st.leaf = c
            if k_is_over(w, c0) or k_is_truncated(w, c0):
                return DONE
            k_legal_mask(w, c0, m_)
            st.mover = k_current_player(w, c0)
            return EXPAND
        if k_is_over(w, c0) or k_is_truncated(w, c0) or nd[c].mover < 0:
            return DONE
        k_legal_mask(w, c0, m_)
        e = _interior(nd, ed, c, m_, c_visit, c_scale, score)
        if e < 0:
            st.leaf = c
            st.mover = k_current_player(w, c0)
            return VALUE


@kernel(inline="never")
def _compiled_leaf(status, w, c0, i, st, m_, lg, gs, rgs, reuse, bonus, width, nd, ed,
                   depth, turns, state, ret, evs):
    """The compiled evaluator at the leaf: a new node's priors (the rule-based move's
    ``bonus``), then a rollout's value added into ``ret``."""
    nplayers = ret.shape[0]
    if status == EXPAND:
        g = _prior(w, c0, m_, lg, gs, i, bonus)
        st.n_edges = _expand(nd, ed, st.leaf, st.n_edges, m_, lg, width, st.mover, False)
        # the prior's player plays the rollouts: its move is the first
        rollout_value(w, c0, nplayers, depth, m_, state, ret, rgs, i, evs, st.seat, turns,
                 g if reuse else -1)
    elif status == VALUE:
        rollout_value(w, c0, nplayers, depth, m_, state, ret, rgs, i, evs, st.seat, turns, -1)


@kernel(inline="never")
def _network_leaf(status, st, m_, logits, value, width, nd, ed, ret, mix, rret):
    """A network's evaluation at the leaf: a new node's priors ``logits`` and the
    value ``value`` for the seat to move there, added into ``ret`` as a zero-sum
    result (the other seats share its negative); with ``mix`` > 0 mixed with the
    rollout's returns ``rret`` from the leaf: ``(1 - mix) * network + mix * rollout``
    (AlphaGo's mixed leaf evaluation)."""
    nplayers = ret.shape[0]
    if status == EXPAND:
        st.n_edges = _expand(nd, ed, st.leaf, st.n_edges, m_, logits, width, st.mover,
                             False)
    if status != DONE:
        for j in range(nplayers):
            v = value if j == st.mover else -value / (nplayers - 1)
            ret[j] += v if mix <= 0.0 else (1.0 - mix) * v + mix * rret[j]


@kernel(inline="never")
def _finish(mask, st, m_, nd, ed, cand, gum, score, c_visit, c_scale, policy):
    """The move (the best of the most visited candidates by ``g + logit + sigma(q)``;
    -1 without a legal move) and the improved policy into ``policy``."""
    for a in range(mask.shape[0]):
        m_[a] = mask[a]
        policy[a] = 0.0
    if st.ncand == 0:
        return -1
    e = _root_pick(nd, ed, cand, st.ncand, gum, -1, m_, c_visit, c_scale, score)
    if _improved(nd, ed, 0, m_, c_visit, c_scale, score) >= 0:
        for k in range(nd[0].edge0, nd[0].edge0 + nd[0].nedge):
            policy[ed[k].act] = score[k - nd[0].edge0]
    return ed[e].act


@batched
@njit(cache=True, parallel=True)
def gumbel_search(recs, cfg, seats, masks, n, nper, m, c_visit, c_scale, gscale, bonus,
                  beta, width, depth, turns, states, st, work, wmask, ret, logits, score,
                  nodes, edges, path, cand, gum, halving, gs, rgs, reuse, evs, out, policy):
    """For each row: the Gumbel search of the module with the compiled evaluator;
    ``out[i]`` the move, ``policy[i]`` the improved policy over the legal moves.

    A row runs ``n`` simulations, or ``nper`` per legal move if ``nper`` > 0 (at most
    ``n``). Scratch per row: ``st`` (B,) of ``STATE``, ``work`` records,
    ``wmask``/``logits``/``score`` (B, A), ``ret`` (B, N), ``nodes`` (B, n + 1) of
    ``NODE``, ``edges`` (B, E) of ``EDGE`` with E = the root's actions plus ``n``
    times ``width`` (or A), ``path`` (B, n + 1), ``cand``/``gum`` (B, m), ``halving``
    (B, n), ``evs`` (B, EVAL_SCRATCH); ``gs`` the rule-based player's scratch for the
    prior (``()``: uniform priors), ``rgs`` the rollouts' (``()``: random moves);
    ``reuse``: the two are the same player (a new leaf's prior move is its rollout's
    first move)."""
    for i in prange(recs.shape[0]):
        c0 = cfg[0]
        _start(recs, c0, i, seats[i], masks[i], st[i], work, wmask[i], ret[i], gs, evs[i],
               logits[i], score[i], nodes[i], edges[i], cand[i], gum[i], halving[i],
               states[i], bonus, beta, gscale, n, nper, m, True)
        for _ in range(st[i].n):
            status = _descend(recs, c0, i, masks[i], st[i], work, wmask[i], ret[i],
                              nodes[i], edges[i], path[i], cand[i], gum[i], halving[i],
                              score[i], c_visit, c_scale)
            _compiled_leaf(status, work[i], c0, i, st[i], wmask[i], logits[i], gs, rgs,
                           reuse, bonus, width, nodes[i], edges[i], depth, turns, states[i],
                           ret[i], evs[i])
            _backup(nodes[i], edges[i], path[i], st[i].plen, ret[i])
            st[i].sim += 1
        out[i] = _finish(masks[i], st[i], wmask[i], nodes[i], edges[i], cand[i], gum[i],
                         score[i], c_visit, c_scale, policy[i])


# -- the network-evaluated search: the same steps, the leaves handed out in between ------

@batched
@njit(cache=True, parallel=True)
def net_start(recs, cfg, seats, masks, n, nper, m, gscale, states, st, work, wmask, ret,
              logits, score, nodes, edges, cand, gum, halving, evs):
    """Every row's root from the network's prior ``logits`` (B, A) of the root."""
    for i in prange(recs.shape[0]):
        _start(recs, cfg[0], i, seats[i], masks[i], st[i], work, wmask[i], ret[i], (),
               evs[i], logits[i], score[i], nodes[i], edges[i], cand[i], gum[i], halving[i],
               states[i], 0.0, 0.0, gscale, n, nper, m, False)


@batched
@njit(cache=True, parallel=True)
def net_descend(recs, cfg, masks, c_visit, c_scale, st, work, wmask, ret, score, nodes,
                edges, path, cand, gum, halving, obs, mix, depth, turns, states, rgs, evs,
                rmask, rret):
    """One simulation's descent in every row that has simulations left: ``st.status``
    says what it needs (-1: nothing, the row is done); a leaf's observation for the
    seat to move there goes to ``obs[i]`` and its legal moves are ``wmask[i]``. With
    ``mix`` > 0 a rollout from the leaf (``depth``, ``turns``, the rule-based player
    if ``rgs`` holds its scratch, else random moves; on the simulation's determinized
    copy, after the observation was taken) leaves its returns in ``rret[i]``."""
    for i in prange(recs.shape[0]):
        if st[i].sim >= st[i].n:
            st[i].status = -1
            continue
        status = _descend(recs, cfg[0], i, masks[i], st[i], work, wmask[i], ret[i],
                          nodes[i], edges[i], path[i], cand[i], gum[i], halving[i], score[i],
                          c_visit, c_scale)
        st[i].status = status
        if status != DONE:
            k_observe(work[i], cfg[0], st[i].mover, obs[i])
            if mix > 0.0:
                for j in range(rret.shape[1]):
                    rret[i, j] = 0.0
                rollout_value(work[i], cfg[0], rret.shape[1], depth, rmask[i], states[i],
                              rret[i], rgs, i, evs[i], st[i].seat, turns, -1)


@batched
@njit(cache=True, parallel=True)
def net_backup(st, wmask, leaf_logits, leaf_values, width, nodes, edges, path, ret, mix,
               rret):
    """The network's answers for the leaves of :func:`net_descend` (``leaf_logits``
    (B, A), ``leaf_values`` (B,), read only where a leaf was handed out; mixed with
    the rollouts' ``rret`` by ``mix``) go into the trees, and every row's simulation
    is backed up."""
    for i in prange(st.shape[0]):
        status = st[i].status
        if status < 0:
            continue
        _network_leaf(status, st[i], wmask[i], leaf_logits[i], leaf_values[i], width,
                      nodes[i], edges[i], ret[i], mix, rret[i])
        _backup(nodes[i], edges[i], path[i], st[i].plen, ret[i])
        st[i].sim += 1


@batched
@njit(cache=True, parallel=True)
def net_finish(masks, c_visit, c_scale, st, wmask, score, nodes, edges, cand, gum, out,
               policy):
    """Every row's move and improved policy."""
    for i in prange(masks.shape[0]):
        out[i] = _finish(masks[i], st[i], wmask[i], nodes[i], edges[i], cand[i], gum[i],
                         score[i], c_visit, c_scale, policy[i])
