"""trafficenvs: research gym environments for three traffic board games.

``make`` gives a PettingZoo AEC env, ``make_vec`` the batched (vectorised) env,
``list_envs`` the ids. Importing the package loads every game declared in a
``trafficenvs/<game>/spec.py`` and registers it in PettingZoo's registry as
``trafficenvs/<game>-v<version>``, and each game's single-learner view in Gymnasium's
as ``trafficenvs/<Title>-v<version>`` (``gym_envs.py``: ``gymnasium.make(
"trafficenvs/TrafficJam-v1", opponents="greedy")``); ``register_game`` adds a game
from elsewhere.
"""

from __future__ import annotations

from trafficenvs.core.threads import configure_threading_layer, threading_report
from trafficenvs.numba_cache import package_cache

configure_threading_layer()  # before numba starts its pool: see core/threads.py

with package_cache():
    from trafficenvs.core import driver, sampler  # noqa: F401  (compiled kernels: cache location)

from trafficenvs.core.spec import GameSpec, specs  # noqa: E402

for _spec in specs():  # every game declared in a trafficenvs/<game>/spec.py
    _spec.load()

from trafficenvs.core.vector import VecStep  # noqa: E402
from trafficenvs.registry import (  # noqa: E402
    list_envs,
    make,
    make_game,
    make_parallel,
    make_vec,
    register_game,
    register_pettingzoo,
    register_pettingzoo_parallel,
)

register_pettingzoo()
register_pettingzoo_parallel()

from trafficenvs.gym_envs import register_gymnasium  # noqa: E402

register_gymnasium()

__version__ = "0.1.0"
__all__ = ["make", "make_parallel", "make_vec", "make_game", "list_envs", "VecStep", "GameSpec",
           "register_game", "specs", "threading_report", "__version__"]
