"""Traffic Jam: hidden, simultaneous card plays onto morning, day and night roads.

Rules: ``docs/rules/traffic_jam.md``. ``env()``/``raw_env()`` give the AEC env,
``vec_env()`` the vectorised one.
"""

from __future__ import annotations

from trafficenvs.registry import entry_points
from trafficenvs.traffic_jam.game import TrafficJamGame
from trafficenvs.traffic_jam.rules.deck import load_deck
from trafficenvs.traffic_jam.spec import SPEC

env, raw_env, vec_env = entry_points("traffic_jam")


__all__ = ["SPEC", "TrafficJamGame", "env", "raw_env", "vec_env", "load_deck"]
