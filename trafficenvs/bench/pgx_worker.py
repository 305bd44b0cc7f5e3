"""pgx connect four in a process of its own, timed when the harness asks.

The harness (``bench/peers.py``) starts this module with ``python -m`` and writes one
JSON request a line; each answer is one JSON line:

- ``{"batch": B}``: build (and compile) the batched step for ``B`` games; answers
  ``{"compile_s": ...}``;
- ``{"run": S}``: step the current batch for ``S`` seconds; answers
  ``{"steps_per_s": ...}``.

End of input ends the process. At start it answers ``{"ready": true}``, or
``{"error": "..."}`` (pgx or JAX missing) and exits.

Why a process: JAX's thread pool keeps running for a while after each use, so pgx in
the harness's own process would slow the figures taken after it, and it could not
alternate with them. In its own process its CPU time can be read (``/proc``) and the
harness waits until it is quiet before it times its own envs.

What is timed is what pgx's own benchmark does: ``jax.vmap`` over ``env.step`` with
pgx's auto-reset, random legal actions drawn on the device each step, 10 steps
between synchronisations.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable


def builder() -> Callable[[int], tuple[Callable[[float], float], float]]:
    """A function ``batch -> (run(seconds) -> steps/s, compile seconds)``; raises
    ``ImportError`` without pgx or JAX."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

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

    def build(batch: int) -> tuple[Callable[[float], float], float]:
        key = jax.random.PRNGKey(0)
        t0 = time.perf_counter()
        state = init(jax.random.split(key, batch))
        a, keys = act(key, state)
        state = step(state, a, keys)
        state.observation.block_until_ready()
        compile_s = time.perf_counter() - t0

        def run(seconds: float) -> float:
            nonlocal key, state  # each window goes on from where the last one ended
            n = 0
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                for _ in range(10):
                    key, sub = jax.random.split(key)
                    a, keys = act(sub, state)
                    state = step(state, a, keys)
                state.observation.block_until_ready()
                n += 10 * batch
            return n / (time.perf_counter() - t0)

        return run, compile_s

    return build


def versions() -> dict[str, str]:
    import jax
    import pgx

    return {"version": pgx.__version__, "jax": jax.__version__,
            "backend": jax.default_backend()}  # "cpu", or "gpu" on a GPU machine


def main() -> int:
    def say(obj: dict) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    try:
        build = builder()
    except ImportError as e:
        say({"error": f"pgx or JAX is not installed: {e}"})
        return 0
    say({"ready": True, **versions()})
    run = None
    for line in sys.stdin:
        req = json.loads(line)
        if "batch" in req:
            run, compile_s = build(int(req["batch"]))
            say({"compile_s": compile_s})
        elif "run" in req:
            if run is None:
                say({"error": "no batch chosen"})
            else:
                say({"steps_per_s": run(float(req["run"]))})
        else:
            say({"error": f"unknown request {req!r}"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
