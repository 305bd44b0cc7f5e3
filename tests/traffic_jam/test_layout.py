"""Traffic Jam's observation and action layouts: the rules page shows them, and the
kernel writes (and the mask and action names use) exactly the named fields."""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core.spec import get_spec
from trafficenvs.docs import check_rules_page
from trafficenvs.traffic_jam.rules.layout import obs_dim

ENV = "traffic_jam"


def test_rules_page_tables_are_the_layouts():
    check_rules_page(get_spec(ENV))


@pytest.mark.parametrize("players", [2, 4, 6])
def test_layouts_cover_the_row_and_the_action_space_exactly(players):
    g = trafficenvs.make_game(ENV, num_players=players)
    K = g.num_kinds
    assert g.obs_layout.size == g.obs_dim == 6 * K + players * (5 * K + 4) + 15
    assert g.obs_dim == obs_dim(players, K)
    assert g.action_layout.size == g.num_actions == K + K * K
    assert g.obs_layout.field("seats").count == players
    assert g.obs_layout.field("seats").stride == g.cfg[0]["ob_seat_stride"]


def test_named_fields_hold_what_the_state_dict_says():
    """Mid-game, round 2 trip 1 stage 2 (4 players): every field of seat 1's view read
    by name agrees with the state dict, seats rotated so seat 1 comes first."""
    venv = trafficenvs.make_vec(ENV, num_envs=1, num_players=4)
    out = venv.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(16 + 4 + 2):  # round 0 done (2 trips of 8 moves), stage 1, 2 pairs
        out = venv.step(np.array([rng.choice(np.flatnonzero(out.action_mask[0]))]))
    s = venv.state_dict(0)
    assert (s["round"], s["trip"], s["stage"]) == (1, 0, 1)
    g = venv.game
    K = g.num_kinds
    lay = g.obs_layout
    ob = venv.observe(np.array([1]))[0]

    def per_kind(names):
        v = np.zeros(K)
        for name in names:
            if name is not None:
                v[g.deck.index(name)] += 1
        return v

    def part(j, name):
        o = lay.at("seats", j, name)
        return ob[o:o + K]

    np.testing.assert_array_equal(lay.slice(ob, "hand"), per_kind(s["hands"][1]))
    np.testing.assert_array_equal(lay.slice(ob, "my_car"), per_kind([s["pending"][1]["car"]]))
    np.testing.assert_array_equal(lay.slice(ob, "my_pick"),
                                  per_kind([s["pending"][1]["surprise"]]))
    np.testing.assert_array_equal(lay.slice(ob, "discard"), per_kind(s["discard"]))
    last = s["last_trip"]
    for j in range(4):
        seat = (1 + j) % 4
        joy = sum(g.deck.kinds[g.deck.index(c)].joy for c in s["victory"][seat])
        assert ob[lay.at("seats", j, "joy")] == joy
        assert ob[lay.at("seats", j, "cards")] == len(s["victory"][seat])
        assert ob[lay.at("seats", j, "picked")] == (seat < 2)  # seats 0, 1 chose their pairs
        assert ob[lay.at("seats", j, "scored")] == last["scored"][seat]
        np.testing.assert_array_equal(part(j, "victory"), per_kind(s["victory"][seat]))
        np.testing.assert_array_equal(part(j, "first"), per_kind([s["firsts"][seat]]))
        np.testing.assert_array_equal(part(j, "last_first"), per_kind([last["firsts"][seat]]))
        np.testing.assert_array_equal(part(j, "last_car"), per_kind([last["cars"][seat]]))
        np.testing.assert_array_equal(part(j, "last_surprise"),
                                      per_kind([last["surprises"][seat]]))
    assert sum(part(j, "first").sum() for j in range(4)) == len(s["roads"]) == 4
    np.testing.assert_array_equal(lay.slice(ob, "last_jam"),
                                  [last["jam"][t] for t in ("morning", "day", "night")])
    np.testing.assert_array_equal(lay.slice(ob, "stage"), [0, 1])
    np.testing.assert_array_equal(lay.slice(ob, "trip"), [1, 0])
    np.testing.assert_array_equal(lay.slice(ob, "round"), [0, 1, 0])
    assert ob[lay.field("deck_left").offset] == len(s["deck"])
    assert ob[lay.field("horizon_left").offset] == 255  # 10,000 moves each: all of it left
    seen = (per_kind(s["hands"][1]) + per_kind(s["discard"]) + per_kind(s["roads"])
            + per_kind(sum(s["victory"], [])) + per_kind([s["pending"][1]["car"]])
            + per_kind([s["pending"][1]["surprise"]]))
    np.testing.assert_array_equal(lay.slice(ob, "unseen"), np.array(g.deck.counts) - seen)


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
