"""Rule-based ("greedy") players, one per game, found by game name.

Each game's strategy lives in its own module here and is written down on the
game's rules page. A new game joins by adding one line to :data:`GREEDY`
(``"game": "module:Class"``); the class subclasses
:class:`~trafficenvs.agents.greedy.base.GreedyPlayer` (the game check and the batched
``act`` of the :class:`~trafficenvs.agents.policy.Policy` interface) and is built as
``Class(game, seed=..., name=...)`` from the :class:`~trafficenvs.core.game.Game` it
plays.
"""

from __future__ import annotations

import importlib

from trafficenvs._numba_cache import package_cache
from trafficenvs.agents.policy import Policy
from trafficenvs.core.game import Game

#: game name -> "module:class" of its greedy player
GREEDY: dict[str, str] = {
    "traffic_jam": "trafficenvs.agents.greedy.traffic_jam:TrafficJamGreedy",
    "jamming_traffic": "trafficenvs.agents.greedy.jamming_traffic:JammingTrafficGreedy",
    "jakarta_traffic": "trafficenvs.agents.greedy.jakarta_traffic:JakartaTrafficGreedy",
}


def has_greedy(game_name: str) -> bool:
    return game_name in GREEDY


def make_greedy(game: Game, seed: int | None = None, name: str = "greedy") -> Policy:
    """The greedy player of ``game``'s kind, for ``game``'s configuration."""
    if game.name not in GREEDY:
        raise ValueError(
            f"no greedy player for {game.name!r} yet; games with one: {sorted(GREEDY)}"
        )
    mod, cls = GREEDY[game.name].split(":")
    with package_cache():  # its numba kernels cache with the package's (see _numba_cache)
        module = importlib.import_module(mod)
    return getattr(module, cls)(game, seed=seed, name=name)
