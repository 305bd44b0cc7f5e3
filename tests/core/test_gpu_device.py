"""On a real GPU: the compiled GPU env plays the CPU env's games, and torch interop.

These need an NVIDIA GPU (and torch with CUDA for the interop); without one they skip.
The same checks run without a GPU under the simulator (``test_gpu_simulator.py``),
which runs the rules as Python; here the rules are compiled for the GPU, at a size
closer to use.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba_cuda", reason="the [gpu] extra (numba-cuda) is not installed")

from trafficenvs.core import cuda_drivers  # noqa: E402

if not cuda_drivers.gpu_present() or cuda_drivers.simulated():
    pytest.skip("no CUDA GPU on this machine", allow_module_level=True)

import trafficenvs  # noqa: E402
from trafficenvs.core import (
    sampler,
)
from trafficenvs.core.vector import to_numpy  # noqa: E402
from trafficenvs.testing import play_trace  # noqa: E402

GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic")


@pytest.mark.parametrize("game", GAMES)
def test_compiled_gpu_env_plays_the_same_games_as_the_cpu_env(game):
    kw = {"num_envs": 300, "steps": 250, "max_cycles": 40}
    cpu = play_trace(game, device="cpu", **kw)
    gpu = play_trace(game, device="cuda", **kw)
    assert (cpu["terminated"] | cpu["truncated"]).any()
    for key in cpu:
        diff = np.argwhere(gpu[key] != cpu[key])
        assert diff.size == 0, f"{game}: {key} differs first at {diff[0].tolist()}"


@pytest.fixture
def torch_env():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    env = trafficenvs.make_vec("traffic_jam", num_envs=64, device="cuda")
    return torch, env


def test_results_are_torch_tensors_sharing_the_envs_memory(torch_env):
    torch, env = torch_env
    out = env.reset(seed=0)
    assert env.output == "torch"
    for name in ("observation", "action_mask", "current_player", "rewards", "terminated",
                 "truncated", "final_observation"):
        t = getattr(out, name)
        assert isinstance(t, torch.Tensor) and t.is_cuda, name
        dev = getattr(env._dbuf, name)  # noqa: SLF001
        assert t.data_ptr() == dev.__cuda_array_interface__["data"][0], name
    assert out.action_mask.dtype == torch.bool and out.current_player.dtype == torch.int64


def test_actions_from_torch_cupy_and_dlpack_play_the_same(torch_env):
    torch, env = torch_env
    cpu = trafficenvs.make_vec("traffic_jam", num_envs=64)
    out, ref = env.reset(seed=3), cpu.reset(seed=3)
    states = sampler.rng_states(64, 1, device="cuda")
    acts = torch.zeros(64, dtype=torch.int64, device="cuda")

    class DLPackOnly:  # an array known only through DLPack
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    try:
        import cupy
    except ImportError:
        cupy = None
    for t in range(30):
        sampler.sample_legal(out.action_mask, states, acts)
        kind = t % 4
        given = (acts if kind == 0 else acts.to(torch.int32) if kind == 1
                 else DLPackOnly(acts) if kind == 2 or cupy is None else cupy.asarray(acts))
        host = acts.cpu().numpy()
        out, ref = env.step(given), cpu.step(host)
        for name in ("observation", "action_mask", "current_player", "rewards",
                     "terminated", "truncated"):
            assert np.array_equal(to_numpy(getattr(out, name)), getattr(ref, name)), (t, name)


def test_illegal_torch_actions_are_refused_and_nothing_changes(torch_env):
    torch, env = torch_env
    out = env.reset(seed=1)
    mask = out.action_mask.clone()
    before = [env.state_dict(i) for i in range(env.num_envs)]
    bad = torch.argmin(mask.to(torch.int8), dim=1)  # a move each game's mask refuses
    with pytest.raises(ValueError, match="illegal actions in games"):
        env.step(bad)
    assert [env.state_dict(i) for i in range(env.num_envs)] == before
    assert torch.equal(env.last.action_mask, mask)
    with pytest.raises(ValueError, match="is on cpu|shape|int array"):
        env.step(torch.zeros(3, dtype=torch.int64, device="cuda"))
