"""Arena ratings (``agents/ratings.py``): openskill over the games, in a fair order."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("openskill")

from trafficenvs.agents.ratings import ordinal_order, rate_games  # noqa: E402


def test_the_agent_that_wins_most_games_is_rated_higher_whatever_order_they_ended_in():
    """An arena's games end shortest first. Here agent 0 wins 700 of 1000 games, all
    short ones; agent 1 wins the 300 long ones, which end last. Rated in the order
    they ended, the online rating would follow the last 300 games."""
    lineups = np.array([[0, 1], [1, 0]] * 500)
    winner = np.r_[np.zeros(700, int), np.ones(300, int)]  # in the order the games ended
    returns = np.where(lineups == winner[:, None], 1.0, -1.0)
    r = rate_games(["short", "long"], lineups, returns)
    assert r["short"]["mu"] > r["long"]["mu"]
    assert ordinal_order(r) == ["short", "long"]


def test_equal_rewards_are_ties_and_leave_equal_agents_level():
    lineups = np.array([[0, 1], [1, 0]] * 50)
    r = rate_games(["a", "b"], lineups, np.zeros((100, 2)))
    assert r["a"]["mu"] == pytest.approx(r["b"]["mu"], abs=1e-9)
