"""The measurements of one game: AEC loop, vectorised env, kernel-only, start-up, memory.

Every rate is steps (single-player moves) per second of wall time. Each figure is the
median of ``repeats`` (at least 3) timed runs of ``seconds`` each after an untimed
warm-up, so compile time never enters a rate and one unlucky run does not make the
figure; the JSON keeps the runs' min and max beside it (``*_range``). Start-up
(import + first steps) is measured apart in new processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np


def aec_games(env: Any, seconds: float, seed: int) -> tuple[int, float, int]:
    """Play whole games for at least ``seconds``: (steps, wall time, next seed)."""
    steps = 0
    env.reset(seed=seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else env.action_space(agent).sample(obs["action_mask"])
            env.step(action)
            steps += 1
        seed += 1
        if time.perf_counter() > deadline:
            return steps, time.perf_counter() - t0, seed
        env.reset(seed=seed)


def warm_aec(env: Any, seed: int) -> None:
    # one untimed game first: anything not yet compiled (or loaded from the cache)
    # compiles here, not inside the timed window
    env.reset(seed=seed + 10**6)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


def aec_loop(env: Any, seconds: float, seed: int = 0, repeats: int = 1) -> float | dict:
    """Steps/s of the loop PettingZoo users write: ``agent_iter``, ``last``, masked
    ``action_space.sample``, ``step``; games are reset until ``seconds`` have passed.

    ``repeats=1``: the rate; more: :func:`stat` of the repeats (median, min, max)."""
    warm_aec(env, seed)
    rates = []
    for _ in range(repeats):
        n, dt, seed = aec_games(env, seconds, seed)
        rates.append(n / dt)
    return rates[0] if repeats == 1 else stat(rates)


def stat(rates: list[float]) -> dict[str, Any]:
    """Median, min and max of repeated rates (the median is the figure quoted)."""
    r = sorted(float(x) for x in rates)
    return {"median": float(np.median(r)), "min": r[0], "max": r[-1], "runs": r}


def bench_aec(game: str, options: dict, seconds: float, repeats: int = 3) -> dict[str, Any]:
    """The AEC env with ``env()``-style wrappers and raw: medians, and their ranges
    under ``range``."""
    import trafficenvs

    out: dict[str, Any] = {"range": {}}
    for kind, wrapped in (("env()", True), ("raw", False)):
        st = aec_loop(trafficenvs.make(game, wrapped=wrapped, **options), seconds,
                      repeats=max(repeats, 2))
        out[kind] = st["median"]
        out["range"][kind] = [st["min"], st["max"]]
    return out


def time_calls(fn, seconds: float) -> tuple[int, float]:
    """Call ``fn()`` (which returns a step count) until ``seconds`` pass."""
    n = 0
    t0 = time.perf_counter()
    while True:
        n += fn()
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n, dt


def repeat_rate(fn, seconds: float, repeats: int) -> dict[str, Any]:
    """:func:`stat` of ``repeats`` timed runs of ``fn`` (steps per call), after one
    untimed call (caches, the thread pool)."""
    fn()
    rates = []
    for _ in range(repeats):
        n, dt = time_calls(fn, seconds)
        rates.append(n / dt)
    return stat(rates)


def vec_stepper(game: str, options: dict, batch: int, threads: int | None):
    """A function that steps a fresh vectorised env ``20_000 // batch`` times (at least
    once) with random legal actions drawn in numba, returning the steps taken, and the
    env."""
    import trafficenvs
    from trafficenvs.core import sampler

    venv = trafficenvs.make_vec(game, num_envs=batch, num_threads=threads, **options)
    out = venv.reset(seed=0)
    states = sampler.rng_states(batch, 1)
    actions = np.zeros(batch, np.int64)
    calls = max(1, 20_000 // batch)

    def env_steps() -> int:
        nonlocal out
        for _ in range(calls):
            sampler.sample_legal(out.action_mask, states, actions, threads=threads)
            out = venv.step(actions)
        return calls * batch

    return env_steps, venv


def bench_vec(game: str, options: dict, batch: int, threads: int, seconds: float,
              repeats: int = 3) -> dict:
    """Vectorised env with random legal actions drawn in numba, and kernel-only play,
    on ``threads`` threads (the env's ``num_threads``)."""
    from trafficenvs.core import sampler

    env_steps, venv = vec_stepper(game, options, batch, threads)
    env = repeat_rate(env_steps, seconds, repeats)
    mask = np.zeros((batch, venv.num_actions), np.bool_)
    seeds = np.arange(batch, dtype=np.uint64)
    stride = np.uint64(batch)
    per_call = max(1, 100_000 // batch)

    def kernel_steps() -> int:
        sampler.play_random(venv.records, venv.game.cfg, seeds, stride, venv.num_players,
                           per_call, mask, threads=threads)
        return per_call * batch

    kernel = repeat_rate(kernel_steps, seconds, repeats)
    return {
        "batch": batch, "threads": threads,
        "env_steps_per_s": env["median"], "env_range": [env["min"], env["max"]],
        "kernel_steps_per_s": kernel["median"], "kernel_range": [kernel["min"], kernel["max"]],
    }


def sizes(game: str, options: dict) -> dict[str, int]:
    """Bytes per game record, and observation + mask bytes written per step."""
    import trafficenvs

    g = trafficenvs.make_game(game, **options)
    return {
        "record_bytes": g.record_dtype.itemsize,
        "obs_dim": g.obs_dim,
        "num_actions": g.num_actions,
        "obs_bytes_per_step": g.obs_dim * g.obs_dtype.itemsize,
        "obs_mask_bytes_per_step": g.obs_dim * g.obs_dtype.itemsize + g.num_actions,
    }


def _subprocess(code: str, env: dict[str, str] | None = None) -> dict:
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"benchmark subprocess failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


_STARTUP = """
import json, time, numpy as np
t0 = time.perf_counter()
import trafficenvs
t1 = time.perf_counter()
v = trafficenvs.make_vec({game!r}, num_envs=2, **{options!r})
o = v.reset(seed=0)
v.step(np.array([np.flatnonzero(m)[0] for m in o.action_mask]))
e = trafficenvs.make({game!r}, **{options!r}); e.reset(seed=0)
e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "first_steps_s": t2 - t1, "total_s": t2 - t0}}))
"""


def bench_startup(game: str, options: dict, cold: bool = True,
                  filled: bool = False) -> dict[str, Any]:
    """Import + first vectorised and AEC steps in a new process.

    Cold: an empty numba cache (everything compiles); warm: a second process that
    finds the cache filled. Without ``cold`` only warm is measured, on the cache in
    use (``--quick``); ``filled`` says this process has already compiled (and so
    cached) the game, which saves the process that would fill the cache.
    """
    code = _STARTUP.format(game=game, options=options)
    if not cold:
        if not filled:
            _subprocess(code)  # make sure the cache is filled
        return {"warm": _subprocess(code)}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        return {"cold": _subprocess(code, env), "warm": _subprocess(code, env)}


_NOJIT = """
import json, time, warnings, numpy as np
warnings.simplefilter("ignore")
import trafficenvs
from trafficenvs.core import sampler
v = trafficenvs.make_vec({game!r}, num_envs=8, **{options!r})
o = v.reset(seed=0)
st = sampler.rng_states(8, 1); a = np.zeros(8, np.int64)
n = 0; t0 = time.perf_counter()
while time.perf_counter() - t0 < {seconds}:
    sampler.sample_legal(o.action_mask, st, a); o = v.step(a); n += 8
print(json.dumps({{"env_steps_per_s": n / (time.perf_counter() - t0)}}))
"""


def bench_nojit(game: str, options: dict, seconds: float) -> dict[str, float]:
    """The same kernels as plain Python (``NUMBA_DISABLE_JIT=1``), batch 8."""
    code = _NOJIT.format(game=game, options=options, seconds=seconds)
    return _subprocess(code, dict(os.environ, NUMBA_DISABLE_JIT="1"))


_MEMORY = """
import json, os, resource, numpy as np
import trafficenvs
from trafficenvs.core import sampler

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

before = rss_mib()
v = trafficenvs.make_vec({game!r}, num_envs={batch}, **{options!r})
o = v.reset(seed=0)
st = sampler.rng_states({batch}, 1); a = np.zeros({batch}, np.int64)
for _ in range(50):
    sampler.sample_legal(o.action_mask, st, a); o = v.step(a)
after = rss_mib()
buffers = v.records.nbytes + sum(getattr(o, f).nbytes for f in o.__dataclass_fields__)
print(json.dumps({{"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "env_rss_mib": after - before, "env_buffers_mib": buffers / 2**20}}))
"""


def bench_memory(game: str, options: dict, batch: int = 16384) -> dict[str, float]:
    """Memory of a process stepping a batch: the process's peak (import and compiled
    code included), what the env added to the resident set, and its own arrays."""
    return {"batch": batch, **_subprocess(_MEMORY.format(game=game, options=options,
                                                         batch=batch))}


def memory_bandwidth(mib: int = 256) -> dict[str, float]:
    """GiB/s of a large array copy (one thread, numpy), the machine's yardstick."""
    a = np.ones(mib * 2**20 // 8)
    b = np.empty_like(a)
    np.copyto(b, a)
    n, dt = time_calls(lambda: (np.copyto(b, a), 1)[1], 1.0)
    return {"copy_gib_per_s": n * a.nbytes / dt / 2**30}
