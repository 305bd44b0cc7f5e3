"""The batched trainer's learner off the CPU (``--device cuda``): the torch sampler that
replaces the numba kernel there, the device path as a whole (run here on the CPU with
the CPU's numba paths switched off, since no GPU is needed to check its arithmetic), and
the refusals where the device cannot be had."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch as th  # noqa: E402

from trafficenvs.agents.categorical_kernels import (  # noqa: E402
    sample_masked_rows,
    sample_masked_tensor,
)
from trafficenvs.agents.policy import RandomPolicy  # noqa: E402
from trafficenvs.agents.trainer import BatchedPPO, learner_device  # noqa: E402
from trafficenvs.registry import make_game  # noqa: E402


def test_the_torch_sampler_draws_the_kernels_actions_from_the_same_uniforms():
    """Same logits, masks and uniforms: the same legal actions and log-probabilities as
    the numba kernel (both walk the running sum of the legal probabilities in float64),
    the edges included: a uniform of 0 takes the first legal action, one just under 1
    the last, a row with one legal action takes it."""
    g = th.Generator().manual_seed(0)
    rows, width = 4000, 40
    logits = th.randn(rows, width, generator=g) * 3
    legal = th.rand(rows, width, generator=g) < 0.2
    legal[:, 9] = True
    legal[0] = False
    legal[0, 39] = True  # one legal action, the last one
    uniforms = th.rand(rows, generator=g, dtype=th.float64)
    uniforms[1], uniforms[2] = 0.0, np.nextafter(1.0, 0.0)
    want = th.empty(rows, dtype=th.int64)
    want_logp = th.empty(rows)
    sample_masked_rows(logits.numpy(), legal.numpy(), uniforms.numpy(), want.numpy(),
                       want_logp.numpy())
    got, got_logp = sample_masked_tensor(logits, legal, uniforms)
    assert legal[th.arange(rows), got].all()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    th.testing.assert_close(got_logp, want_logp)
    assert got[0] == 39
    assert got[1] == int(legal[1].nonzero()[0])
    assert got[2] == int(legal[2].nonzero()[-1])
    # and the probabilities are the masked softmax's: log p of the drawn action
    full = th.log_softmax(logits.masked_fill(~legal, -1e8), dim=1)
    th.testing.assert_close(got_logp, full[th.arange(rows), got])


def test_the_device_path_trains_as_the_cpu_paths_do():
    """Off the CPU the rollout samples with torch and the update evaluates the dense
    head; forced on here (on CPU tensors), two rollouts and updates of Traffic Jam
    draw the same actions and end at the same weights, to rounding, as the CPU's numba
    sampler and listed head."""
    game = make_game("traffic_jam", num_players=2)
    runs = []
    for cpu_kernels in (True, False):
        trainer = BatchedPPO(game, RandomPolicy(1), num_envs=16, n_steps=8, batch_size=64,
                             n_epochs=2, seed=3)
        trainer.cpu_kernels = cpu_kernels
        trainer.learn(256)
        runs.append(trainer)
    fast, generic = runs
    assert th.equal(fast.obs, generic.obs) and th.equal(fast.actions, generic.actions)
    th.testing.assert_close(fast.log_probs, generic.log_probs)
    for k, v in fast.net.state_dict().items():
        th.testing.assert_close(v, generic.net.state_dict()[k], atol=1e-5, rtol=1e-4)


@pytest.mark.skipif(th.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_is_refused_by_name(capsys):
    from trafficenvs.cli import main

    with pytest.raises(ValueError, match="sees no CUDA GPU"):
        learner_device("cuda")
    with pytest.raises(SystemExit) as exit_:
        main(["train", "traffic_jam", "--device", "cuda", "--timesteps", "10",
              "--no-progress"])
    assert exit_.value.code == 2 and "sees no CUDA GPU" in capsys.readouterr().err


@pytest.mark.parametrize("device", ["tpu", "nonsense", 3])
def test_a_device_the_trainer_cannot_use_is_refused(device):
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        learner_device(device)


@pytest.mark.parametrize("extra, message", [
    (["--trainer", "sb3"], "the SB3 route trains on the CPU"),
    (["--backend", "rllib"], "--device is the batched trainer's"),
    (["--algo", "exit"], "--device"),
])
def test_device_is_refused_where_the_trainer_is_not_the_batched_one(extra, message, capsys):
    from trafficenvs.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", "traffic_jam", "--device", "cuda", "--timesteps", "10", *extra])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(not th.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_cuda_learner_trains_and_its_checkpoint_plays_on_the_cpu(tmp_path):
    from trafficenvs.agents.zoo import make_agent

    game = make_game("traffic_jam", num_players=2)
    trainer = BatchedPPO(game, RandomPolicy(1), num_envs=64, n_steps=8, batch_size=256,
                         seed=0, device="cuda")
    trainer.learn(1024)
    assert trainer.obs.device.type == "cuda" and trainer.num_timesteps == 1024
    player = make_agent(f"ppo:{trainer.save(tmp_path / 'gpu.zip')}", game)
    obs = trainer.obs[0].cpu().numpy()
    legal = (~trainer.illegal[0]).cpu().numpy()
    assert legal[np.arange(len(obs)), player.act(obs, legal, np.zeros(len(obs), np.int64))].all()
