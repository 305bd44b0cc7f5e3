"""Jamming Traffic rules (rulebook 000, rulings J1-J9), one test per rule.

Each test draws its own small map (towns at coordinates, x east, y north) and sets
the cars on each road through the state dict. A road's cars are written from its
first town to its second: ``"A-B": "n 0"`` is a neutral car at A's end and seat 0's
car at B's end.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jamming_traffic.positions import Table
from trafficenvs.jamming_traffic.rules.legality import is_legal

LINE4 = {"A": (0, 0), "B": (2, 0), "C": (4, 0), "D": (6, 0)}
LINE5 = dict(LINE4, E=(8, 0))


def line4(**kw) -> Table:
    """A --- B --- C --- D"""
    return Table(LINE4, ["A-B", "B-C", "C-D"], **kw)


# --------------------------------------------------------------------------- J2 / J5


def test_a_car_can_only_be_taken_from_a_road_end():
    """A -[n 0 n]- B -[n]- C -[n 1]- D : seat 0's car is in the middle, out of reach."""
    t = line4(homes=["D", "C"]).set({"A-B": "n 0 n", "B-C": "n", "C-D": "n 1"})
    moved = {t.game.decode(a)[1][:2] for a in t.legal() if t.game.decode(a)[0] == "move"}
    # every legal move takes the car at an end of a road, and no car of seat 0 is one
    for road, end in moved:
        cars = t.state()["roads"][road]
        assert cars[0 if end == 0 else -1] == "n"
    assert t.moves_from("A-B", "B") == {"B-C"}
    t.play(t.move("A-B", "B", "B-C"))  # the neutral car at B's end leaves...
    assert t.cars("A-B") == "n 0"
    assert t.moves_from("A-B", "B") == {"B-C"}  # ...and seat 0's car is at the end now


def test_one_car_on_a_road_sits_at_both_ends():
    """A -[0]- B -[n n]- C -[n n n]- D : the lone car can leave through A or B."""
    t = Table(dict(LINE4, Z=(0, 2)), ["A-B", "B-C", "C-D", "A-Z"], homes=["Z", "D"])
    t.set({"A-B": "0", "B-C": "n n", "C-D": "n n 1", "A-Z": "n n"})
    assert t.moves_from("A-B", "B") == {"B-C"}
    assert t.moves_from("A-B", "A") == {"A-Z"}


def test_opponents_cars_cannot_be_moved():
    """A -[1]- B -[n n]- C -[n n 0]- D : seat 1's car is at both ends of A-B."""
    t = line4(homes=["D", "C"]).set({"A-B": "1", "B-C": "n n", "C-D": "n n 0"})
    assert t.moves_from("A-B", "B") == set()
    assert t.moves_from("C-D", "C") == {"B-C"}  # the neutral at C's end is fine
    assert t.moves_from("C-D", "D") == set()  # seat 0's own car: D is a dead end


def test_a_moved_car_joins_behind_the_cars_already_there_and_visits_the_town():
    t = line4(homes=["D", "C"]).set({"A-B": "n 0", "B-C": "n n", "C-D": "n 1"})
    t.play(t.move("A-B", "B", "B-C"))
    assert t.cars("B-C") == "0 n n"  # entered at B's end
    assert t.visited(0) == {"B"}


def test_a_steered_car_may_not_turn_back_onto_its_road():
    t = line4(homes=["D", "C"]).set({"A-B": "n 0", "B-C": "n n", "C-D": "n 1"})
    assert t.moves_from("A-B", "A") == set()  # A's only road is the one it is on


def test_moves_are_up_to_the_dice_and_the_turn_passes_after_the_last():
    t = line4(homes=["D", "C"]).set({"A-B": "n 0", "B-C": "n n", "C-D": "n 1"},
                                    moves_left=2, forced_dice=[3, 4])
    end = t.game.num_actions - 1
    assert end in t.legal()  # ending early is always allowed
    t.play(t.move("A-B", "B", "B-C"))
    s = t.state()
    assert (s["to_move"], s["moves_left"]) == (0, 1)
    t.play(t.move("B-C", "B", "A-B"))
    s = t.state()
    assert s["to_move"] == 1 and s["dice"] == [3, 4] and s["moves_left"] == 7


# --------------------------------------------------------------------------- J6 jams


def test_fourth_car_pushes_far_car_onward():
    """A -[0]- B -[n n 1]- C -[n n]- D : seat 0 moves onto the full road B-C; seat 1's
    car at C's far end is pushed through C onto C-D, for free."""
    t = line4(homes=["A", "D"]).set({"A-B": "0", "B-C": "n n 1", "C-D": "n n"}, moves_left=2)
    t.play(t.move("A-B", "B", "B-C"))
    assert t.cars("B-C") == "0 n n"
    assert t.cars("C-D") == "1 n n"
    assert t.visited(1) == {"C"}  # pushed cars visit the towns they pass
    assert t.state()["moves_left"] == 1  # the push cost nothing


def test_cascade_over_three_roads():
    """A -[0]- B -[n n n]- C -[n n n]- D -[n]- E : one move, three roads change."""
    t = Table(LINE5, ["A-B", "B-C", "C-D", "D-E"], homes=["A", "E"])
    t.set({"A-B": "0", "B-C": "n n n", "C-D": "n n 1", "D-E": "n"})
    t.play(t.move("A-B", "B", "B-C"))
    assert [t.cars(r) for r in ("A-B", "B-C", "C-D", "D-E")] == ["", "0 n n", "n n n", "1 n"]
    assert t.visited(1) == {"D"}


STAR = {"W": (0, 0), "C": (2, 0), "E": (4, 0), "N": (2, 2), "S": (3, -1), "F": (-2, 0)}


def test_pushed_car_goes_straight_on():
    """         N
                |
    F --- W --- C --- E      a car pushed east through C carries on east,
                 \\           not north (a left turn) nor south-east (a right turn)
                  S
    """
    t = Table(STAR, ["W-C", "C-E", "C-N", "C-S", "F-W"], homes=["F", "E"])
    t.set({"F-W": "n 0", "W-C": "n n 1", "C-E": "n", "C-N": "n n", "C-S": "n n"})
    t.play(t.move("F-W", "W", "W-C"))
    assert t.cars("C-E") == "1 n"


def test_cascade_leaves_the_straight_road_at_a_bend_by_the_smallest_turn():
    """F --- W --- C   the road east ends at C: of the two bends the pushed car
                 / \\  takes the gentler one (30 degrees left, not 60 right).
                N   S
    """
    towns = {"F": (-2, 0), "W": (0, 0), "C": (2, 0), "N": (2 + 1.732, 1), "S": (3, -1.732)}
    t = Table(towns, ["W-C", "C-N", "C-S", "F-W"], homes=["F", "S"])
    t.set({"F-W": "n 0", "W-C": "n n 1", "C-N": "n", "C-S": "n n"})
    t.play(t.move("F-W", "W", "W-C"))
    assert t.cars("C-N") == "1 n"


def test_a_tie_between_two_bends_goes_clockwise():
    """F --- W --- C  <- 60 degrees left or 60 degrees right: the right (clockwise) turn."""
    towns = {"F": (-2, 0), "W": (0, 0), "C": (2, 0), "N": (3, 1.732), "S": (3, -1.732)}
    t = Table(towns, ["W-C", "C-N", "C-S", "F-W"], homes=["F", "N"])
    t.set({"F-W": "n 0", "W-C": "n n 1", "C-N": "n n", "C-S": "n"})
    t.play(t.move("F-W", "W", "W-C"))
    assert t.cars("C-S") == "1 n"


def test_a_pushed_car_turns_back_only_when_nothing_else_is_legal():
    """A -[0]- B -[n n 1]- C (a dead end): seat 1's car pushed into C comes back, and the
    jam runs back along B-C and out through B."""
    t = Table({"A": (0, 0), "B": (2, 0), "C": (4, 0)}, ["A-B", "B-C"], homes=["A", "C"])
    t.set({"A-B": "0", "B-C": "n n 1"})
    t.play(t.move("A-B", "B", "B-C"))
    # 0 joined at B, seat 1's car U-turned at C, re-entered at C and pushed seat 0's car
    # (now at B's end) back through B onto A-B
    assert t.cars("B-C") == "n n 1" and t.cars("A-B") == "0"
    assert t.visited(0) == {"B"} and t.visited(1) == {"C"}


# --------------------------------------------------------------------------- J7 pieces

CROSS = {"C": (0, 0), "E": (2, 0), "N": (0, 2), "W": (-2, 0), "S": (0, -2), "F": (-4, 0)}
CROSS_ROADS = ["C-E", "C-N", "C-W", "C-S", "F-W"]


def cross(**cars_kw) -> Table:
    """          N
                 |
       F --- W --C-- E      the roundabout sits on C
                 |
                 S
    """
    t = Table(CROSS, CROSS_ROADS, homes=["F", "E"])
    return t


@pytest.mark.parametrize(("direction", "exit_road"), [("ccw", "C-S"), ("cw", "C-N")])
def test_roundabout_forces_the_exit_of_a_steered_car(direction, exit_road):
    t = cross().set({"C-E": "n n", "C-N": "n n", "C-W": "n n", "C-S": "n", "F-W": "0 n 1"},
                    roundabout={"town": 0, "direction": direction})
    # from W (west) the next exit counter-clockwise is S, clockwise N: no other choice
    assert t.moves_from("C-W", "C") == {exit_road}


def test_roundabout_forces_the_exit_of_a_pushed_car():
    t = cross().set({"C-E": "1", "C-N": "n", "C-W": "n n n", "C-S": "n n", "F-W": "n n 0"},
                    roundabout={"town": 0, "direction": "ccw"})
    t.play(t.move("F-W", "W", "C-W"))
    assert t.cars("C-S") == "n n n" and t.cars("C-E") == "1"  # not straight on to E


def test_roundabout_skips_a_one_way_road_against_its_direction():
    """The rulebook's Illegal Manoeuvre: C-S may only be entered at S, so the
    counter-clockwise roundabout sends the car on to E, for steered and pushed cars."""
    t = cross().set({"C-E": "1", "C-N": "n", "C-W": "n n n", "C-S": "n n", "F-W": "n n 0"},
                    roundabout={"town": 0, "direction": "ccw"},
                    one_way={"road": 3, "enter_at": 4})
    assert t.moves_from("C-W", "C") == {"C-E"}
    t.play(t.move("F-W", "W", "C-W"))
    assert t.cars("C-E") == "n 1" and t.cars("C-S") == "n n"


def test_one_way_road_blocks_entry_and_exit_at_the_wrong_ends():
    """A -- B <-one-way-- C -- D : B-C may be entered only at C and left only at B."""
    t = line4(homes=["A", "D"]).set({"A-B": "0", "B-C": "n n", "C-D": "n n 1"},
                                    one_way={"road": 1, "enter_at": 2})
    assert t.moves_from("A-B", "B") == set()  # entering at B: wrong way
    assert t.moves_from("B-C", "B") == {"A-B"}  # leaving at B: fine
    assert t.moves_from("B-C", "C") == set()  # leaving at C: wrong way
    assert t.moves_from("C-D", "C") == {"B-C"}  # entering at C: fine


def test_move_whose_jam_has_no_legal_exit_is_masked_out():
    """A -[0]- B -one-way-> C (a dead end): a car pushed into C can neither go on nor
    turn back onto the one-way road, so moving onto the full road is illegal."""
    towns = {"A": (0, 0), "B": (2, 0), "C": (4, 0)}
    t = Table(towns, ["A-B", "B-C"], homes=["A", "C"])
    t.set({"A-B": "0", "B-C": "n n 1"}, one_way={"road": 1, "enter_at": 1})
    assert t.moves_from("A-B", "B") == set()
    t.set({"A-B": "0", "B-C": "n n 1"})  # without the sign the U-turn saves the move
    assert t.moves_from("A-B", "B") == {"B-C"}


def test_only_one_roundabout_and_one_one_way_sign_exist_at_a_time():
    t = line4(homes=["A", "D"]).set(
        {"A-B": "0", "B-C": "n n", "C-D": "n n 1"}, phase="place", moves_left=0,
        dice=["roundabout", "one-way"], pending=["roundabout", "one-way"],
        roundabout={"town": 1, "direction": "ccw"}, one_way={"road": 0, "enter_at": 0},
    )
    c = t.game.cfg[0]
    t.play(int(c["a_rb"]) + 2 * 2 + 1)  # roundabout on C, clockwise
    t.play(int(c["a_ow"]) + 2 * 2 + 1)  # one-way on C-D, entered at D
    s = t.state()
    assert s["roundabout"] == {"town": 2, "direction": "cw"}
    assert s["one_way"] == {"road": 2, "enter_at": 3}
    assert s["to_move"] == 1  # no number rolled: the turn is over


def test_two_equal_special_faces_give_one_placement():
    t = line4(homes=["A", "D"]).set({"A-B": "0", "B-C": "n n", "C-D": "n n 1"},
                                    moves_left=1, forced_dice=["roundabout", "roundabout"])
    t.play(t.game.num_actions - 1)  # end turn: seat 1 rolls the forced dice
    s = t.state()
    assert s["phase"] == "place" and s["pending"] == ["roundabout"] and s["moves_left"] == 0
    t.play(int(t.game.cfg[0]["a_rb"]))
    assert t.state()["to_move"] == 0


def test_placements_come_before_any_car_moves():
    t = line4(homes=["A", "D"]).set({"A-B": "0", "B-C": "n n", "C-D": "n n 1"},
                                    moves_left=1, forced_dice=[2, "one-way"])
    t.play(t.game.num_actions - 1)
    kinds = {t.game.decode(a)[0] for a in t.legal()}
    assert kinds == {"one_way"}
    t.play(int(t.game.cfg[0]["a_ow"]))
    assert t.state()["phase"] == "move" and t.state()["moves_left"] == 2


# --------------------------------------------------------------------------- J4 dice


def test_dice_faces_are_a_game_option():
    t = line4(homes=["A", "D"], faces=[4]).set(
        {"A-B": "0", "B-C": "n n", "C-D": "n n 1"}, moves_left=1, dice=[4, 4])
    t.play(t.game.num_actions - 1)
    assert t.state()["moves_left"] == 8 and t.state()["dice"] == [4, 4]


def test_dice_are_fair_over_many_turns():
    import trafficenvs

    v = trafficenvs.make_vec("jamming_traffic", num_envs=512, num_players=2, map="small")
    out = v.reset(seed=3)
    recs = v.records
    # skip the two set-up choices, then read the first roll of every game
    for _ in range(2):
        out = v.step(np.array([np.flatnonzero(m)[0] for m in out.action_mask]))
    faces = np.concatenate([recs["dice"][:, 0], recs["dice"][:, 1]])
    counts = np.bincount(faces, minlength=6)
    assert counts.min() > 1024 / 6 * 0.7 and counts.max() < 1024 / 6 * 1.3


# --------------------------------------------------------------------------- J3 set-up


def test_set_up_each_player_takes_the_neutral_car_at_their_home_end():
    t = line4(homes=["B", "D"])
    t.env.reset(seed=1)
    s = t.state()
    assert s["phase"] == "setup" and all(r == ["n", "n"] for r in s["roads"])
    assert {t.game.decode(a) for a in t.legal()} == {("setup", (0,)), ("setup", (1,))}
    t.play(int(t.game.cfg[0]["a_setup"]) + 1)  # seat 0 (home B) starts on B-C
    t.play(int(t.game.cfg[0]["a_setup"]) + 2)  # seat 1 (home D) starts on C-D
    s = t.state()
    assert s["roads"] == [["n", "n"], [0, "n"], ["n", 1]]
    assert s["phase"] in ("move", "place") and s["to_move"] == 0


def test_homes_are_distinct_and_drawn_by_the_seed():
    import trafficenvs

    v = trafficenvs.make_vec("jamming_traffic", num_envs=64, num_players=10)
    v.reset(seed=0)
    homes = v.records["home"][:, :10]
    assert all(len(set(h)) == 10 for h in homes.tolist())
    assert len({tuple(h) for h in homes.tolist()}) > 50


# --------------------------------------------------------------------------- J8 endless


SQUARE = {"A": (0, 0), "B": (4, 0), "C": (4, 4), "D": (0, 4),
          "a": (1, 1), "b": (3, 1), "c": (3, 3), "d": (1, 3)}
SQUARE_ROADS = ["A-B", "B-C", "C-D", "D-A", "A-a", "B-b", "C-c", "D-d"]


def square() -> Table:
    """D ----- C      a ring of four full roads; each corner has a short spur inward
    | d   c |      (a turn of 135 degrees, so jams stay on the ring). Seat 0 drives
    | a   b |      in from the spur at A; the jam circles the ring for ever.
    A ----- B
    """
    return Table(SQUARE, SQUARE_ROADS, homes=["a", "c"]).set(
        {"A-B": "n n n", "B-C": "n n n", "C-D": "n n n", "D-A": "n 1 n",
         "A-a": "0", "B-b": "n", "C-c": "n", "D-d": "n"})


def test_endless_loop_on_a_ring_of_full_roads_is_detected():
    t = square()
    t.play(t.move("A-a", "A", "A-B"))
    s = t.state()
    assert s["phase"] == "stop" and s["to_move"] == 0
    stops = {t.game.decode(a) for a in t.legal()}
    assert stops == {("stop", (t.t[x],)) for x in "ABCD"}


def test_endless_jam_credits_every_town_passed():
    t = square()
    t.play(t.move("A-a", "A", "A-B"))
    # until the configuration repeats every car on the ring has gone all the way round
    assert t.visited(0) == {"A", "B", "C", "D"}
    assert t.visited(1) == {"A", "B", "C", "D"}


def test_endless_jam_stops_where_the_mover_chose_and_leaves_one_road_at_four():
    t = square()
    t.play(t.move("A-a", "A", "A-B"))
    t.play(int(t.game.cfg[0]["a_stop"]) + t.t["C"])
    s = t.state()
    # the configuration is back to the one right after the move; from there the jam
    # goes on until a car has been pushed through C: onto C-D, which keeps 4 cars
    assert [t.cars(r) for r in ("A-B", "B-C", "C-D", "D-A")] == \
        ["0 n n", "n n n", "n n n n", "n 1 n"]
    assert s["held"] == [t.r("C-D")] and s["phase"] == "move" and s["moves_left"] == 2
    over = [r for r in s["roads"] if len(r) > 3]
    assert len(over) == 1


def test_endless_jam_that_completes_a_player_ends_the_game_at_that_push():
    """The ring of ``square()``; seat 1 (home c) has seen every town but C. Its car on
    D-A goes round with the jam: through A, along A-B, through B, along B-C, and wins
    when pushed through C, mid-lap. The game ends there (J9), with that car at C's end
    of C-D and the jam's other roads at 3: the laps are not played on."""
    t = square().set({"A-B": "n n n", "B-C": "n n n", "C-D": "n n n", "D-A": "n 1 n",
                      "A-a": "0", "B-b": "n", "C-c": "n", "D-d": "n"},
                     visited=[[], ["A", "B", "D", "a", "b", "d"]])
    t.play(t.move("A-a", "A", "A-B"))
    s = t.state()
    assert t.over and s["winner"] == [1]
    assert t.cars("C-D").split() == ["1", "n", "0", "n"]  # 1 just came in at C
    assert [len(t.cars(r).split()) for r in ("A-B", "B-C", "D-A")] == [3, 3, 3]


def test_a_held_road_is_freed_when_a_move_takes_a_car_off_it():
    t = square()
    t.play(t.move("A-a", "A", "A-B"))
    t.play(int(t.game.cfg[0]["a_stop"]) + t.t["C"])
    t.play(t.move("C-D", "D", "D-d"))
    s = t.state()
    assert s["held"] == [] and t.cars("C-D") == "n n n" and t.cars("D-d") == "n n"


def test_a_held_road_jams_again_when_one_more_car_is_pushed_on():
    """The held road C-D (4 cars) gets a fifth: it pushes cars off until it holds 3."""
    t = square().set({"A-B": "n n n", "B-C": "n", "C-D": "n n n n", "D-A": "n 1 n",
                      "A-a": "0", "B-b": "n n", "C-c": "n", "D-d": "n"}, held=[2])
    t.play(t.move("C-c", "C", "C-D"))
    s = t.state()
    assert s["held"] == [] and max(len(r) for r in s["roads"]) <= 3
    assert sum(len(r) for r in s["roads"]) == 16


def test_a_jam_reaching_a_held_road_clears_it_to_three():
    """A jam from B pushes a car onto the held road C-D (4 -> 5). C-D pushes its far car
    on through D (D-A takes it), then, still over 3, pushes again: the car reaches A-B
    through A. Every road ends at 3 or fewer, none held."""
    t = square().set({"A-B": "n", "B-C": "n n n", "C-D": "n n n n", "D-A": "n 1",
                      "A-a": "0", "B-b": "n n n", "C-c": "n", "D-d": "n"}, held=[2])
    t.play(t.move("B-b", "B", "B-C"))
    assert [t.cars(r) for r in ("A-B", "B-C", "C-D", "D-A")] == \
        ["1 n", "n n n", "n n n", "n n n"]
    assert t.state()["held"] == [] and t.visited(1) == {"A"}


def shuttle() -> Table:
    """      b    c
          |    |       A and D are dead ends: a car pushed into them turns back,
    A --- B -- C --- D  and B and C send a pushed car straight on along the line, so
          |    |       a jam on A-B, B-C, C-D shuttles between A and D for ever.
          e    f
    """
    return Table({"A": (0, 0), "B": (2, 0), "C": (4, 0), "D": (6, 0),
                  "b": (2, 2), "c": (4, 2), "e": (2, -2), "f": (4, -2)},
                 ["A-B", "B-C", "C-D", "B-b", "C-c", "B-e", "C-f"], homes=["b", "c"])


def test_endless_jam_through_dead_ends_credits_only_the_towns_a_car_reaches():
    """The line of ``shuttle()`` (A and D dead ends), no road held. Seat 0 drives from b
    through B onto A-B (4 cars). A-B's far car turns back at A, which pushes seat 0's
    car through B onto B-C; B-C's far car goes on to C-D, whose far car turns back at
    D and pushes a neutral car back through C onto B-C, which pushes seat 0's car back
    through B onto A-B: the starting configuration, after one lap of six pushes. Seat
    0's car has passed only B, and seat 1's car (in the middle of C-D) never moved:
    unlike a ring, a shuttle does not carry every car past every town."""
    t = shuttle().set({"A-B": "n n n", "B-C": "n n n", "C-D": "n 1 n", "B-b": "0",
                       "C-c": "n", "B-e": "n n", "C-f": "n"})
    t.play(t.move("B-b", "B", "A-B"))
    assert t.state()["phase"] == "stop"
    assert [t.cars(r) for r in ("A-B", "B-C", "C-D")] == ["n n n 0", "n n n", "n 1 n"]
    assert t.visited(0) == {"B"} and t.visited(1) == set()
    assert {t.game.decode(a)[1][0] for a in t.legal()} == {t.t[x] for x in "ABCD"}


def test_a_move_onto_a_full_loop_of_held_roads_is_illegal():
    """A -[n n n n]- B -[n n n n]- C -[n n 1 n]- D, all three held (left at 4 by earlier
    endless jams), and seat 0's car at B on B-b. A car pushed onto the line shuttles
    between A and D for ever, and every road it is pushed onto holds 5: no stop can
    leave one road with 4 (J8), and a sixth car would not fit. Such a move is illegal
    (the rules page, J8 full loop); taking a car off the line is not."""
    t = shuttle().set({"A-B": "n n n n", "B-C": "n n n n", "C-D": "n n 1 n",
                       "B-b": "n", "C-c": "0"}, held=[0, 1, 2])
    assert t.moves_from("C-c", "C") == {"C-f"}  # not onto B-C or C-D: a full loop
    assert t.moves_from("B-b", "B") == {"B-e"}  # not onto A-B or B-C
    assert "C-c" in t.moves_from("B-C", "C")  # freeing B-C is fine
    rec = t.game.from_dict(t.state())[0]
    legal = t.legal()
    for a in range(t.game.num_actions):
        assert is_legal(rec, t.game.cfg[0], a) == (a in legal)


def test_a_stop_never_leaves_a_road_with_five_cars():
    """A -[n n n n]- B -[n n n]- C -[n n 1 n]- D, A-B and C-D held, seat 0 drives onto
    B-C (3 -> 4). The jam shuttles for ever; the line holds 3 extra cars on 3 roads.
    Wherever the mover stops it, a road pushed to 5 keeps jamming until a road is left
    with 4: every road ends with at most 4 cars, each road over 3 held (J8)."""
    for town in "ABCD":
        t = shuttle().set({"A-B": "n n n n", "B-C": "n n n", "C-D": "n n 1 n",
                           "B-b": "n", "C-c": "0 n"}, held=[0, 2])
        t.play(t.move("C-c", "C", "B-C"))
        assert t.state()["phase"] == "stop"
        t.play(int(t.game.cfg[0]["a_stop"]) + t.t[town])
        s = t.state()
        counts = [len(r) for r in s["roads"]]
        assert s["phase"] == "move" and max(counts) == 4, (town, counts)
        assert s["held"] == [r for r, n in enumerate(counts) if n == 4]
        t.game.check_invariants(t.game.from_dict(s)[0])


def test_a_held_road_that_jams_again_is_checked_for_a_dead_end():
    """A -- B -[0]- C -[n n n 1]- D -[n n]- E =[n n n]=> F   (E-F one-way from E; F a
    dead end). C-D is held at 4. Seat 0 drives onto it at C: C-D holds 5 and pushes
    its far car through D onto D-E (3 cars: that chain ends), then, still at 4, pushes
    again (J8): D-E holds 4 and pushes on through E onto E-F, whose far car would be
    pushed into F with no legal exit. The move is illegal (J7), though its first chain
    alone plays out."""
    t = Table({"A": (0, 0), "B": (2, 0), "C": (4, 0), "D": (6, 0), "E": (8, 0),
               "F": (10, 0)}, ["A-B", "B-C", "C-D", "D-E", "E-F"], homes=["A", "B"])
    t.set({"A-B": "", "B-C": "0", "C-D": "n n n 1", "D-E": "n n", "E-F": "n n n"},
          held=[2], one_way={"road": 4, "enter_at": t.t["E"]})
    assert t.moves_from("B-C", "C") == set()
    rec = t.game.from_dict(t.state())[0]
    assert not is_legal(rec, t.game.cfg[0], t.move("B-C", "C", "C-D"))
    # with one car fewer on the way (E-F holds 2) the second chain ends on E-F: legal
    t.set({"A-B": "n", "B-C": "0", "C-D": "n n n 1", "D-E": "n n", "E-F": "n n"},
          held=[2], one_way={"road": 4, "enter_at": t.t["E"]})
    assert t.moves_from("B-C", "C") == {"C-D"}
    t.play(t.move("B-C", "C", "C-D"))
    s = t.state()
    assert [len(r) for r in s["roads"]] == [1, 0, 3, 3, 3] and s["held"] == []


# --------------------------------------------------------------------------- J9 visits


def test_a_jam_can_win_the_game_for_a_car_that_is_not_the_movers():
    """A -[0]- B -[n n 1]- C -[n n]- D : seat 1 has seen A and B; pushed through C it has
    seen every town but its home D, and wins at once on seat 0's move."""
    t = line4(homes=["A", "D"]).set({"A-B": "0", "B-C": "n n 1", "C-D": "n n"},
                                    visited=[[], ["A", "B"]])
    rewards = t.play(t.move("A-B", "B", "B-C"))
    assert t.over and t.state()["winner"] == [1]
    assert rewards == {"player_0": -1.0, "player_1": 1.0}


def test_the_win_ends_the_game_at_once():
    """A -[0]- B -[n n 1]- C -[n n n]- D -[n]- E : seat 1 wins when pushed through C;
    the jam it was part of stops there, C-D keeps its fourth car."""
    t = Table(LINE5, ["A-B", "B-C", "C-D", "D-E"], homes=["A", "E"])
    t.set({"A-B": "0", "B-C": "n n 1", "C-D": "n n n", "D-E": "n"},
          visited=[[], ["A", "B", "D"]])
    t.play(t.move("A-B", "B", "B-C"))
    assert t.over and t.state()["winner"] == [1]
    assert t.cars("C-D") == "1 n n n" and t.cars("D-E") == "n"
    assert not any(t.env.observe(a)["action_mask"].any() for a in t.env.possible_agents)


def test_the_first_car_in_push_order_wins():
    """Both seats need one town; seat 0's steered car reaches B before the jam pushes
    seat 1's car through C."""
    t = line4(homes=["A", "D"]).set({"A-B": "0", "B-C": "n n 1", "C-D": "n n"},
                                    visited=[["C", "D"], ["A", "B"]])
    t.play(t.move("A-B", "B", "B-C"))
    assert t.state()["winner"] == [0]


def test_turn_limit_truncates_the_game_with_no_result():
    """J9: the turn cap is a truncation (C2: reward 0 for everyone), not a draw."""
    t = line4(homes=["A", "D"], max_turns=1).set({"A-B": "0", "B-C": "n n", "C-D": "n n 1"})
    rewards = t.play(t.game.num_actions - 1)
    assert not t.over and all(t.env.truncations.values())
    assert t.state()["winner"] == [] and set(rewards.values()) == {0.0}


# --------------------------------------------------------------------------- shaping


def test_shaping_pays_each_needed_town_once_to_the_cars_owner():
    """``shaping=True``: A -[n 0]- B -[n n 1]- C -[n]- D, homes D (seat 0) and A (seat 1).
    Seat 0 drives through B onto B-C (1 for seat 0); the jam pushes seat 1's car
    through C (1 for seat 1, on seat 0's move). Passing B again pays nothing; nor does
    a home town."""
    t = line4(homes=["D", "A"], shaping=True).set(
        {"A-B": "n 0", "B-C": "n n 1", "C-D": "n"})
    assert t.play(t.move("A-B", "B", "B-C")) == {"player_0": 1.0, "player_1": 1.0}
    assert t.cars("C-D") == "1 n"
    t.set({"A-B": "n 0", "B-C": "n n", "C-D": "n 1"}, visited=[["B"], []])
    assert t.play(t.move("A-B", "B", "B-C")) == {"player_0": 0.0, "player_1": 0.0}
    t = line4(homes=["D", "C"], shaping=True).set({"A-B": "n 0", "B-C": "n n 1", "C-D": "n"})
    assert t.play(t.move("A-B", "B", "B-C"))["player_1"] == 0.0  # C is seat 1's home


def test_shaping_pays_the_towns_of_an_endless_jam_and_the_win_on_top():
    """The ring of ``square()`` with shaping: seat 0 passes A by its move and B, C, D
    on the laps; seat 1's car passes all four: 4 each. A win adds C2's +1 / -1 to the
    towns of that step."""
    t = Table(SQUARE, SQUARE_ROADS, homes=["a", "c"], shaping=True).set(
        {"A-B": "n n n", "B-C": "n n n", "C-D": "n n n", "D-A": "n 1 n",
         "A-a": "0", "B-b": "n", "C-c": "n", "D-d": "n"})
    assert t.play(t.move("A-a", "A", "A-B")) == {"player_0": 4.0, "player_1": 4.0}
    t = Table(LINE5, ["A-B", "B-C", "C-D", "D-E"], homes=["A", "E"], shaping=True)
    t.set({"A-B": "0", "B-C": "n n 1", "C-D": "n n n", "D-E": "n"},
          visited=[[], ["A", "B", "D"]])
    rewards = t.play(t.move("A-B", "B", "B-C"))  # seat 0 passes B, seat 1 wins at C
    assert t.over and rewards == {"player_0": 1.0 - 1.0, "player_1": 1.0 + 1.0}


def test_shaping_must_be_a_bool():
    with pytest.raises(ValueError, match="shaping must be True or False"):
        line4(shaping="yes")
