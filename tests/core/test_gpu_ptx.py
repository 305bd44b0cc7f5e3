"""Every GPU driver of every game compiles to PTX, for sm_90 and for sm_75, without a GPU.

The GPU build compiles the CPU build's row functions and each game's rule kernels a
second time, for CUDA (``core/cuda_drivers.py``). This checks that every one of its
kernels (reset, the legality check, step with auto-reset, refresh, observe, the
sampler, the seeds) compiles for a Hopper GPU (sm_90, the H200) and for a Turing
one (sm_75, the oldest architecture CUDA 13 still builds for), for the three games
and for the template game (``tests/toy_game``), which runs on the GPU with no entry
of its own. numba-cuda asks the CUDA driver for the compute capability of the device
functions a kernel calls; without a GPU the test gives it one.

Each game compiles in its own subprocess (games registered from a spec must not
join this process's table; the four run side by side).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba_cuda", reason="the [gpu] extra (numba-cuda) is not installed")
pytestmark = pytest.mark.slow  # about a minute: PTX of 7 kernels x 4 games x 2 targets

HERE = Path(__file__).resolve().parents[1]  # tests/: the template game, gpu_trace.py
GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic", "toll_gate")
TARGETS = ((9, 0), (7, 5))
KERNELS = ("reset", "check", "step", "refresh", "observe", "sample", "seed_rows")

SCRIPT = r"""
import sys
import warnings
from unittest import mock

warnings.simplefilter("ignore")
import numba.cuda.dispatcher
from numba import cuda

import trafficenvs
from trafficenvs.core import cuda_drivers

game_id = sys.argv[1]
if game_id == "toll_gate":
    from toy_game import SPEC

    trafficenvs.register_game(SPEC)
cuda_drivers.bind_cuda()


class Device:  # what numba-cuda asks of the GPU it would run on
    compute_capability = (9, 0)


game = trafficenvs.make_game(game_id)  # every configuration shares the record type
for name, sig in cuda_drivers.driver_signatures(game).items():
    for cc in ((9, 0), (7, 5)):
        Device.compute_capability = cc
        with mock.patch.object(numba.cuda.dispatcher, "get_current_device", Device):
            ptx, _ = cuda.compile_ptx(cuda_drivers.KERNELS[name], sig, cc=cc)
        assert f".target sm_{cc[0]}{cc[1]}" in ptx, (name, cc)
        assert ".entry" in ptx, (name, cc)
        print(game_id, name, cc, len(ptx), flush=True)
print("ptx ok", game_id)
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Compile every game in its own subprocess, all at once."""
    tmp = tmp_path_factory.mktemp("ptx")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "numba"),
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    procs = {g: subprocess.Popen([sys.executable, "-c", SCRIPT, g], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for g in GAMES}
    done = {}
    for g, p in procs.items():
        out, err = p.communicate(timeout=900)
        done[g] = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    return done


@pytest.mark.parametrize("game", GAMES)
def test_every_gpu_driver_compiles_to_ptx_for_sm90_and_sm75(compiled, game):
    proc = compiled[game]
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert f"ptx ok {game}" in proc.stdout
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(game + " ")]
    compiled_for = {(ln.split()[1], ln.split(" ", 2)[2].rsplit(" ", 1)[0]) for ln in lines}
    assert compiled_for == {(k, str(cc)) for k in KERNELS for cc in TARGETS}
