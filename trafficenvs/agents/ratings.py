"""Multi-player skill ratings of arena results, with openskill (Plackett-Luce).

Each seat is a one-player team ranked by its final reward (equal rewards are ties).
Games are fed in a fixed shuffled order, not in the order they finished: an arena's
games finish shortest first, and an online rating weighs the last games most, so
fed in that order the ratings followed who wins the long games (a learner that won
0.696 of 4000 games against greedy was rated below it). An agent that holds several seats of one
game (fewer agents than seats) is updated from its first seat only, so a game
counts once per agent. ``ordinal`` (mu - 3 sigma) is the conservative skill.
Even shuffled, online ratings weigh recent games more than early ones (they are
updated one game at a time), so between two near-equal agents the order of ``mu``
can disagree with the win share; the arena's tables sort by win share.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
    order = np.random.default_rng(0).permutation(len(lineups))
    for lineup, ret in zip(np.asarray(lineups)[order], np.asarray(returns)[order]):
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
