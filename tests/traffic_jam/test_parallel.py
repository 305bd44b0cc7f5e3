"""Traffic Jam's parallel env: every seat's choice of a stage in one step.

What is checked: PettingZoo's ``parallel_api_test`` for every player count and option set;
the native parallel env, ``aec_to_parallel`` of the AEC env and the AEC env itself play the
same games for the same seeds and actions (records, observations, masks, rewards, end
flags), and so does ``parallel_to_aec`` of the parallel env; what the AEC env shows between
seats' choices (who has picked, the clock) and that the parallel env shows none of it;
illegal actions and bad input; seeding; the registries.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec

import trafficenvs
from tests.traffic_jam.positions import position
from trafficenvs.traffic_jam_v1 import TrafficJamParallelEnv, parallel_env

ENV = "traffic_jam-v1"
SMALL_DECK = [("morning", "van", 4, "free")] * 12 + [("day", "bus", 3, "free")] * 12 + [
    ("night", "ice cream truck", 2, "jam")] * 8 + [("night", "hot-air balloon", 2, "either")] * 8

#: every player count (2 to the max, 6) and the options Traffic Jam has (deck, shaping,
#: max_cycles: a limit that cuts the 12-step game off)
OPTION_SETS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 5},
    {"num_players": 6},
    {"num_players": 3, "shaping": True},
    {"num_players": 2, "deck": SMALL_DECK},
    {"num_players": 4, "deck": SMALL_DECK, "shaping": True},
    {"num_players": 4, "max_cycles": 5},
    {"num_players": 6, "shaping": True, "max_cycles": 11},
]


def _id(opts: dict) -> str:
    return "-".join(f"{k}={'small' if k == 'deck' else v}" for k, v in opts.items())


def _pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def _without_scratch(rec: np.void) -> bytes:
    """A record's game state (the ``scratch`` field is the kernels' work space, written by
    every observe: not state)."""
    names = [n for n in rec.dtype.names if n != "scratch"]
    return b"".join(np.asarray(rec[n]).tobytes() for n in names)


# --------------------------------------------------------------------------- the API


@pytest.mark.parametrize("opts", OPTION_SETS, ids=_id)
def test_parallel_api_test_passes(opts):
    env = trafficenvs.make_parallel(ENV, **opts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # parallel_api_test reports most problems as warnings
        parallel_api_test(env, num_cycles=50)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_parallel_to_aec_passes_the_aec_api_test(n):
    api_test(parallel_to_aec(trafficenvs.make_parallel(ENV, num_players=n)), num_cycles=100)


def test_metadata_says_parallelizable_for_traffic_jam_only():
    assert trafficenvs.make(ENV).metadata["is_parallelizable"] is True
    assert trafficenvs.make(ENV, wrapped=False).metadata["is_parallelizable"] is True
    env = trafficenvs.make_parallel(ENV)
    assert env.metadata["is_parallelizable"] is True and env.metadata["name"] == "traffic_jam_v1"
    for other in trafficenvs.list_envs():
        if other != ENV:
            assert trafficenvs.make(other).metadata["is_parallelizable"] is False
            with pytest.raises(AssertionError, match="is_parallelizable"):
                aec_to_parallel(trafficenvs.make(other))


@pytest.mark.parametrize("env_id", ["traffic_jam-v1", "traffic_jam_v1", "traffic_jam",
                                    "trafficenvs/traffic_jam-v1"])
def test_make_parallel_accepts_the_usual_spellings(env_id):
    env = trafficenvs.make_parallel(env_id, num_players=3)
    obs, infos = env.reset(seed=1)
    assert list(obs) == env.agents == ["player_0", "player_1", "player_2"]
    assert infos == {a: {} for a in env.agents}


def test_every_door_makes_the_same_env():
    by_registry = pettingzoo.make("parallel", "trafficenvs/traffic_jam-v1", num_players=5)
    by_module = parallel_env(num_players=5, max_cycles=7)
    for env in (by_registry, by_module):
        assert isinstance(env, TrafficJamParallelEnv) and env.max_num_agents == 5
    assert by_module.max_cycles == 7


def test_turn_based_games_have_no_parallel_env():
    for other in trafficenvs.list_envs():
        if other != ENV:
            with pytest.raises(ValueError, match="turn-based.*traffic_jam-v1"):
                trafficenvs.make_parallel(other)
            assert f"trafficenvs/{other}" not in pettingzoo.parallel_registry


def test_unknown_options_and_bad_settings_are_refused():
    with pytest.raises(TypeError, match="unknown options \\['colour'\\]"):
        trafficenvs.make_parallel(ENV, colour="red")
    with pytest.raises(ValueError, match="2 to 6 players"):
        trafficenvs.make_parallel(ENV, num_players=7)
    with pytest.raises(TypeError, match="illegal_reward"):
        trafficenvs.make_parallel(ENV, illegal_reward="lose")
    with pytest.raises(ValueError, match="render_mode"):
        trafficenvs.make_parallel(ENV, render_mode="video")
    with pytest.raises(ValueError, match="max_cycles"):
        trafficenvs.make_parallel(ENV, max_cycles=0)
    with pytest.raises(ValueError, match="render_seat"):
        trafficenvs.make_parallel(ENV, num_players=2, render_seat=2)
    with pytest.raises(TypeError, match="TrafficJamGame"):
        TrafficJamParallelEnv(trafficenvs.make_game("jamming_traffic-v1"))
    env = trafficenvs.make_parallel(ENV, num_players=2)
    with pytest.raises(ValueError, match="agent must be one of"):
        env.observation_space("player_2")
    with pytest.raises(ValueError, match="agent must be one of"):
        env.action_space(0)


def test_a_game_is_twelve_steps_whatever_the_player_count():
    for n in range(2, 7):
        env = trafficenvs.make_parallel(ENV, num_players=n)
        obs, _ = env.reset(seed=n)
        rng = np.random.default_rng(n)
        steps = 0
        while env.agents:
            obs, rew, term, trunc, _ = env.step({a: _pick(rng, o["action_mask"])
                                                 for a, o in obs.items()})
            steps += 1
        assert steps == 12 and all(term.values()) and not any(trunc.values())
        assert abs(sum(rew.values())) < 1e-6 and max(rew.values()) > 0  # C2: zero-sum


# --------------------------------------------------------------------------- same games


def _play_all(opts: dict, seed: int, rng: np.random.Generator) -> int:
    """One game on the native parallel env, the raw and the wrapped AEC env and
    aec_to_parallel of the wrapped one, the same seed and actions; every step compared.
    Returns the number of steps."""
    native = trafficenvs.make_parallel(ENV, **opts)
    raw = trafficenvs.make(ENV, wrapped=False, **opts)
    wrapped = trafficenvs.make(ENV, **opts)
    conv = aec_to_parallel(trafficenvs.make(ENV, **opts))
    game = native.game
    lay = game.obs_layout
    n = game.num_players
    picked = [lay.at("seats", j, "picked") for j in range(n)]
    clock = lay.field("horizon_left").offset
    obs, _ = native.reset(seed=seed)
    c_obs, _ = conv.reset(seed=seed)
    for aec in (raw, wrapped):
        aec.reset(seed=seed)
    steps = 0
    trunc: dict = {}
    while True:
        # the same position: the whole record, and every agent's observation
        for aec in (raw, wrapped, conv):
            assert _without_scratch(aec.unwrapped.record) == _without_scratch(native.record)
        for a in native.possible_agents:
            for aec in (raw, wrapped):
                assert np.array_equal(aec.observe(a)["observation"], obs[a]["observation"])
            assert np.array_equal(c_obs[a]["observation"], obs[a]["observation"])
            # at a stage start the AEC env's (and so the converted env's) mask is player_0's;
            # once the game is over every mask is zeros (when it is cut off, the AEC env
            # still shows player_0 a mask: its agents are done, so nobody reads it)
            if a == "player_0" and native.agents:
                assert np.array_equal(c_obs[a]["action_mask"], obs[a]["action_mask"])
            elif native.agents or not any(trunc.values()):
                assert not c_obs[a]["action_mask"].any()
            # the parallel env shows nothing of the stage's choices: nobody has picked yet
            assert not obs[a]["observation"][picked].any()
        if not native.agents:
            for a in native.possible_agents:
                assert not obs[a]["action_mask"].any()  # nothing left to choose
            assert not raw.agents or all(raw.terminations.values()) or all(
                raw.truncations.values())
            return steps
        actions = {a: _pick(rng, o["action_mask"]) for a, o in obs.items()}
        sums = {aec: dict.fromkeys(native.possible_agents, 0.0) for aec in (raw, wrapped)}
        for p, a in enumerate(native.possible_agents):
            for aec in (raw, wrapped):
                assert aec.agent_selection == a
                seen = aec.observe(a)
                # on its turn, the AEC env's mask is the one the parallel env gave
                assert np.array_equal(seen["action_mask"], obs[a]["action_mask"])
                # ... and its observation differs from the stage-start view only in who
                # has picked (the seats before it: relative seats n-p .. n-1) and the clock
                diff = np.flatnonzero(seen["observation"] != obs[a]["observation"])
                earlier = picked[n - p:]
                assert np.isin(diff, earlier + [clock]).all()
                assert (seen["observation"][earlier] == 1).all()
                aec.step(actions[a])
                for b in native.possible_agents:
                    sums[aec][b] += aec.rewards[b]
        obs, rew, term, trunc, info = native.step(actions)
        c_obs, c_rew, c_term, c_trunc, c_info = conv.step(actions)
        steps += 1
        assert rew == c_rew == sums[raw] == sums[wrapped]
        for aec in (raw, wrapped):
            assert term == aec.terminations and trunc == aec.truncations
        assert term == c_term and trunc == c_trunc
        assert info == c_info == {a: {} for a in native.possible_agents}
        assert native.agents == conv.agents


@pytest.mark.parametrize("opts", OPTION_SETS, ids=_id)
def test_native_converted_and_aec_env_play_the_same_games(opts):
    rng = np.random.default_rng(17)
    limit = opts.get("max_cycles")
    for seed in range(12):
        steps = _play_all(opts, seed * 7919 + 3, rng)
        assert steps == (12 if limit is None else min(12, limit))


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_many_random_games_are_the_same_in_every_form(n):
    rng = np.random.default_rng(n)
    for seed in range(50):
        _play_all({"num_players": n, "shaping": bool(seed % 2)}, seed, rng)


def test_parallel_to_aec_plays_the_aec_envs_game():
    """parallel_to_aec of the parallel env: each agent, on its turn, gets the AEC env's
    mask, rewards and flags; its observation is the stage-start view (who has picked and
    the clock are the AEC env's only extra)."""
    rng = np.random.default_rng(5)
    for n, seed in [(2, 0), (3, 1), (4, 2), (6, 3), (4, 4)]:
        opts = {"num_players": n, "shaping": seed == 4, "max_cycles": 9 if seed == 3 else None}
        conv = parallel_to_aec(trafficenvs.make_parallel(ENV, **opts))
        aec = trafficenvs.make(ENV, **opts)
        lay = aec.unwrapped.game.obs_layout
        extra = {lay.at("seats", j, "picked") for j in range(n)} | {
            lay.field("horizon_left").offset}
        conv.reset(seed=seed)
        aec.reset(seed=seed)
        for a, b in zip(conv.agent_iter(), aec.agent_iter(), strict=True):
            assert a == b
            o1, r1, t1, u1, _ = conv.last()
            o2, r2, t2, u2, _ = aec.last()
            assert (r1, t1, u1) == (r2, t2, u2)
            if t1 or u1:
                conv.step(None)
                aec.step(None)
                continue
            np.testing.assert_array_equal(o1["action_mask"], o2["action_mask"])
            diff = set(np.flatnonzero(o1["observation"] != o2["observation"]))
            assert diff <= extra
            action = _pick(rng, o1["action_mask"])
            conv.step(action)
            aec.step(action)
        assert not conv.agents and not aec.agents


def test_max_cycles_counts_steps_as_the_aec_env_counts_moves_per_player():
    """PettingZoo's max_cycles_test, with the actions drawn from the masks: its own
    version samples from the whole action space (600 actions, a handful legal), which
    ends every game at once on an illegal move, so it does not apply as written."""
    for n, max_cycles in [(2, 1), (3, 4), (4, 7), (6, 11)]:
        env = trafficenvs.make_parallel(ENV, num_players=n, max_cycles=max_cycles)
        obs, _ = env.reset(seed=max_cycles)
        rng = np.random.default_rng(0)
        steps = 0
        while env.agents:
            obs, rew, term, trunc, _ = env.step({a: _pick(rng, o["action_mask"])
                                                 for a, o in obs.items()})
            steps += 1
        assert steps == max_cycles and all(trunc.values()) and not any(term.values())
        assert set(rew.values()) == {0.0}  # C2: a game cut off gives no result
        aec = trafficenvs.make(ENV, num_players=n, max_cycles=max_cycles)
        aec.reset(seed=max_cycles)
        counts = dict.fromkeys(aec.possible_agents, 0)
        for a in aec.agent_iter():
            counts[a] += 1
            o, _, t, u, _ = aec.last()
            aec.step(None if t or u else _pick(rng, o["action_mask"]))
        assert set(counts.values()) == {max_cycles + 1}  # max_cycles moves and a dead step
    mod = SimpleNamespace(parallel_env=lambda **kw: trafficenvs.make_parallel(ENV, **kw),
                          env=lambda **kw: trafficenvs.make(ENV, **kw))
    with pytest.raises(AssertionError):
        pettingzoo.test.max_cycles_test(mod)


def test_max_cycles_can_be_set_after_construction():
    """parallel_api_test sets ``max_cycles``: the limit and the clock follow at once."""
    env = trafficenvs.make_parallel(ENV, num_players=3)
    env.max_cycles = 2
    assert env.max_moves == 6 and int(env.game.cfg[0]["horizon"]) == 6
    obs, _ = env.reset(seed=0)
    aec = trafficenvs.make(ENV, num_players=3, max_cycles=2)
    aec.reset(seed=0)
    np.testing.assert_array_equal(obs["player_1"]["observation"],
                                  aec.observe("player_1")["observation"])
    rng = np.random.default_rng(0)
    for _ in range(2):
        obs, _, _, trunc, _ = env.step({a: _pick(rng, o["action_mask"]) for a, o in obs.items()})
    assert all(trunc.values()) and env.agents == []


# --------------------------------------------------------------------------- what is seen


def test_each_agent_gets_arrays_of_its_own():
    """A shared buffer would let an agent read another seat's hand through ``.base``."""
    env = trafficenvs.make_parallel(ENV, num_players=4)
    obs, _ = env.reset(seed=2)
    arrays = [arr for o in obs.values() for arr in o.values()]
    assert all(arr.base is None for arr in arrays)
    for i, x in enumerate(arrays):
        for y in arrays[i + 1:]:
            assert not np.shares_memory(x, y)
    first = {a: {k: v.copy() for k, v in o.items()} for a, o in obs.items()}
    rng = np.random.default_rng(0)
    env.step({a: _pick(rng, o["action_mask"]) for a, o in obs.items()})
    for a in obs:  # what was returned is not overwritten by the next step
        for k in obs[a]:
            np.testing.assert_array_equal(obs[a][k], first[a][k])
    space = env.observation_space("player_0")
    assert all(space.contains(o) for o in obs.values())


def test_an_agents_view_hides_the_others_hands():
    """Two games that differ only in player_1's hand and the deck give player_0 the same
    observation and mask, in both stages; player_1's own view tells them apart."""
    env = trafficenvs.make_parallel(ENV, num_players=3)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(3)
    for _stage in range(2):
        base = env.state_dict()
        hands = [list(h) for h in base["hands"]]
        deck = list(base["deck"])
        d = next(i for i, c in enumerate(deck) if c != hands[1][0])
        hands[1][0], deck[d] = deck[d], hands[1][0]  # a card of player_1 for one of the deck
        twin = dict(base, hands=hands, deck=deck)
        views = []
        for state in (base, twin):
            env.load_state_dict(state)
            views.append({a: env.observe(a) for a in env.possible_agents})
        for a in ("player_0", "player_2"):
            for k in ("observation", "action_mask"):
                assert np.array_equal(views[0][a][k], views[1][a][k])
        assert not np.array_equal(views[0]["player_1"]["observation"],
                                  views[1]["player_1"]["observation"])
        env.load_state_dict(base)
        obs, *_ = env.step({a: _pick(rng, o["action_mask"]) for a, o in obs.items()})


def test_every_seat_can_choose_at_once_in_both_stages():
    env = trafficenvs.make_parallel(ENV, num_players=4)
    obs, _ = env.reset(seed=9)
    rng = np.random.default_rng(1)
    k = env.game.num_kinds
    stage = 0
    while env.agents:
        for o in obs.values():
            legal = np.flatnonzero(o["action_mask"])
            assert legal.size and ((legal < k).all() if stage == 0 else (legal >= k).all())
        obs, *_ = env.step({a: _pick(rng, o["action_mask"]) for a, o in obs.items()})
        stage = 1 - stage


# --------------------------------------------------------------------------- illegal actions


def _first_stage(n: int = 3, seed: int = 4, **kw):
    env = trafficenvs.make_parallel(ENV, num_players=n, **kw)
    obs, _ = env.reset(seed=seed)
    legal = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in obs.items()}
    illegal = {a: int(np.flatnonzero(o["action_mask"] == 0)[0]) for a, o in obs.items()}
    return env, obs, legal, illegal


@pytest.mark.parametrize("offender", [0, 1, 2])
def test_an_illegal_action_ends_the_game_as_the_aec_wrapper_does(offender):
    env, obs, legal, illegal = _first_stage()
    bad = f"player_{offender}"
    actions = dict(legal, **{bad: illegal[bad]})
    before = env.state_dict()
    with pytest.warns(UserWarning, match="illegal"):
        obs2, rew, term, trunc, _ = env.step(actions)
    assert rew == {a: (-1.0 if a == bad else 0.0) for a in env.possible_agents}
    assert all(term.values()) and all(trunc.values())  # PettingZoo's wrapper sets both
    assert env.agents == [] and env.state_dict() == before  # nothing of the stage played
    assert not any(o["action_mask"].any() for o in obs2.values())
    # the AEC env's wrapper, seat by seat: the same rewards and flags
    aec = trafficenvs.make(ENV, num_players=3)
    aec.reset(seed=4)
    got = dict.fromkeys(aec.possible_agents, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in aec.possible_agents[: offender + 1]:
            aec.step(actions[a])
            for b in aec.possible_agents:
                got[b] += aec.rewards[b]
    assert got == rew
    assert aec.terminations == term and aec.truncations == trunc


def test_every_offender_of_a_stage_is_charged():
    env, _, legal, illegal = _first_stage(n=4, illegal_reward=-2.5)
    actions = dict(legal, player_1=illegal["player_1"], player_3=illegal["player_3"])
    with pytest.warns(UserWarning):
        _, rew, *_ = env.step(actions)
    assert rew == {"player_0": 0.0, "player_1": -2.5, "player_2": 0.0, "player_3": -2.5}


def test_illegal_reward_none_raises_and_changes_nothing():
    env, obs, legal, illegal = _first_stage(illegal_reward=None)
    before = env.state_dict()
    want = np.flatnonzero(obs["player_2"]["action_mask"]).tolist()
    with pytest.raises(ValueError, match=f"player_2 chose {illegal['player_2']}, "
                                         f"legal: \\{want}"):
        env.step(dict(legal, player_2=illegal["player_2"]))
    assert env.state_dict() == before and env.agents == env.possible_agents
    env.step(legal)  # still playable
    assert env.state_dict()["stage"] == 1


@pytest.mark.parametrize("actions, error, match", [
    ([0, 0, 0], TypeError, "dict of one action per agent"),
    ({"player_0": 0, "player_1": 0}, ValueError, "no action for \\['player_2'\\]"),
    ({"player_0": 0, "player_1": 0, "player_2": 0, "player_3": 0}, ValueError,
     "unknown agents \\['player_3'\\]"),
    ({"player_0": 0, "player_1": 0, "bob": 0}, ValueError, "unknown agents \\['bob'\\]"),
    ({"player_0": 0, "player_1": 0, "player_2": 1.0}, TypeError, "player_2 must be an int"),
    ({"player_0": 0, "player_1": 0, "player_2": True}, TypeError, "player_2 must be an int"),
    ({"player_0": 0, "player_1": 0, "player_2": "3"}, TypeError, "player_2 must be an int"),
    ({"player_0": 0, "player_1": 0, "player_2": None}, TypeError, "player_2 is None"),
    ({"player_0": 0, "player_1": -1, "player_2": 0}, ValueError, "player_1 must be an int in"),
    ({"player_0": 600, "player_1": 0, "player_2": 0}, ValueError, "in 0..599, got 600"),
    ({"player_0": np.array([1]), "player_1": 0, "player_2": 0}, TypeError, "player_0"),
])
@pytest.mark.parametrize("illegal_reward", [-1.0, None])
def test_bad_input_is_an_error_and_changes_nothing(actions, error, match, illegal_reward):
    env, *_ = _first_stage(illegal_reward=illegal_reward)
    before = env.state_dict()
    with pytest.raises(error, match=match):
        env.step(actions)
    assert env.state_dict() == before and env.agents == env.possible_agents


def test_numpy_ints_are_actions():
    env, _, legal, _ = _first_stage()
    acts = {"player_0": np.int64(legal["player_0"]), "player_1": np.array(legal["player_1"]),
            "player_2": np.uint16(legal["player_2"])}
    env.step(acts)
    assert env.state_dict()["stage"] == 1


def test_step_before_reset_and_after_the_end_are_errors():
    env = trafficenvs.make_parallel(ENV, num_players=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0, "player_1": 0})
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    while env.agents:
        obs, *_ = env.step({a: _pick(rng, o["action_mask"]) for a, o in obs.items()})
    with pytest.raises(RuntimeError, match="game is over"):
        env.step({})


# --------------------------------------------------------------------------- seeding, state


def _trajectory(env, resets: list[int | None], rng_seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(rng_seed)
    out = []
    for seed in resets:
        obs, _ = env.reset(seed=seed)
        out.append(_without_scratch(env.record))
        while env.agents:
            obs, rew, *_ = env.step({a: _pick(rng, o["action_mask"]) for a, o in obs.items()})
            out.append(_without_scratch(env.record) + repr(sorted(rew.items())).encode())
    return out


def test_seeded_reset_is_reproducible_and_unseeded_resets_continue_its_stream():
    resets = [11, None, None]
    a = _trajectory(trafficenvs.make_parallel(ENV, num_players=3), resets)
    b = _trajectory(trafficenvs.make_parallel(ENV, num_players=3), resets)
    assert a == b
    c = _trajectory(trafficenvs.make_parallel(ENV, num_players=3), [12, None, None])
    assert a[0] != c[0]
    # the unseeded resets deal the games the AEC env deals after the same seeded reset
    par = trafficenvs.make_parallel(ENV, num_players=3)
    aec = trafficenvs.make(ENV, num_players=3)
    par.reset(seed=11)
    aec.reset(seed=11)
    for _ in range(3):
        par.reset()
        aec.reset()
        assert _without_scratch(par.record) == _without_scratch(aec.unwrapped.record)


def test_a_seed_deals_the_aec_envs_game():
    for n in (2, 6):
        par = trafficenvs.make_parallel(ENV, num_players=n)
        aec = trafficenvs.make(ENV, num_players=n)
        par.reset(seed=2**64 - 1)
        aec.reset(seed=2**64 - 1)
        assert par.state_dict() == aec.unwrapped.state_dict()
    with pytest.raises(ValueError, match="seed"):
        par.reset(seed=-1)


def test_state_dicts_load_at_a_stage_start_only():
    env = trafficenvs.make_parallel(ENV, num_players=3)
    env.reset(seed=0)
    game = env.game
    start = position(game, round=1, trip=1, stage=0, hands=[None, None, None])
    env.load_state_dict(start)
    assert env.agents == env.possible_agents and env.state_dict()["round"] == 1
    aec = trafficenvs.make(ENV, num_players=3)
    aec.reset(seed=0)
    aec.load_state_dict(start)
    for a in env.possible_agents:
        np.testing.assert_array_equal(env.observe(a)["observation"],
                                      aec.observe(a)["observation"])
    mid = dict(start, to_move=1, hands=[start["hands"][0][1:]] + start["hands"][1:],
               pending=[{"first": start["hands"][0][0], "car": None, "surprise": None}]
               + start["pending"][1:])
    aec.load_state_dict(mid)  # a position the AEC env can hold
    with pytest.raises(ValueError, match="to_move is 1"):
        env.load_state_dict(mid)
    assert env.state_dict()["to_move"] == 0


def test_render_and_action_names():
    env = trafficenvs.make_parallel(ENV, num_players=2, render_mode="ansi", render_seat=0)
    obs, _ = env.reset(seed=0)
    assert isinstance(env.render(), str) and env.render()
    a = int(np.flatnonzero(obs["player_0"]["action_mask"])[0])
    assert env.action_name(a).startswith("play ")
