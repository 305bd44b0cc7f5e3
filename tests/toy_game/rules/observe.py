"""A seat's observation, written by the layout's offsets (``cfg.ob_<field>``)."""

from __future__ import annotations

from toy_game.rules.layout import CACHE, MAX_WAVE

from trafficenvs.core.clock import horizon_left
from trafficenvs.core.jit import kernel


@kernel(cache=CACHE)
def observe(rec, cfg, seat, out):
    out[cfg.ob_cars_left] = rec.cars
    for a in range(MAX_WAVE):
        out[cfg.ob_last_wave + a] = 1 if rec.last == a + 1 else 0
    out[cfg.ob_horizon_left] = horizon_left(rec.moves, cfg.horizon)
