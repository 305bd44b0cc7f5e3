"""A small counter-based random number generator that lives inside a game record.

Ruling C1: all chance comes from a generator held in the game's own state. A
counter-based generator (SplitMix64's finaliser applied to ``key + counter * phi``)
needs only two integers per record, has no shared state between batch rows, and
makes a copied record continue with exactly the same dice as the original.

Every game record has the fields ``rng_key`` and ``rng_ctr`` (both ``uint64``).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)


@kernel
def mix64(z):
    """SplitMix64 finaliser: a bijective, well-mixing hash of one uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@kernel
def rng_seed(rec, seed):
    """Key the record's generator from a reset seed (any uint64)."""
    rec.rng_key = mix64(np.uint64(seed) ^ GOLDEN)
    rec.rng_ctr = np.uint64(0)


@kernel
def rng_next(rec):
    """Next 64 random bits; advances the record's counter by one."""
    rec.rng_ctr = rec.rng_ctr + np.uint64(1)
    return mix64(rec.rng_key + rec.rng_ctr * GOLDEN)


@kernel
def rng_below(rec, n):
    """A uniform integer in ``[0, n)`` for ``1 <= n < 2**32`` (Lemire's multiply-shift)."""
    hi = rng_next(rec) >> _S32
    return np.int64((hi * np.uint64(n)) >> _S32)


@kernel
def rng_seed_array(states, seed):
    """Key ``states[i]`` from ``seed + i`` (for per-row samplers outside games)."""
    for i in range(states.shape[0]):
        rng_seed(states[i], seed + np.uint64(i))


@kernel
def rng_shuffle(rec, arr, n):
    """Fisher-Yates over ``arr[:n]`` with ``rec``'s generator (C1); the one shuffle of
    every game (a deck of cards, a pile of tiles)."""
    for i in range(n - 1, 0, -1):
        j = rng_below(rec, i + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t
