"""Traffic Jam's determinization (the ``determinize`` verb): a seat's information set.

A determinized copy for seat ``s`` must look the same to ``s`` (observation, mask),
keep every card count, and over many draws put every card ``s`` has not seen into the
other hands, face-down picks and the deck.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

import trafficenvs
from trafficenvs.core.verbs import k_determinize, k_legal_mask, k_observe


@njit(cache=False)
def _determinize_all(recs, cfg, seat, key0, obs, mask):
    for i in range(recs.shape[0]):
        k_determinize(recs[i], cfg[0], seat, key0 + np.uint64(i))
        k_observe(recs[i], cfg[0], seat, obs[i])
        k_legal_mask(recs[i], cfg[0], mask[i])


def _positions(num_players: int, steps: int):
    venv = trafficenvs.make_vec("traffic_jam", num_envs=32, num_players=num_players)
    out = venv.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
    return venv, out


def _cards(rec, n):
    """Every card of the game by kind: hands, face-down picks, deck, roads, piles."""
    K = len(rec["road"])
    c = np.zeros(K, np.int64)
    c += np.asarray(rec["hand"][:n], np.int64).sum(axis=0)
    for q in range(n):
        for f in ("pick1", "pick_car", "pick_sur"):
            if rec[f][q] >= 0:
                c[rec[f][q]] += 1
    np.add.at(c, rec["deck"][: rec["deck_n"]], 1)
    return c + rec["road"].astype(np.int64) + rec["discard"] + rec["vtotal"]


@pytest.mark.parametrize(("players", "steps"), [(2, 1), (3, 5), (4, 2), (4, 9), (6, 14)])
def test_a_determinized_game_looks_the_same_to_its_seat_and_keeps_every_card(players, steps):
    venv, out = _positions(players, steps)
    game = venv.game
    for seat in range(players):
        recs = venv.records.copy()
        obs = np.zeros_like(out.observation)
        mask = np.zeros_like(out.action_mask)
        want = venv.observe(np.full(32, seat))
        _determinize_all(recs, game.cfg, seat, np.uint64(99), obs, mask)
        np.testing.assert_array_equal(obs, want)
        mover = out.current_player == seat
        np.testing.assert_array_equal(mask[mover], out.action_mask[mover])
        for i in range(32):
            before, after = venv.records[i], recs[i]
            np.testing.assert_array_equal(_cards(after, players), _cards(before, players))
            np.testing.assert_array_equal(after["hand"][seat], before["hand"][seat])
            np.testing.assert_array_equal(after["hand_n"], before["hand_n"])
            assert after["deck_n"] == before["deck_n"]
            for f in ("pick1", "pick_car", "pick_sur"):
                assert after[f][seat] == before[f][seat]
                assert ((after[f] >= 0) == (before[f] >= 0)).all()


def test_over_many_draws_every_unseen_card_reaches_every_hidden_place():
    """Seat 0's opponent holds some cards and the deck the rest: after enough draws,
    every kind seat 0 has not seen appears in the opponent's hand, and no kind whose
    every copy seat 0 has seen ever does."""
    venv, out = _positions(2, 1)  # seat 0 has picked, seat 1 to move
    game = venv.game
    rec = venv.records[:1].copy()
    seen = (rec[0]["hand"][0].astype(np.int64) + rec[0]["road"] + rec[0]["discard"]
            + rec[0]["vtotal"])
    if rec[0]["pick1"][0] >= 0:
        seen[rec[0]["pick1"][0]] += 1
    unseen = game.cfg[0]["kind_count"][: len(seen)].astype(np.int64) - seen
    many = np.repeat(rec, 3000)
    obs = np.zeros((3000, game.obs_dim), np.uint8)
    mask = np.zeros((3000, game.num_actions), np.bool_)
    _determinize_all(many, game.cfg, 0, np.uint64(7), obs, mask)
    reached = many["hand"][:, 1, : len(seen)].max(axis=0)
    assert ((reached > 0) == (unseen > 0)).all()
    assert (many["hand"][:, 1, : len(seen)].sum(axis=1) == rec[0]["hand_n"][1]).all()
