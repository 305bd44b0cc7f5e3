"""Search agents (flat Monte Carlo, IS-MCTS): options, determinism, and no peeking."""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from trafficenvs.agents.search import SearchPolicy, parse_search_spec
from trafficenvs.agents.zoo import make_agent


def test_search_specs_read_their_options_and_refuse_unknown_ones():
    kind, o = parse_search_spec("mcts:sims=50,c=2")
    assert kind == "mcts" and o["sims"] == 50 and o["c"] == 2.0 and o["depth"] == 100
    assert parse_search_spec("flatmc")[1]["n"] == 64
    with pytest.raises(ValueError, match="bad option 'k=3'"):
        parse_search_spec("flatmc:k=3")
    with pytest.raises(ValueError, match="sims must be int"):
        parse_search_spec("mcts:sims=many")
    with pytest.raises(ValueError, match="n must be at least 1"):
        parse_search_spec("flatmc:n=0")


def _positions(env_id: str, n: int, steps: int, **options):
    venv = trafficenvs.make_vec(env_id, num_envs=n, **options)
    out = venv.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
        out = venv.step(acts)
    return venv, out


@pytest.mark.parametrize("spec", ["flatmc:n=4,depth=20", "mcts:sims=24,depth=20"])
def test_a_search_decides_the_same_alone_or_in_a_batch_on_any_thread_count(spec):
    """Row ``i`` draws from generator ``seed + i`` whatever the batch around it, so the
    first ``k`` rows decide the same in a batch of ``k`` as in the whole batch."""
    import numba

    venv, out = _positions("jamming_traffic", 6, 9, num_players=2, map="small")
    game = venv.game
    full = SearchPolicy(game, spec).act(out.observation, out.action_mask,
                                        out.current_player, records=venv.records)
    assert all(out.action_mask[i, a] for i, a in enumerate(full))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        for k in (1, 3):
            part = SearchPolicy(game, spec).act(out.observation[:k], out.action_mask[:k],
                                                out.current_player[:k],
                                                records=venv.records[:k])
            np.testing.assert_array_equal(part, full[:k])
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("spec", ["flatmc:n=4,depth=20", "mcts:sims=24,depth=20"])
def test_a_search_never_reads_the_future_dice(spec):
    """Two games that differ only in their generator (the dice to come, which nobody at
    the table can see) get the same decisions from the same agent seed."""
    venv, out = _positions("jamming_traffic", 8, 7, num_players=2, map="small")
    game = venv.game
    twin = venv.records.copy()
    twin["rng_key"] ^= np.uint64(0x5DEECE66D)
    twin["rng_ctr"] += np.uint64(17)
    a = SearchPolicy(game, spec).act(out.observation, out.action_mask, out.current_player,
                                     records=venv.records)
    b = SearchPolicy(game, spec).act(out.observation, out.action_mask, out.current_player,
                                     records=twin)
    np.testing.assert_array_equal(a, b)


def test_the_zoo_makes_search_agents_from_their_specs():
    game = trafficenvs.make_game("jamming_traffic", num_players=2, map="small")
    agent = make_agent("mcts:sims=10", game, seed=3)
    assert isinstance(agent, SearchPolicy) and agent.needs_records and agent.seed == 3
    with pytest.raises(ValueError, match="pass records="):
        agent.act(np.zeros((1, game.obs_dim), np.uint8), np.ones((1, game.num_actions), bool),
                  np.zeros(1, np.int64))


@pytest.mark.parametrize("spec", ["flatmc:n=4", "mcts:sims=24"])
def test_a_search_never_reads_the_other_hands_or_the_deck_order(spec):
    """Traffic Jam: twins that differ only in a card swapped between the opponent's hand
    and the deck, and in the deck's order, get the same decisions from the same seed."""
    venv, out = _positions("traffic_jam", 16, 0, num_players=2)
    game = venv.game
    twin = venv.records.copy()
    for i in range(16):
        r = twin[i]
        opp = 1 - int(out.current_player[i])
        held = np.flatnonzero(r["hand"][opp])
        d = int(np.flatnonzero(r["deck"][: r["deck_n"]] != held[0])[0])
        k_new = int(r["deck"][d])
        r["hand"][opp][held[0]] -= 1
        r["hand"][opp][k_new] += 1
        r["deck"][d] = held[0]
        r["deck"][: r["deck_n"]] = r["deck"][: r["deck_n"]][::-1].copy()
    assert not np.array_equal(twin["hand"], venv.records["hand"])
    a = SearchPolicy(game, spec).act(out.observation, out.action_mask, out.current_player,
                                     records=venv.records)
    b = SearchPolicy(game, spec).act(out.observation, out.action_mask, out.current_player,
                                     records=twin)
    np.testing.assert_array_equal(a, b)
