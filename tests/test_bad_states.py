"""No broken state is accepted: Jamming Traffic and Traffic Jam.

A state dict is refused when its position cannot arise in play (the rules
pages, J1-J9 and T1-T6), with a ``ValueError`` naming the
key; a value of the wrong type is a ``TypeError`` (also a ``ValueError``) naming the
key, never coerced. The crafted positions start from real ones (random play) and
change one thing. Every position random play reaches, with every option set, still
loads and gives back the same dict.

The loaders refuse before any compiled code runs on the record, so these run in
process; the stop positions that used to corrupt a record are checked to be refused
and every real stop position to play out within its queues.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core.statedict import StateDictError
from trafficenvs.jamming_traffic.rules.jams import loop_roads
from trafficenvs.jamming_traffic.rules.layout import QLEN
from trafficenvs.jamming_traffic.rules.maps import from_dict as map_from_dict
from trafficenvs.jamming_traffic.rules.maps import load_map

# ----------------------------------------------------------------------------- helpers


def _random_states(game_id: str, options: dict[str, Any], steps: int, num_envs: int = 8,
                   seed: int = 0, every: int = 1):
    """``(venv, [state dicts])`` of the positions random play passes (auto-reset)."""
    venv = trafficenvs.make_vec(game_id, num_envs=num_envs, **options)
    out = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states = []
    for t in range(steps):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
        out = venv.step(acts)
        if t % every == 0:
            states += [venv.state_dict(i) for i in range(num_envs)]
    return venv, states


def _refused(venv, state: dict[str, Any], key: str, exc: type = ValueError) -> str:
    """Loading ``state`` raises ``exc`` whose message names ``key``; the message."""
    with pytest.raises(exc) as info:
        venv.load_state_dict(0, state)
    msg = str(info.value)
    assert key in msg, msg
    assert isinstance(info.value, StateDictError) or exc is not ValueError, msg
    return msg


JT_CONFIGS = [
    {"num_players": 2, "map": "small"},
    {"num_players": 4, "map": "default"},
    {"num_players": 10, "map": "default", "max_turns": 12},
    {"num_players": 3, "map": "wheel", "shaping": True},
    {"num_players": 5, "map": "grid"},
    {"num_players": 2, "map": "small", "faces": [1, 2]},  # no special faces
    {"num_players": 3, "map": "small", "faces": ["roundabout", "one-way", 4]},
    {"num_players": 4, "map": "grid", "faces": [1, 2, 3, 3, "roundabout", "one-way"],
     "max_turns": 40},
]


@pytest.fixture(scope="module")
def jt_small():
    """A 2-player game on the small map and positions from random play."""
    return _random_states("jamming_traffic", {"num_players": 2, "map": "small"}, 600,
                          num_envs=16, seed=1)


def _phase(states, phase):
    found = [s for s in states if s["phase"] == phase]
    assert found, f"random play reached no {phase!r} position"
    return found


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("options", JT_CONFIGS, ids=lambda o: "-".join(map(str, o.values())))
def test_jamming_positions_from_random_play_are_accepted(options):
    venv, states = _random_states("jamming_traffic", options, 250, num_envs=8, seed=2,
                                  every=2)
    for s in states:
        venv.load_state_dict(0, json.loads(json.dumps(s)))
        assert venv.state_dict(0) == s


@pytest.mark.parametrize("options", [{"num_players": n} for n in range(2, 7)]
                         + [{"num_players": 4, "shaping": True}],
                         ids=lambda o: "-".join(map(str, o.values())))
def test_traffic_jam_positions_from_random_play_are_accepted(options):
    venv, states = _random_states("traffic_jam", options, 120, num_envs=8, seed=3)
    for s in states:
        venv.load_state_dict(0, json.loads(json.dumps(s)))
        assert venv.state_dict(0) == s


def test_every_real_stop_position_plays_out_within_its_queues(jt_small):
    venv, states = jt_small
    game = venv.game
    env = trafficenvs.make("jamming_traffic", num_players=2, map="small", wrapped=False)
    env.reset(seed=0)
    played = 0
    for s in _phase(states, "stop")[:40]:
        for town in range(game.map.num_towns):
            env.load_state_dict(s)
            a = int(game.cfg[0]["a_stop"]) + town
            if env.observe(env.agent_selection)["action_mask"][a]:
                env.step(a)
                game.check_invariants(env._recs[0])
                played += 1
    assert played


# ----------------------------------------------------------------------------- J8 stops


def _loop(game, state) -> list[int]:
    """The roads of the paused jam's loop."""
    rec = game.from_dict(state)[0]
    bits = int(loop_roads(rec, game.cfg[0], state["jam"]["road"], state["jam"]["entry_end"]))
    return [r for r in range(game.map.num_roads) if bits >> r & 1]


def _move_neutral(state, src: int, dst: int) -> bool:
    """Move a neutral car from road ``src`` to road ``dst`` (False if ``src`` has none)."""
    roads = state["roads"]
    if "n" not in roads[src]:
        return False
    roads[src].remove("n")
    roads[dst].append("n")
    return True


def test_a_sixth_car_on_a_road_is_refused_a_second_road_of_5(jt_small):
    """The crafted stop of the issue: a road on the loop that already holds 5 would take a
    sixth car from the stop's pushes, written past its queue into the next road."""
    venv, states = jt_small
    game = venv.game
    done = 0
    for s in _phase(states, "stop"):
        loop = [r for r in _loop(game, s) if r != s["jam"]["road"]]
        off = [r for r in range(game.map.num_roads) if r not in loop and r != s["jam"]["road"]]
        bad = copy.deepcopy(s)
        target = loop[0]
        moved = 0
        for src in off:
            while len(bad["roads"][target]) < 5 and _move_neutral(bad, src, target):
                moved += 1
        if len(bad["roads"][target]) != 5:
            continue
        _refused(venv, bad, "roads")
        bad["held"] = sorted(set(bad["held"]) | {target})  # held does not make 5 right
        _refused(venv, bad, "roads")
        done += 1
    assert done >= 3


def test_a_paused_jam_that_does_not_loop_is_refused(jt_small):
    """A loop road with room ends the chain: the stop would push on past it, taking cars
    off roads that have none."""
    venv, states = jt_small
    game = venv.game
    done = 0
    for s in _phase(states, "stop"):
        loop = [r for r in _loop(game, s) if r != s["jam"]["road"]]
        off = [r for r in range(game.map.num_roads)
               if r not in loop and r != s["jam"]["road"] and len(s["roads"][r]) < 3]
        for road in loop:
            bad = copy.deepcopy(s)
            if off and len(bad["roads"][road]) == 3 and _move_neutral(bad, road, off[0]):
                msg = _refused(venv, bad, "jam")
                assert "does not loop" in msg or "not paused" in msg, msg
                done += 1
                break
    assert done >= 3


def test_a_stop_without_an_over_full_road_is_refused(jt_small):
    venv, states = jt_small
    s = copy.deepcopy(_phase(states, "move")[0])
    road = next(i for i, cars in enumerate(s["roads"]) if len(cars) <= 3)
    s.update(phase="stop", jam={"road": road, "entry_end": 0},
             moves_left=max(s["moves_left"] - 1, 0))
    _refused(venv, s, "jam")


def test_the_paused_jam_road_is_not_held(jt_small):
    venv, states = jt_small
    s = copy.deepcopy(_phase(states, "stop")[0])
    road = s["jam"]["road"]
    if len(s["roads"][road]) == 4:
        s["held"] = sorted(set(s["held"]) | {road})
        _refused(venv, s, "jam")


# ----------------------------------------------------------------------------- J9 visits


def test_a_seat_that_has_visited_every_town_has_won(jt_small):
    venv, states = jt_small
    T = venv.game.map.num_towns
    s = copy.deepcopy(_phase(states, "move")[0])
    home = s["homes"][1]
    s["visited"][1] = [t for t in range(T) if t != home]
    msg = _refused(venv, s, "visited[1]")
    assert "game is over" in msg
    s["visited"][1] = list(range(T))  # its home visited too: still a win
    _refused(venv, s, "visited[1]")


def test_the_winner_is_the_seat_that_visited_every_town(jt_small):
    venv, states = jt_small
    T = venv.game.map.num_towns
    s = copy.deepcopy(_phase(states, "move")[0])
    s["visited"][0] = [t for t in range(T) if t != s["homes"][0]]
    s.update(phase="over", winner=[0])
    venv.load_state_dict(0, s)  # seat 0 won
    s["winner"] = [1]
    _refused(venv, s, "winner")
    s["winner"] = []  # no max_turns: a game over has a winner
    _refused(venv, s, "winner")
    s["winner"] = [0]
    s["visited"][1] = [t for t in range(T) if t != s["homes"][1]]  # two at once: never
    _refused(venv, s, "winner")


def test_set_up_is_as_the_rules_leave_it():
    venv = trafficenvs.make_vec("jamming_traffic", num_envs=1, num_players=2, map="small")
    out = venv.reset(seed=0)
    venv.step(np.array([np.flatnonzero(out.action_mask[0])[0]]))
    s = venv.state_dict(0)
    assert s["phase"] == "setup" and s["to_move"] == 1
    venv.load_state_dict(0, s)
    bad = copy.deepcopy(s)
    bad["visited"][0] = [0]
    _refused(venv, bad, "visited")
    bad = copy.deepcopy(s)
    bad["dice"] = [1, 2]
    _refused(venv, bad, "dice")
    bad = copy.deepcopy(s)
    bad["turn"] = 3
    _refused(venv, bad, "turn")
    # seat 0's car moved to a road away from its home
    bad = copy.deepcopy(s)
    home = s["homes"][0]
    roads = venv.game.map.roads
    src = next(i for i, cars in enumerate(bad["roads"]) if 0 in cars)
    dst = next(i for i in range(len(roads)) if home not in roads[i] and "n" in bad["roads"][i])
    bad["roads"][src][bad["roads"][src].index(0)] = "n"
    bad["roads"][dst][bad["roads"][dst].index("n")] = 0
    _refused(venv, bad, "roads")


# ----------------------------------------------------------------------------- J4 dice


@pytest.mark.parametrize(("dice", "moves_left"), [
    ([1, 2], 4), ([1, 2], 120), ([4, 4], 9), (["roundabout", 1], 2), ([1, 1], 0)])
def test_moves_left_beyond_the_dice_is_refused(jt_small, dice, moves_left):
    venv, states = jt_small
    s = copy.deepcopy(_phase(states, "move")[0])
    s.update(dice=dice, moves_left=moves_left)
    msg = _refused(venv, s, "moves_left")
    assert "dice" in msg


def test_placements_follow_the_dice(jt_small):
    venv, states = jt_small
    s = copy.deepcopy(_phase(states, "move")[0])
    s.update(phase="place", dice=[1, 2], moves_left=3, pending=["roundabout"])
    _refused(venv, s, "pending")  # no roundabout face rolled
    s.update(dice=["roundabout", 2], moves_left=1)  # placements come before any move
    _refused(venv, s, "moves_left")
    s.update(moves_left=2)
    venv.load_state_dict(0, s)


def test_pieces_need_their_faces():
    venv = trafficenvs.make_vec("jamming_traffic", num_envs=1, num_players=2, map="small",
                                faces=[1, 2])
    _, states = _random_states("jamming_traffic", {"num_players": 2, "map": "small",
                                                   "faces": [1, 2]}, 40, num_envs=2)
    s = copy.deepcopy(_phase(states, "move")[0])
    s["roundabout"] = {"town": 0, "direction": "cw"}
    _refused(venv, s, "roundabout")
    s["roundabout"] = None
    s["one_way"] = {"road": 0, "enter_at": 0}
    _refused(venv, s, "one_way")


def test_turn_at_max_turns_means_over():
    _, states = _random_states("jamming_traffic", {"num_players": 2, "map": "small",
                                                   "max_turns": 5}, 60, num_envs=2)
    venv = trafficenvs.make_vec("jamming_traffic", num_envs=1, num_players=2, map="small",
                                max_turns=5)
    s = copy.deepcopy(_phase(states, "move")[0])
    s["turn"] = 5
    _refused(venv, s, "turn")
    s["turn"] = 6
    _refused(venv, s, "turn")


# ----------------------------------------------------------------------------- types, sizes


HUGE = 10**30


@pytest.mark.parametrize(("path", "value", "key"), [
    (("moves",), HUGE, "moves"), (("turn",), HUGE, "turn"), (("moves",), 2**31, "moves"),
    (("moves_left",), HUGE, "moves_left"), (("homes", 0), HUGE, "homes[0]"),
    (("rng", "key"), 2**64, "rng.key"), (("rng", "counter"), -1, "rng.counter"),
    (("to_move",), HUGE, "to_move"), (("visited", 0), [HUGE], "visited[0][0]"),
    (("held",), [HUGE], "held[0]"), (("winner",), [HUGE], "winner[0]"),
    (("roundabout",), {"town": HUGE, "direction": "cw"}, "roundabout.town"),
    (("one_way",), {"road": HUGE, "enter_at": 0}, "one_way.road"),
    (("dice",), [HUGE, 1], "dice[0]"),
])
def test_huge_ints_name_their_key(jt_small, path, value, key):
    venv, states = jt_small
    s = copy.deepcopy(_phase(states, "move")[0])
    _set(s, path, value)
    with pytest.raises(ValueError) as info:
        venv.load_state_dict(0, s)
    assert not isinstance(info.value, OverflowError)
    assert key in str(info.value), str(info.value)


def _set(d: Any, path: tuple, value: Any) -> None:
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


@pytest.mark.parametrize(("path", "value", "key"), [
    (("roundabout",), {"town": 1.5, "direction": "cw"}, "roundabout.town"),
    (("roundabout",), {"town": 1.0, "direction": "cw"}, "roundabout.town"),
    (("winner",), False, "winner"), (("held",), False, "held"),
    (("visited",), False, "visited"), (("visited", 0), [1.0], "visited[0][0]"),
    (("homes",), [0.0, 1], "homes[0]"), (("to_move",), 0.0, "to_move"),
    (("to_move",), True, "to_move"), (("moves_left",), 1.5, "moves_left"),
    (("moves_left",), "2", "moves_left"), (("moves",), 1.5, "moves"), (("turn",), "3", "turn"),
    (("dice",), [1.0, 2], "dice[0]"), (("dice",), ["3", 1], "dice[0]"),
    (("dice",), [True, 1], "dice[0]"), (("forced_dice",), [1, 2.0], "forced_dice[1]"),
    (("pending",), "roundabout", "pending"), (("roads", 0), "n n", "roads[0]"),
    (("roads", 0), [0.0, "n"], "roads[0][0]"),
    (("one_way",), {"road": 0.0, "enter_at": 0}, "one_way.road"),
    (("rng",), {"key": 1.0, "counter": 0}, "rng.key"),
])
def test_wrong_types_are_not_coerced(jt_small, path, value, key):
    venv, states = jt_small
    s = copy.deepcopy(_phase(states, "move")[0])
    _set(s, path, value)
    with pytest.raises(TypeError) as info:
        venv.load_state_dict(0, s)
    assert isinstance(info.value, ValueError)  # the loaders' type errors are both
    assert key in str(info.value), str(info.value)


# ----------------------------------------------------------------------------- J1 maps


def _triangle(a: Any) -> dict[str, Any]:
    return {"name": "t", "towns": [[0, 0], [2, 0], a], "roads": [[0, 1], [1, 2], [2, 0]]}


@pytest.mark.parametrize("bad", [[math.nan, 1], [1, math.inf], [-math.inf, 0],
                                 {"x": math.nan, "y": 0}])
def test_nan_and_inf_town_coordinates_are_refused(bad):
    d = _triangle(bad)
    if isinstance(bad, dict):
        d["towns"] = [{"x": 0, "y": 0}, {"x": 2, "y": 0}, bad]
    with pytest.raises(ValueError, match="finite"):
        map_from_dict(d)


def test_nan_coordinates_do_not_bypass_the_planarity_check():
    # two crossing roads; with a NaN every crossing test is False
    d = {"towns": [[0, 0], [2, 2], [0, 2], [2, math.nan]], "roads": [[0, 1], [2, 3], [0, 2]]}
    with pytest.raises(ValueError, match="finite"):
        map_from_dict(d)


@pytest.mark.parametrize("bad", [["1", 0], [True, 0], [None, 0]])
def test_town_coordinates_are_numbers(bad):
    with pytest.raises(TypeError, match="must be a number"):
        map_from_dict(_triangle(bad))


def test_a_map_object_is_validated_too():
    m = load_map("small")
    broken = type(m)(m.name, ((math.nan, 0.0),) + m.towns[1:], m.roads, m.town_names)
    with pytest.raises(ValueError, match="finite"):
        load_map(broken)


# ----------------------------------------------------------------------------- Traffic Jam


@pytest.fixture(scope="module")
def tj():
    return _random_states("traffic_jam", {"num_players": 3}, 80, num_envs=4, seed=5)


def _tj_state(states, **want):
    return copy.deepcopy(next(s for s in states
                              if all(s[k] == v for k, v in want.items()) and not s["over"]))


def test_traffic_jam_cards_are_conserved(tj):
    venv, states = tj
    s = _tj_state(states, stage=0)
    s["deck"].append(s["deck"][0])  # a card twice
    _refused(venv, s, "conserved")
    s = _tj_state(states, stage=0)
    s["hands"][0].append(s["deck"].pop())
    _refused(venv, s, "hands[0]")
    s = _tj_state(states, stage=0)
    s["deck"] = s["deck"][:-1]  # a card lost
    _refused(venv, s, "conserved")


@pytest.mark.parametrize(("key", "value", "exc"), [
    ("round", 1.0, TypeError), ("round", 3, ValueError), ("round", HUGE, ValueError),
    ("trip", True, TypeError), ("stage", 2, ValueError), ("to_move", HUGE, ValueError),
    ("moves", HUGE, ValueError), ("moves", 1.5, TypeError), ("over", 1, TypeError),
    ("hands", False, TypeError), ("deck", [1], ValueError), ("victory", False, TypeError),
    ("rng", {"key": HUGE, "counter": 0}, ValueError),
])
def test_traffic_jam_values_in_range_and_typed(tj, key, value, exc):
    venv, states = tj
    s = _tj_state(states, stage=0)
    s[key] = value
    with pytest.raises(exc) as info:
        venv.load_state_dict(0, s)
    assert isinstance(info.value, ValueError)
    assert not isinstance(info.value, OverflowError)
    assert key in str(info.value), str(info.value)


def test_kernel_constants_are_what_the_checks_assume():
    assert QLEN == 5  # a road's queue: 3, 4 held, 5 for the road a pushed car joined


@pytest.mark.parametrize("options", [
    {"num_players": 2, "map": "small"},
    {"num_players": 3, "map": "small", "faces": ["roundabout", "one-way", 4]},
    {"num_players": 2, "map": "small", "max_turns": 6},
], ids=["win", "win-faces", "max_turns"])
def test_finished_jamming_games_are_accepted(options):
    """Over positions (a win, perhaps mid-jam; or the max_turns cut) load back."""
    env = trafficenvs.make("jamming_traffic", wrapped=False, max_cycles=10**6, **options)
    rng = np.random.default_rng(7)
    finished = 0
    for seed in range(4):
        env.reset(seed=seed)
        for _ in range(50_000):
            if not env.agents or any(env.terminations.values()) \
                    or any(env.truncations.values()):
                break
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
        s = env.state_dict()
        if s["phase"] == "over":
            finished += 1
            env.load_state_dict(json.loads(json.dumps(s)))
            assert env.state_dict() == s
    assert finished


@pytest.mark.parametrize("game", ["traffic_jam", "jamming_traffic"])
@pytest.mark.parametrize("key, value, err", [("num_players", 2.0, TypeError),
                                             ("num_players", True, TypeError),
                                             ("game", 7, TypeError)])
def test_the_header_is_not_coerced(game, key, value, err):
    """``num_players: 2.0`` (or ``true``) is not a player count, even where it compares
    equal to one; the error names the key."""
    env = trafficenvs.make_vec(game, num_envs=1, num_players=2)
    env.reset(seed=0)
    state = env.state_dict(0)
    state[key] = value
    with pytest.raises(err, match=key):
        env.load_state_dict(0, state)
