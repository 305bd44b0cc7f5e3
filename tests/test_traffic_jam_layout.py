"""Traffic Jam's observation and action layouts: the rules page shows them, and the
kernel writes (and the mask and action names use) exactly the named fields."""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core.spec import get_spec
from trafficenvs.docs import check_rules_page

ENV = "traffic_jam"


def test_rules_page_tables_are_the_layouts():
    check_rules_page(get_spec(ENV))


@pytest.mark.parametrize("players", [2, 4, 6])
def test_layouts_cover_the_row_and_the_action_space_exactly(players):
    g = trafficenvs.make_game(ENV, num_players=players)
    K = g.num_kinds
    assert g.obs_layout.size == g.obs_dim == 4 * K + 2 * players + 8
    assert g.action_layout.size == g.num_actions == K + K * K
    assert g.obs_layout.field("scores").count == players


def test_named_fields_hold_what_the_state_dict_says():
    """Mid-game, round 2 trip 2 stage 2 (4 players): every field of seat 1's view read
    by name agrees with the state dict, seats rotated so seat 1 comes first."""
    venv = trafficenvs.make_vec(ENV, num_envs=1, num_players=4)
    out = venv.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(16 + 4 + 2):  # round 0 done (2 trips of 8 moves), stage 1, 2 pairs
        out = venv.step(np.array([rng.choice(np.flatnonzero(out.action_mask[0]))]))
    s = venv.state_dict(0)
    assert (s["round"], s["trip"], s["stage"]) == (1, 0, 1)
    g = venv.game
    lay = g.obs_layout
    ob = venv.observe(np.array([1]))[0]

    def per_kind(names):
        v = np.zeros(g.num_kinds)
        for name in names:
            v[g.deck.index(name)] += 1
        return v

    np.testing.assert_array_equal(lay.slice(ob, "hand"), per_kind(s["hands"][1]))
    np.testing.assert_array_equal(lay.slice(ob, "road"), per_kind(s["roads"]))
    np.testing.assert_array_equal(lay.slice(ob, "discard"), per_kind(s["discard"]))
    np.testing.assert_array_equal(lay.slice(ob, "victory_total"),
                                  per_kind(sum(s["victory"], [])))
    for j in range(4):
        seat = (1 + j) % 4
        joy = sum(g.deck.kinds[g.deck.index(c)].joy for c in s["victory"][seat])
        assert ob[lay.at("scores", j, "joy")] == joy
        assert ob[lay.at("scores", j, "victory_cards")] == len(s["victory"][seat])
    np.testing.assert_array_equal(lay.slice(ob, "stage"), [0, 1])
    np.testing.assert_array_equal(lay.slice(ob, "trip"), [1, 0])
    np.testing.assert_array_equal(lay.slice(ob, "round"), [0, 1, 0])
    assert ob[lay.field("deck_left").offset] == len(s["deck"])


def test_the_mask_uses_only_the_range_of_the_stage():
    """Stage 1: legal actions lie in `play`; stage 2: in `car_surprise`, and the names
    of those actions are the pairs."""
    venv = trafficenvs.make_vec(ENV, num_envs=8, num_players=3)
    out = venv.reset(seed=0)
    acts = venv.game.action_layout
    play, pairs = acts.field("play").slice, acts.field("car_surprise").slice
    assert not out.action_mask[:, pairs].any() and out.action_mask[:, play].any(1).all()
    for _ in range(3):
        out = venv.step(np.array([np.flatnonzero(m)[0] for m in out.action_mask]))
    assert not out.action_mask[:, play].any() and out.action_mask[:, pairs].any(1).all()
    a = int(np.flatnonzero(out.action_mask[0])[0])
    assert venv.game.action_name(venv.records[0], a).startswith("car on ")
