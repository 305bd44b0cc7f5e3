"""The batched trainer with Jakarta Traffic's plan network and its greedy prior
(``--trainer batched --arch plan [--prior-beta B]``): the network is the SB3 plan
policy's (names, outputs), the prior adds its learned weight at greedy's move, greedy's
moves are computed once per position, and the checkpoints are weights-only files that
play as ``ppo:PATH`` and continue the shipped model."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch as th  # noqa: E402

from trafficenvs.agents.checkpoint import (  # noqa: E402
    CheckpointError,
    read_weights,
    sb3_policy,
    weights_config,
    write_weights,
)
from trafficenvs.agents.greedy import make_greedy  # noqa: E402
from trafficenvs.agents.plan_network import PlanActorCritic  # noqa: E402
from trafficenvs.agents.ppo import policy_outputs  # noqa: E402
from trafficenvs.agents.trainer import BatchedPPO  # noqa: E402
from trafficenvs.agents.zoo import make_agent  # noqa: E402
from trafficenvs.registry import make_game  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[2] / "agents" / "checkpoints" / \
    "jakarta_traffic_2p.zip"


@pytest.fixture(scope="module")
def game():
    return make_game("jakarta_traffic", num_players=2)


@pytest.fixture(scope="module")
def trained(game):
    """A few rollouts of the plan network with the prior against greedy."""
    ppo = BatchedPPO(game, make_greedy(game, seed=1), num_envs=16, n_steps=8,
                     batch_size=64, n_epochs=2, net=(32, 32), arch="plan", prior_beta=3.0,
                     seed=0)
    ppo.learn(256)
    return ppo


@pytest.mark.parametrize("beta", [None, 2.5])
def test_the_plan_network_is_the_sb3_plan_policy_in_names_and_outputs(game, trained, beta):
    """Its state dict is the SB3 policy's (the same keys), and on real positions its
    logits and values are the SB3 policy's with the same weights (the prior's bonus
    included)."""
    net = PlanActorCritic(game, (32, 32), beta, generator=th.Generator().manual_seed(3))
    policy = sb3_policy(weights_config(game, (32, 32), arch="plan", prior_beta=beta),
                        net.state_dict(), game)
    assert set(net.state_dict()) == set(policy.state_dict())
    assert ("prior.beta" in net.state_dict()) == (beta is not None)
    obs, legal = trained.obs[0], ~trained.illegal[0]
    with th.no_grad():
        logits, values = net(obs, net.prior_moves(obs, legal))
        want_logits, want_values = policy_outputs(policy, obs.numpy(), legal.numpy())
    th.testing.assert_close(logits, want_logits)
    th.testing.assert_close(values, want_values)


def test_bf16_runs_the_hidden_layers_only_and_keeps_the_plan_heads_gathers(game, trained):
    """``precision="bf16"``: the trunks under autocast, the plan head (which gathers by
    cell numbers carried in the features) in float32: the outputs stay float32 and
    within bfloat16's rounding of the float32 ones."""
    net = PlanActorCritic(game, (32, 32), 2.0, generator=th.Generator().manual_seed(4))
    obs, legal = trained.obs[3], ~trained.illegal[3]
    moves = net.prior_moves(obs, legal)
    features = net.features_extractor(obs)
    with th.no_grad():
        want, want_v = net.heads(features, "fp32", moves)
        got, got_v = net.heads(features, "bf16", moves)
    assert got.dtype == got_v.dtype == th.float32
    th.testing.assert_close(got, want, atol=0.02, rtol=0.02)
    th.testing.assert_close(got_v, want_v, atol=0.05, rtol=0.05)


def test_its_initial_weights_come_from_the_generator_not_the_global_rng(game):
    before = th.random.get_rng_state()
    a = PlanActorCritic(game, (16,), generator=th.Generator().manual_seed(7)).state_dict()
    assert th.equal(th.random.get_rng_state(), before)
    b = PlanActorCritic(game, (16,), generator=th.Generator().manual_seed(7)).state_dict()
    c = PlanActorCritic(game, (16,), generator=th.Generator().manual_seed(8)).state_dict()
    assert all(th.equal(a[k], b[k]) for k in a)
    assert not th.equal(a["mlp_extractor.policy_net.0.weight"],
                        c["mlp_extractor.policy_net.0.weight"])


def test_the_prior_adds_its_learned_beta_at_greedys_move_only(game, trained):
    """logits with the prior = logits without it + beta at greedy's move of the row,
    and the loss reaches beta (it is learned)."""
    net = PlanActorCritic(game, (32, 32), 4.0, generator=th.Generator().manual_seed(1))
    obs, legal = trained.obs[1], ~trained.illegal[1]
    moves = net.prior_moves(obs, legal)
    greedy = make_greedy(game, seed=0).act(obs.numpy(), legal.numpy(),
                                           np.zeros(len(obs), np.int64))
    np.testing.assert_array_equal(moves.numpy(), greedy)
    assert legal[th.arange(len(obs)), moves].all()
    features = net.features_extractor(obs)
    logits, _ = net.heads(features, prior_moves=moves)
    with th.no_grad():
        bare = net.action_net(net.mlp_extractor.forward_actor(features))
    bonus = (logits - bare).detach()
    want = th.zeros_like(bonus)
    want[th.arange(len(obs)), moves] = 4.0
    th.testing.assert_close(bonus, want)
    logits.log_softmax(1)[th.arange(len(obs)), moves].sum().backward()
    assert net.prior.beta.grad is not None and float(net.prior.beta.grad) > 0
    with pytest.raises(ValueError, match="prior_moves"):
        net.heads(features)


def test_greedys_moves_are_kept_with_the_rollout_not_recomputed_by_the_update(
        game, trained, monkeypatch):
    """Greedy's move of every position is stored while collecting (one numba pass per
    step) and the update's epochs read it from there."""
    for t in range(trained.n_steps):
        want = make_greedy(game, seed=0).act(trained.obs[t].numpy(),
                                             (~trained.illegal[t]).numpy(),
                                             np.zeros(trained.num_envs, np.int64))
        np.testing.assert_array_equal(trained.prior[t].numpy(), want)
    calls = []
    monkeypatch.setattr(trained.net.prior, "moves",
                        lambda *a: calls.append(1) or (_ for _ in ()).throw(AssertionError))
    trained.update()
    assert calls == []


def test_a_plan_checkpoint_is_weights_only_and_plays_as_the_trainers_policy(
        game, trained, tmp_path):
    path = trained.save(tmp_path / "plan.zip")
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "weights.pt"]
    config, state = read_weights(path, game)
    assert (config["version"], config["arch"], config["prior_beta"]) == (2, "plan", 3.0)
    assert float(state["prior.beta"]) == pytest.approx(float(trained.net.prior.beta.detach()))
    player = make_agent(f"ppo:{path}", game)
    obs, legal = trained.obs[2].numpy(), (~trained.illegal[2]).numpy()
    seats = np.zeros(len(obs), np.int64)
    np.testing.assert_array_equal(player.act(obs, legal, seats),
                                  trained.policy().act(obs, legal, seats))
    with th.no_grad():
        logits, _ = trained.net(trained.obs[2], trained.prior[2])
    np.testing.assert_array_equal(
        player.act(obs, legal, seats),
        logits.masked_fill(trained.illegal[2], -1e8).argmax(1).numpy())


def _rewrite(path: Path, out: Path, **changes) -> Path:
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
        blob = z.read("weights.pt")
    config.update(changes)
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("config.json", json.dumps(config))
        z.writestr("weights.pt", blob)
    return out


@pytest.mark.parametrize("changes, message", [
    (dict(arch="conv"), "arch must be one of"),
    (dict(arch="mlp"), "only with arch 'plan'"),
    (dict(arch="mlp", prior_beta=None), "do not fit"),
    (dict(prior_beta="6"), "prior_beta must be a finite number"),
    (dict(prior_beta=None), "do not fit"),
    (dict(version=1), "settings of version 2"),
    (dict(game="Traffic Jam"), "no plan network"),
])
def test_a_plan_checkpoint_with_a_wrong_setting_is_refused(trained, tmp_path, changes,
                                                           message):
    path = trained.save(tmp_path / "plan.zip")
    bad = _rewrite(path, tmp_path / "bad.zip", **changes)
    with pytest.raises(CheckpointError, match=message):
        read_weights(bad)


def test_a_flat_network_is_still_written_as_version_1(tmp_path):
    tj = make_game("traffic_jam", num_players=2)
    ppo = BatchedPPO(tj, make_greedy(tj, seed=1), num_envs=4, net=(8,))
    config, _ = read_weights(ppo.save(tmp_path / "flat.zip"))
    assert config["version"] == 1 and "arch" not in config
    with pytest.raises(ValueError, match="needs arch='plan'"):
        BatchedPPO(tj, make_greedy(tj, seed=1), num_envs=4, prior_beta=1.0)
    with pytest.raises(ValueError, match="arch must be"):
        BatchedPPO(tj, make_greedy(tj, seed=1), num_envs=4, arch="conv")
    with pytest.raises(CheckpointError, match="prior_beta"):
        write_weights(tmp_path / "x.zip", dict(config, version=2, prior_beta=1.0),
                      {})


def test_the_trainer_continues_the_shipped_plan_model_playing_its_moves(game):
    """``--init`` of the shipped Jakarta Traffic model (an SB3 zip of the plan network
    with the prior, beta 6): the trainer's network then plays the shipped model's
    moves, so the recipe's PPO stages run on the batched trainer."""
    ppo = BatchedPPO(game, make_greedy(game, seed=1), num_envs=8, n_steps=4, net=(256, 256),
                     arch="plan", prior_beta=6.0)
    ppo.load_weights(SHIPPED)
    shipped = make_agent(f"ppo:{SHIPPED}", game)
    ppo.collect_rollout()
    obs, legal = ppo.obs.flatten(0, 1), ~ppo.illegal.flatten(0, 1)
    seats = np.zeros(len(obs), np.int64)
    np.testing.assert_array_equal(ppo.policy().act(obs.numpy(), legal.numpy(), seats),
                                  shipped.act(obs.numpy(), legal.numpy(), seats))
    with pytest.raises(ValueError, match="greedy prior"):
        BatchedPPO(game, make_greedy(game, seed=1), num_envs=4, net=(256, 256),
                   arch="plan").load_weights(SHIPPED)


def test_train_trainer_batched_arch_plan_prior_beta_runs_and_continues(tmp_path, capsys):
    """The command with ``--arch plan --prior-beta``: a weights-only checkpoint of the
    plan network with the prior, which plays in the arena and starts a next run."""
    from trafficenvs.cli import main

    out = tmp_path / "jk.zip"
    common = ["--trainer", "batched", "--arch", "plan", "--prior-beta", "3", "--net",
              "32,32", "--num-envs", "16", "--n-steps", "16", "--batch-size", "128",
              "--n-epochs", "2", "--opponents", "greedy", "--eval-every", "0",
              "--eval-games", "10", "--checkpoint-every", "0", "--no-progress"]
    assert main(["train", "jakarta_traffic", "--timesteps", "256", *common,
                 "--out", str(out)]) == 0
    config, _ = read_weights(out)
    assert (config["arch"], config["prior_beta"], config["net"]) == ("plan", 3.0, [32, 32])
    assert main(["train", "jakarta_traffic", "--timesteps", "256", *common, "--init",
                 str(out), "--out", str(tmp_path / "more.zip")]) == 0
    capsys.readouterr()
    assert main(["arena", "jakarta_traffic", "--games", "4", "--agents",
                 f"greedy,ppo:{out}"]) == 0
    assert "| ppo:jk " in capsys.readouterr().out
