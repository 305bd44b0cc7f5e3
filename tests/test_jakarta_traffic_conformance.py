"""The conformance suite (trafficenvs.testing) on Jakarta Traffic for 2, 3 and 4 players."""

from __future__ import annotations

import pytest

from trafficenvs import testing

ENV = "jakarta_traffic-v0"
CONFIGS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 3, "shaping": True},
]
IDS = ["-".join(f"{k}={v}" for k, v in o.items()) for o in CONFIGS]


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_pettingzoo_api_seed_and_render(options):
    testing.check_pettingzoo_api(ENV, num_cycles=300, **options)


@pytest.mark.parametrize("options", CONFIGS[:3], ids=IDS[:3])
def test_batch_equals_single_for_every_batch_size_and_thread_count(options):
    testing.check_batch_matches_single(ENV, seeds=(0, 5), batch_sizes=(1, 9), **options)


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_random_play_keeps_invariants_and_rewards_are_zero_sum(options):
    finished = testing.check_random_play(ENV, seeds=range(3), **options)
    assert finished >= 3 * 16


@pytest.mark.parametrize("options", CONFIGS[:3], ids=IDS[:3])
def test_state_dict_round_trip_all_game_long(options):
    testing.check_state_roundtrip(ENV, seeds=range(2), steps=300, **options)
