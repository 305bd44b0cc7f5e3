"""Jakarta Traffic: drive a moped through a maze of turning street tiles, deliver orders.

Rules: ``docs/rules/jakarta_traffic.md``. ``env()``/``raw_env()`` give the AEC env,
``vec_env()`` the vectorised one; ``load_tiles`` reads and checks a tile set.
"""

from __future__ import annotations

from trafficenvs.jakarta_traffic.game import JakartaTrafficGame
from trafficenvs.jakarta_traffic.rules.tiles import load_tiles
from trafficenvs.jakarta_traffic.spec import SPEC
from trafficenvs.registry import entry_points

env, raw_env, vec_env = entry_points("jakarta_traffic")


__all__ = ["SPEC", "JakartaTrafficGame", "env", "raw_env", "vec_env", "load_tiles"]
