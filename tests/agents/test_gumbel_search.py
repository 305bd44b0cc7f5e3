"""The Gumbel search (``gumbel``): its halving schedule, that its priors and values
reach the tree, that it finds a win, and its improved policy.

Determinism (alone or in a batch, on any thread count) and never peeking are tested
with the other searches in ``test_search_agents.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from tests.jamming_traffic.positions import Table
from tests.traffic_jam.positions import hidden_twins
from trafficenvs.agents import make_greedy
from trafficenvs.agents.gumbel_kernels import considered_visits, schedule
from trafficenvs.agents.search import SearchPolicy, parse_search_spec


def test_sequential_halving_visits_every_candidate_equally_then_halves():
    """4 candidates, 8 simulations: one round of 1 visit each (8 // (2 * 4) = 1), then
    the best 2 get 2 visits each (8 // (2 * 2))."""
    assert considered_visits(4, 8).tolist() == [0, 0, 0, 0, 1, 1, 2, 2]
    # 2 candidates: rounds of 5 // (1 * 2) = 2 visits each, cut at 5 simulations
    assert considered_visits(2, 5).tolist() == [0, 0, 1, 1, 2]
    # 1 candidate: it takes every simulation
    assert considered_visits(1, 3).tolist() == [0, 1, 2]
    # 16 candidates, 64 simulations: 16 x 1, 8 x 2, 4 x 4, 2 x 8 (then the two go on)
    seq = considered_visits(16, 64).tolist()
    assert seq[:16] == [0] * 16 and seq[16:32] == [1] * 8 + [2] * 8
    assert seq[32:48] == [3] * 4 + [4] * 4 + [5] * 4 + [6] * 4


@pytest.mark.parametrize("m", [1, 2, 3, 5, 7, 16, 20, 64])
@pytest.mark.parametrize("n", [1, 5, 28, 100, 333])
def test_the_compiled_schedule_is_the_reference_one(m, n):
    out = np.full(n + 3, -1, np.int64)
    schedule(m, n, out)
    assert out[:n].tolist() == considered_visits(m, n).tolist() and (out[n:] == -1).all()


def test_gumbel_options_are_read_and_bad_ones_refused():
    kind, o = parse_search_spec("gumbel:n=32,m=4,prior=uniform,beta=1.5,rollout=greedy")
    assert kind == "gumbel" and o["n"] == 32 and o["m"] == 4 and o["prior"] == "uniform"
    assert o["beta"] == 1.5 and o["c_visit"] == 50.0 and o["gscale"] == 1.0
    for bad, msg in (("m=0", "m must be at least 1"), ("width=-1", "width must be at least 0"),
                     ("nper=-1", "nper must be at least 0"),
                     ("prior=net", "prior must be one of greedy, uniform"),
                     ("c_scale=-1", "c_scale must be non-negative"),
                     ("top=3", "bad option 'top=3'")):
        with pytest.raises(ValueError, match=msg):
            parse_search_spec(f"gumbel:{bad}")


def _random_positions(env_id: str, n: int, steps: int, **options):
    venv = trafficenvs.make_vec(env_id, num_envs=n, **options)
    out = venv.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
    return venv, out


@pytest.mark.parametrize("env_id,steps", [("jamming_traffic", 9), ("traffic_jam", 5),
                                          ("jakarta_traffic", 7)])
def test_with_one_simulation_on_one_candidate_it_plays_the_priors_favourite(env_id, steps):
    """``m=1`` and no Gumbel noise: the one candidate is the move with the largest prior
    logit, which the compiled prior puts on the rule-based player's move."""
    venv, out = _random_positions(env_id, 12, steps, num_players=2)
    game = venv.game
    search = SearchPolicy(game, "gumbel:n=1,m=1,gscale=0,prior=greedy,bonus=3")
    picked = search.act(out.observation, out.action_mask, out.current_player,
                        records=venv.records)
    greedy = make_greedy(game).act(out.observation, out.action_mask, out.current_player)
    np.testing.assert_array_equal(picked, greedy)


def _tee_win() -> Table:
    """A ---- B ---- C      A -[n n]- B -[0 n]- C,  B -[n 1]- D.  Seat 0 (home A) has
              |             seen C and D: its car at B's end of B-C passes B on any move
              D             out of B-C, and passing B, its last town, wins at once."""
    t = Table({"A": (0, 0), "B": (3, 0), "C": (6, 0), "D": (3, -3)},
              ["A-B", "B-C", "B-D"], homes=["A", "D"])
    return t.set({"A-B": "n n", "B-C": "0 n", "B-D": "n 1"}, visited=[["C", "D"], []])


def _wins_at_once(t: Table, action: int) -> bool:
    probe = Table({"A": (0, 0), "B": (3, 0), "C": (6, 0), "D": (3, -3)},
                  ["A-B", "B-C", "B-D"], homes=["A", "D"])
    probe.env.load_state_dict(t.state())
    probe.play(action)
    return probe.over and probe.state()["winner"] == [0]


def test_the_values_find_the_move_that_wins_at_once_with_no_help_from_the_prior():
    """Uniform priors, random rollouts, every legal move a candidate: only the values
    backed up through the tree can tell the winning moves; the search plays one, and
    its improved policy gives winning moves its largest weight (another move may
    tie: seat 0 also wins a move later after some of them) and the worst moves less."""
    t = _tee_win()
    recs = t.game.from_dict(t.state())
    legal = np.array(sorted(t.legal()))
    mask = np.zeros((1, t.game.num_actions), bool)
    mask[0, legal] = True
    wins = np.array([_wins_at_once(t, int(a)) for a in legal])
    assert wins.any() and not wins.all()  # the position really is a test
    for seed in range(3):
        search = SearchPolicy(t.game, f"gumbel:n=96,m=64,prior=uniform,depth=30,seed={seed}")
        a = search.act(np.zeros((1, t.game.obs_dim), np.float32), mask, np.array([0]),
                       records=recs)
        assert _wins_at_once(t, int(a[0]))
        policy = search.last_policy(1)[0]
        assert policy[legal[wins]].min() == pytest.approx(policy.max())
        assert policy[legal[~wins]].min() < policy.max() / 2


def test_mcts_breaks_a_tie_in_visits_by_the_mean_value():
    """One simulation per legal move (each root move expanded once, all tied at one
    visit), valued at once by ``evaluate`` (``depth=0``): the move played is one that
    wins at once (worth the whole result; a race estimate is less), as flat Monte
    Carlo's would be, not the first or last expanded."""
    t = _tee_win()
    recs = t.game.from_dict(t.state())
    legal = np.array(sorted(t.legal()))
    mask = np.zeros((1, t.game.num_actions), bool)
    mask[0, legal] = True
    for seed in range(3):
        search = SearchPolicy(t.game, f"mcts:sims={len(legal)},depth=0,seed={seed}")
        a = search.act(np.zeros((1, t.game.obs_dim), np.float32), mask, np.array([0]),
                       records=recs)
        assert _wins_at_once(t, int(a[0]))


@pytest.mark.parametrize("env_id", ["jamming_traffic", "traffic_jam", "jakarta_traffic"])
def test_the_improved_policy_is_a_distribution_over_the_legal_moves(env_id):
    venv, out = _random_positions(env_id, 6, 8, num_players=2)
    search = SearchPolicy(venv.game, "gumbel:n=40,nper=3,m=4,rollout=greedy,depth=20")
    with pytest.raises(ValueError, match="no act of 6 rows"):
        search.last_policy(6)
    picked = search.act(out.observation, out.action_mask, out.current_player,
                        records=venv.records)
    policy = search.last_policy(6)
    # nper=3: three simulations per legal move, at most n
    assert search.simulations == np.minimum(40, 3 * out.action_mask.sum(1)).sum()
    np.testing.assert_allclose(policy.sum(1), 1.0)
    assert (policy[~out.action_mask] == 0).all() and (policy[out.action_mask] > 0).all()
    assert out.action_mask[np.arange(6), picked].all()
    with pytest.raises(ValueError, match="only gumbel"):
        SearchPolicy(venv.game, "flatmc:n=1").last_policy(1)


@pytest.mark.parametrize("env_id", ["jamming_traffic", "traffic_jam", "jakarta_traffic"])
def test_the_bare_search_names_are_the_games_presets(env_id):
    """Every game names a preset for each search; the bare name plays it, options given
    explicitly keep the defaults of the rest, and the preset's figures are measured."""
    from trafficenvs.agents.search import OPTIONS
    from trafficenvs.agents.zoo import make_agent

    game = trafficenvs.make_game(env_id, num_players=2)
    presets = game.spec.search_presets
    assert set(presets) == set(OPTIONS)
    for kind, preset in presets.items():
        assert preset.spec.startswith(f"{kind}:")
        parse_search_spec(preset.spec)  # a valid setting
        agent = make_agent(kind, game)
        assert agent.spec == preset.spec and agent.name == kind
        assert 0 < preset.vs_greedy < 1 and preset.games >= 200 and preset.ms_per_decision > 0
    assert make_agent("gumbel:n=8", game).options["m"] == 16  # explicit: defaults, no preset


def test_the_presets_figures_are_the_committed_benchmark_results():
    """A preset's figures are copied from ``benchmarks/results/search.json`` (its entry
    against greedy, 2 players), so they cannot drift from what was measured."""
    import json
    from pathlib import Path

    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/results/search.json")
                      .read_text())
    for env_id in ("jamming_traffic", "traffic_jam", "jakarta_traffic"):
        for kind, preset in trafficenvs.make_game(env_id).spec.search_presets.items():
            found = [r for r in rows if r["game"] == env_id and r["players"] == 2
                     and r["agent"] == preset.spec and r.get("opponent", "greedy") == "greedy"]
            assert len(found) == 1, (env_id, kind, "python -m benchmarks.search")
            r = found[0]
            assert (preset.vs_greedy, preset.games) == (r["win_share"], r["games"])
            assert preset.ms_per_decision == round(r["ms_per_decision"], 1)


def test_the_arena_lists_the_agents_with_the_presets_figures(capsys):
    from trafficenvs.cli import main

    assert main(["arena", "jakarta_traffic", "--list-agents", "--format", "text"]) == 0
    text = capsys.readouterr().out
    game = trafficenvs.make_game("jakarta_traffic", num_players=2)
    for kind, preset in game.spec.search_presets.items():
        line = next(x for x in text.splitlines() if x.startswith(kind + " "))
        assert preset.spec in line and f"{preset.vs_greedy:.3f}" in line
    assert "greedy" in text and "ppo:PATH" in text


class LinearNet:
    """A fixed random linear 'network' (prior logits and a value in [-1, 1] from the
    observation) that counts its calls and the rows it was given."""

    def __init__(self, game, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.w = rng.normal(size=(game.obs_dim, game.num_actions)) / np.sqrt(game.obs_dim)
        self.u = rng.normal(size=game.obs_dim) / np.sqrt(game.obs_dim)
        self.calls: list[int] = []

    def __call__(self, obs, mask):
        self.calls.append(len(obs))
        x = obs.astype(np.float64)
        return x @ self.w, np.tanh(x @ self.u)


def test_network_leaves_are_evaluated_in_batches_and_equal_one_row_at_a_time():
    """One evaluator call for the roots, then one per simulation for all the rows'
    pending leaves together; each row decides as it does alone."""
    venv, out = _random_positions("jamming_traffic", 8, 9, num_players=2, map="small")
    game = venv.game
    net = LinearNet(game)
    spec = "gumbel:n=12,m=4"
    search = SearchPolicy(game, spec, evaluator=net)
    full = search.act(out.observation, out.action_mask, out.current_player,
                      records=venv.records)
    policy = search.last_policy(8)
    assert net.calls[0] == 8 and len(net.calls) <= 1 + 12 and max(net.calls[1:]) <= 8
    assert search.report()["decisions"] == 8 and search.simulations == 8 * 12
    assert sum(net.calls[1:]) > 12  # leaves of several rows shared a call
    for i in range(8):
        # row i draws from generator seed + i: alone, the row is row 0 of seed i
        alone_i = SearchPolicy(game, f"{spec},seed={i}", evaluator=LinearNet(game))
        a = alone_i.act(out.observation[i:i + 1], out.action_mask[i:i + 1],
                        out.current_player[i:i + 1], records=venv.records[i:i + 1])
        assert a[0] == full[i]
        np.testing.assert_allclose(alone_i.last_policy(1)[0], policy[i])


def test_the_networks_prior_decides_with_one_candidate_and_its_shape_is_checked():
    venv, out = _random_positions("traffic_jam", 6, 3, num_players=2)
    game = venv.game
    last_legal = np.array([np.flatnonzero(m)[-1] for m in out.action_mask])

    def favour_last(obs, mask):
        lg = np.zeros(mask.shape)
        lg[np.arange(len(mask)), [np.flatnonzero(m)[-1] for m in mask]] = 5.0
        return lg, np.zeros(len(mask))

    search = SearchPolicy(game, "gumbel:n=4,m=1,gscale=0", evaluator=favour_last)
    picked = search.act(out.observation, out.action_mask, out.current_player,
                        records=venv.records)
    np.testing.assert_array_equal(picked, last_legal)
    bad = SearchPolicy(game, "gumbel:n=4", evaluator=lambda o, m: (np.zeros(m.shape),
                                                                   np.zeros(1)))
    with pytest.raises(ValueError, match="values"):
        bad.act(out.observation, out.action_mask, out.current_player, records=venv.records)
    nan = SearchPolicy(game, "gumbel:n=4", evaluator=lambda o, m: (np.zeros(m.shape),
                                                                   np.full(len(m), np.nan)))
    with pytest.raises(ValueError, match="NaN"):
        nan.act(out.observation, out.action_mask, out.current_player, records=venv.records)
    with pytest.raises(ValueError, match="only gumbel"):
        SearchPolicy(game, "flatmc:n=2", evaluator=favour_last)


@pytest.mark.parametrize("spec", ["gumbel:n=16,m=4",
                                  "gumbel:n=16,m=4,mix=0.5,rollout=greedy,depth=6"])
def test_a_network_search_never_reads_the_other_hands_or_the_deck_order(spec):
    """Traffic Jam twins that differ only in a card swapped between the opponent's hand
    and the deck (and the deck's order): the network sees only the observations of the
    determinized copies, and the mixed leaves' rollouts play on those copies, so the
    decisions and policies are the same."""
    venv, out = _random_positions("traffic_jam", 10, 2, num_players=2)
    twin = hidden_twins(venv.records, out.current_player)
    runs = []
    for recs in (venv.records, twin):
        s = SearchPolicy(venv.game, spec, evaluator=LinearNet(venv.game))
        runs.append((s.act(out.observation, out.action_mask, out.current_player,
                           records=recs), s.last_policy(10)))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_allclose(runs[0][1], runs[1][1])


def test_a_shipped_network_searches_at_the_leaves_through_net():
    """``net=PATH``: a checkpoint's actor gives the priors and its critic the values."""
    from pathlib import Path

    from trafficenvs.agents.ppo import PPOPolicy
    from trafficenvs.agents.zoo import make_agent

    path = Path(__file__).resolve().parents[2] / "agents/checkpoints/traffic_jam_2p.zip"
    venv, out = _random_positions("traffic_jam", 6, 4, num_players=2)
    agent = make_agent(f"gumbel:n=8,m=4,net={path}", venv.game)
    assert agent.evaluator is not None
    picked = agent.act(out.observation, out.action_mask, out.current_player,
                       records=venv.records)
    assert out.action_mask[np.arange(6), picked].all()
    logits, values = PPOPolicy.load(path, game=venv.game).evaluate(out.observation,
                                                                   out.action_mask)
    assert logits.shape == (6, venv.game.num_actions) and values.shape == (6,)
    assert np.isfinite(values).all() and (np.abs(values) < 2).all()
    with pytest.raises(ValueError, match="both given"):
        SearchPolicy(venv.game, f"gumbel:net={path}", evaluator=LinearNet(venv.game))


@pytest.mark.parametrize("with_net", [False, True], ids=["compiled", "network"])
def test_the_parallel_builds_decide_as_the_serial_ones_on_a_batch_of_256(with_net):
    """At 256 rows and more, with more than one numba thread, the search's loops run
    their parallel (``prange``) builds first. Those must compile (a loop variable
    named ``sched`` once clashed with the argument numba's parallel lowering adds, so
    every network search on two threads failed to compile) and decide row by row as the
    serial builds do (each row draws from its own generator)."""
    import numba

    from trafficenvs.core.threads import SERIAL_BELOW

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread: the parallel builds never run")
    n = SERIAL_BELOW
    venv, out = _random_positions("traffic_jam", n, 3, num_players=2)
    game = venv.game
    spec = "gumbel:n=8,m=4" + ("" if with_net else ",nper=2,rollout=greedy")
    evaluator = LinearNet(game) if with_net else None
    before = numba.get_num_threads()
    moves = {}
    try:
        for threads in (2, 1):
            numba.set_num_threads(threads)
            search = SearchPolicy(game, spec, evaluator=evaluator)
            moves[threads] = search.act(out.observation, out.action_mask,
                                        out.current_player, records=venv.records)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(moves[2], moves[1])


class SameLogits(LinearNet):
    """:class:`LinearNet`'s priors with another network's values."""

    def __init__(self, game, value_seed: int):
        super().__init__(game)
        self.u = np.random.default_rng(value_seed).normal(size=game.obs_dim) * 3

    def __call__(self, obs, mask):
        logits, _ = super().__call__(obs, mask)
        return logits, np.tanh(obs.astype(np.float64) @ self.u)


def test_mixed_leaves_weigh_the_networks_value_against_a_rollout():
    """``mix=1``: the leaves are valued by the rollouts alone, so two networks with the
    same priors and different values search alike; ``mix=0``: by the network alone,
    so they differ; ``mix=0.5``: both count (it differs from either end)."""
    venv, out = _random_positions("jamming_traffic", 12, 9, num_players=2, map="small")
    game = venv.game

    def policies(mix, value_seed):
        s = SearchPolicy(game, f"gumbel:n=16,m=4,mix={mix},rollout=greedy,depth=30,turns=1",
                         evaluator=SameLogits(game, value_seed))
        moves = s.act(out.observation, out.action_mask, out.current_player,
                      records=venv.records)
        assert out.action_mask[np.arange(12), moves].all()
        return s.last_policy(12)

    np.testing.assert_allclose(policies(1, 1), policies(1, 2))
    assert not np.allclose(policies(0, 1), policies(0, 2))
    half = policies(0.5, 1)
    assert not np.allclose(half, policies(0, 1)) and not np.allclose(half, policies(1, 1))


def test_mix_needs_a_network_and_a_weight_in_0_1():
    game = trafficenvs.make_game("traffic_jam", num_players=2)
    with pytest.raises(ValueError, match="mix must be in"):
        parse_search_spec("gumbel:mix=1.5")
    with pytest.raises(ValueError, match="give net="):
        SearchPolicy(game, "gumbel:n=8,mix=0.5")
    assert parse_search_spec("gumbel:mix=0.25")[1]["mix"] == 0.25
