"""Traces of play, on the CPU env or the GPU env, for comparing the two exactly.

``trace(...)`` plays ``steps`` steps of ``num_envs`` games from one seed, with random
legal actions from the package's sampler (on the GPU for the GPU env), a random
quarter of the rows inactive on every third step and a random ``final_seat`` on
every fifth, and returns every array a step shows, stacked over the steps:
observations, masks, players to move, rewards, end flags, final observations and
final records of the rows that ended, and the records themselves. Row ``i``'s
actions, active flags and final seats come from generators seeded the same on both
devices, so the two traces must be equal array for array.

Run as a script (``python tests/gpu_trace.py OUT.npz GAME [key=value ...]``) it
writes the trace to ``OUT.npz``: the GPU side runs so, in a subprocess under
numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1 NUMBA_DISABLE_JIT=1``), and the
test compares it with the compiled CPU env's trace of the same arguments.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

import trafficenvs
from trafficenvs.core import driver
from trafficenvs.core.vector import to_numpy

#: the fields of a trace that every step has, in order
STEP_FIELDS = ("observation", "action_mask", "current_player", "rewards", "terminated",
               "truncated")


def _fields(recs: np.ndarray) -> np.ndarray:
    """The records as bytes of their fields, padding left out (not game state)."""
    recs = np.asarray(recs)
    parts = [np.ascontiguousarray(recs[f]).view(np.uint8).reshape(len(recs), recs.dtype[f].itemsize)
             for f in recs.dtype.names]
    return np.concatenate(parts, axis=1) if parts else np.zeros((len(recs), 0), np.uint8)


def trace(env_id: str, device: str = "cpu", num_envs: int = 6, steps: int = 120,
          seed: int = 11, max_cycles: int = 12, options: dict[str, Any] | None = None
          ) -> dict[str, np.ndarray]:
    """Every array the env shows over ``steps`` steps (see the module docstring)."""
    n = num_envs
    env = trafficenvs.make_vec(env_id, num_envs=n, max_cycles=max_cycles, device=device,
                               **(options or {}))
    gpu = device != "cpu"
    out: dict[str, list[np.ndarray]] = {f: [] for f in STEP_FIELDS}
    out.update(final_observation=[], final_records=[], records=[], actions=[])
    states = driver.rng_states(n, seed + 1, device=device)
    acts = (env.as_device_array(np.zeros(n, np.int64)) if gpu else np.zeros(n, np.int64))
    rng = np.random.default_rng(seed + 2)
    res = env.reset(seed=seed)
    for t in range(steps):
        host = res.numpy() if gpu else res.copy()
        for f in STEP_FIELDS:
            out[f].append(getattr(host, f))
        if t:
            ended = host.terminated | host.truncated
            out["final_observation"].append(host.final_observation[ended])
            out["final_records"].append(_fields(host.final_records[ended]))
        out["records"].append(_fields(to_numpy(env.records)))
        driver.sample_legal(res.action_mask, states, acts)
        a = to_numpy(acts)
        out["actions"].append(a)
        active = rng.random(n) >= 0.25 if t % 3 == 1 else None
        seats = rng.integers(-1, env.num_players, n) if t % 5 == 2 else None
        res = env.step(acts if gpu and t % 2 else a, active, seats)
    return {k: np.concatenate(v) if k in ("final_observation", "final_records") and v
            else np.stack(v) for k, v in out.items() if v}


def main(argv: list[str]) -> None:
    path, env_id, *rest = argv
    kw: dict[str, Any] = {}
    for item in rest:
        k, v = item.split("=", 1)
        kw[k] = json.loads(v)
    kw.setdefault("device", "cuda")
    if env_id == "toll_gate":  # the template game (tests/toy_game) joins from its spec
        from toy_game import SPEC

        trafficenvs.register_game(SPEC)
    np.savez(path, **trace(env_id, **kw))


if __name__ == "__main__":
    main(sys.argv[1:])
