"""The greedy prior of ``--prior-beta`` (``agents/prior_policy.py``): the policy's action
distribution is ``softmax(logits + beta * onehot(greedy's move))`` over the legal
actions, ``beta`` learned, greedy's move taken from the observation and the mask."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th

from tests.jakarta_traffic.test_plan import default_game, plan_positions


def _model(beta, n=2, net=(32, 32)):
    from sb3_contrib import MaskablePPO

    from trafficenvs.agents import make_greedy
    from trafficenvs.agents.plan_policy import plan_policy_kwargs
    from trafficenvs.agents.prior_policy import PriorPlanPolicy
    from trafficenvs.agents.sb3_bridge import SelfPlayVecEnv

    g = default_game(n)
    env = SelfPlayVecEnv("jakarta_traffic", 4, [make_greedy(g)], seed=0, num_players=n)
    return MaskablePPO(PriorPlanPolicy, env, n_steps=16, batch_size=32, device="cpu", seed=0,
                       policy_kwargs={**plan_policy_kwargs(n, net), "prior_beta": beta})


def _batch(n=2, count=40, seed=3):
    pos = plan_positions(n, count, seed=seed)
    return np.stack([p[0] for p in pos]), np.stack([p[1] for p in pos])


def _greedy_moves(obs, mask, n=2):
    from trafficenvs.agents import make_greedy

    return make_greedy(default_game(n)).act(obs, mask, np.zeros(len(obs), np.int64))


def _plain_logits(pol, obs):
    """The network's own logits (no prior)."""
    with th.no_grad():
        f = pol.extract_features(th.as_tensor(obs), pol.pi_features_extractor)
        return pol.action_net(pol.mlp_extractor.forward_actor(f))


def test_the_distribution_is_the_networks_logits_plus_beta_on_greedys_move():
    """log p(a) = log_softmax over the legal actions of (logits + beta at greedy's move),
    checked by hand on drawn positions, for every legal action."""
    model = _model(2.5)
    pol = model.policy
    obs, mask = _batch()
    g = _greedy_moves(obs, mask)
    want = _plain_logits(pol, obs)
    want[np.arange(len(g)), th.as_tensor(g)] += 2.5
    want = want.masked_fill(~th.as_tensor(mask), -th.inf).log_softmax(1)
    with th.no_grad():
        for a in range(mask.shape[1]):
            rows = np.flatnonzero(mask[:, a])
            if len(rows) == 0:
                continue
            _, logp, _ = pol.evaluate_actions(th.as_tensor(obs[rows]).float(),
                                              th.full((len(rows),), a),
                                              th.as_tensor(mask[rows]))
            assert th.allclose(logp, want[rows, a], atol=1e-5)


def test_a_large_beta_plays_greedys_move_and_zero_plays_the_network():
    from trafficenvs.agents.ppo import PPOPolicy

    obs, mask = _batch(count=60, seed=5)
    cur = np.zeros(len(obs), np.int64)
    g = _greedy_moves(obs, mask)
    big = _model(1e4)
    assert (PPOPolicy(big.policy).act(obs, mask, cur) == g).all()
    acts, _ = big.predict(obs, action_masks=mask, deterministic=True)
    assert (acts == g).all()
    zero = _model(0.0)
    plain = _plain_logits(zero.policy, obs).masked_fill(~th.as_tensor(mask), -th.inf)
    assert (PPOPolicy(zero.policy).act(obs, mask, cur) == plain.argmax(1).numpy()).all()
    assert not (plain.argmax(1).numpy() == g).all()  # the two differ somewhere


def test_beta_is_learned():
    """The gradient of greedy's move's log-probability reaches ``beta`` (positive: a
    larger beta makes that move likelier), and the optimiser holds it."""
    pol = _model(1.0).policy
    obs, mask = _batch()
    g = th.as_tensor(_greedy_moves(obs, mask))
    _, logp, _ = pol.evaluate_actions(th.as_tensor(obs).float(), g, th.as_tensor(mask))
    logp.sum().backward()
    assert pol.prior.beta.grad is not None and pol.prior.beta.grad.item() > 0
    held = [p for group in pol.optimizer.param_groups for p in group["params"]]
    assert any(p is pol.prior.beta for p in held)


def test_a_prior_checkpoint_loads_back_with_its_beta_and_plays_the_same(tmp_path):
    from sb3_contrib import MaskablePPO

    from trafficenvs.agents.ppo import PPOPolicy

    model = _model(3.0)
    model.learn(64)
    with th.no_grad():
        model.policy.prior.beta.fill_(4.25)
    path = tmp_path / "prior.zip"
    model.save(path)
    back = MaskablePPO.load(path, device="cpu").policy
    assert back.prior.beta.item() == pytest.approx(4.25)
    obs, mask = _batch(count=50, seed=7)
    cur = np.zeros(len(obs), np.int64)
    a = PPOPolicy(model.policy).act(obs, mask, cur)
    assert mask[np.arange(len(a)), a].all()
    assert (PPOPolicy(back).act(obs, mask, cur) == a).all()


def test_a_run_with_a_prior_starts_from_a_plan_checkpoint_without_one(tmp_path):
    """``--init`` from a plan network: its weights, and beta at its start value."""
    from tests.jakarta_traffic.test_plan import plan_network as plan_model
    from trafficenvs.agents.plan_policy import load_plan_init

    plain = plan_model()
    plain.learn(32)
    path = tmp_path / "plan.zip"
    plain.save(path)
    model = _model(6.0)
    load_plan_init(model, str(path))
    got = model.policy.state_dict()
    for k, v in plain.policy.state_dict().items():
        assert th.equal(got[k], v), k
    assert model.policy.prior.beta.item() == 6.0


def test_a_prior_checkpoint_continues_only_with_a_prior_and_keeps_its_beta(tmp_path):
    from tests.jakarta_traffic.test_plan import plan_network as plan_model
    from trafficenvs.agents.plan_policy import load_plan_init

    model = _model(3.0)
    with th.no_grad():
        model.policy.prior.beta.fill_(4.5)
    path = tmp_path / "prior.zip"
    model.save(path)
    with pytest.raises(ValueError, match="trained with the greedy prior"):
        load_plan_init(plan_model(), str(path))
    again = _model(6.0)
    load_plan_init(again, str(path))
    assert again.policy.prior.beta.item() == 4.5


def test_the_prior_needs_the_masks():
    pol = _model(1.0).policy
    obs, _ = _batch(count=4)
    with pytest.raises(ValueError, match="needs the action masks"):
        pol.get_distribution(th.as_tensor(obs).float())


def test_train_with_a_prior_trains_and_plays_in_the_arena(tmp_path):
    import json

    from trafficenvs.cli import main

    out = tmp_path / "prior.zip"
    assert main([
        "train", "jakarta_traffic", "--players", "2", "--arch", "plan", "--prior-beta", "5",
        "--timesteps", "512", "--num-envs", "8", "--n-steps", "32", "--batch-size", "64",
        "--eval-every", "0", "--net", "32,32", "--opponents", "greedy",
        "--out", str(out), "--no-progress",
    ]) == 0
    assert json.loads(out.with_suffix(".json").read_text())["config"]["prior_beta"] == 5.0
    assert main(["arena", "jakarta_traffic", "--players", "2", "--games", "6",
                 "--agents", f"greedy,ppo:{out}"]) == 0
