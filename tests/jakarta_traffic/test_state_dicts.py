"""Jakarta Traffic state dicts are read strictly: every refusal names its key path, and
nothing is coerced (a float is not an int, 1 is not True, a dict is not a list)."""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core.statedict import StateDictError


def _state(num_players: int = 4, seed: int = 2) -> tuple[object, dict]:
    env = trafficenvs.make("jakarta_traffic", num_players=num_players, wrapped=False)
    env.reset(seed=seed)
    return env, copy.deepcopy(env.state_dict())


def _refused(change, path: str) -> StateDictError:
    env, d = _state()
    change(d)
    with pytest.raises(StateDictError, match=re.escape(f"state dict: {path}")) as info:
        env.load_state_dict(d)
    assert isinstance(info.value, ValueError)
    return info.value


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["players"][2].update(energy=1.5), "players[2].energy"),
        (lambda d: d["players"][1].update(bubbles=2.0), "players[1].bubbles"),
        (lambda d: d.update(round=1.5), "round"),
        (lambda d: d["stacks"]["Sate"].update(count=1.5), "stacks.Sate.count"),
        (lambda d: d["order_board"]["star_piles"].__setitem__(3, 4.0),
         "order_board.star_piles[3]"),
        (lambda d: d.update(forced_dice=[2.5]), "forced_dice[0]"),
        (lambda d: d["mopeds"].__setitem__(1, [0.0, 1]), "mopeds[1][0]"),
        (lambda d: d["players"][0].update(stars=[7.0]), "players[0].stars[0]"),
    ],
)
def test_an_int_given_as_a_float_is_refused_with_its_key_path(change, path):
    err = _refused(change, path)
    assert "must be" in str(err) and "got" in str(err)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d.update(over=0), "over"),
        (lambda d: d.update(end_triggered=1), "end_triggered"),
        (lambda d: d.update(last_dice=[0, True]), "last_dice[1]"),
        (lambda d: d["players"][3].update(energy=True), "players[3].energy"),
    ],
)
def test_a_bool_and_an_int_are_not_taken_for_each_other(change, path):
    _refused(change, path)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["players"][1].update(orders={}), "players[1].orders must be a list"),
        (lambda d: d["players"][0].update(delivered={"Sate": 1}),
         "players[0].delivered must be a list"),
        (lambda d: d.update(mopeds={"0": [0, 0]}), "mopeds must be a list"),
        (lambda d: d.update(forced_dice={}), "forced_dice must be a list"),
        (lambda d: d.update(marker={"row": 1, "col": 2}), "marker must be a list"),
        (lambda d: d["board"].__setitem__(2, {}), "board[2] must be a list"),
        (lambda d: d["order_board"].update(star_piles={}),
         "order_board.star_piles must be a list"),
    ],
)
def test_a_list_given_as_a_dict_is_refused_with_its_key_path(change, path):
    _refused(change, path)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["players"][2].update(colour="red"), "players[2]: unknown keys ['colour']"),
        (lambda d: d["stacks"]["Nasi Goreng"].update(height=3),
         "stacks.Nasi Goreng: unknown keys ['height']"),
        (lambda d: d["stacks"].update(Soup={"at": None, "count": 0}),
         "stacks: unknown keys ['Soup']"),
        (lambda d: d["order_board"].update(queue=[]), "order_board: unknown keys ['queue']"),
        (lambda d: d["players"][0].pop("stars"), "players[0]: unknown keys [], missing ['stars']"),
    ],
)
def test_an_unknown_or_missing_nested_key_is_refused_with_its_key_path(change, path):
    _refused(change, path)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["players"][1].update(orders=["Soup"]), "players[1].orders[0]: 'Soup'"),
        (lambda d: d["order_board"]["addresses"].__setitem__(4, "Moon"),
         "order_board.addresses[4]: 'Moon'"),
        (lambda d: d.update(pending=3), "pending: 3"),
        (lambda d: d["spares"].__setitem__(1, "pickup hexagon"), "spares[1]: unknown tile"),
        (lambda d: d["board"][3].__setitem__(1, 7), "board[3][1] must be a cell"),
        (lambda d: d.update(marker=(1, 2)), "marker must be a list"),  # JSON has no tuples
    ],
)
def test_a_wrong_name_or_value_is_refused_with_its_key_path(change, path):
    _refused(change, path)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_states_from_random_play_load_and_play_on_identically(num_players):
    """Every row's state dict (through JSON) loads into a twin env, which then shows the
    same observations and masks and plays the same actions to the same state dicts."""
    n_envs, every = 6, 25
    live = trafficenvs.make_vec("jakarta_traffic", num_envs=n_envs, num_players=num_players)
    twin = trafficenvs.make_vec("jakarta_traffic", num_envs=n_envs, num_players=num_players)
    out = live.reset(seed=11)
    twin.reset(seed=11)
    rng = np.random.default_rng(num_players)
    loaded = 0
    for step in range(300):
        if step % every == 0:
            for i in range(n_envs):
                d = live.state_dict(i)
                if step:  # the twin has played the same actions since the last load
                    assert twin.state_dict(i) == d
                twin.load_state_dict(i, json.loads(json.dumps(d)))
                assert twin.state_dict(i) == d
                twin.game.check_invariants(twin.records[i])
                loaded += 1
            np.testing.assert_array_equal(twin.last.observation, out.observation)
            np.testing.assert_array_equal(twin.last.action_mask, out.action_mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
        out = live.step(actions)
        twin.step(actions)
    assert loaded == n_envs * (300 // every)
