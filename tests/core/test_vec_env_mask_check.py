"""The vectorised env checks each action against its own mask, then the rules.

``step`` counts an action legal when the env's mask of that game holds it (the mask
is written with the record by reset, step and ``load_state_dict``, and handed out
read-only), and otherwise asks the rules (``is_legal``). These tests pin the three
parts of that contract: the mask the user gets cannot be written; an action the
rules allow is accepted even where the mask lags behind a record written by hand;
an action the rules forbid is refused with nothing changed; and ``refresh`` brings
the masks back in line with hand-written records.
"""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core import sampler

GAMES = ["jamming_traffic-v1", "traffic_jam-v1", "jakarta_traffic-v1"]


def _played(game: str, seed: int, steps: int, n: int = 8):
    venv = trafficenvs.make_vec(game, num_envs=n)
    out = venv.reset(seed=seed)
    states = sampler.rng_states(n, seed)
    acts = np.zeros(n, np.int64)
    for _ in range(steps):
        sampler.sample_legal(out.action_mask, states, acts)
        out = venv.step(acts)
    return venv, out


@pytest.mark.parametrize("game", GAMES)
def test_the_returned_mask_is_read_only_and_its_copy_is_not(game):
    venv, out = _played(game, seed=1, steps=3)
    with pytest.raises(ValueError, match="read-only"):
        out.action_mask[0, 0] = True
    with pytest.raises(ValueError, match="read-only"):
        venv.last.action_mask[:] = False
    mine = out.copy().action_mask
    mine[0, :] = False  # a copy is the user's to edit
    assert out.action_mask[0].any()


@pytest.mark.parametrize("game", GAMES)
def test_an_action_the_rules_allow_is_taken_where_the_mask_lags_a_hand_written_record(game):
    """Game 0 of env A gets game 0 of env B written into its record by hand (no
    refresh): A's mask still shows the old position. Actions B's rules allow there
    but A's stale mask does not are accepted, and play out as in B."""
    a, out_a = _played(game, seed=2, steps=5)
    b, out_b = _played(game, seed=3, steps=9)
    legal_b = np.flatnonzero(out_b.action_mask[0])
    stale = out_a.action_mask[0]
    fresh_only = [x for x in legal_b if not stale[x]]
    assert fresh_only, "these seeds must give positions with different legal actions"
    a.records[0] = b.records[0]
    acts_a = np.array([np.flatnonzero(out_a.action_mask[i])[0] for i in range(a.num_envs)])
    acts_a[0] = fresh_only[0]
    a.step(acts_a)
    acts_b = np.array([np.flatnonzero(out_b.action_mask[i])[0] for i in range(b.num_envs)])
    acts_b[0] = fresh_only[0]
    b.step(acts_b)
    assert a.game.to_dict(a.records[0]) == b.game.to_dict(b.records[0])
    np.testing.assert_array_equal(a.last.observation[0], b.last.observation[0])
    np.testing.assert_array_equal(a.last.action_mask[0], b.last.action_mask[0])


@pytest.mark.parametrize("game", GAMES)
def test_an_action_the_rules_forbid_is_refused_and_nothing_changes(game):
    venv, out = _played(game, seed=4, steps=6)
    illegal = np.flatnonzero(~out.action_mask[2])
    acts = np.array([np.flatnonzero(out.action_mask[i])[0] for i in range(venv.num_envs)])
    acts[2] = illegal[0]
    before = [venv.game.to_dict(r) for r in venv.records]  # the state (not scratch)
    seen = out.copy()
    with pytest.raises(ValueError, match=r"illegal actions in games \[2\]"):
        venv.step(acts)
    assert [venv.game.to_dict(r) for r in venv.records] == before
    np.testing.assert_array_equal(venv.last.action_mask, seen.action_mask)
    acts[2] = venv.num_actions  # out of range: never read from the mask
    with pytest.raises(ValueError, match="must be in"):
        venv.step(acts)
    assert [venv.game.to_dict(r) for r in venv.records] == before


@pytest.mark.parametrize("game", GAMES)
def test_refresh_rewrites_masks_observations_and_players_from_hand_written_records(game):
    a, _ = _played(game, seed=5, steps=4)
    b, out_b = _played(game, seed=6, steps=11)
    a.records[:] = b.records
    out = a.refresh()
    np.testing.assert_array_equal(out.action_mask, out_b.action_mask)
    np.testing.assert_array_equal(out.observation, out_b.observation)
    np.testing.assert_array_equal(out.current_player, out_b.current_player)
    assert not out.action_mask.flags.writeable


def test_refresh_before_reset_is_an_error():
    venv = trafficenvs.make_vec("traffic_jam-v1", num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        venv.refresh()
