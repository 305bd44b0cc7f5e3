"""The yardsticks, measured in the same run: PettingZoo's connect four and pgx's.

``connect_four_v3`` (PettingZoo classic, needs pygame: the ``bench``/``dev`` extra)
in the same AEC loop as ours, wrapped and raw. pgx ``connect_four`` on JAX (CPU)
batched with ``jax.vmap`` and pgx's auto-reset, random legal actions drawn on
device each step, as pgx's own benchmark does. A peer that is not installed gives
``None``.
"""

from __future__ import annotations

import time
from typing import Any

from trafficenvs.bench.measure import aec_loop, stat


def connect_four(seconds: float, repeats: int = 3) -> dict[str, Any] | None:
    """Medians of ``repeats`` runs (ranges under ``range``), wrapped and raw."""
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError:
        return None
    out: dict[str, Any] = {"range": {}}
    for kind, make in (("env()", connect_four_v3.env), ("raw", connect_four_v3.raw_env)):
        st = aec_loop(make(), seconds, repeats=max(2, repeats))
        out[kind] = st["median"]
        out["range"][kind] = [st["min"], st["max"]]
    return out


def pgx_connect_four(batches: tuple[int, ...], seconds: float,
                     repeats: int = 3) -> dict[str, Any] | None:
    """Steps/s of pgx connect four at each batch size (compile time apart): the median
    of ``repeats`` timed runs, with their range."""
    try:
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.experimental import auto_reset
    except ImportError:
        return None
    env = pgx.make("connect_four")
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))

    @jax.jit
    def act(key, state):
        k1, k2 = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k1, logits, axis=-1)
        keys = jax.random.split(k2, state.legal_action_mask.shape[0])
        return action, keys

    out: dict[str, Any] = {"version": pgx.__version__, "jax": jax.__version__, "batches": {}}
    for b in batches:
        key = jax.random.PRNGKey(0)
        t0 = time.perf_counter()
        state = init(jax.random.split(key, b))
        a, keys = act(key, state)
        state = step(state, a, keys)
        state.observation.block_until_ready()
        compile_s = time.perf_counter() - t0
        rates = []
        for _ in range(repeats):
            n = 0
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                for _ in range(10):
                    key, sub = jax.random.split(key)
                    a, keys = act(sub, state)
                    state = step(state, a, keys)
                state.observation.block_until_ready()
                n += 10 * b
            rates.append(n / (time.perf_counter() - t0))
        st = stat(rates)
        out["batches"][str(b)] = {"steps_per_s": st["median"], "range": [st["min"], st["max"]],
                                  "compile_s": compile_s}
    return out
