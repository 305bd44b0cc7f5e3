"""The legal actions: wave 1 to 3 cars through, never more than are waiting."""

from __future__ import annotations

from toy_game.rules.layout import CACHE, MAX_WAVE

from trafficenvs.core.jit import kernel


@kernel(cache=CACHE)
def is_legal(rec, cfg, action):
    return not rec.over and 0 <= action < MAX_WAVE and action + 1 <= rec.cars


@kernel(cache=CACHE)
def legal_mask(rec, cfg, out):
    for a in range(MAX_WAVE):
        out[a] = is_legal(rec, cfg, a)
