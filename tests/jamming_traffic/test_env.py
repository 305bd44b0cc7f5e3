"""Jamming Traffic through its public doors: maps, make/make_vec, state dicts, renders, CLI."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import trafficenvs
from tests.jamming_traffic.positions import Table
from trafficenvs.cli import play
from trafficenvs.jamming_traffic.rules.layout import RECORD_DTYPE
from trafficenvs.jamming_traffic.rules.maps import MAX_ROADS, MAX_TOWNS, load_map, random_map

# --------------------------------------------------------------------------- maps (J1)


def test_the_issue_calls_work():
    env = trafficenvs.make("jamming_traffic-v1", num_players=6, map="default",
                           render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render().shape[2] == 3
    env = trafficenvs.make("jamming_traffic-v1", num_players=3,
                           map=trafficenvs.jamming_traffic.random_map(towns=16, seed=3))
    env.reset(seed=0)
    venv = trafficenvs.make_vec("jamming_traffic-v1", num_envs=4096, num_players=4)
    out = venv.reset(seed=0)
    assert out.action_mask.shape == (4096, venv.num_actions) and out.action_mask.any(1).all()


def test_a_map_from_a_json_file(tmp_path):
    path = tmp_path / "my_map.json"
    path.write_text(json.dumps({"name": "mine", "towns": [[0, 0], [1, 0], [1, 1]],
                                "roads": [[0, 1], [1, 2], [2, 0]]}))
    env = trafficenvs.make("jamming_traffic-v1", num_players=2, map=str(path))
    env.reset(seed=0)
    assert env.unwrapped.game.map.name == "mine"


def test_default_map_has_at_least_twelve_towns_and_plays_two_to_ten():
    m = load_map("default")
    assert m.num_towns >= 12
    for n in (2, 10):
        env = trafficenvs.make("jamming_traffic", num_players=n)
        env.reset(seed=1)


@pytest.mark.parametrize("name", ["default", "small", "wheel", "grid"])
def test_shipped_maps_are_valid_and_fit_the_kernels(name):
    m = load_map(name)
    assert m.num_towns <= MAX_TOWNS and m.num_roads <= MAX_ROADS


@pytest.mark.parametrize(("roads", "message"), [
    ([[0, 1], [1, 2]], "not connected"),
    ([[0, 1], [1, 0], [1, 2], [2, 3]], "duplicates"),
    ([[0, 0], [0, 1], [1, 2], [2, 3]], "to itself"),
    ([[0, 1], [2, 3], [0, 2]], "cross"),
    ([[0, 1], [0, 9]], "outside"),
])
def test_bad_maps_are_refused_with_a_clear_message(roads, message):
    towns = [[0, 0], [2, 2], [2, 0], [0, 2]]
    with pytest.raises(ValueError, match=message):
        load_map({"name": "bad", "towns": towns, "roads": roads})


def test_a_road_through_a_town_is_not_planar_as_drawn():
    with pytest.raises(ValueError, match="runs through town 1"):
        load_map({"towns": [[0, 0], [1, 0], [2, 0]], "roads": [[0, 2], [0, 1]]})


def test_too_few_towns_for_the_players_is_refused():
    with pytest.raises(ValueError, match="too few for 9 players"):
        trafficenvs.make("jamming_traffic", num_players=9, map="small")


def test_unknown_map_name_lists_the_shipped_ones():
    with pytest.raises(ValueError, match="shipped maps"):
        trafficenvs.make("jamming_traffic", num_players=2, map="atlantis")


@pytest.mark.parametrize("seed", range(6))
def test_random_maps_are_connected_planar_and_seeded(seed):
    a = random_map(towns=16, seed=seed)
    b = random_map(towns=16, seed=seed)
    assert a == b and a.num_towns == 16
    load_map(a)  # validates: connected, planar, no duplicates
    assert random_map(towns=16, seed=seed + 100) != a


def test_towns_roads_sort_counter_clockwise():
    m = load_map({"towns": [[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]],
                  "roads": [[0, 3], [0, 1], [0, 4], [0, 2]]})
    # east (road 1), north (3), west (0), south (2)
    assert m.ccw_roads(0) == [1, 3, 0, 2]


def test_record_fits_in_4_kib_for_the_largest_map():
    assert RECORD_DTYPE.itemsize <= 4096
    game = trafficenvs.make_game("jamming_traffic", num_players=10,
                                 map=random_map(towns=MAX_TOWNS, seed=1, density=2.0))
    assert game.map.num_towns == MAX_TOWNS


def test_all_rows_of_a_vectorised_env_share_one_map():
    venv = trafficenvs.make_vec("jamming_traffic", num_envs=8, num_players=3, map="grid")
    venv.reset(seed=0)
    assert (venv.records["cnt"][:, :24] == 2).all() and (venv.records["cnt"][:, 24:] == 0).all()


# --------------------------------------------------------------------------- state dicts


def test_state_dict_round_trips_through_json():
    env = trafficenvs.make("jamming_traffic", num_players=4, wrapped=False)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(300):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        s = env.state_dict()
        env.load_state_dict(json.loads(json.dumps(s)))
        assert env.state_dict() == s


def test_forced_dice_set_the_next_roll():
    t = Table({"A": (0, 0), "B": (2, 0), "C": (4, 0)}, ["A-B", "B-C"], homes=["A", "C"])
    t.set({"A-B": "0", "B-C": "n n 1"}, forced_dice=["one-way", 3])
    t.play(t.game.num_actions - 1)
    s = t.state()
    assert s["dice"] == ["one-way", 3] and s["pending"] == ["one-way"]
    assert s["forced_dice"] is None  # used up


@pytest.mark.parametrize(("change", "message"), [
    ({"roads": [["n"], ["n", 1]]}, "the roads hold 3 cars"),
    ({"roads": [["n", "n"], ["n", 1]]}, "seat 0 has 0 cars"),
    ({"roads": [[0, "n", "n", "n"], []]}, "at most 3"),
    ({"phase": "dancing"}, "phase must be"),
    ({"colour": "red"}, "unknown keys"),
    ({"homes": [0, 0]}, "distinct"),
    ({"forced_dice": [7, 1]}, "not a face"),
    ({"phase": "place"}, "pending"),
])
def test_bad_state_dicts_are_refused(change, message):
    t = Table({"A": (0, 0), "B": (2, 0), "C": (4, 0)}, ["A-B", "B-C"], homes=["A", "C"])
    t.set({"A-B": "0", "B-C": "n n 1"})
    s = dict(t.state(), **change)
    with pytest.raises(ValueError, match=message):
        t.env.load_state_dict(s)


# --------------------------------------------------------------------------- renders, CLI


def test_ansi_render_shows_queues_pieces_dice_and_visits():
    t = Table({"A": (0, 0), "B": (2, 0), "C": (4, 0)}, ["A-B", "B-C"], homes=["A", "C"])
    t.set({"A-B": "0", "B-C": "n n 1"}, roundabout={"town": 1, "direction": "cw"},
          one_way={"road": 1, "enter_at": 1}, visited=[["B"], []])
    text = t.game.render_ansi(t.env.record, 0)
    assert "A [    0    ] B" in text and "B [  n n 1  ] C one-way ->" in text
    assert "Roundabout: B cw" in text and "One-way: road 1 B -> C" in text
    assert "Dice 1 2" in text and "player_0 (you): home A; 1/2 B" in text


def test_rgb_render_draws_the_map():
    env = trafficenvs.make("jamming_traffic", num_players=4, render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 10


def test_cli_plays_jamming_traffic():
    out = io.StringIO()
    moves = "\n".join(["r"] * 30) + "\nq\n"
    assert play("jamming_traffic", 3, stdin=io.StringIO(moves), stdout=out, seed=0) == 0
    assert "Your moves:" in out.getvalue() and "Jamming Traffic" in out.getvalue()


def test_action_names_read_like_the_table():
    t = Table({"A": (0, 0), "B": (2, 0), "C": (4, 0)}, ["A-B", "B-C"], homes=["A", "C"])
    t.set({"A-B": "0", "B-C": "n n 1"})
    names = t.legal_names()
    assert "move player_0's car from road 0 (A-B) through B onto road 1 (B-C)" in names
    assert names[-1] == "end turn"
