"""Multi-player skill ratings of arena results, with openskill (Plackett-Luce).

Games are fed in the order they finished; each seat is a one-player team ranked by
its final reward (equal rewards are ties). An agent that holds several seats of one
game (fewer agents than seats) is updated from its first seat only, so a game
counts once per agent. ``ordinal`` (mu - 3 sigma) is the conservative skill.
Online ratings weigh recent games more than early ones (they are updated one game
at a time), so between two near-equal agents the order of ``mu`` can disagree with
the win share; the arena's tables sort by win share.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np  # noqa: F401  (lineups/returns are arrays)


def rate_games(
    names: Sequence[str], lineups: np.ndarray, returns: np.ndarray
) -> dict[str, dict[str, float]]:
    """``{name: {"mu", "sigma", "ordinal"}}`` after rating every game in order.

    ``lineups[g, s]`` is the agent index at seat ``s`` of game ``g``, ``returns[g, s]``
    that seat's total reward.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=n) for n in names]
    for lineup, ret in zip(lineups, returns):
        teams = [[ratings[a]] for a in lineup]
        ranks = [float(-r) for r in ret]
        new = model.rate(teams, ranks=ranks)
        done: set[int] = set()
        for a, team in zip(lineup, new):
            if a in done:
                continue
            done.add(int(a))
            ratings[a] = team[0]
    return {
        n: {"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())}
        for n, r in zip(names, ratings)
    }


def ordinal_order(ratings: dict[str, dict[str, float]]) -> list[str]:
    """Names from the best conservative rating down."""
    return sorted(ratings, key=lambda n: -ratings[n]["ordinal"])


__all__ = ["rate_games", "ordinal_order"]
