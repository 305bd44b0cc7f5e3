"""What every v1 observation shares: uint8 rows, exact bounds from the layout, the
move-limit clock, and the learners' scaling by those bounds."""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core.clock import HORIZON_STEPS, horizon_left
from trafficenvs.core.layout import Field, Layout, Part, block
from trafficenvs.core.spec import specs


def test_a_layout_states_the_exact_bound_of_every_entry():
    lay = Layout("t", [
        Field("flag", 2, "two flags"),
        Field("count", 1, "a count", high=26),
        block("seats", 3, [Part("here", 1, "a flag"), Part("stars", 2, "stars", high=7)],
              "per seat"),
    ], ranges=True)
    np.testing.assert_array_equal(lay.high(), [1, 1, 26] + [1, 7, 7] * 3)
    table = lay.markdown()
    assert "| range |" in table and "| 0-26 |" in table and "0-1 / 0-7" in table


def test_entries_of_one_field_may_have_bounds_of_their_own():
    """E.g. a count per card kind, bounded by that kind's copies in the deck."""
    from trafficenvs.core.layout import bounded

    lay = Layout("t", [
        bounded(Field, "hand", [2, 4, 1], "cards per kind"),
        block("seats", 2, [bounded(Part, "won", [3, 1], "per kind")], "per seat"),
    ], ranges=True)
    np.testing.assert_array_equal(lay.high(), [2, 4, 1, 3, 1, 3, 1])
    assert "0-(1..4)" in lay.markdown()
    with pytest.raises(ValueError, match="2 bounds for 3 entries"):
        Layout("t", [Field("x", 3, "x", high=2, bounds=(1, 2))], ranges=True).high()


def test_a_bound_outside_uint8_is_refused():
    with pytest.raises(ValueError, match="outside 0..255"):
        Layout("t", [Field("moves", 1, "moves", high=300)], ranges=True)


def test_action_layouts_show_no_range_column():
    assert "range" not in Layout("a", [Field("play", 3, "a card")]).markdown()


@pytest.mark.parametrize(("moves", "horizon", "want"), [
    (0, 0, HORIZON_STEPS),  # no limit
    (0, 600, 255), (1, 600, 255), (300, 600, 128), (599, 600, 1), (600, 600, 0),
    (700, 600, 0),
])
def test_horizon_left_is_the_share_of_the_move_limit_left_rounded_up(moves, horizon, want):
    assert int(horizon_left(moves, horizon)) == want


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_every_game_shows_the_move_limit_it_is_played_under(spec):
    """Two envs of the same game that differ only in ``max_cycles`` show it in the
    ``horizon_left`` entry (and the Game object given to an env is not changed)."""
    opts = dict(spec.bench_options)
    game = trafficenvs.make_game(spec.env_id, **opts)
    assert "horizon_left" in game.obs_layout
    k = game.obs_layout.field("horizon_left").offset
    short = trafficenvs.make_vec(spec.env_id, num_envs=4, max_cycles=3, **opts)
    long = trafficenvs.make_vec(spec.env_id, num_envs=4, max_cycles=3000, **opts)
    a, b = short.reset(seed=0), long.reset(seed=0)
    for _ in range(2):
        acts = np.array([np.flatnonzero(m)[0] for m in a.action_mask])
        a, b = short.step(acts), long.step(acts)
    assert (a.observation[:, k] < b.observation[:, k]).all()
    assert int(game.cfg[0]["horizon"]) == 0


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_observations_are_uint8_rows_inside_the_box(spec):
    env = trafficenvs.make(spec.env_id, **spec.bench_options)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)["observation"]
    space = env.observation_space(env.agent_selection)["observation"]
    assert obs.dtype == np.uint8 and space.dtype == np.uint8
    assert space.contains(obs)
    np.testing.assert_array_equal(space.high, env.unwrapped.game.obs_layout.high())


def test_the_learners_see_each_entry_as_a_share_of_its_bound():
    pytest.importorskip("stable_baselines3")
    import torch as th
    from gymnasium import spaces

    from trafficenvs.agents.ppo import ScaledExtractor

    box = spaces.Box(0, np.array([1, 6, 255], np.uint8), (3,), np.uint8)
    ext = ScaledExtractor(box)
    got = ext(th.as_tensor(np.array([[1, 3, 51]], np.uint8)))
    np.testing.assert_allclose(got.numpy(), [[1.0, 0.5, 0.2]], rtol=1e-6)
