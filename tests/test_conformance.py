"""The conformance suite (trafficenvs.testing) on every game and player count."""

from __future__ import annotations

import pytest

from trafficenvs import testing

CONFIGS = [
    ("traffic_jam-v0", {"num_players": 2}),
    ("traffic_jam-v0", {"num_players": 4}),
    ("traffic_jam-v0", {"num_players": 6}),
    ("traffic_jam-v0", {"num_players": 3, "shaping": True}),
]
IDS = [f"{e}-{'-'.join(f'{k}={v}' for k, v in o.items())}" for e, o in CONFIGS]


@pytest.mark.parametrize(("env_id", "options"), CONFIGS, ids=IDS)
def test_pettingzoo_api_seed_and_render(env_id, options):
    testing.check_pettingzoo_api(env_id, num_cycles=300, **options)


@pytest.mark.parametrize(("env_id", "options"), CONFIGS, ids=IDS)
def test_batch_equals_single_for_every_batch_size_and_thread_count(env_id, options):
    testing.check_batch_matches_single(env_id, seeds=(0, 5, 11), **options)


@pytest.mark.parametrize(("env_id", "options"), CONFIGS, ids=IDS)
def test_random_play_keeps_invariants_and_rewards_are_zero_sum(env_id, options):
    finished = testing.check_random_play(env_id, seeds=range(12), **options)
    assert finished >= 12 * 16


@pytest.mark.parametrize(("env_id", "options"), CONFIGS, ids=IDS)
def test_state_dict_round_trip_all_game_long(env_id, options):
    testing.check_state_roundtrip(env_id, seeds=range(2), steps=150, **options)
