"""Jakarta Traffic's verbs for search agents: ``evaluate`` (the projected-score estimate)
and ``greedy`` (the rule-based player's move, ``greedy.rollout_move``), and a search
that plays its rollouts with it.

Boards are drawn in the code of ``jk_positions``; on the default order board of
``position`` the Bakso order (top slot, 7 stars) wants the Spa, r3c1 = (2, 0).
"""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from tests.jakarta_traffic.positions import PLAIN, game, position, star_piles
from trafficenvs.agents import make_greedy
from trafficenvs.agents.search import SearchPolicy
from trafficenvs.core.verbs import EVAL_SCRATCH, has_verb
from trafficenvs.jakarta_traffic.rules.layout import ADDRESSES, NCELLS, TYPES
from trafficenvs.jakarta_traffic.strategy.evaluate import SHRINK, evaluate
from trafficenvs.jakarta_traffic.strategy.greedy import JakartaTrafficGreedy, rollout_move


def _mixed_positions(n_players: int, envs: int, steps: int, seed: int, every: int = 1):
    """Positions of games where each decision is greedy or random (half and half), every
    ``every``-th step kept: ``(records, masks)`` of the positions not over."""
    game_ = trafficenvs.make_game("jakarta_traffic", num_players=n_players)
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=envs, num_players=n_players)
    out = venv.reset(seed=seed)
    greedy = make_greedy(game_)
    rng = np.random.default_rng(seed)
    recs, masks = [], []
    for k in range(steps):
        if k % every == 0:
            recs.append(venv.records.copy())
            masks.append(out.action_mask.copy())
        g = greedy.act(out.observation, out.action_mask, out.current_player)
        r = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
        out = venv.step(np.where(rng.random(envs) < 0.5, g, r))
    recs = np.concatenate(recs)
    masks = np.concatenate(masks)
    live = recs["over"] == 0
    return game_, recs[live], masks[live]


def _evaluate(g, recs) -> np.ndarray:
    """``evaluate`` of every record, ``(B, n)``, from a zeroed ``ret`` and a dirty scratch
    row (it must not depend on what the scratch held)."""
    out = np.zeros((len(recs), g.num_players))
    scratch = np.full(EVAL_SCRATCH, 7.0)
    for i in range(len(recs)):
        evaluate(recs[i], g.cfg[0], out[i], scratch)
    return out


# --------------------------------------------------------------------------- greedy verb


def test_rollout_move_is_the_greedy_players_move_on_thousands_of_positions():
    """The verb decides through the mover's observation written by ``observe``, so on
    every position it takes exactly what ``act`` takes from the env's observation."""
    total = 0
    for n, seed in ((2, 1), (3, 2), (4, 3)):
        g = trafficenvs.make_game("jakarta_traffic", num_players=n)
        venv = trafficenvs.make_vec("jakarta_traffic", num_envs=64, num_players=n)
        out = venv.reset(seed=seed)
        player = make_greedy(g)
        gs = player.rollout_scratch(2)
        rng = np.random.default_rng(seed)
        for _ in range(24):
            want = player.act(out.observation, out.action_mask, out.current_player)
            for i in range(venv.num_envs):
                if venv.records[i]["over"]:
                    continue
                mask = out.action_mask[i].astype(np.bool_)
                got = rollout_move(venv.records[i], g.cfg[0], mask, gs, i % 2)
                assert got == want[i], (n, i, venv.state_dict(i))
                total += 1
            r = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
            out = venv.step(np.where(rng.random(venv.num_envs) < 0.5, want, r))
    assert total > 3000


def test_the_greedy_verb_is_registered_with_the_game_and_the_class_makes_its_scratch():
    g = trafficenvs.make_game("jakarta_traffic", num_players=3)
    player = JakartaTrafficGreedy(g)
    assert has_verb(g.record_dtype, "greedy")  # gathered in verbs.py, registered on load
    ob, exit_to, *work = player.rollout_scratch(5)
    assert ob.shape == (5, g.obs_dim) and ob.dtype == g.obs_dtype
    assert exit_to.shape == (NCELLS, 4)
    assert all(w.shape[0] == 5 for w in work)


# --------------------------------------------------------------------------- evaluate


@pytest.mark.parametrize("n", [2, 3, 4])
def test_evaluate_sums_to_zero_within_the_result_bounds(n):
    g, recs, _ = _mixed_positions(n, 48, 160, seed=n, every=4)
    v = _evaluate(g, recs)
    assert len(recs) > 1000
    np.testing.assert_allclose(v.sum(axis=1), 0.0, atol=1e-9)
    assert v.max() <= SHRINK + 1e-9 and v.min() >= -SHRINK / (n - 1) - 1e-9
    assert v.std() > 0.05  # it has opinions


def test_evaluate_adds_to_what_ret_holds():
    g, recs, _ = _mixed_positions(2, 8, 20, seed=5)
    v = _evaluate(g, recs[:10])
    ret = np.ones((10, 2))
    for i in range(10):
        evaluate(recs[i], g.cfg[0], ret[i], np.zeros(EVAL_SCRATCH))
    np.testing.assert_allclose(ret, v + 1.0)


def _value(g, state) -> np.ndarray:
    rec = g.from_dict(state)
    return _evaluate(g, np.atleast_1d(rec))[0]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_seat_ahead_by_points_is_valued_higher(n):
    """Twins that differ only in seat 1's stars: seat 1 leading by points is valued above
    the others, and above itself in the twin where it trails."""
    g = game(n)
    ahead = [{}, {"stars": [7, 5], "delivered": ["Sate", "Ibu"]}]
    behind = [{"stars": [7, 5], "delivered": ["Sate", "Ibu"]}, {}]
    base = {"mopeds": [(0, 0), (4, 0), (4, 4), (1, 4)][:n]}
    va = _value(g, position(g, PLAIN, players=ahead, **base,
                            order_board={"orders": list(TYPES), "addresses": list(ADDRESSES),
                                         "star_piles": star_piles([7, 5])}))
    vb = _value(g, position(g, PLAIN, players=behind, **base,
                            order_board={"orders": list(TYPES), "addresses": list(ADDRESSES),
                                         "star_piles": star_piles([7, 5])}))
    assert va[1] == va.max() and va[1] > 0
    assert va[1] > vb[1] and vb[0] > va[0]


def test_a_held_order_one_turn_from_its_address_is_worth_more_than_none():
    """Seat 0 next to the Spa holding Bakso (7 points, one turn away) against the same
    seat holding nothing: the order counts before it is delivered."""
    g = game(2)
    kw = {"mopeds": [(2, 1), (4, 4)]}
    held = _value(g, position(g, PLAIN, players=[{"orders": ["Bakso"], "energy": 2}], **kw))
    none = _value(g, position(g, PLAIN, players=[{"energy": 3}], **kw))
    assert held[0] > none[0]


def test_evaluate_credits_the_delivery_about_to_be_made():
    """Seat 0 on the Spa in the deliver phase with Bakso (7 points) for it is valued as if
    it had delivered: clearly ahead, and more than the twin where it declined (seat 1 to
    move, the order still in its phone, the Spa to be left and found again)."""
    g = game(2)
    kw = {"mopeds": [(2, 0), (4, 4)], "players": [{"orders": ["Bakso"]}]}
    now = _value(g, position(g, PLAIN, phase="deliver", turn_start=[2, 1], **kw))
    declined = _value(g, position(g, PLAIN, to_move=1, **kw))
    assert now[0] > 0.5 * SHRINK
    assert now[0] > declined[0]


def test_evaluate_reads_nothing_hidden():
    """The only hidden thing is the generator (and queued dice): twins that differ in it
    get the same values."""
    g, recs, _ = _mixed_positions(3, 16, 60, seed=9, every=6)
    twin = recs.copy()
    twin["rng_key"] ^= np.uint64(0x9E3779B97F4A7C15)
    twin["rng_ctr"] += np.uint64(12345)
    twin["forced_n"] = 3
    twin["forced"][:, :3] = [6, 6, 2]
    np.testing.assert_array_equal(_evaluate(g, recs), _evaluate(g, twin))


def test_the_last_round_counts_only_the_turns_left():
    """End triggered, seat 1 to move last: seat 0 (done) keeps its score; a seat that
    leads by more than one turn can add is valued as a near-certain winner (the estimate
    gives ``SHRINK`` of the result: a real win is worth more than any estimate)."""
    g = game(2)
    st = position(g, PLAIN, mopeds=[(0, 0), (4, 4)], to_move=1, end_triggered=True,
                  players=[{"stars": [7, 7, 5, 5], "delivered": ["Bakso", "Sate", "Ibu", "Sate"]},
                           {"stars": [3]}],
                  order_board={"orders": list(TYPES), "addresses": list(ADDRESSES),
                               "star_piles": star_piles([7, 7, 5, 5], [3])})
    v = _value(g, st)
    assert v[0] > 0.95 * SHRINK


# --------------------------------------------------------------------------- search


@pytest.mark.parametrize("spec", ["flatmc:n=1,depth=6,rollout=greedy",
                                  "mcts:sims=40,depth=6,rollout=greedy"])
def test_a_greedy_rollout_search_plays_legal_moves_and_repeats_itself(spec):
    g, recs, masks = _mixed_positions(2, 12, 30, seed=4, every=10)
    seats = recs["cur"].astype(np.int64)
    obs = np.zeros((len(recs), g.obs_dim), g.obs_dtype)
    a = SearchPolicy(g, spec).act(obs, masks, seats, records=recs)
    b = SearchPolicy(g, spec).act(obs, masks, seats, records=recs)
    assert all(masks[i, x] for i, x in enumerate(a))
    np.testing.assert_array_equal(a, b)
    twin = recs.copy()  # the future dice are the only hidden thing: not read
    twin["rng_key"] ^= np.uint64(0x5DEECE66D)
    np.testing.assert_array_equal(a, SearchPolicy(g, spec).act(obs, masks, seats, records=twin))
