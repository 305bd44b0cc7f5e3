"""The conformance suite (trafficenvs.testing) on Jamming Traffic: player counts and maps."""

from __future__ import annotations

import pytest

from trafficenvs import testing
from trafficenvs.jamming_traffic import random_map

ENV = "jamming_traffic-v0"
# the turn limit (a draw) keeps random games short: random play rarely completes a
# tour of a big map
CONFIGS = [
    {"num_players": 2, "map": "small", "max_turns": 60},
    {"num_players": 4, "map": "default", "max_turns": 40},
    {"num_players": 10, "map": "default", "max_turns": 40},
    {"num_players": 3, "map": "wheel", "max_turns": 40},
    {"num_players": 5, "map": "grid", "max_turns": 40},
    {"num_players": 3, "map": random_map(towns=16, seed=3), "max_turns": 40},
]
IDS = [f"{o['num_players']}p-{getattr(o['map'], 'name', o['map'])}" for o in CONFIGS]


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_pettingzoo_api_seed_and_render(options):
    testing.check_pettingzoo_api(ENV, num_cycles=200, **options)


@pytest.mark.parametrize("options", CONFIGS[:3], ids=IDS[:3])
def test_batch_equals_single_for_every_batch_size_and_thread_count(options):
    testing.check_batch_matches_single(ENV, seeds=(0, 5), batch_sizes=(1, 7, 32), **options)


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_random_play_keeps_invariants_and_rewards_are_zero_sum(options):
    """Invariants after every step: cars conserved, no road over 3 but a held one (4),
    every player's car on a road (``JammingTrafficGame.check_invariants``)."""
    finished = testing.check_random_play(ENV, seeds=range(4), num_envs=16, **options)
    assert finished >= 4 * 16


@pytest.mark.parametrize("options", CONFIGS[:4], ids=IDS[:4])
def test_state_dict_round_trip_all_game_long(options):
    testing.check_state_roundtrip(ENV, seeds=range(2), steps=150, **options)


def test_random_play_on_the_small_map_reaches_real_wins():
    """Not only truncations: on a small map random play finishes tours (J9)."""
    import numpy as np

    import trafficenvs

    venv = trafficenvs.make_vec(ENV, num_envs=64, num_players=2, map="small", max_cycles=500)
    out = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    wins = 0
    for _ in range(3000):
        out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
        wins += int(out.terminated.sum())
        won = out.rewards[out.terminated]
        assert ((won == 1.0).sum(1) == 1).all()
    assert wins >= 20


def test_mask_agrees_with_is_legal_all_game_long():
    """legal_mask memoises jams per (road, entry end); is_legal checks each move alone.

    Both must agree on every action in positions reached by random play (held roads,
    endless jams, pieces and all)."""
    import numpy as np
    from numba import njit

    import trafficenvs
    from trafficenvs.jamming_traffic import kernels as K

    @njit
    def disagreements(recs, cfg, mask):
        bad = 0
        for i in range(recs.shape[0]):
            K.legal_mask(recs[i], cfg[0], mask[i])
            for a in range(mask.shape[1]):
                if mask[i, a] != K.is_legal(recs[i], cfg[0], a):
                    bad += 1
        return bad

    for name in ("default", "grid", "small"):
        venv = trafficenvs.make_vec(ENV, num_envs=32, num_players=3, map=name, max_cycles=300)
        out = venv.reset(seed=7)
        rng = np.random.default_rng(7)
        mask = np.zeros((32, venv.num_actions), np.bool_)
        held = 0
        for t in range(1200):
            out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
            held += int(venv.records["held"].sum())
            if t % 5 == 0:
                assert disagreements(venv.records, venv.game.cfg, mask) == 0, (name, t)
        if name == "default":
            assert held > 0  # the held-road paths were exercised
