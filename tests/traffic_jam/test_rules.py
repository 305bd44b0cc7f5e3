"""Traffic Jam rules (rulebook 001, rulings T1-T6), one test per rule.

Positions are drawn as state dicts: who holds what, what lies on which road.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.traffic_jam.positions import cards, pair, play, position, vec_at
from trafficenvs.registry import make_game, make_vec
from trafficenvs.traffic_jam.rules.layout import TIMES
from trafficenvs.traffic_jam.rules.scoring import road_size


@pytest.fixture
def g4():
    return make_game("traffic_jam", num_players=4)


@pytest.fixture
def g3():
    return make_game("traffic_jam", num_players=3)


def road_size_of(game, specs: str, time: str) -> int:
    """Size of one road holding the given cards (a bare record: only the road counts)."""
    rec = game.new_records(1)[0]
    for name in cards(game, specs):
        rec["road"][game.deck.index(name)] += 1
    return int(road_size(rec, game.cfg[0], TIMES.index(time)))


# --------------------------------------------------------------------------- sizes (T2)


def test_van_takes_two_spaces(g4):
    assert road_size_of(g4, "day van", "day") == 2
    assert road_size_of(g4, "day van, day van", "day") == 4


def test_cabriolet_buggy_and_ice_cream_truck_take_one_space_each(g4):
    assert road_size_of(g4, "day cab, day buggy, day ice", "day") == 3


def test_first_truck_takes_one_space_each_further_truck_two(g4):
    assert road_size_of(g4, "day truck", "day") == 1
    assert road_size_of(g4, "day truck, day truck", "day") == 3
    assert road_size_of(g4, "day truck, day truck, day truck", "day") == 5


def test_all_buses_on_a_road_together_take_one_space(g4):
    assert road_size_of(g4, "day bus", "day") == 1
    assert road_size_of(g4, "day bus, day bus, day bus", "day") == 1


def test_lone_motorcycle_takes_no_space_but_several_take_one_each(g4):
    assert road_size_of(g4, "night moto", "night") == 0
    assert road_size_of(g4, "night moto, night moto", "night") == 2
    assert road_size_of(g4, "night moto, night moto, night moto", "night") == 3


def test_hot_air_balloon_takes_no_space(g4):
    assert road_size_of(g4, "night balloon, night balloon", "night") == 0


def test_roads_do_not_affect_each_other(g4):
    #   morning: van van | day: (nothing) -> the day road is empty
    assert road_size_of(g4, "morning van, morning van", "day") == 0


# --------------------------------------------------------------------------- scoring


def rulebook_example(game):
    """The rulebook's 4-player scoring example, one move before the reveal.

    morning: cabriolet, buggy, truck, bus*          1+1+1+1 = 4  free flowing
    day:     buggy, buggy, ice cream truck*         1+1+1   = 3  free flowing
    night:   truck, truck, van, balloon*, motorcycle*  1+2+2+0+0 = 5  JAM
    (* = a player's car). The rulebook's day cards are 3, 4 and 3 joy with a failing
    car on the last; the default deck's failing day card is the ice cream truck.
    player_3 is to reveal: car on the night motorcycle, surprise the night van.
    """
    return position(
        game, stage=1, to_move=3,
        roads=cards(game, "morning cab, morning buggy, day buggy, night truck"),
        pending=[
            {"first": None, "car": cards(game, "morning bus")[0],
             "surprise": cards(game, "morning truck")[0]},
            {"first": None, "car": cards(game, "day ice")[0],
             "surprise": cards(game, "day buggy")[0]},
            {"first": None, "car": cards(game, "night balloon")[0],
             "surprise": cards(game, "night truck")[0]},
            {"first": None, "car": None, "surprise": None},
        ],
        hands=[
            cards(game, "morning van, morning van, day van"),
            cards(game, "day van, day van, day truck"),
            cards(game, "day truck, day truck, day bus"),
            cards(game, "night moto, night van, day bus, day bus, night bus"),
        ],
    )


def test_rulebook_scoring_example_four_players(g4):
    venv, _ = vec_at({"num_players": 4}, rulebook_example(g4))
    out = play(venv, pair(g4, *cards(g4, "night moto, night van")))
    s = venv.state_dict(0)
    assert s["last_trip"]["jam"] == {"morning": False, "day": False, "night": True}
    assert s["last_trip"]["scored"] == [True, False, True, True]
    assert s["victory"] == [cards(g4, "morning bus"), [], cards(g4, "night balloon"),
                            cards(g4, "night moto")]
    # the cars' cards went to the victory piles, the other 9 road cards to the discard
    assert len(s["discard"]) == 9 and s["roads"] == []
    assert (s["trip"], s["stage"], s["to_move"]) == (1, 0, 0)
    assert venv.records[0]["joy"][:4].tolist() == [2, 0, 2, 2]
    assert out.rewards[0].tolist() == [0, 0, 0, 0]  # no shaping: rewards come at the end


def test_shaping_option_pays_joy_points_when_scored():
    game = make_game("traffic_jam", num_players=4, shaping=True)
    venv, _ = vec_at({"num_players": 4, "shaping": True}, rulebook_example(game))
    out = play(venv, pair(game, *cards(game, "night moto, night van")))
    assert out.rewards[0].tolist() == [2, 0, 2, 2]


def scoring_position(game, road_specs, cars_and_surprises):
    """Trip 0, stage 2, last seat to move; ``cars_and_surprises`` one pair per seat."""
    n = game.num_players
    pend = [{"first": None, "car": cards(game, c)[0], "surprise": cards(game, s)[0]}
            for c, s in cars_and_surprises[:-1]]
    pend.append({"first": None, "car": None, "surprise": None})
    last_car, last_sur = cars_and_surprises[-1]
    return position(
        game, stage=1, to_move=n - 1, roads=cards(game, road_specs), pending=pend,
        hands=[None] * (n - 1) + [cards(game, f"{last_car}, {last_sur}") + [...]],
    )


def result_of(game, state, last_pair):
    venv, _ = vec_at({"num_players": game.num_players}, state)
    play(venv, pair(game, *cards(game, last_pair)))
    return venv.state_dict(0)["last_trip"]


def test_a_road_jams_only_when_its_size_exceeds_the_number_of_players(g3):
    #   day: cab cab cab (3 = players: free) vs cab cab cab buggy (4 > 3: jam)
    free = scoring_position(g3, "day cab, day cab, day cab",
                            [("night van", "morning van"), ("night van", "morning van"),
                             ("morning cab", "night cab")])
    assert result_of(g3, free, "morning cab, night cab")["jam"]["day"] is False
    jam = scoring_position(g3, "day cab, day cab, day cab",
                           [("night van", "morning van"), ("night van", "day buggy"),
                            ("morning cab", "night cab")])
    assert result_of(g3, jam, "morning cab, night cab")["jam"]["day"] is True


def test_free_flowing_cards_score_nothing_in_a_jam(g3):
    #   day: van van van (+ the cars' cards) -> jam; a car on a day van gets no joy
    st = scoring_position(g3, "day van, day van, day van",
                          [("day van", "night bus"), ("morning cab", "night cab"),
                           ("morning buggy", "night buggy")])
    r = result_of(g3, st, "morning buggy, night buggy")
    assert r["jam"]["day"] is True and r["scored"] == [False, True, True]


def test_motorcycle_scores_whether_free_or_jammed(g3):
    jam = scoring_position(g3, "day van, day van, day van",
                           [("day moto", "night bus"), ("morning cab", "night cab"),
                            ("morning buggy", "night buggy")])
    r = result_of(g3, jam, "morning buggy, night buggy")
    assert r["jam"]["day"] is True and r["scored"][0] is True
    free = scoring_position(g3, "morning bus, morning bus, morning bus",
                            [("day moto", "night bus"), ("morning cab", "night cab"),
                             ("morning buggy", "night buggy")])
    r = result_of(g3, free, "morning buggy, night buggy")
    assert r["jam"]["day"] is False and r["scored"][0] is True


def test_balloon_scores_only_if_it_is_the_only_balloon_on_its_road(g3):
    #   night: balloon* alone -> joy; night: balloon* + balloon (a surprise) -> none
    alone = scoring_position(g3, "day bus, day bus, day bus",
                             [("night balloon", "morning bus"), ("morning cab", "day cab"),
                              ("morning buggy", "day buggy")])
    assert result_of(g3, alone, "morning buggy, day buggy")["scored"][0] is True
    two = scoring_position(g3, "day bus, day bus, day bus",
                           [("night balloon", "morning bus"), ("morning cab", "night balloon"),
                            ("morning buggy", "day buggy")])
    assert result_of(g3, two, "morning buggy, day buggy")["scored"][0] is False


def test_two_cars_on_two_balloons_of_one_road_both_score_nothing(g3):
    st = scoring_position(g3, "day bus, day bus, day bus",
                          [("night balloon", "morning bus"), ("night balloon", "day cab"),
                           ("morning buggy", "day buggy")])
    assert result_of(g3, st, "morning buggy, day buggy")["scored"] == [False, False, True]


def test_ice_cream_truck_scores_only_in_a_jam_and_only_if_alone(g3):
    jam_alone = scoring_position(g3, "day van, day van, day van",
                                 [("day ice", "night bus"), ("morning cab", "night cab"),
                                  ("morning buggy", "night buggy")])
    assert result_of(g3, jam_alone, "morning buggy, night buggy")["scored"][0] is True
    free = scoring_position(g3, "morning bus, morning bus, morning bus",
                            [("day ice", "night bus"), ("morning cab", "night cab"),
                             ("morning buggy", "night buggy")])
    assert result_of(g3, free, "morning buggy, night buggy")["scored"][0] is False
    jam_two = scoring_position(g3, "day van, day van, day van",
                               [("day ice", "night bus"), ("morning cab", "day ice"),
                                ("morning buggy", "night buggy")])
    assert result_of(g3, jam_two, "morning buggy, night buggy")["scored"][0] is False


# --------------------------------------------------------------------------- the trip (T3)


def test_stage_one_cards_are_revealed_only_when_everyone_has_chosen(g3):
    venv = make_vec("traffic_jam", num_envs=1, num_players=3)
    out = venv.reset(seed=3)
    for seat in range(3):
        assert venv.state_dict(0)["roads"] == []
        assert out.current_player[0] == seat
        out = venv.step(np.array([np.flatnonzero(out.action_mask[0])[0]]))
    s = venv.state_dict(0)
    assert len(s["roads"]) == 3 and s["stage"] == 1


def test_a_players_observation_ignores_earlier_hidden_choices_in_stage_one(g3):
    """player_2 sees the same thing whatever player_0 and player_1 picked."""
    seen = set()
    base = make_vec("traffic_jam", num_envs=1, num_players=3)
    first = base.reset(seed=11).copy()
    for a0 in np.flatnonzero(first.action_mask[0]):
        venv = make_vec("traffic_jam", num_envs=1, num_players=3)
        out = venv.reset(seed=11)
        out = venv.step(np.array([a0]))
        for a1 in np.flatnonzero(out.action_mask[0]):
            v2 = make_vec("traffic_jam", num_envs=1, num_players=3)
            v2.reset(seed=11)
            v2.step(np.array([a0]))
            o = v2.step(np.array([a1]))
            assert o.current_player[0] == 2
            seen.add((o.observation[0].tobytes(), o.action_mask[0].tobytes()))
    assert len(seen) == 1


def test_a_players_observation_ignores_earlier_hidden_pairs_in_stage_two(g3):
    venv = make_vec("traffic_jam", num_envs=1, num_players=3)
    out = venv.reset(seed=5)
    for _ in range(3):  # stage 1
        out = venv.step(np.array([np.flatnonzero(out.action_mask[0])[0]]))
    start = venv.state_dict(0)
    seen = set()
    for a0 in np.flatnonzero(out.action_mask[0])[:8]:
        for k in range(4):
            v = make_vec("traffic_jam", num_envs=1, num_players=3)
            v.reset(seed=0)
            v.load_state_dict(0, start)
            o = v.step(np.array([a0]))
            a1 = np.flatnonzero(o.action_mask[0])[k]
            o = v.step(np.array([a1]))
            seen.add(o.observation[0].tobytes())
    assert len(seen) == 1


def test_a_game_is_three_rounds_of_two_trips_of_two_decisions_per_player():
    for n in (2, 5):
        venv = make_vec("traffic_jam", num_envs=1, num_players=n)
        out = venv.reset(seed=n)
        moves = 0
        while True:
            out = venv.step(np.array([np.flatnonzero(out.action_mask[0])[-1]]))
            moves += 1
            if out.terminated[0]:
                break
        assert moves == 3 * 2 * 2 * n


def test_six_cards_are_dealt_to_each_player_every_round():
    venv = make_vec("traffic_jam", num_envs=1, num_players=4)
    out = venv.reset(seed=1)
    hands = []
    for _ in range(3 * 2 * 2 * 4 - 1):
        s = venv.state_dict(0)
        if (s["trip"], s["stage"], s["to_move"]) == (0, 0, 0):
            hands.append([len(h) for h in s["hands"]])
        out = venv.step(np.array([np.flatnonzero(out.action_mask[0])[0]]))
    assert hands == [[6, 6, 6, 6]] * 3


def test_empty_deck_is_refilled_by_shuffling_the_discard_pile():
    """T4. 2 players, end of round 1: 5 cards left in the deck, 12 to deal."""
    game = make_game("traffic_jam", num_players=2)
    hand1 = cards(game, "morning cab, day cab")
    road = cards(game, "day bus, night bus")
    pend0 = {"first": None, "car": cards(game, "morning buggy")[0],
             "surprise": cards(game, "day buggy")[0]}
    st = position(game, trip=1, stage=1, to_move=1, roads=road,
                  pending=[pend0, {"first": None, "car": None, "surprise": None}],
                  hands=[[], hand1])
    deck = st["deck"]
    st["deck"], st["discard"] = deck[:5], deck[5:]
    venv, _ = vec_at({"num_players": 2}, st)
    before = len(st["discard"])
    play(venv, pair(game, *hand1))
    s = venv.state_dict(0)
    game.check_invariants(venv.records[0])
    kept = sum(len(v) for v in s["victory"])
    assert [len(h) for h in s["hands"]] == [6, 6]
    assert s["discard"] == []  # the whole discard pile went into the new deck
    # deck = old discard + this trip's discards (6 road cards - kept) + 5 - 12 dealt
    assert len(s["deck"]) == before + (6 - kept) + 5 - 12


# --------------------------------------------------------------------------- end (T5, C2)


def final_position(game, victory):
    """Round 3, trip 2, the last decision: every car lands on a jammed day van (no joy).

    day: truck truck truck (stage 1) + van van | van truck | van bus -> size > 3, JAM
    """
    pend = [
        {"first": None, "car": cards(game, "day van")[0], "surprise": cards(game, "day van")[0]},
        {"first": None, "car": cards(game, "day van")[0], "surprise": cards(game, "day truck")[0]},
        {"first": None, "car": None, "surprise": None},
    ]
    return position(game, round=2, trip=1, stage=1, to_move=2,
                    roads=cards(game, "day truck, day truck, day truck"), pending=pend,
                    hands=[[], [], cards(game, "day van, night bus")], victory=victory)


def test_most_joy_points_wins(g3):
    victory = [cards(g3, "morning van, day cab"), cards(g3, "morning bus"), []]
    venv, _ = vec_at({"num_players": 3}, final_position(g3, victory))
    out = play(venv, pair(g3, *cards(g3, "day van, night bus")))
    assert out.terminated[0]
    assert out.rewards[0].tolist() == [1.0, -0.5, -0.5]


def test_joy_tie_is_broken_by_the_number_of_cards_in_the_victory_pile(g3):
    #   player_0: 4 + 4 = 8 joy in 2 cards; player_1: 2 + 2 + 4 = 8 joy in 3 cards
    victory = [cards(g3, "morning van, day cab"), cards(g3, "morning bus, morning moto, day cab"),
               cards(g3, "night bus")]
    venv, _ = vec_at({"num_players": 3}, final_position(g3, victory))
    out = play(venv, pair(g3, *cards(g3, "day van, night bus")))
    assert out.rewards[0].tolist() == [-0.5, 1.0, -0.5]


def test_a_remaining_tie_shares_the_win(g3):
    #   players 0 and 1: 8 joy in 3 cards each -> both win: 3/2 * (1/2 - 1/3) = 0.25
    same = "morning bus, morning moto, day cab"
    victory = [cards(g3, same), cards(g3, same), cards(g3, "night bus")]
    venv, _ = vec_at({"num_players": 3}, final_position(g3, victory))
    out = play(venv, pair(g3, *cards(g3, "day van, night bus")))
    np.testing.assert_allclose(out.rewards[0], [0.25, 0.25, -0.5])


def test_an_all_way_tie_gives_everyone_zero(g3):
    victory = [cards(g3, "night cab")] * 3
    venv, _ = vec_at({"num_players": 3}, final_position(g3, victory))
    out = play(venv, pair(g3, *cards(g3, "day van, night bus")))
    assert out.terminated[0] and out.rewards[0].tolist() == [0, 0, 0]


# --------------------------------------------------------------------------- view (T6, C4)


def test_observation_is_from_the_observers_seat(g3):
    """Seats block: me first, then the others in turn order after me."""
    victory = [cards(g3, "morning van"), cards(g3, "morning bus, morning moto"), []]
    st = position(g3, victory=victory, round=1, trip=1,
                  hands=[cards(g3, "day van, day van, night bus"), None, None])
    venv, out = vec_at({"num_players": 3}, st)
    lay = g3.obs_layout
    o = out.observation[0]
    hand = lay.slice(o, "hand")
    assert hand.sum() == 3 and hand[g3.deck.index(cards(g3, "day van")[0])] == 2

    def scores(ob):
        return [int(ob[lay.at("seats", j, part)]) for j in range(3) for part in ("joy", "cards")]

    assert scores(o) == [4, 1, 4, 2, 0, 0]  # seat 0: me, 1, 2
    env = __import__("trafficenvs").make("traffic_jam", num_players=3, wrapped=False)
    env.reset(seed=0)
    env.load_state_dict(st)
    o1 = env.observe("player_1")["observation"]
    assert scores(o1) == [4, 2, 0, 0, 4, 1]  # seat 1: me, 2, 0
    assert env.observe("player_1")["action_mask"].sum() == 0  # not on turn


def seat_part(game, ob, j: int, part: str) -> np.ndarray:
    """The per-kind part ``part`` of relative seat ``j`` in observation ``ob``."""
    o = game.obs_layout.at("seats", j, part)
    return ob[o:o + game.num_kinds]


def test_observation_shows_roads_discard_victory_and_deck_size(g4):
    venv, _ = vec_at({"num_players": 4}, rulebook_example(g4))
    out = play(venv, pair(g4, *cards(g4, "night moto, night van")))
    lay = g4.obs_layout
    o = out.observation[0]
    assert all(seat_part(g4, o, j, "first").sum() == 0 for j in range(4))  # roads cleared
    assert lay.slice(o, "road_size").tolist() == [0, 0, 0]
    assert lay.slice(o, "discard").sum() == 9
    assert sum(seat_part(g4, o, j, "victory").sum() for j in range(4)) == 3
    assert o[lay.field("deck_left").offset] == venv.records[0]["deck_n"]
    assert [*lay.slice(o, "stage"), *lay.slice(o, "trip"), *lay.slice(o, "round")] == [
        1, 0, 0, 1, 1, 0, 0]  # stage 1, trip 2, round 1
