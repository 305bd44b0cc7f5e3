"""Throughput of the envs: ``python -m benchmarks.throughput traffic_jam [--quick]``.

Measures, in one process run:

* the AEC env in the loop PettingZoo users write (``agent_iter``, ``last``, masked
  ``action_space.sample``, ``step``), with ``env()`` wrappers and raw, next to
  PettingZoo's own ``connect_four_v3`` (``env()`` and raw) as the yardstick;
* the vectorised env at several batch sizes and numba thread counts, observation and
  mask produced every step, random legal actions drawn in numba each step;
* kernel-only random play (no observation written): the ceiling;
* compile time apart: cold (empty numba cache, new process) and warm (second process).

Prints a table and writes the figures as JSON (``--out``, default
``benchmarks/results/<game>.json``). Speeds are steps (single-agent moves) per second.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_OPTIONS = {"traffic_jam": {"num_players": 4}}
BATCHES = (1, 256, 4096, 16384)
RESULTS = Path(__file__).with_name("results")


def _aec_loop(env: Any, seconds: float, seed: int = 0) -> float:
    """Steps/s of the standard PettingZoo AEC loop with masked random actions."""
    steps = 0
    env.reset(seed=seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                action = env.action_space(agent).sample(obs["action_mask"])
            env.step(action)
            steps += 1
        if time.perf_counter() > deadline:
            break
        seed += 1
        env.reset(seed=seed)
    return steps / (time.perf_counter() - t0)


def bench_aec(game: str, options: dict, seconds: float) -> dict[str, float]:
    import trafficenvs

    out = {
        "env()": _aec_loop(trafficenvs.make(game, **options), seconds),
        "raw": _aec_loop(trafficenvs.make(game, wrapped=False, **options), seconds),
    }
    return out


def bench_connect_four(seconds: float) -> dict[str, float] | None:
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError:  # the classic extra (pygame) is not installed
        return None
    return {
        "env()": _aec_loop(connect_four_v3.env(), seconds),
        "raw": _aec_loop(connect_four_v3.raw_env(), seconds),
    }


def bench_vec(game: str, options: dict, batch: int, threads: int, seconds: float) -> dict:
    import numba

    import trafficenvs
    from trafficenvs.core import driver

    numba.set_num_threads(threads)
    venv = trafficenvs.make_vec(game, num_envs=batch, **options)
    out = venv.reset(seed=0)
    states = driver.rng_states(batch, 1)
    actions = np.zeros(batch, np.int64)
    for _ in range(5):  # warm the caches and the thread pool
        driver.sample_legal(out.action_mask, states, actions)
        out = venv.step(actions)
    calls = 0
    t0 = time.perf_counter()
    while True:
        for _ in range(16):
            driver.sample_legal(out.action_mask, states, actions)
            out = venv.step(actions)
        calls += 16
        dt = time.perf_counter() - t0
        if dt > seconds:
            break
    env_rate = calls * batch / dt
    # kernel-only: random play inside numba, no observation written
    mask = np.zeros((batch, venv.num_actions), np.bool_)
    seeds = np.arange(batch, dtype=np.uint64)
    stride = np.uint64(batch)
    driver.play_random(venv.records, venv.game.cfg, seeds, stride, venv.num_players, 2, mask)
    per_call = max(1, 200_000 // batch)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        driver.play_random(venv.records, venv.game.cfg, seeds, stride, venv.num_players,
                           per_call, mask)
        n += per_call * batch
    kernel_rate = n / (time.perf_counter() - t0)
    return {"batch": batch, "threads": threads, "env_steps_per_s": env_rate,
            "kernel_steps_per_s": kernel_rate,
            "obs_mask_bytes_per_step": 4 * venv.observation_shape[0] + venv.num_actions}


_STARTUP = """
import time, numpy as np
t0 = time.perf_counter()
import trafficenvs
v = trafficenvs.make_vec({game!r}, num_envs=2, **{options!r})
o = v.reset(seed=0)
v.step(np.array([np.flatnonzero(m)[0] for m in o.action_mask]))
e = trafficenvs.make({game!r}, **{options!r}); e.reset(seed=0)
e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
print(time.perf_counter() - t0)
"""


def bench_startup(game: str, options: dict) -> dict[str, float]:
    """Import + first vectorised and AEC steps in a new process: cold and warm cache."""
    code = _STARTUP.format(game=game, options=options)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        times = []
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True)
            times.append(float(res.stdout.strip().splitlines()[-1]))
    return {"cold_s": times[0], "warm_s": times[1]}


def machine() -> dict[str, Any]:
    import numba

    return {
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "threading_layer": _threading_layer(),
        "date": time.strftime("%Y-%m-%d"),
    }


def _threading_layer() -> str:
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return "not yet started"


def run(game: str, quick: bool = False, seconds: float | None = None) -> dict[str, Any]:
    import numba

    options = DEFAULT_OPTIONS.get(game, {})
    secs = seconds if seconds is not None else (0.3 if quick else 2.0)
    result: dict[str, Any] = {"game": game, "options": options, "seconds_per_figure": secs}
    result["startup"] = bench_startup(game, options)
    result["aec"] = bench_aec(game, options, secs)
    result["connect_four_v3"] = bench_connect_four(secs)
    threads = [t for t in (1, 2) if t <= numba.config.NUMBA_NUM_THREADS]
    batches = (1, 256) if quick else BATCHES
    result["vector"] = [bench_vec(game, options, b, t, secs) for b in batches for t in threads]
    result["machine"] = machine()
    return result


def table(result: dict[str, Any]) -> str:
    lines = [f"{result['game']} {result['options']}  ({result['machine']['date']}, "
             f"{result['machine']['cores']} cores, {result['machine']['cpu']})"]
    s = result["startup"]
    lines.append(f"startup (import + first steps): cold {s['cold_s']:.1f} s, "
                 f"warm {s['warm_s']:.2f} s")
    c4 = result["connect_four_v3"]
    for kind, rate in result["aec"].items():
        ref = f"  ({rate / c4[kind]:.2f}x connect_four_v3 {kind} {c4[kind]:,.0f})" if c4 else ""
        lines.append(f"AEC {kind:6s}: {rate:>12,.0f} steps/s{ref}")
    lines.append(f"{'batch':>6} {'threads':>7} {'env steps/s':>14} {'kernel-only':>14}")
    for v in result["vector"]:
        lines.append(f"{v['batch']:>6} {v['threads']:>7} {v['env_steps_per_s']:>14,.0f} "
                     f"{v['kernel_steps_per_s']:>14,.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", nargs="?", default="traffic_jam")
    parser.add_argument("--quick", action="store_true", help="small batches, short timings")
    parser.add_argument("--seconds", type=float, default=None, help="time per figure")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path")
    args = parser.parse_args(argv)
    result = run(args.game, quick=args.quick, seconds=args.seconds)
    print(table(result))
    out = args.out or RESULTS / f"{args.game}{'_quick' if args.quick else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
