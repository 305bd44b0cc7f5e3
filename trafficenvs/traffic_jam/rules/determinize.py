"""Traffic Jam's determinization: redraw every card a seat cannot see (OpenSpiel's
``resample_from_infostate``, as the ``determinize`` verb of ``core/verbs.py``).

What seat ``s`` sees (T6, C4): its own hand and face-down cards, the roads, the
discard pile, the victory piles, every reveal, and how many cards each seat holds and
the deck has. What it cannot see: the other seats' hands, their face-down cards not
yet turned over, and the order of the deck. Those cards, together, are exactly the
cards of the deck that ``s`` has not seen; they are pooled, shuffled with a new
generator, and dealt back in the same numbers (each other seat its face-down cards
and its hand, the rest the deck), so every card total is conserved and every way of
placing the unseen cards is equally likely. The new generator also redraws every
future shuffle (T4).
"""

from __future__ import annotations

from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import rng_shuffle


@kernel
def determinize(rec, cfg, seat, key):
    """``rec`` becomes a game seat ``seat`` cannot tell from it (see the module)."""
    N = cfg.num_players
    K = cfg.num_kinds
    # pool the unseen cards as counts per kind, in the first other seat's hand row, then
    # lay them out in kind order: twins that differ only in hidden cards (where they
    # are, the deck's order) give the same pool, so the same key deals the same game
    q0 = seat + 1 if seat + 1 < N else 0
    pool = rec.hand[q0]
    for q in range(N):
        if q == seat:
            continue
        if q != q0:
            for k in range(K):
                pool[k] += rec.hand[q, k]
                rec.hand[q, k] = 0
        if rec.pick1[q] >= 0:
            pool[rec.pick1[q]] += 1
        if rec.pick_car[q] >= 0:
            pool[rec.pick_car[q]] += 1
            pool[rec.pick_sur[q]] += 1
    for i in range(rec.deck_n):
        pool[rec.deck[i]] += 1
    n = 0
    for k in range(K):
        for _ in range(pool[k]):
            rec.deck[n] = k
            n += 1
        pool[k] = 0
    rec.rng_key = key
    rec.rng_ctr = 0
    rng_shuffle(rec, rec.deck, n)  # then deal from the top, deck[n - 1] first (deal.py)
    for q in range(N):
        if q == seat:
            continue
        if rec.pick1[q] >= 0:
            n -= 1
            rec.pick1[q] = rec.deck[n]
        if rec.pick_car[q] >= 0:
            rec.pick_car[q] = rec.deck[n - 1]
            rec.pick_sur[q] = rec.deck[n - 2]
            n -= 2
        for _ in range(rec.hand_n[q]):
            n -= 1
            rec.hand[q, rec.deck[n]] += 1
    rec.deck_n = n
