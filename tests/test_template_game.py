"""The template game (``tests/toy_game``, Toll Gate) is a whole game: registered from its
spec alone, it passes the conformance suite, and its greedy player reads by layout.

It runs in a subprocess with its own numba cache directory: the package's drivers
compiled for the template's record type must not be cached with the package's own
(the template's sources are not part of the package's cache key).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCRIPT = r"""
import numpy as np
import trafficenvs
from trafficenvs import testing
from trafficenvs.agents import RandomPolicy, make_greedy
from trafficenvs.agents.arena import run_arena
from toy_game import SPEC

assert "toll_gate-v0" not in trafficenvs.list_envs()
trafficenvs.register_game(SPEC)
assert "toll_gate-v0" in trafficenvs.list_envs()
import pettingzoo
assert "trafficenvs/toll_gate-v0" in pettingzoo.aec_registry

for players in (2, 3):
    testing.check_pettingzoo_api("toll_gate", num_cycles=100, num_players=players)
    testing.check_batch_matches_single("toll_gate", seeds=(0, 3), batch_sizes=(1, 5),
                                       num_players=players)
    assert testing.check_random_play("toll_gate", seeds=range(3), num_players=players) >= 48
    testing.check_state_roundtrip("toll_gate", seeds=range(2), steps=30, num_players=players)

game = trafficenvs.make_game("toll_gate", num_players=2)
res = run_arena("toll_gate", [make_greedy(game, seed=0), RandomPolicy(seed=1)], games=400,
                seed=0, num_players=2)
share = res.agents[0].win_share
assert share > 0.8, share
print("template ok", round(share, 3))
"""


def test_template_game_registers_from_its_spec_and_passes_the_conformance_suite(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "template ok" in proc.stdout
