"""The batched PPO trainer (``agents/trainer.py``) and its weights-only checkpoints.

The pieces are checked against independent computations (numpy for the masked
categorical, a plain forward-summing loop and SB3's own ``RolloutBuffer`` for GAE),
the rollout against the env it reads, the whole against random play, and the
checkpoint format against a crafted file whose pickle would create a marker.
"""

from __future__ import annotations

import inspect
import io
import json
import pathlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch as th  # noqa: E402

from trafficenvs.agents.arena import run_arena  # noqa: E402
from trafficenvs.agents.checkpoint import (  # noqa: E402
    CheckpointError,
    checkpoint_format,
    read_weights,
)
from trafficenvs.agents.policy import RandomPolicy  # noqa: E402
from trafficenvs.agents.ppo import PPOPolicy  # noqa: E402
from trafficenvs.agents.trainer import (  # noqa: E402
    ActorCritic,
    BatchedPPO,
    action_positions,
    compute_gae,
    legal_lists,
    listed_log_prob_entropy,
    masked_log_prob_entropy,
    masked_log_probs,
    sample_categorical,
)
from trafficenvs.agents.training import TrainConfig  # noqa: E402
from trafficenvs.agents.zoo import make_agent  # noqa: E402
from trafficenvs.registry import make_game  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "agents" / "checkpoints" / "traffic_jam_2p.zip"


@pytest.fixture(scope="module")
def game():
    return make_game("traffic_jam", num_players=2)


# -- the masked categorical -------------------------------------------------------------
def test_masked_log_prob_and_entropy_match_a_hand_computation():
    logits = np.array([[1.0, 2.0, 0.5, -1.0],
                       [0.0, 0.0, 3.0, 10.0],
                       [-2.0, 4.0, 1.0, 0.0]], np.float32)
    legal = np.array([[True, False, True, True],
                      [True, True, True, False],   # the largest logit is illegal
                      [False, False, True, False]])  # one legal action
    actions = np.array([2, 1, 2])
    want_logp, want_ent = [], []
    for row, ok, a in zip(logits.astype(np.float64), legal, actions):
        z = np.exp(row[ok]).sum()
        p = np.where(ok, np.exp(row) / z, 0.0)
        want_logp.append(np.log(p[a]))
        want_ent.append(-sum(p[k] * np.log(p[k]) for k in range(4) if ok[k]))
    t_logits = th.tensor(logits, requires_grad=True)
    logp, ent = masked_log_prob_entropy(t_logits, th.tensor(~legal), th.tensor(actions))
    np.testing.assert_allclose(logp.detach().numpy(), want_logp, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ent.detach().numpy(), want_ent, rtol=1e-5, atol=1e-6)
    assert ent[2].item() == 0.0  # one legal action: no uncertainty
    # gradients through the masked entries stay finite (no inf * 0)
    (logp.sum() + ent.sum()).backward()
    assert th.isfinite(t_logits.grad).all()
    assert (t_logits.grad[~th.tensor(legal)] == 0).all()


def test_masked_log_prob_and_entropy_match_sb3_contribs_masked_categorical():
    from sb3_contrib.common.maskable.distributions import MaskableCategorical

    g = th.Generator().manual_seed(1)
    logits = th.randn(64, 600, generator=g) * 3
    legal = th.rand(64, 600, generator=g) < 0.1
    legal[:, 7] = True
    actions = th.multinomial(legal.float(), 1, generator=g).view(-1)
    logp, ent = masked_log_prob_entropy(logits, ~legal, actions)
    ref = MaskableCategorical(logits=logits, masks=legal)
    th.testing.assert_close(logp, ref.log_prob(actions), rtol=1e-5, atol=1e-5)
    th.testing.assert_close(ent, ref.entropy(), rtol=1e-5, atol=1e-5)


def test_legal_lists_hold_each_rows_legal_actions_in_order_padded():
    #                 a0     a1     a2     a3     a4
    legal = np.array([[False, True, False, True, True],     # 1, 3, 4
                      [True, False, False, False, False],   # 0
                      [False, False, True, False, False]])  # 2
    index, valid = legal_lists(th.tensor(~legal))
    assert index.tolist() == [[1, 3, 4], [0, 0, 0], [2, 0, 0]]
    assert valid.tolist() == [[True, True, True], [True, False, False],
                              [True, False, False]]


def test_the_listed_categorical_equals_the_full_masked_one_in_values_and_gradients():
    g = th.Generator().manual_seed(3)
    legal = th.rand(96, 600, generator=g) < 0.02
    legal[th.arange(96), th.randint(0, 600, (96,), generator=g)] = True
    legal[5] = False
    legal[5, 599] = True  # one legal action, the last
    actions = th.multinomial(legal.float(), 1, generator=g).view(-1)
    base = th.randn(96, 600, generator=g) * 4
    full = base.clone().requires_grad_(True)
    listed = base.clone().requires_grad_(True)
    want_logp, want_ent = masked_log_prob_entropy(full, ~legal, actions)
    index, valid = legal_lists(~legal)
    logp, ent = listed_log_prob_entropy(listed, index, valid, actions)
    th.testing.assert_close(logp, want_logp, rtol=1e-5, atol=1e-5)
    th.testing.assert_close(ent, want_ent, rtol=1e-5, atol=1e-5)
    weights = th.randn(96, generator=g)
    (want_logp * weights + 0.1 * want_ent).sum().backward()
    (logp * weights + 0.1 * ent).sum().backward()
    th.testing.assert_close(listed.grad, full.grad, rtol=1e-4, atol=1e-6)
    assert (listed.grad[~legal] == 0).all()


def test_an_actions_position_is_where_it_stands_in_its_rows_legal_list():
    # row 0 legal: 2, 5, 9 (action 9 at position 2); row 1 legal: 0 (position 0);
    # row 2 legal: 1, 3 (action 1 at position 0); the lists are padded with action 0
    illegal = th.ones(3, 10, dtype=th.bool)
    illegal[0, [2, 5, 9]] = illegal[1, 0] = illegal[2, [1, 3]] = False
    index, valid = legal_lists(illegal)
    assert index.tolist() == [[2, 5, 9], [0, 0, 0], [1, 3, 0]]
    positions = action_positions(index, valid, th.tensor([9, 0, 1]))
    assert positions.tolist() == [2, 0, 0]
    logits = th.randn(3, 10, requires_grad=True)
    given, _ = listed_log_prob_entropy(logits, index, valid, th.tensor([9, 0, 1]), positions)
    full, _ = masked_log_prob_entropy(logits, illegal, th.tensor([9, 0, 1]))
    th.testing.assert_close(given, full)


def test_sampling_draws_the_masked_distribution_and_never_an_illegal_action():
    from scipy.stats import chisquare

    logits = th.tensor([[2.0, 0.0, 5.0, -1.0, 1.0, 9.0]])  # a5 (the largest) illegal
    illegal = th.tensor([[False, False, True, False, False, True]])
    rows = 200_000
    logp = masked_log_probs(logits.expand(rows, -1), illegal.expand(rows, -1))
    actions, chosen = sample_categorical(logp, illegal.expand(rows, -1),
                                         th.Generator().manual_seed(0))
    assert not illegal[0, actions].any()
    th.testing.assert_close(chosen, logp[0, actions])
    counts = np.bincount(actions.numpy(), minlength=6)
    p = th.softmax(logits.masked_fill(illegal, -np.inf), 1)[0].double().numpy()
    legal = ~illegal[0].numpy()
    p = p[legal] / p[legal].sum()  # float32 softmax: sums to 1 to its rounding only
    assert chisquare(counts[legal], rows * p).pvalue > 1e-3
    # the same generator seed, the same draws
    again, _ = sample_categorical(logp, illegal.expand(rows, -1),
                                  th.Generator().manual_seed(0))
    assert th.equal(actions, again)


def test_sampling_takes_the_only_legal_action_wherever_it_is():
    illegal = th.ones(3, 600, dtype=th.bool)
    illegal[0, 0] = illegal[1, 599] = illegal[2, 300] = False
    logp = masked_log_probs(th.randn(3, 600) * 10, illegal)
    for seed in range(20):
        actions, chosen = sample_categorical(logp, illegal, th.Generator().manual_seed(seed))
        assert actions.tolist() == [0, 599, 300]
        assert th.allclose(chosen, th.zeros(3), atol=1e-6)


# -- GAE --------------------------------------------------------------------------------
def _gae_by_episodes(rewards, values, dones, last_values, gamma, lam):
    """Each advantage as the forward sum ``sum_k (gamma lam)^k delta_{t+k}`` up to the
    end of its game or of the rollout (a plain loop, not SB3's backward recursion)."""
    steps, envs = rewards.shape
    adv = np.zeros((steps, envs))
    for i in range(envs):
        for t in range(steps):
            total, weight = 0.0, 1.0
            for k in range(t, steps):
                if dones[k, i]:
                    nxt = 0.0
                else:
                    nxt = last_values[i] if k == steps - 1 else values[k + 1, i]
                total += weight * (rewards[k, i] + gamma * nxt - values[k, i])
                if dones[k, i]:
                    break
                weight *= gamma * lam
            adv[t, i] = total
    return adv


def test_gae_matches_a_plain_loop_and_sb3s_rollout_buffer_with_terminal_and_cut_games():
    from gymnasium import spaces
    from stable_baselines3.common.buffers import RolloutBuffer

    rng = np.random.default_rng(0)
    steps, envs, gamma, lam = 7, 4, 0.9, 0.95
    rewards = rng.normal(size=(steps, envs)).astype(np.float32)
    values = rng.normal(size=(steps, envs)).astype(np.float32)
    last_values = rng.normal(size=envs).astype(np.float32)
    dones = np.zeros((steps, envs), np.float32)
    dones[2, 0] = dones[5, 0] = 1  # two games end in row 0
    dones[6, 1] = 1                # a game ends on the rollout's last step
    dones[3, 2] = 1                # a game cut by the move limit (below)
    # a cut game is bootstrapped as SB3 does: gamma * V(its final position) added to
    # that step's reward, then the step counts as done
    final_value = 0.7
    rewards[3, 2] += gamma * final_value

    adv, ret = compute_gae(th.tensor(rewards), th.tensor(values), th.tensor(dones),
                           th.tensor(last_values), gamma, lam)
    want = _gae_by_episodes(rewards, values, dones, last_values, gamma, lam)
    np.testing.assert_allclose(adv.numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret.numpy(), want + values, rtol=1e-5, atol=1e-5)

    buf = RolloutBuffer(steps, spaces.Box(0, 1, (1,)), spaces.Discrete(2), "cpu",
                        gae_lambda=lam, gamma=gamma, n_envs=envs)
    starts = np.vstack([np.ones((1, envs)), dones[:-1]])  # SB3's episode_starts
    for t in range(steps):
        buf.add(np.zeros((envs, 1)), np.zeros((envs, 1)), rewards[t], starts[t],
                th.tensor(values[t]), th.zeros(envs))
    buf.compute_returns_and_advantage(th.tensor(last_values), dones[-1].astype(bool))
    np.testing.assert_allclose(adv.numpy(), buf.advantages, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret.numpy(), buf.returns, rtol=1e-5, atol=1e-5)


# -- the network and the settings ----------------------------------------------------------
def test_defaults_are_train_configs_and_sb3_ppos():
    from stable_baselines3 import PPO

    mine = inspect.signature(BatchedPPO).parameters
    for name in ("num_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma",
                 "ent_coef", "net"):
        assert mine[name].default == TrainConfig.__dataclass_fields__[name].default, name
    sb3 = inspect.signature(PPO).parameters
    for name in ("gae_lambda", "clip_range", "vf_coef", "max_grad_norm"):
        assert mine[name].default == sb3[name].default, name


def test_the_network_is_sb3s_mlp_policy_with_its_names_init_and_outputs(game):
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from trafficenvs.agents.ppo import DEFAULT_POLICY_KWARGS

    net = ActorCritic(game.observation_box(), game.num_actions, (128, 128),
                      generator=th.Generator().manual_seed(0))
    sb3 = MaskableActorCriticPolicy(game.observation_box(), spaces.Discrete(game.num_actions),
                                    lambda _: 3e-4, **DEFAULT_POLICY_KWARGS)
    assert {k: v.shape for k, v in net.state_dict().items()} == {
        k: v.shape for k, v in sb3.state_dict().items()}
    assert sb3.activation_fn is th.nn.Tanh and sb3.ortho_init
    # SB3's gains: orthogonal rows scaled by sqrt(2) (hidden), 0.01 (actions), 1 (value)
    for w, gain in ((net.mlp_extractor.policy_net[0].weight, 2 ** 0.5),
                    (net.mlp_extractor.value_net[2].weight, 2 ** 0.5),
                    (net.action_net.weight, 0.01), (net.value_net.weight, 1.0)):
        s = th.linalg.svdvals(w.detach())
        th.testing.assert_close(s, th.full_like(s, gain), rtol=1e-4, atol=1e-6)
    assert not net.action_net.bias.any()
    sb3.load_state_dict(net.state_dict(), strict=True)
    obs = th.randint(0, 3, (5, game.obs_dim), dtype=th.uint8)
    logits, values = net(obs)
    with th.no_grad():
        feats = sb3.extract_features(obs, sb3.pi_features_extractor)
        latent_pi, latent_vf = sb3.mlp_extractor(feats)
        th.testing.assert_close(logits, sb3.action_net(latent_pi))
        th.testing.assert_close(values, sb3.value_net(latent_vf).view(-1))


# -- the rollout -------------------------------------------------------------------------
def test_the_heads_on_the_features_are_the_forward_pass(game):
    net = ActorCritic(game.observation_box(), game.num_actions, (32, 32),
                      generator=th.Generator().manual_seed(0))
    obs = th.randint(0, 2, (10, game.obs_dim), dtype=th.uint8)
    logits, values = net(obs)
    logits2, values2 = net.heads(net.features_extractor(obs))
    assert th.equal(logits, logits2) and th.equal(values, values2)
    # bf16 hidden layers: the same outputs to bfloat16's precision, float32 out
    logits3, values3 = net.heads(net.features_extractor(obs), "bf16")
    assert logits3.dtype == values3.dtype == th.float32
    th.testing.assert_close(logits3, logits, rtol=0.05, atol=0.05)


@pytest.mark.parametrize("bad", [dict(update_threads=-1), dict(update_threads=True),
                                 dict(precision="fp16"), dict(n_steps=0)])
def test_bad_trainer_settings_are_refused_before_anything_runs(game, bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        BatchedPPO(game, RandomPolicy(1), num_envs=4, **bad)


def test_the_update_with_the_listed_head_equals_the_dense_one(game, monkeypatch):
    # Traffic Jam's lists are 1% of its 600 actions, so the update takes the listed
    # head; with the share set to 0 it takes the dense product: same losses, same weights
    from trafficenvs.agents import trainer as trainer_module

    results = []
    for share in (trainer_module.LISTED_HEAD_SHARE, 0.0):
        monkeypatch.setattr(trainer_module, "LISTED_HEAD_SHARE", share)
        trainer = BatchedPPO(game, RandomPolicy(1), num_envs=32, n_steps=8, batch_size=64,
                             n_epochs=2, seed=4)
        trainer.collect_rollout()
        stats = trainer.update()
        results.append((stats, trainer.net.action_net.weight.detach().clone()))
    (listed, w_listed), (dense, w_dense) = results
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl"):
        assert listed[key] == pytest.approx(dense[key], rel=1e-4, abs=1e-6), key
    th.testing.assert_close(w_listed, w_dense, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("native", [True, False])
def test_bf16_on_a_cpu_without_native_bfloat16_warns_that_it_is_slower(game, monkeypatch,
                                                                       native):
    import warnings

    from trafficenvs.agents import trainer as trainer_module

    monkeypatch.setattr(trainer_module, "cpu_has_bf16", lambda: native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BatchedPPO(game, RandomPolicy(1), num_envs=4, precision="bf16")
    slow = [w for w in caught if "native bfloat16" in str(w.message)]
    assert len(slow) == (0 if native else 1)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_update_runs_on_update_threads_and_gives_the_rollouts_back(game, precision):
    """torch's threads are ``update_threads`` during the update only; after it (and
    after ``learn``) they are what they were. bf16 trains float32 weights."""
    trainer = BatchedPPO(game, RandomPolicy(1), num_envs=16, n_steps=8, batch_size=64,
                         n_epochs=1, update_threads=3, precision=precision)
    seen = []
    inner = trainer._update

    def recording():
        seen.append(th.get_num_threads())
        return inner()

    trainer._update = recording
    before = th.get_num_threads()
    th.set_num_threads(1)
    try:
        trainer.learn(2 * 8 * 16)
        assert seen == [3, 3] and th.get_num_threads() == 1
        trainer.collect_rollout()
        stats = trainer.update()
        assert seen[-1] == 3 and th.get_num_threads() == 1
    finally:
        th.set_num_threads(before)
    assert all(np.isfinite(v) for v in stats.values())
    assert all(p.dtype == th.float32 for p in trainer.net.parameters())
    assert trainer.config()["training"]["precision"] == precision


def _record_env(trainer):
    """Wrap the trainer's env: remember what each step showed and returned."""
    env, seen = trainer.env, []
    step_async, step_wait = env.step_async, env.step_wait

    def on_async(actions):
        seen.append({"obs": env.venv.last.observation.copy(),
                     "legal": env.venv.last.action_mask.copy(),
                     "actions": np.array(actions)})
        step_async(actions)

    def on_wait():
        out = step_wait()
        obs, rewards, dones, infos = out
        # views=True: the env returns its own buffers, nothing copied for the trainer
        assert np.shares_memory(obs, env.venv.last.observation)
        seen[-1].update(rewards=rewards.copy(), dones=dones.copy(),
                        infos=[dict(i) for i in infos])
        return out

    env.step_async, env.step_wait = on_async, on_wait
    return seen


def test_rollout_storage_is_allocated_once_and_observations_copied_once(game):
    trainer = BatchedPPO(game, RandomPolicy(1), num_envs=16, n_steps=8, batch_size=64,
                         n_epochs=1, seed=3)
    buffers = [trainer.obs, trainer.illegal, trainer.actions, trainer.log_probs,
               trainer.values, trainer.rewards, trainer.dones, trainer.advantages,
               trainer.returns]
    ptrs = [b.data_ptr() for b in buffers]
    # the trainer reads the env's own buffers through views made once
    assert np.shares_memory(trainer.env_observation.numpy(), trainer.env.venv.last.observation)
    seen = _record_env(trainer)
    for _ in range(2):
        seen.clear()
        trainer.collect_rollout()
        trainer.update()
        assert [b.data_ptr() for b in buffers] == ptrs
        assert np.shares_memory(trainer.env_observation.numpy(),
                                trainer.env.venv.last.observation)
        for t, s in enumerate(seen):  # each row is what the env showed at that step
            np.testing.assert_array_equal(trainer.obs[t].numpy(), s["obs"])
            np.testing.assert_array_equal(~trainer.illegal[t].numpy(), s["legal"])
            np.testing.assert_array_equal(trainer.actions[t].numpy(), s["actions"])
            assert s["legal"][np.arange(16), s["actions"]].all()
    assert trainer.num_timesteps == 2 * 8 * 16


def test_rollout_bootstraps_games_cut_by_the_move_limit_as_sb3_does(game):
    gamma = 0.9
    trainer = BatchedPPO(game, RandomPolicy(1), num_envs=16, n_steps=16, batch_size=64,
                         n_epochs=1, gamma=gamma, max_cycles=3, seed=4)
    seen = _record_env(trainer)
    trainer.collect_rollout()
    cut = ended = 0
    for t, s in enumerate(seen):
        np.testing.assert_array_equal(trainer.dones[t].numpy(), s["dones"])
        want = s["rewards"].astype(np.float64)
        for i in np.flatnonzero(s["dones"]):
            ended += 1
            if s["infos"][i]["TimeLimit.truncated"]:
                cut += 1
                final = th.from_numpy(s["infos"][i]["terminal_observation"][None])
                with th.no_grad():
                    want[i] += gamma * trainer.net.value(final).item()
        np.testing.assert_allclose(trainer.rewards[t].numpy(), want, rtol=1e-5, atol=1e-6)
    assert cut > 0 and ended > 0
    with th.no_grad():
        last = trainer.net.value(trainer.env_observation)
    adv, ret = compute_gae(trainer.rewards, trainer.values, trainer.dones, last, gamma, 0.95)
    th.testing.assert_close(trainer.advantages, adv)
    th.testing.assert_close(trainer.returns, ret)


def test_a_short_run_on_traffic_jam_learns_to_beat_random(game):
    trainer = BatchedPPO(game, RandomPolicy(1), seed=0)  # 256 games, 32 steps, 2048
    before = run_arena(game, [trainer.policy("learner"), RandomPolicy(0)], games=400,
                       seed=11).stats("learner").win_share
    trainer.learn(8 * 256 * 32)  # 65536 learner steps: about 10 s here
    after = run_arena(game, [trainer.policy("learner"), RandomPolicy(0)], games=400,
                      seed=11).stats("learner").win_share
    # untrained (argmax of near-uniform logits): 0.44-0.48; after 65k steps 0.75
    assert after >= 0.65 and after >= before + 0.15, (before, after)
    assert trainer.num_timesteps == 65536
    assert set(trainer.timings) == {"env", "forward", "gae", "update"}


# -- checkpoints ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(game, tmp_path_factory):
    trainer = BatchedPPO(game, RandomPolicy(1), num_envs=32, n_steps=16, batch_size=256,
                         n_epochs=2, seed=5)
    trainer.learn(2 * 32 * 16)
    path = trainer.save(tmp_path_factory.mktemp("ckpt") / "tj.zip")
    return trainer, path


def test_checkpoint_round_trips_to_the_same_actions(game, trained):
    trainer, path = trained
    assert checkpoint_format(path) == "weights" and checkpoint_format(SHIPPED) == "sb3"
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "weights.pt"]
        config = json.loads(z.read("config.json"))
    assert (config["game"], config["players"], config["net"]) == ("traffic_jam", 2, [128, 128])
    player = make_agent(f"ppo:{path}", game)
    assert isinstance(player, PPOPolicy) and player.name == "ppo:tj"
    live = trainer.policy("live")
    b = trainer.env.venv.last
    np.testing.assert_array_equal(player.act(b.observation, b.action_mask, b.current_player),
                                  live.act(b.observation, b.action_mask, b.current_player))
    # the same network without the game (spaces from the bounds in config.json)
    alone = PPOPolicy.load(path)
    np.testing.assert_array_equal(alone.act(b.observation, b.action_mask, b.current_player),
                                  live.act(b.observation, b.action_mask, b.current_player))
    # it plays through the Policy interface: legal moves in whole games
    res = run_arena(game, [player, RandomPolicy(0)], games=64, seed=2)
    assert res.games == 64 and res.stats(player.name).decisions > 0
    sampler = make_agent(f"ppo-sample:{path}", game, seed=1)
    acts = sampler.act(b.observation, b.action_mask, b.current_player)
    assert b.action_mask[np.arange(len(acts)), acts].all()
    # and a game it was not made for is refused
    with pytest.raises(CheckpointError, match="3 players"):
        make_agent(f"ppo:{path}", make_game("traffic_jam", num_players=3))


def _rewrite(src: Path, dst: Path, **members: bytes | None) -> Path:
    """A copy of ``src`` with members replaced (``None``: removed) or added."""
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for name in a.namelist():
            if name not in members:
                b.writestr(name, a.read(name))
        for name, body in members.items():
            if body is not None:
                b.writestr(name, body)
    return dst


class Payload:
    """Unpickling this creates ``marker`` (any code could run instead)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


def test_a_checkpoint_with_a_pickle_payload_is_refused_without_running_it(game, trained,
                                                                          tmp_path):
    _, path = trained
    _, state = read_weights(path)

    def weights_with_payload(marker: Path) -> bytes:
        buf = io.BytesIO()
        th.save({**state, "action_net.bias": Payload(marker)}, buf)
        return buf.getvalue()

    # the payload is live: torch's full unpickler runs it
    live = tmp_path / "live_marker"
    th.load(io.BytesIO(weights_with_payload(live)), weights_only=False)
    assert live.exists()

    marker = tmp_path / "marker"
    crafted = _rewrite(path, tmp_path / "crafted.zip", **{
        "weights.pt": weights_with_payload(marker)})
    for load in (lambda: PPOPolicy.load(crafted, game=game),
                 lambda: make_agent(f"ppo:{crafted}", game),
                 lambda: read_weights(crafted)):
        with pytest.raises(CheckpointError, match="not a plain dict of tensors"):
            load()
    assert not marker.exists()

    # a pickle member beside the two is refused before anything is read
    pickled = _rewrite(path, tmp_path / "extra.zip", **{
        "data.pkl": __import__("pickle").dumps(Payload(marker))})
    with pytest.raises(CheckpointError, match=r"refused: \['data.pkl'\]"):
        make_agent(f"ppo:{pickled}", game)
    assert not marker.exists()


def test_a_checkpoint_with_an_unknown_setting_or_weight_is_refused(game, trained, tmp_path):
    _, path = trained
    config, state = read_weights(path)
    bad_config = _rewrite(path, tmp_path / "cfg.zip", **{
        "config.json": json.dumps({**config, "policy_class": "x"}).encode()})
    with pytest.raises(CheckpointError, match="does not know: \\['policy_class'\\]"):
        PPOPolicy.load(bad_config, game=game)
    newer = _rewrite(path, tmp_path / "newer.zip", **{
        "config.json": json.dumps({**config, "version": 99}).encode()})
    with pytest.raises(CheckpointError, match="newer than"):
        PPOPolicy.load(newer, game=game)
    buf = io.BytesIO()
    th.save({**state, "extra.weight": th.zeros(3)}, buf)
    bad_weights = _rewrite(path, tmp_path / "w.zip", **{"weights.pt": buf.getvalue()})
    with pytest.raises(CheckpointError, match="unknown \\['extra.weight'\\]"):
        PPOPolicy.load(bad_weights, game=game)
    neither = _rewrite(path, tmp_path / "neither.zip", **{"config.json": None})
    with pytest.raises(CheckpointError, match="neither"):
        make_agent(f"ppo:{neither}", game)


# --------------------------------------------------------------------------- the command

def test_train_trainer_batched_runs_the_commands_schedule_and_its_checkpoint_plays(tmp_path,
                                                                                   capsys):
    """``trafficenvs train --trainer batched``: snapshots, evaluations (the curve),
    periodic and final weights-only checkpoints and the summary, as the SB3 route
    writes them; the checkpoint then plays in the arena as ``ppo:PATH``."""
    from trafficenvs.cli import main

    out = tmp_path / "tj.zip"
    assert main(["train", "traffic_jam", "--trainer", "batched", "--timesteps", "8192",
                 "--num-envs", "64", "--n-steps", "32", "--batch-size", "1024",
                 "--opponents", "random,self", "--snapshot-every", "2048",
                 "--eval-every", "4096", "--eval-games", "40", "--checkpoint-every", "4096",
                 "--no-progress", "--out", str(out)]) == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["learner_steps"] == 8192 and summary["config"]["trainer"] == "batched"
    assert [row["timesteps"] for row in summary["history"]] == [4096, 8192]
    assert out.with_suffix(".curve.csv").exists()
    assert (tmp_path / "tj_4096_steps.zip").exists()
    assert checkpoint_format(out) == "weights"
    assert set(summary["seconds_by_phase"]) == {"env", "forward", "gae", "update", "eval"}
    assert summary["eval_seconds"] == round(summary["seconds_by_phase"]["eval"], 1) > 0
    assert summary["training_steps_per_second"] > summary["learner_steps_per_second"]
    capsys.readouterr()
    assert main(["arena", "traffic_jam", "--games", "20", "--agents",
                 f"random,ppo:{out}"]) == 0
    assert "| ppo:tj " in capsys.readouterr().out


def test_train_trainer_batched_refuses_the_rllib_backend(capsys):
    from trafficenvs.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", "traffic_jam", "--trainer", "batched", "--timesteps", "10",
              "--backend", "rllib"])
    assert exit_.value.code == 2
    assert "rllib backend" in capsys.readouterr().err


def test_train_trainer_batched_writes_tensorboard_logs(tmp_path):
    """``--tensorboard DIR``: the update's losses, the speed and the evaluations'
    win shares, in a new numbered run directory each time (as SB3 numbers them)."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from trafficenvs.cli import main

    args = ["train", "traffic_jam", "--trainer", "batched", "--timesteps", "1024",
            "--num-envs", "16", "--n-steps", "32", "--batch-size", "256", "--eval-every",
            "512", "--eval-games", "10", "--checkpoint-every", "0", "--no-progress",
            "--tensorboard", str(tmp_path / "tb"), "--out", str(tmp_path / "m.zip")]
    assert main(args) == 0 and main(args) == 0
    runs = sorted(p.name for p in (tmp_path / "tb").iterdir())
    assert runs == ["BatchedPPO_1", "BatchedPPO_2"]
    events = EventAccumulator(str(tmp_path / "tb" / "BatchedPPO_1"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/policy_loss", "train/value_loss", "train/entropy", "train/approx_kl",
            "time/learner_steps_per_s", "eval/win_share_vs_random",
            "eval/win_share_vs_greedy"} <= tags
    assert [e.step for e in events.Scalars("train/value_loss")] == [512, 1024]


@pytest.mark.parametrize("extra", [["--trainer", "sb3"], ["--backend", "rllib"]])
def test_bf16_is_refused_where_the_trainer_is_not_the_batched_one(extra, capsys):
    from trafficenvs.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", "traffic_jam", "--precision", "bf16", "--timesteps", "10", *extra])
    assert exit_.value.code == 2
    assert "--precision" in capsys.readouterr().err


def test_thread_and_precision_flags_reach_the_train_config():
    import argparse

    from trafficenvs.agents.commands import add_train_args, train_config

    p = argparse.ArgumentParser()
    add_train_args(p)
    cfg = train_config(p.parse_args(["traffic_jam", "--update-threads", "3",
                                     "--precision", "bf16", "--threads", "2"]))
    assert (cfg.update_threads, cfg.precision, cfg.torch_threads) == (3, "bf16", 2)
    assert TrainConfig("traffic_jam").update_threads == 0  # every usable core


def test_train_trainer_batched_distils_a_teacher_then_continues_with_init(tmp_path, capsys):
    """``--teacher``: the distillation rounds run (the curve's rows with ``round``) and
    their weights are what PPO starts from; ``--init`` starts a run from that
    checkpoint (weights-only) or from an SB3 zip of the same network; a network that
    does not fit is refused by name."""
    from trafficenvs.agents.trainer import BatchedPPO
    from trafficenvs.cli import main

    out = tmp_path / "distilled.zip"
    assert main(["train", "traffic_jam", "--trainer", "batched", "--timesteps", "0",
                 "--teacher", "greedy", "--teacher-decisions", "3000", "--teacher-rounds",
                 "2", "--teacher-epochs", "3", "--num-envs", "32", "--eval-games", "200",
                 "--eval-against", "greedy", "--checkpoint-every", "0", "--no-progress",
                 "--out", str(out)]) == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert [row["round"] for row in summary["history"]] == [1, 2]
    # far above chance (about 1 in 7 legal moves) after a few thousand decisions
    assert summary["history"][-1]["agreement"] > 0.5
    distilled = make_agent(f"ppo:{out}", make_game("traffic_jam", num_players=2))
    # the distilled weights are the checkpoint's (PPO ran no step)
    game = make_game("traffic_jam", num_players=2)
    trainer = BatchedPPO(game, RandomPolicy(1), num_envs=8)
    trainer.load_weights(out)
    obs = th.randint(0, 2, (16, game.obs_dim), dtype=th.uint8)
    mask = np.ones((16, game.num_actions), bool)
    want = distilled.act(obs.numpy(), mask, np.zeros(16, np.int64))
    logits, _ = trainer.net(obs)
    np.testing.assert_array_equal(logits.argmax(1).numpy(), want)
    # --init from it, and from an SB3 checkpoint of the same network
    assert main(["train", "traffic_jam", "--trainer", "batched", "--timesteps", "512",
                 "--num-envs", "16", "--eval-every", "0", "--eval-games", "10",
                 "--checkpoint-every", "0", "--no-progress", "--init", str(out),
                 "--out", str(tmp_path / "more.zip")]) == 0
    sb3 = tmp_path / "sb3.zip"
    assert main(["train", "traffic_jam", "--trainer", "sb3", "--timesteps", "256",
                 "--num-envs", "8", "--batch-size", "128", "--n-epochs", "1", "--eval-every", "0",
                 "--eval-games", "10", "--checkpoint-every", "0", "--no-progress",
                 "--out", str(sb3)]) == 0
    trainer.load_weights(sb3)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["train", "traffic_jam", "--trainer", "batched", "--timesteps", "512",
              "--net", "64,64", "--init", str(sb3), "--no-progress",
              "--out", str(tmp_path / "no.zip")])
    assert exit_.value.code == 2
    assert "does not fit" in capsys.readouterr().err
