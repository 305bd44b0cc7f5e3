"""Jamming Traffic: steer cars along a map's roads; jams push them on, endlessly at times.

Rules: ``docs/rules/jamming_traffic.md``. ``env()``/``raw_env()`` give the AEC env,
``vec_env()`` the vectorised one, ``random_map()`` a seeded random planar map and
``load_map()`` a shipped or user map (a name, a JSON path or a dict).
"""

from __future__ import annotations

from trafficenvs.jamming_traffic.game import JammingTrafficGame
from trafficenvs.jamming_traffic.rules.maps import SHIPPED as MAPS
from trafficenvs.jamming_traffic.rules.maps import Map, load_map, random_map
from trafficenvs.jamming_traffic.spec import SPEC
from trafficenvs.registry import entry_points

env, raw_env, vec_env = entry_points("jamming_traffic")


__all__ = ["SPEC", "JammingTrafficGame", "Map", "MAPS", "env", "raw_env", "vec_env", "load_map",
           "random_map"]
