"""trafficenvs: research gym environments for three traffic board games.

``make`` gives a PettingZoo AEC env, ``make_vec`` the batched (vectorised) env,
``list_envs`` the ids. Importing the package registers every game in PettingZoo's
registry as ``trafficenvs/<game>-v0``.
"""

from __future__ import annotations

from trafficenvs._numba_cache import package_cache

with package_cache():
    from trafficenvs import (
        jakarta_traffic,  # noqa: F401
        jamming_traffic,  # noqa: F401
        traffic_jam,  # noqa: F401
    )
    from trafficenvs.core import driver  # noqa: F401  (compiled kernels: cache location)

from trafficenvs.core.vector import VecStep
from trafficenvs.registry import list_envs, make, make_game, make_vec, register_pettingzoo

register_pettingzoo()

__version__ = "0.1.0"
__all__ = ["make", "make_vec", "make_game", "list_envs", "VecStep", "__version__"]
