"""The GPU env plays exactly the CPU env's games: checked under numba-cuda's simulator.

No GPU is needed: with ``NUMBA_ENABLE_CUDASIM=1`` numba-cuda runs the GPU kernels
(``core/cuda_drivers.py``, one thread per game) in Python threads, and with
``NUMBA_DISABLE_JIT=1`` the rule kernels they call run as Python too (the simulator
cannot pass its arrays to compiled functions). Both settings must be made before
numba is imported, so the GPU side runs in a subprocess; the CPU side is the compiled
env of this process. Every game, and the template game, plays from the same seeds
with the same random actions (sampled on the GPU by the device sampler), some rows
inactive and some final seats chosen, over enough steps that games end and restart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba_cuda", reason="the [gpu] extra (numba-cuda) is not installed")

HERE = Path(__file__).resolve().parents[1]  # tests/: the template game, gpu_trace.py


def sim_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a subprocess under the simulator (its own numba cache)."""
    return dict(os.environ, NUMBA_ENABLE_CUDASIM="1", NUMBA_DISABLE_JIT="1",
                NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONWARNINGS="ignore",
                PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))


#: (game, options, max_cycles, steps, what ends): games that end by the rules, and
#: games cut off by the move limit or a game option (Jamming Traffic's ``max_turns``,
#: Jakarta Traffic's ``max_rounds``); each restarts in its row
CASES = {
    "traffic_jam-ends": ("traffic_jam", {}, 20, 150, "terminated"),
    "traffic_jam-limit": ("traffic_jam", {"num_players": 3}, 5, 60, "truncated"),
    "jamming_traffic-ends": ("jamming_traffic", {"map": "small", "num_players": 2}, 2000, 300,
                             "terminated"),
    "jamming_traffic-turns": ("jamming_traffic", {"max_turns": 20, "num_players": 2}, 2000, 100,
                              "truncated"),
    "jakarta_traffic-ends": ("jakarta_traffic", {"num_players": 2}, 2000, 300, "terminated"),
    "jakarta_traffic-rounds": ("jakarta_traffic", {"max_rounds": 5}, 2000, 80, "truncated"),
    "toll_gate-ends": ("toll_gate", {}, 40, 60, "terminated"),
    "toll_gate-limit": ("toll_gate", {}, 2, 30, "truncated"),
}


def run_trace(tmp_path: Path, case: str, device: str, simulate: bool) -> dict[str, np.ndarray]:
    game, options, max_cycles, steps, _ = CASES[case]
    out = tmp_path / f"{case}-{device}.npz"
    env = sim_env(tmp_path) if simulate else dict(
        os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cpu"),
        PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(HERE / "gpu_trace.py"), str(out), game,
                           f'device="{device}"', f"steps={steps}", f"max_cycles={max_cycles}",
                           f"options={json.dumps(options)}"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with np.load(out) as data:
        return dict(data)


@pytest.mark.slow  # the simulator runs the rules as Python: 3-15 s a case
@pytest.mark.parametrize("case", sorted(CASES))
def test_gpu_env_plays_the_same_games_as_the_cpu_env(tmp_path, case):
    game, options, max_cycles, steps, ends = CASES[case]
    gpu = run_trace(tmp_path, case, "cuda", simulate=True)
    if game == "toll_gate":  # registered from its spec: compiled in its own process
        cpu = run_trace(tmp_path, case, "cpu", simulate=False)
    else:
        from tests.gpu_trace import trace

        cpu = trace(game, device="cpu", steps=steps, max_cycles=max_cycles, options=options)
    # games ended (by the rules, or cut off) and their rows played on
    assert cpu[ends].any(), f"{case}: no game {ends}"
    ended = np.argwhere(cpu["terminated"] | cpu["truncated"])
    assert (ended[:, 0] < steps - 5).any()
    assert sorted(gpu) == sorted(cpu)
    for key in cpu:
        assert gpu[key].shape == cpu[key].shape, key
        diff = np.argwhere(gpu[key] != cpu[key])
        assert diff.size == 0, f"{case}: {key} differs first at {diff[0].tolist()}"


CHECKS = r"""
import warnings
warnings.simplefilter("ignore")
import numpy as np
import trafficenvs
from trafficenvs.core import driver
from trafficenvs.core import sampler
from trafficenvs.core.vector import to_numpy

def same(a, b, what):
    for f in ("observation", "action_mask", "current_player", "rewards", "terminated",
              "truncated"):
        x, y = to_numpy(getattr(a, f)), to_numpy(getattr(b, f))
        assert np.array_equal(x, y), (what, f)

def raises(fn, err, text):
    try:
        fn()
    except err as e:
        assert text in str(e), (text, str(e))
        return
    raise AssertionError(f"no {err.__name__} ({text})")

for gid in ("traffic_jam", "jamming_traffic", "jakarta_traffic"):
    n = 5
    gpu = trafficenvs.make_vec(gid, num_envs=n, max_cycles=8, device="cuda")
    cpu = trafficenvs.make_vec(gid, num_envs=n, max_cycles=8)
    assert gpu.output == "numba" and gpu.device == "cuda:0"
    g, c = gpu.reset(seed=5), cpu.reset(seed=5)
    st = sampler.rng_states(n, 2)
    a = np.zeros(n, np.int64)
    for t in range(12):
        sampler.sample_legal(c.action_mask, st, a)
        g, c = gpu.step(a), cpu.step(a)
    same(g, c, "play")

    # an illegal action is refused with the rows named, and nothing changes
    before = [gpu.state_dict(i) for i in range(n)]  # the games (not the rules' scratch)
    view = g.numpy()
    sampler.sample_legal(view.action_mask, st, a)  # legal in every game now
    bad = a.copy()
    mask = view.action_mask
    for i in (1, 3):
        bad[i] = int(np.flatnonzero(~mask[i])[0]) if (~mask[i]).any() else 10**6
    raises(lambda: gpu.step(bad), ValueError, "games [1, 3]" if bad[1] < 10**6 else "actions")
    oor = a.copy(); oor[2] = -4
    raises(lambda: gpu.step(oor), ValueError, "got -4 in game 2")
    raises(lambda: gpu.step(a, final_seat=np.full(n, 9)), ValueError, "final_seat")
    raises(lambda: gpu.step(a[:3]), ValueError, "shape (5,)")
    raises(lambda: gpu.step(a.astype(np.float32)), TypeError, "int array")
    raises(lambda: gpu.step(a, active=np.ones(n, np.int64)), TypeError, "bool array")
    assert [gpu.state_dict(i) for i in range(n)] == before
    same(gpu.last, view, "refused")

    # an inactive row's illegal action is ignored, as on the CPU
    act = np.ones(n, bool); act[1] = False
    nxt = a.copy()
    nxt[1] = -1
    same(gpu.step(nxt, act), cpu.step(nxt, act), "inactive")

    # state dicts move games between devices exactly
    for i in range(n):
        d = gpu.state_dict(i)
        assert d == cpu.state_dict(i), (gid, i)
        gpu.load_state_dict(i, cpu.state_dict((i + 1) % n))
        cpu.load_state_dict(i, d)
        gpu.load_state_dict(i, gpu.state_dict(i))
    assert [cpu.state_dict(i) for i in range(n)] != [gpu.state_dict(i) for i in range(n)]
    for i in range(n):
        gpu.load_state_dict(i, cpu.state_dict(i))
    same(gpu.last, cpu.last, "state dicts")

    # observe from every seat
    for s in range(gpu.num_players):
        seats = (np.arange(n) + s) % gpu.num_players
        assert np.array_equal(to_numpy(gpu.observe(seats)), cpu.observe(seats)), gid
    raises(lambda: gpu.observe(np.full(n, 99)), ValueError, "seats")

    # to(): the whole env crosses devices and plays on exactly
    back = gpu.to("cpu")
    again = cpu.to("cuda")
    assert back.device == "cpu" and again.device == "cuda:0" and gpu.to("cuda:0") is gpu
    for t in range(10):
        sampler.sample_legal(cpu.last.action_mask, st, a)
        r = [e.step(a) for e in (gpu, cpu, back, again)]
        for x in r[1:]:
            same(r[0], x, f"to {t}")

    # the device sampler draws what the CPU sampler draws
    ds = sampler.rng_states(n, 7, device="cuda")
    hs = sampler.rng_states(n, 7)
    out = gpu.as_device_array(np.zeros(n, np.int64))
    for _ in range(5):
        sampler.sample_legal(gpu.last.action_mask, ds, out)
        want = sampler.sample_legal(to_numpy(gpu.last.action_mask), hs, np.zeros(n, np.int64))
        assert np.array_equal(to_numpy(out), want)
    # the env's own sampler, a host render, observe into a given array, import_state
    acts = to_numpy(gpu.sample_actions(sampler.rng_states(n, 3, device="cuda")))
    mask = to_numpy(gpu.last.action_mask)
    assert all(mask[i, acts[i]] for i in range(n))
    assert gpu.render(1) == cpu.render(1)
    target = gpu.as_device_array(np.zeros((n, gpu.game.obs_dim), gpu.game.obs_dtype))
    gpu.observe(np.zeros(n, np.int64), out=target)
    assert np.array_equal(to_numpy(target), cpu.observe(np.zeros(n, np.int64)))
    other = trafficenvs.make_vec(gid, num_envs=n, max_cycles=8, device="cuda")
    other.import_state(cpu.export_state())
    same(other.last, cpu.last, "import_state")
    recs = other.host_records()
    assert [cpu.game.to_dict(recs[i]) for i in range(n)] == [cpu.state_dict(i)
                                                             for i in range(n)]
    print(gid, "checks ok")

raises(lambda: trafficenvs.make_vec("traffic_jam", num_envs=2, device="tpu"), ValueError,
       "device must be")
raises(lambda: trafficenvs.make_vec("traffic_jam", num_envs=2, device="cuda:7"), ValueError,
       "GPUs")
raises(lambda: trafficenvs.make_vec("traffic_jam", num_envs=2, device="cuda", num_threads=2),
       ValueError, "num_threads")
print("all checks ok")
"""


def test_gpu_env_refuses_bad_input_and_moves_games_between_devices_exactly(tmp_path):
    proc = subprocess.run([sys.executable, "-c", CHECKS], env=sim_env(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "all checks ok" in proc.stdout


def test_make_vec_names_the_extra_when_numba_cuda_is_missing(monkeypatch):
    from trafficenvs.core import cuda_drivers

    monkeypatch.setattr(cuda_drivers, "available", lambda: False)
    monkeypatch.setattr(cuda_drivers, "cuda", None)
    import trafficenvs

    with pytest.raises(ImportError, match=r"trafficenvs\[gpu\]"):
        trafficenvs.make_vec("traffic_jam", num_envs=2, device="cuda")


def test_make_vec_on_a_machine_without_a_gpu_says_so():
    from trafficenvs.core import cuda_drivers

    if cuda_drivers.gpu_present():
        pytest.skip("this machine has a GPU (or runs the simulator)")
    import trafficenvs

    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        trafficenvs.make_vec("traffic_jam", num_envs=2, device="cuda")
    assert trafficenvs.make_vec("traffic_jam", num_envs=2, device="cpu").device == "cpu"
