"""The conformance suite every game runs; users can run it on their own configs.

>>> from trafficenvs import testing
>>> testing.run_all("traffic_jam-v1", num_players=3)      # doctest: +SKIP

Each check raises ``AssertionError`` with a message naming what broke: the game, its
options, the seed, and the row and step where that applies.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from typing import Any

import numba
import numpy as np

from trafficenvs.core import sampler
from trafficenvs.registry import make, make_game, make_vec


def check_pettingzoo_api(env_id: str, num_cycles: int = 200, **options: Any) -> None:
    """PettingZoo's own ``api_test``, ``seed_test`` and ``render_test``."""
    from pettingzoo.test import api_test, render_test, seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test warns about float bounds etc.
        api_test(make(env_id, **options), num_cycles=num_cycles)
        seed_test(lambda: make(env_id, **options), num_cycles=num_cycles)
        render_test(lambda render_mode=None: make(env_id, render_mode=render_mode, **options))


def _legal_choice(rng: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    assert legal.size > 0, "a game that is not over has no legal action"
    return int(rng.choice(legal))


def check_batch_matches_single(
    env_id: str,
    seeds: Iterable[int] = (0, 1, 2),
    batch_sizes: Iterable[int] = (1, 7, 64),
    threads: Iterable[int] = (1, 2),
    max_steps: int = 2000,
    **options: Any,
) -> None:
    """Row i of a batch reset with seed s plays exactly like an AEC env with seed s+i.

    Same actions in, same observations, masks, players to move, rewards and ends
    out, for every batch size and numba thread count; a finished row restarts as
    seed ``s + i + B``.
    """
    old_threads = numba.get_num_threads()
    try:
        for nthreads in threads:
            if nthreads > numba.config.NUMBA_NUM_THREADS:
                continue
            numba.set_num_threads(nthreads)
            for b in batch_sizes:
                for s in seeds:
                    _compare_batch(env_id, s, b, max_steps, options)
    finally:
        numba.set_num_threads(old_threads)


def _compare_batch(env_id: str, seed: int, b: int, max_steps: int, options: dict) -> None:
    venv = make_vec(env_id, num_envs=b, **options)
    out = venv.reset(seed=seed)
    envs = [make(env_id, wrapped=False, **options) for _ in range(b)]
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    live = np.ones(b, bool)
    rng = np.random.default_rng(seed)
    base = f"{env_id} {options} seed {seed} batch {b} threads {numba.get_num_threads()}"
    for t in range(max_steps):
        where = f"{base} step {t}"
        actions = np.zeros(b, np.int64)
        for i, e in enumerate(envs):
            if live[i]:
                where = f"{base} step {t} row {i}"
                o = e.observe(e.agent_selection)
                assert e.possible_agents.index(e.agent_selection) == out.current_player[i], where
                np.testing.assert_array_equal(o["observation"], out.observation[i], where)
                np.testing.assert_array_equal(o["action_mask"].astype(bool),
                                              out.action_mask[i], where)
                actions[i] = _legal_choice(rng, out.action_mask[i])
            else:
                actions[i] = _legal_choice(rng, out.action_mask[i])
        movers = [e.agent_selection for e in envs]
        out = venv.step(actions)
        for i, e in enumerate(envs):
            if not live[i]:
                continue
            where = f"{base} step {t} row {i}"
            e.step(int(actions[i]))
            rew = np.array([e.rewards[a] for a in e.possible_agents], np.float32)
            np.testing.assert_allclose(rew, out.rewards[i], err_msg=where, atol=1e-6)
            ended = any(e.terminations.values()) or any(e.truncations.values())
            assert out.terminated[i] == any(e.terminations.values()), where
            assert out.truncated[i] == any(e.truncations.values()), where
            if ended:
                final = e.observe(movers[i])["observation"]
                np.testing.assert_array_equal(final, out.final_observation[i], where)
                fresh = make(env_id, wrapped=False, **options)
                fresh.reset(seed=seed + i + b)
                o = fresh.observe(fresh.agent_selection)["observation"]
                np.testing.assert_array_equal(o, out.observation[i], f"{where} restart")
                live[i] = False
        if not live.any():
            return
    raise AssertionError(f"{base}: games did not end within {max_steps} steps")


def check_random_play(
    env_id: str, seeds: Iterable[int] = range(20), num_envs: int = 16,
    max_steps: int = 5000, **options: Any,
) -> int:
    """Random legal play to the end: invariants after every step, zero-sum results.

    Returns the number of games finished (every row must finish at least one).
    """
    game = make_game(env_id, **options)
    finished = 0
    for s in seeds:
        venv = make_vec(env_id, num_envs=num_envs, **options)
        out = venv.reset(seed=s * num_envs)
        rng = np.random.default_rng(s)
        done_once = np.zeros(num_envs, bool)
        for t in range(max_steps):
            actions = np.array([_legal_choice(rng, m) for m in out.action_mask])
            out = venv.step(actions)
            for i in range(num_envs):
                try:
                    game.check_invariants(venv.records[i])
                except AssertionError as err:
                    raise AssertionError(f"{env_id} {options} seed {s * num_envs + i} (row {i} "
                                         f"of batch seed {s * num_envs}) step {t}: {err}") from err
            ended = out.terminated | out.truncated
            if out.terminated.any():
                total = out.rewards[out.terminated].sum(axis=1)
                if not getattr(game, "shaping", False):
                    np.testing.assert_allclose(
                        total, 0.0, atol=1e-5,
                        err_msg=f"{env_id} {options} batch seed {s * num_envs} step {t}: "
                                "final rewards are not zero-sum (C2)")
            finished += int(ended.sum())
            done_once |= ended
            if done_once.all():
                break
        assert done_once.all(), (f"{env_id} {options} batch seed {s * num_envs}: rows "
                                 f"{np.flatnonzero(~done_once).tolist()} never ended")
    return finished


def check_state_roundtrip(
    env_id: str, seeds: Iterable[int] = range(3), steps: int = 200, **options: Any
) -> None:
    """``to_dict`` -> JSON -> ``from_dict`` loses nothing, all game long.

    One env is rebuilt from its JSON state before every step, a twin never is; both
    must give the same dicts, observations, masks and rewards throughout.
    """
    for s in seeds:
        rebuilt = make_vec(env_id, num_envs=1, **options)
        twin = make_vec(env_id, num_envs=1, **options)
        a, b = rebuilt.reset(seed=s), twin.reset(seed=s)
        rng = np.random.default_rng(s)
        for t in range(steps):
            where = f"{env_id} {options} seed {s} step {t}"
            d = json.loads(json.dumps(rebuilt.state_dict(0)))
            rebuilt.load_state_dict(0, d)
            assert rebuilt.state_dict(0) == twin.state_dict(0), f"{where}: dicts differ"
            np.testing.assert_array_equal(a.observation, b.observation, where)
            np.testing.assert_array_equal(a.action_mask, b.action_mask, where)
            act = np.array([_legal_choice(rng, b.action_mask[0])])
            a, b = rebuilt.step(act), twin.step(act)
            np.testing.assert_array_equal(a.rewards, b.rewards, where)
            np.testing.assert_array_equal(a.terminated, b.terminated, where)


def check_observation_bounds(
    env_id: str, seeds: Iterable[int] = range(2), num_envs: int = 64, steps: int = 400,
    every: int = 3, aec_games: int = 2, **options: Any,
) -> np.ndarray:
    """Every observation random play shows lies in the observation space, exactly.

    Plays random legal games in the vectorised env (restarting as they end) and checks,
    every ``every`` steps, every seat's view of every game (``observe(seats)``), and on
    every step the mover's observation and the final observations of games that ended,
    against ``[0, obs_high]`` entry by entry; then ``aec_games`` games of the AEC env
    with ``observation_space(agent).contains`` on every observation. Returns the largest
    value seen per entry (for tests that also want each bound reached).
    """

    game = make_game(env_id, **options)
    high = game.obs_high.astype(np.int64)
    seen = np.zeros(game.obs_dim, np.int64)
    layout = game.obs_layout

    def check(rows: np.ndarray, where: str) -> None:
        assert rows.dtype == game.obs_dtype, f"{where}: dtype {rows.dtype}"
        if not len(rows):
            return
        top = rows.max(axis=0).astype(np.int64)
        over = np.flatnonzero(top > high)
        if over.size:
            k = int(over[0])
            f = next(f for f in layout if f.offset <= k < f.stop)
            raise AssertionError(f"{env_id} {options} {where}: entry {k} (field {f.name!r}, "
                                 f"+{k - f.offset}) is {top[k]} > its bound {high[k]}")
        np.maximum(seen, top, out=seen)

    for s in seeds:
        venv = make_vec(env_id, num_envs=num_envs, **options)
        n, N = num_envs, venv.num_players
        out = venv.reset(seed=s * num_envs)
        states = sampler.rng_states(n, s + 1)
        acts = np.zeros(n, np.int64)
        seats = np.zeros(n, np.int64)
        for t in range(steps):
            where = f"batch seed {s * num_envs} step {t}"
            check(out.observation, where)
            if t % every == 0:
                for j in range(N):
                    seats[:] = (np.arange(n) + j) % N
                    check(venv.observe(seats), f"{where} seat offset {j}")
            sampler.sample_legal(out.action_mask, states, acts)
            out = venv.step(acts)
            ended = out.terminated | out.truncated
            check(out.final_observation[ended], f"{where} final observation")
    for s in range(aec_games):
        env = make(env_id, **options)
        env.reset(seed=1000 + s)
        rng = np.random.default_rng(s)
        for agent in env.agent_iter(max_iter=steps):
            obs, _, term, trunc, _ = env.last()
            assert env.observation_space(agent).contains(obs), (
                f"{env_id} {options} AEC seed {1000 + s}: observation outside its space")
            check(obs["observation"][None], f"AEC seed {1000 + s}")
            env.step(None if term or trunc else _legal_choice(rng, obs["action_mask"]))
    return seen


#: the fields of a :func:`play_trace` that every step has
TRACE_STEP_FIELDS = ("observation", "action_mask", "current_player", "rewards", "terminated",
                     "truncated")


def _record_bytes(recs: np.ndarray) -> np.ndarray:
    """Records as the bytes of their fields, one row each (padding is not game state)."""
    recs = np.asarray(recs)
    parts = [np.ascontiguousarray(recs[f]).view(np.uint8).reshape(len(recs),
                                                                  recs.dtype[f].itemsize)
             for f in recs.dtype.names]
    return np.concatenate(parts, axis=1) if parts else np.zeros((len(recs), 0), np.uint8)


def play_trace(env_id: str, device: str = "cpu", num_envs: int = 6, steps: int = 120,
               seed: int = 11, max_cycles: int = 12, options: dict[str, Any] | None = None
               ) -> dict[str, np.ndarray]:
    """Every array a vectorised env shows over ``steps`` steps, for comparing devices.

    Plays ``num_envs`` games from ``seed`` with random legal actions from the
    package's sampler (on the GPU for a GPU env, from the same generators), a random
    quarter of the rows inactive on every third step and a random ``final_seat`` on
    every fifth, and returns, stacked over the steps: observations, masks, players to
    move, rewards, end flags, the actions, the records, and the final observations
    and final records of the rows that ended. The CPU env and the GPU env of the same
    arguments must return equal arrays (``device``: ``"cpu"``, ``"cuda"``, ``"cuda:K"``).
    """
    from trafficenvs.core.vector import to_numpy

    n = num_envs
    env = make_vec(env_id, num_envs=n, max_cycles=max_cycles, device=device,
                   **(options or {}))
    gpu = device != "cpu"
    out: dict[str, list[np.ndarray]] = {f: [] for f in TRACE_STEP_FIELDS}
    out.update(final_observation=[], final_records=[], records=[], actions=[])
    states = sampler.rng_states(n, seed + 1, device=device)
    acts = env.as_device_array(np.zeros(n, np.int64)) if gpu else np.zeros(n, np.int64)
    rng = np.random.default_rng(seed + 2)
    res = env.reset(seed=seed)
    for t in range(steps):
        host = res.numpy() if gpu else res.copy()
        for f in TRACE_STEP_FIELDS:
            out[f].append(getattr(host, f))
        if t:
            ended = host.terminated | host.truncated
            out["final_observation"].append(host.final_observation[ended])
            out["final_records"].append(_record_bytes(host.final_records[ended]))
        out["records"].append(_record_bytes(to_numpy(env.records)))
        sampler.sample_legal(res.action_mask, states, acts)
        a = to_numpy(acts)
        out["actions"].append(a)
        active = rng.random(n) >= 0.25 if t % 3 == 1 else None
        seats = rng.integers(-1, env.num_players, n) if t % 5 == 2 else None
        # a GPU env takes its actions as a device array and as a host array in turn
        res = env.step(acts if gpu and t % 2 else a, active, seats)
    return {k: np.concatenate(v) if k in ("final_observation", "final_records") and v
            else np.stack(v) for k, v in out.items() if v}


def run_all(env_id: str, quick: bool = False, **options: Any) -> None:
    """Every conformance check with the given game options."""
    n = 3 if quick else 10
    check_pettingzoo_api(env_id, num_cycles=100 if quick else 500, **options)
    check_batch_matches_single(env_id, seeds=range(n // 3 + 1), **options)
    check_random_play(env_id, seeds=range(n), **options)
    check_state_roundtrip(env_id, seeds=range(2), **options)
    check_observation_bounds(env_id, seeds=range(n // 3 + 1), **options)
