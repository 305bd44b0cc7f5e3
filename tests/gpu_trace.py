"""Traces of play on the CPU env or the GPU env, from a subprocess, for comparing them.

``python tests/gpu_trace.py OUT.npz GAME [key=value ...]`` writes
:func:`trafficenvs.testing.play_trace` of those arguments (values as JSON; ``device``
defaults to ``"cuda"``) to ``OUT.npz``. The GPU side runs so, in a subprocess under
numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1 NUMBA_DISABLE_JIT=1``), and the test
compares it with the compiled CPU env's trace of the same arguments. ``toll_gate``
(the template game in ``tests/toy_game``) is registered from its spec first.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

import trafficenvs
from trafficenvs.testing import play_trace as trace

__all__ = ["trace"]


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
