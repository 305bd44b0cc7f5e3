"""Rule-based ("greedy") players, found through each game's spec.

Each game's strategy lives in its own package (the spec's ``greedy`` entry, e.g.
``trafficenvs/traffic_jam/strategy/greedy.py``) and is written down on the game's rules page;
the class subclasses :class:`~trafficenvs.core.player.GreedyPlayer` and is built as
``Class(game, seed=..., name=...)`` from the :class:`~trafficenvs.core.game.Game` it
plays. This module only finds them.
"""

from __future__ import annotations

from trafficenvs.agents.policy import Policy
from trafficenvs.core.game import Game
from trafficenvs.core.spec import specs


def games_with_greedy() -> list[str]:
    """Names of the games whose spec names a greedy player."""
    return [s.name for s in specs() if s.greedy is not None]


def has_greedy(game_name: str) -> bool:
    return game_name in games_with_greedy()


def make_greedy(game: Game, seed: int | None = None, name: str = "greedy") -> Policy:
    """The greedy player of ``game``'s kind, for ``game``'s configuration."""
    cls = game.spec.greedy_class()
    if cls is None:
        raise ValueError(
            f"no greedy player for {game.name!r} yet; games with one: {games_with_greedy()}"
        )
    return cls(game, seed=seed, name=name)
