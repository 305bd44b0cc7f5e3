"""The shared-machine figure: each game's batched env with a competing busy process.

Users train with torch in the same process or on the same machine, so a busy core is
the normal case. The harness starts its own competitor (one process spinning on one
core), measures, and stops it, so the figure does not depend on what else happened to
run. Within each condition (idle, loaded) the 1-thread and 2-thread runs alternate,
so a drift in the machine's load reaches both alike; every figure is the median of
the repeats, with min and max.

Reported per game: steps/s at batch 64 and 4096 on 1 and 2 threads idle and loaded,
the ratio 2 threads / 1 thread under load (the target: at least 0.9), and what batch
1 and the AEC ``env()`` loop keep under load (loaded / idle; the target: at least
0.8).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from trafficenvs.bench.measure import aec_games, stat, time_calls, vec_stepper, warm_aec

#: the competing process: a pure-Python spin loop (one core, no memory traffic) that
#: stops by itself when the harness is gone (killed, so it could not stop it)
SPIN = ("import os, sys\nparent = int(sys.argv[1])\nwhile os.getppid() == parent:\n"
        "    for _ in range(100_000):\n        pass\n")


@contextmanager
def busy_core() -> Iterator[subprocess.Popen]:
    """A process keeping one core busy for the duration of the block."""
    proc = subprocess.Popen([sys.executable, "-c", SPIN, str(os.getpid())])
    time.sleep(0.3)  # let the scheduler give it its core
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _alternate(fns: dict[str, Callable[[], float]], repeats: int) -> dict[str, dict]:
    """Run each rate function ``repeats`` times, in turn; :func:`stat` of each."""
    runs: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            runs[k].append(f())
    return {k: stat(v) for k, v in runs.items()}


def _rate_fn(step: Callable[[], int], seconds: float) -> Callable[[], float]:
    def rate() -> float:
        n, dt = time_calls(step, seconds)
        return n / dt
    return rate


def shared_machine(game: str, options: dict, seconds: float, repeats: int = 3,
                   batches: tuple[int, ...] = (64, 4096),
                   progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The figures of the module docstring for one game."""
    import trafficenvs

    fns: dict[str, Callable[[], float]] = {}
    for b in batches:
        for t in (1, 2):
            step, _ = vec_stepper(game, options, b, t)
            step()  # warm: compile, caches, the pool
            fns[f"vec {b} x{t}"] = _rate_fn(step, seconds)
    step1, _ = vec_stepper(game, options, 1, None)
    step1()
    fns["vec 1"] = _rate_fn(step1, seconds)
    env = trafficenvs.make(game, **options)
    warm_aec(env, 0)
    seed = [0]

    def aec_rate() -> float:
        n, dt, seed[0] = aec_games(env, seconds, seed[0])
        return n / dt

    fns["aec env()"] = aec_rate
    if progress:
        progress(f"{game}: shared machine, idle")
    idle = _alternate(fns, repeats)
    if progress:
        progress(f"{game}: shared machine, one core busy")
    with busy_core():
        loaded = _alternate(fns, repeats)
    out: dict[str, Any] = {"idle": idle, "loaded": loaded, "ratio_2t_1t_loaded": {},
                           "ratio_2t_1t_idle": {}, "kept_under_load": {}}
    for b in batches:
        for cond in ("idle", "loaded"):
            d = out[cond]
            out[f"ratio_2t_1t_{cond}"][str(b)] = (d[f"vec {b} x2"]["median"]
                                                  / d[f"vec {b} x1"]["median"])
    for k in ("vec 1", "aec env()"):
        out["kept_under_load"][k] = loaded[k]["median"] / idle[k]["median"]
    return out
