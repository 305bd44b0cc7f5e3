"""The GPU benchmark (``python -m benchmarks.gpu``) runs end to end under the simulator.

On a machine without a GPU, numba-cuda's simulator runs the GPU build's kernels, so
the device script can be run whole at a tiny size: the exactness check (a play
digest on the GPU env against the CPU env's), the throughput loop at two batch
sizes, the copy bandwidth and the bytes-per-step shares, and pgx connect four. The
figures mean nothing there (this checks the script, not the speed); the JSON's shape
and the exactness verdict do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba_cuda", reason="the [gpu] extra (numba-cuda) is not installed")

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], tmp_path: Path, simulate: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONWARNINGS="ignore")
    if simulate:
        env.update(NUMBA_ENABLE_CUDASIM="1", NUMBA_DISABLE_JIT="1")
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)


def test_gpu_benchmark_runs_end_to_end_under_the_simulator(tmp_path):
    out = tmp_path / "gpu.json"
    proc = _run(["-m", "benchmarks.gpu", "--tiny", "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert res["tiny"] and res["machine"]["simulated"]
    assert res["exactness"]["all_equal"] and res["exactness"]["configs"]
    assert set(res["games"]) == {"traffic_jam", "jamming_traffic", "jakarta_traffic"}
    for game in res["games"].values():
        assert set(game["batches"]) == {"4", "8"}
        per = game["bytes_per_step"]
        assert per["all"] > per["outputs"] > 0
        for row in game["batches"].values():
            assert row["steps_per_s"] > 0
            assert row["outputs_gib_per_s"] > 0 and row["outputs_share_of_copy"] > 0
    assert res["bandwidth"]["copy_gib_per_s"] > 0
    pgx = res["pgx"]
    assert pgx is None or "error" in pgx or set(pgx["batches"]) == {"4", "8"}
    assert "exactness: equal" in proc.stdout and "| traffic_jam |" in proc.stdout


def test_trafficenvs_bench_device_cuda_is_the_gpu_benchmark(tmp_path):
    out = tmp_path / "gpu.json"
    proc = _run(["-m", "trafficenvs.cli", "bench", "--device", "cuda", "--tiny", "traffic_jam",
                 "--skip", "exact", "pgx", "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert list(res["games"]) == ["traffic_jam"] and "exactness" not in res


def test_gpu_benchmark_without_a_gpu_says_so(tmp_path):
    from trafficenvs.core import cuda_drivers

    if cuda_drivers.gpu_present():
        pytest.skip("this machine has a GPU")
    proc = _run(["-m", "benchmarks.gpu", "--tiny", "--out", str(tmp_path / "x.json")],
                tmp_path, simulate=False)
    assert proc.returncode == 2
    assert "no CUDA GPU" in proc.stderr
    assert not (tmp_path / "x.json").exists()
