"""Chance in Traffic Jam: the shuffled deck, the deal (T3) and the reshuffle (T4).

All of it draws from the record's own generator (C1), so a copied record deals the
same cards as the original.
"""

from __future__ import annotations

from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import rng_shuffle
from trafficenvs.traffic_jam.rules.layout import HAND_SIZE


@kernel
def _shuffle_into_deck(rec, cfg, counts, clear):
    """The deck becomes ``counts[k]`` cards of each kind ``k``, shuffled; ``clear``
    empties ``counts`` (the pile the cards came from)."""
    n = 0
    for k in range(cfg.num_kinds):
        for _ in range(counts[k]):
            rec.deck[n] = k
            n += 1
        if clear:
            counts[k] = 0
    rng_shuffle(rec, rec.deck, n)
    rec.deck_n = n


@kernel
def fill_deck(rec, cfg):
    """Set-up: every card of the deck, as kinds in kind order, then shuffled."""
    _shuffle_into_deck(rec, cfg, cfg.kind_count, False)


@kernel
def reshuffle_discard(rec, cfg):
    """T4: the discard pile, shuffled, becomes the new deck."""
    rec.discard_n = 0
    _shuffle_into_deck(rec, cfg, rec.discard, True)


@kernel
def deal(rec, cfg):
    """T3: deal HAND_SIZE cards to every seat, one at a time in seat order."""
    for _ in range(HAND_SIZE):
        for p in range(cfg.num_players):
            if rec.deck_n == 0:
                reshuffle_discard(rec, cfg)
            rec.deck_n -= 1
            k = rec.deck[rec.deck_n]
            rec.hand[p, k] += 1
            rec.hand_n[p] += 1
