"""Search agents (flat Monte Carlo, IS-MCTS): options, determinism, and no peeking."""

from __future__ import annotations

import re

import numpy as np
import pytest

import trafficenvs
from tests.traffic_jam.positions import hidden_twins
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
    o = parse_search_spec("flatmc:rollout=greedy,top=6,turns=1,depth=0")[1]
    assert o["rollout"] == "greedy" and o["top"] == 6 and o["turns"] == 1 and o["depth"] == 0
    with pytest.raises(ValueError, match="rollout must be one of random, greedy"):
        parse_search_spec("mcts:rollout=smart")
    for bad in ("top=-1", "turns=-2", "depth=-1"):
        with pytest.raises(ValueError, match="must be at least 0"):
            parse_search_spec(f"mcts:{bad}")


def test_agent_lists_keep_a_search_agents_options_together():
    from trafficenvs.agents.zoo import split_agent_specs

    assert split_agent_specs("mcts:sims=400,c=2,rollout=greedy,greedy, random") == [
        "mcts:sims=400,c=2,rollout=greedy", "greedy", "random"]
    assert split_agent_specs("flatmc,ppo:a.zip") == ["flatmc", "ppo:a.zip"]


def _positions(env_id: str, n: int, steps: int, **options):
    venv = trafficenvs.make_vec(env_id, num_envs=n, **options)
    out = venv.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
        out = venv.step(acts)
    return venv, out


GREEDY_ROLLOUTS = ["flatmc:n=2,depth=60,turns=1,rollout=greedy,top=3",
                   "mcts:sims=12,depth=40,turns=1,rollout=greedy,top=4",
                   "gumbel:n=16,m=4,depth=40,turns=1,rollout=greedy,beta=1"]


@pytest.mark.parametrize("spec", ["flatmc:n=4,depth=20", "mcts:sims=24,depth=20",
                                  "gumbel:n=24,m=8,depth=20,prior=uniform",
                                  *GREEDY_ROLLOUTS])
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


@pytest.mark.parametrize("spec", ["flatmc:n=4,depth=20", "mcts:sims=24,depth=20",
                                  "gumbel:n=24,m=8,depth=20,prior=uniform",
                                  *GREEDY_ROLLOUTS])
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


@pytest.mark.parametrize("spec", ["flatmc:n=4", "mcts:sims=24", "flatmc:n=3,rollout=greedy",
                                  "mcts:sims=20,rollout=greedy,top=3",
                                  "gumbel:n=24,m=4,prior=uniform",
                                  "gumbel:n=20,rollout=greedy,beta=1"])
def test_a_search_never_reads_the_other_hands_or_the_deck_order(spec):
    """Traffic Jam: twins that differ only in a card swapped between the opponent's hand
    and the deck, and in the deck's order, get the same decisions from the same seed."""
    venv, out = _positions("traffic_jam", 16, 0, num_players=2)
    game = venv.game
    twin = hidden_twins(venv.records, out.current_player)
    a = SearchPolicy(game, spec).act(out.observation, out.action_mask, out.current_player,
                                     records=venv.records)
    b = SearchPolicy(game, spec).act(out.observation, out.action_mask, out.current_player,
                                     records=twin)
    np.testing.assert_array_equal(a, b)


# -- the verbs the searches use: the rule-based players as rollouts, the estimates ----------

_GREEDY_VERB = None


def _greedy_verb_batch():
    global _GREEDY_VERB
    if _GREEDY_VERB is None:
        from numba import njit

        from trafficenvs.core.verbs import k_evaluate, k_greedy

        @njit
        def run(recs, cfg, masks, gs, out, ret, evs):
            for i in range(recs.shape[0]):
                out[i] = k_greedy(recs[i], cfg[0], masks[i], gs, i)
                k_evaluate(recs[i], cfg[0], ret[i], evs[i])

        _GREEDY_VERB = run
    return _GREEDY_VERB


@pytest.mark.parametrize("env_id,players", [("traffic_jam", 3), ("jamming_traffic", 2),
                                            ("jamming_traffic", 4)])
def test_the_greedy_verb_is_the_rule_based_player_itself(env_id, players):
    """A search's greedy rollout move (the player called on a game record, through the
    mover's observation) is what the player itself plays from that observation, on
    positions from random and greedy play."""
    from trafficenvs.agents.search import rollout_player
    from trafficenvs.core.verbs import EVAL_SCRATCH

    venv = trafficenvs.make_vec(env_id, num_envs=32, num_players=players)
    player = rollout_player(venv.game, "test")
    options = {"stop_as_v0": False} if env_id == "jamming_traffic" else {}
    ref = type(player)(venv.game, **options)
    gs = player.rollout_scratch(32)
    run = _greedy_verb_batch()
    out = venv.reset(seed=4)
    rng = np.random.default_rng(1)
    compared = 0
    for t in range(150):
        got = np.zeros(32, np.int64)
        ret = np.zeros((32, players))
        run(venv.records.copy(), venv.game.cfg, out.action_mask.astype(bool), gs, got, ret,
            np.zeros((32, EVAL_SCRATCH)))
        want = ref.act(out.observation, out.action_mask, out.current_player)
        np.testing.assert_array_equal(got, want)
        compared += len(got)
        acts = want if t % 2 else np.array([rng.choice(np.flatnonzero(m))
                                            for m in out.action_mask])
        out = venv.step(acts)
    assert compared == 32 * 150


def _jamming_estimates(recs, game):
    from trafficenvs.core.verbs import EVAL_SCRATCH

    n = len(recs)
    ret = np.zeros((n, game.num_players))
    _greedy_verb_batch()(recs, game.cfg, np.ones((n, game.num_actions), bool), (),
                         np.zeros(n, np.int64), ret, np.zeros((n, EVAL_SCRATCH)))
    return ret


@pytest.mark.parametrize("players", [2, 3, 5])
def test_jamming_estimates_are_expected_results_that_sum_to_zero(players):
    """C2's scale: a lone winner +1, a loser -1/(n-1); so an estimate lies in that range
    and the seats' estimates sum to zero, like the results they stand for."""
    venv, _ = _positions("jamming_traffic", 64, 40, num_players=players)
    ret = _jamming_estimates(venv.records.copy(), venv.game)
    assert np.all(ret <= 1 + 1e-9) and np.all(ret >= -1 / (players - 1) - 1e-9)
    np.testing.assert_allclose(ret.sum(axis=1), 0, atol=1e-9)
    assert ret.std() > 0.01  # not the no-estimate default


def test_jamming_estimate_rises_with_a_town_visited():
    """Twins that differ only in one more needed town visited by seat 0: seat 0's
    estimate is higher in the twin, every other seat's lower (fewer towns to go is
    nearer the win, J9)."""
    from numba import njit

    from trafficenvs.jamming_traffic.rules.queues import needed_towns

    @njit
    def still_needed(recs, cfg):
        out = np.zeros(recs.shape[0], np.int64)
        for i in range(recs.shape[0]):
            out[i] = needed_towns(recs[i], cfg[0], 0) & ~recs[i].visited[0]
        return out

    venv, _ = _positions("jamming_traffic", 64, 30, num_players=3)
    game = venv.game
    recs = venv.records.copy()
    twin = recs.copy()
    changed = []
    for i, left in enumerate(still_needed(recs, game.cfg)):
        if bin(int(left)).count("1") >= 2:
            twin[i]["visited"][0] |= np.uint32(int(left) & -int(left))
            changed.append(i)
    assert len(changed) > 10, "too few positions with two towns left to visit"
    a = _jamming_estimates(recs, game)[changed]
    b = _jamming_estimates(twin, game)[changed]
    assert np.all(b[:, 0] > a[:, 0])
    assert np.all(b[:, 1:] < a[:, 1:])


def test_the_arena_reports_what_each_agent_costs():
    """Per agent: the decisions it made and its milliseconds per decision; for a search
    agent also its simulations per second (from its own count of rollouts)."""
    from trafficenvs.agents.arena import run_arena
    from trafficenvs.agents.zoo import make_agents

    game = trafficenvs.make_game("traffic_jam", num_players=2)
    agents = make_agents(["flatmc:n=2", "random"], game, seed=0)
    res = run_arena("traffic_jam", agents, 2, games=10, seed=0, num_envs=5)
    search, rnd = res.stats("flatmc:n=2"), res.stats("random")
    assert search.decisions + rnd.decisions == int(res.games_data["length"].sum())
    assert search.decisions > 0 and search.ms_per_decision > 0
    assert search.simulations_per_s > 0 and rnd.simulations_per_s is None
    assert re.search(r"\| +ms / decision +\| +simulations / s +\|", res.table())
