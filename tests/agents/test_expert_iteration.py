"""Expert iteration (``agents/expert_iteration.py``, ``train --algo exit``): the
decisions it keeps and their targets, that training moves the network to the
search's improved policy and that the search then uses the new network, its
determinism, its checkpoints (``exit:PATH``, weights only) and the command on a tiny
budget."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch as th  # noqa: E402

from trafficenvs.agents.expert_iteration import (  # noqa: E402
    ExpertIteration,
    ReplayBuffer,
    greedy_search_spec,
    search_spec,
)
from trafficenvs.agents.search import strongest_preset  # noqa: E402
from trafficenvs.agents.zoo import make_agent  # noqa: E402
from trafficenvs.registry import make_game  # noqa: E402

from .exit_tiny import TINY, TINY_TRAIN  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return make_game("traffic_jam", num_players=2)


@pytest.fixture(scope="module")
def played(game):
    """A trainer after one self-play iteration of whole games (24 moves each)."""
    x = ExpertIteration(game, seed=3, **TINY)
    x.self_play()
    return x


def test_the_replay_buffer_is_a_ring_that_keeps_the_newest_decisions():
    b = ReplayBuffer(5, obs_dim=2, num_actions=3, obs_dtype=np.uint8)
    for start in (0, 3):  # 3 decisions, then 3 more: the first one is overwritten
        k = np.arange(start, start + 3)
        b.add(np.stack([k, k], 1).astype(np.uint8), np.ones((3, 3), bool),
              np.full((3, 3), 1 / 3, np.float32), k.astype(np.float32))
    assert (b.size, b.pos, b.added) == (5, 1, 6)
    assert sorted(b.value.tolist()) == [1, 2, 3, 4, 5]
    b.add(np.zeros((7, 2), np.uint8), np.ones((7, 3), bool), np.zeros((7, 3), np.float32),
          np.arange(10, 17, dtype=np.float32))  # more than it holds: the newest 5
    assert sorted(b.value.tolist()) == [12, 13, 14, 15, 16] and b.size == 5
    with pytest.raises(ValueError, match="room"):
        ReplayBuffer(0, 2, 3, np.uint8)


def test_every_decision_of_a_finished_game_is_kept_with_the_movers_result(played, game):
    """A 2-player Traffic Jam game is 24 moves (12 per seat) and pays only at its end
    (+1 the winner, -1 the loser, 0 each in a tie): every kept decision's value is its
    mover's result, the two seats' are opposite, and one iteration of 24 moves ends
    every game exactly once."""
    b = played.buffer
    assert played.games == TINY["num_envs"] and b.size == 24 * TINY["num_envs"]
    assert set(np.unique(b.value).tolist()) <= {-1.0, 0.0, 1.0}
    # each game is 24 consecutive rows; its movers alternate... whoever moves, the
    # values of a game hold one result per seat
    for g in range(TINY["num_envs"]):
        v = b.value[24 * g:24 * (g + 1)]
        assert v.sum() == 0  # 12 decisions of +r and 12 of -r
        assert len(np.unique(v)) <= 2


def test_the_policy_targets_are_distributions_over_the_legal_moves(played):
    b = played.buffer
    p = b.policy[:b.size]
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert (p[~b.legal[:b.size]] == 0).all() and (p >= 0).all()
    # the improved policy is not a one-hot label: some decisions spread it
    assert (p.max(axis=1) < 0.99).any()


def test_training_moves_the_network_to_the_improved_policy_and_the_search_uses_it(game):
    """Many steps on one buffer: the cross-entropy to the targets falls. The search's
    evaluator is the trainer's network itself, so the next self-play searches with
    the trained weights (its priors change with them)."""
    x = ExpertIteration(game, seed=4, **TINY)
    x.self_play()
    obs, mask = x.buffer.obs[:8], x.buffer.legal[:8]
    before = x.searcher.evaluator(obs, mask)[0].copy()
    first = x.train(64)["policy_loss"]
    for _ in range(6):
        last = x.train(64 * 8)["policy_loss"]
    assert last < first - 0.05
    after = x.searcher.evaluator(obs, mask)[0]
    assert not np.allclose(before, after)
    with th.no_grad():
        assert np.allclose(after, x.net(th.from_numpy(obs))[0].numpy())


def test_the_same_seed_plays_the_same_games_and_keeps_the_same_targets(game, played):
    again = ExpertIteration(game, seed=3, **TINY)
    again.self_play()
    n = played.buffer.size
    assert np.array_equal(again.buffer.obs[:n], played.buffer.obs[:n])
    assert np.array_equal(again.buffer.policy[:n], played.buffer.policy[:n])
    assert np.array_equal(again.buffer.value[:n], played.buffer.value[:n])


def test_the_search_is_a_gumbel_setting_without_its_own_network():
    assert search_spec("gumbel:n=8") == "gumbel:n=8"
    for bad, msg in (("flatmc:n=8", "searches with gumbel"),
                     ("gumbel:n=8,net=x.zip", "leave net= out")):
        with pytest.raises(ValueError, match=msg):
            search_spec(bad)
    # evaluation plays without self-play's root noise unless told otherwise
    assert greedy_search_spec("gumbel:n=8") == "gumbel:n=8,gscale=0"
    assert greedy_search_spec("gumbel:n=8,gscale=1") == "gumbel:n=8,gscale=1"


def test_the_network_plays_as_exit_path_from_a_weights_only_checkpoint(played, game,
                                                                       tmp_path):
    """The checkpoint is a zip of ``config.json`` and ``weights.pt`` (no pickle of
    objects): the arena's ``exit:PATH`` plays the same moves as the trainer's network."""
    path = played.save(tmp_path / "tj_exit.zip")
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "weights.pt"]
        config = json.loads(z.read("config.json"))
    assert config["training"]["algorithm"] == "ExpertIteration"
    agent = make_agent(f"exit:{path}", game)
    assert agent.name == "exit:tj_exit"
    b = played.buffer
    obs, mask = b.obs[:50], b.legal[:50]
    moves = agent.act(obs, mask, np.zeros(50, np.int64))
    logits = played.evaluate(obs, mask)[0]
    assert np.array_equal(moves, np.where(mask, logits, -np.inf).argmax(axis=1))


def test_the_strongest_preset_is_the_one_that_beat_greedy_most(game):
    presets = game.spec.search_presets
    best = max(presets.values(), key=lambda p: p.vs_greedy)
    assert strongest_preset(game) == best.spec


def test_train_algo_exit_runs_iterations_evaluates_both_players_and_saves(tmp_path, capsys):
    """``trafficenvs train --algo exit`` on a tiny budget: the iterations' curve (losses
    every iteration, both players' win shares at each evaluation), the checkpoint
    (``exit:PATH`` in the arena), the numbered checkpoints every ``--checkpoint-every``
    decisions and the summary."""
    from trafficenvs.agents.checkpoint import checkpoint_format
    from trafficenvs.cli import main

    out = tmp_path / "tj_exit.zip"
    assert main([*TINY_TRAIN, "--timesteps", "1500", "--eval-every", "700",
                 "--eval-games", "10", "--eval-against", "random",
                 "--checkpoint-every", "700", "--out", str(out)]) == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["iterations"] == 4 and summary["decisions"] == 4 * 16 * 24
    # 384 decisions an iteration: the first at or past 700 is 768, then 1536
    kept = sorted(p.name for p in tmp_path.glob("tj_exit_*_steps.zip"))
    assert kept == ["tj_exit_1536_steps.zip", "tj_exit_768_steps.zip"]
    assert all(checkpoint_format(tmp_path / k) == "weights" for k in kept)
    assert summary["games"] == 4 * 16 and summary["mean_game_moves"] == 24
    rows = summary["history"]
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4]
    assert all("policy_loss" in r and "value_loss" in r for r in rows)
    evaluated = [r["iteration"] for r in rows if "net_vs_random" in r]
    assert evaluated == [1, 2, 3, 4] or evaluated == [2, 4]
    assert set(summary["final_win_share"]) == {"net_vs_random", "search_vs_random"}
    assert out.with_suffix(".curve.csv").read_text().startswith("iteration,")
    capsys.readouterr()
    assert main(["arena", "traffic_jam", "--games", "10", "--agents",
                 f"random,exit:{out}"]) == 0
    assert "| exit:tj_exit " in capsys.readouterr().out


def test_a_run_stopped_in_its_final_evaluation_keeps_its_summary(tmp_path, monkeypatch):
    """The summary is written before the final evaluation (which plays ``--eval-games``
    for every pair and can take minutes), then again with its shares: a run stopped
    there keeps its checkpoint, curve and summary."""
    from trafficenvs.agents import exit_training
    from trafficenvs.cli import main

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(exit_training, "evaluate_both", stopped)
    out = tmp_path / "tj_exit.zip"
    with pytest.raises(KeyboardInterrupt):
        main([*TINY_TRAIN, "--timesteps", "768", "--eval-every", "0", "--out", str(out)])
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["iterations"] == 2 and summary["decisions"] == 2 * 16 * 24
    assert [r["iteration"] for r in summary["history"]] == [1, 2]
    assert "final_win_share" not in summary and summary["eval_seconds"] == 0
    assert out.exists() and out.with_suffix(".curve.csv").exists()


@pytest.mark.parametrize("extra, flag", [(["--opponents", "greedy"], "--opponents"),
                                         (["--shaping"], "--shaping"),
                                         (["--snapshot-every", "5000"], "--snapshot-every"),
                                         (["--search", "mcts"], "searches with gumbel"),
                                         (["--backend", "rllib"], "rllib backend")])
def test_train_algo_exit_refuses_ppos_options(extra, flag, capsys):
    from trafficenvs.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", "traffic_jam", "--algo", "exit", "--timesteps", "10", *extra])
    assert exit_.value.code == 2
    assert flag in capsys.readouterr().err


def test_expert_iteration_refuses_ppos_discount_from_python():
    """``TrainConfig`` fields without a flag are refused too (PPO's discount: expert
    iteration learns from the games' results), not ignored."""
    from trafficenvs.agents.exit_training import refuse_ppo_options
    from trafficenvs.agents.training import TrainConfig

    with pytest.raises(ValueError, match="gamma"):
        refuse_ppo_options(TrainConfig("traffic_jam", algo="exit", gamma=0.99))
    refuse_ppo_options(TrainConfig("traffic_jam", algo="exit"))


def test_default_eval_opponents_are_greedy_and_todays_best_search(game):
    from trafficenvs.agents.exit_training import eval_opponents, opponent_label
    from trafficenvs.agents.training import TrainConfig

    against = eval_opponents(TrainConfig("traffic_jam"), game)
    assert against == ["greedy", strongest_preset(game)]
    assert [opponent_label(a, game) for a in against] == ["greedy", "best_search"]


@pytest.fixture(scope="module")
def plan_trainer():
    """Jakarta Traffic's plan network with its greedy prior (``beta`` 5) in the loop,
    on games cut at 6 moves a seat so that a few iterations finish some."""
    jk = make_game("jakarta_traffic", num_players=2)
    x = ExpertIteration(jk, search="gumbel:n=4,m=2", num_envs=8, steps_per_iteration=12,
                        batch_size=32, net=(16, 16), arch="plan", prior_beta=5.0, seed=2,
                        max_cycles=6)
    x.self_play()
    return x


def test_the_plan_networks_leaves_carry_its_greedy_priors_bonus(plan_trainer):
    """The search's evaluator is the whole policy: the network's logits plus ``beta``
    at the greedy player's move (a flat network could not learn Jakarta Traffic's
    route planning, the plan network with this prior is the shipped PPO model's)."""
    x = plan_trainer
    assert x.buffer.size > 0 and x.games > 0
    obs, legal = x.buffer.obs[:16], x.buffer.legal[:16]
    with_prior = x.evaluate(obs, legal)[0]
    greedy = x.net.prior.moves(obs, legal)
    beta = x.net.prior.beta.item()
    with th.no_grad():
        x.net.prior.beta.fill_(0.0)
        try:
            bare = x.evaluate(obs, legal)[0]
        finally:
            x.net.prior.beta.fill_(beta)
    bonus = with_prior - bare
    rows = np.arange(16)
    np.testing.assert_allclose(bonus[rows, greedy], 5.0, atol=1e-5)
    bonus[rows, greedy] = 0.0
    assert np.abs(bonus).max() < 1e-5


def test_the_plan_network_trains_its_prior_too_and_plays_as_exit_path(plan_trainer,
                                                                       tmp_path):
    """Training reaches the prior's ``beta``; the checkpoint is weights-only (the plan
    network and its prior in the format's version 2), which ``exit:PATH`` plays with the
    trainer's moves and ``--init`` loads back into a new trainer unchanged."""
    from trafficenvs.agents.checkpoint import checkpoint_format

    x = plan_trainer
    beta = x.net.prior.beta.item()
    stats = x.train(256)
    assert np.isfinite(stats["policy_loss"]) and x.net.prior.beta.item() != beta
    path = x.save(tmp_path / "jk_exit.zip")
    assert checkpoint_format(path) == "weights"
    jk = x.game
    agent = make_agent(f"exit:{path}", jk)
    obs, legal = x.buffer.obs[:20], x.buffer.legal[:20]
    logits = x.evaluate(obs, legal)[0]
    moves = agent.act(obs, legal, np.zeros(20, np.int64))
    assert np.array_equal(moves, np.where(legal, logits, -np.inf).argmax(axis=1))
    again = ExpertIteration(jk, search="gumbel:n=4,m=2", num_envs=8, net=(16, 16),
                            arch="plan", prior_beta=1.0, seed=9)
    again.load_weights(path)
    np.testing.assert_allclose(again.evaluate(obs, legal)[0], logits, rtol=1e-5, atol=1e-5)
    assert again.net.prior.beta.item() == pytest.approx(x.net.prior.beta.item())


def test_the_plan_network_is_refused_where_it_does_not_fit(game):
    with pytest.raises(ValueError, match="no plan features"):
        ExpertIteration(game, arch="plan", **{k: v for k, v in TINY.items() if k != "net"})
    with pytest.raises(ValueError, match="needs arch='plan'"):
        ExpertIteration(game, prior_beta=3.0, **TINY)
    with pytest.raises(ValueError, match="--arch must be one of"):
        ExpertIteration(game, arch="conv", **TINY)


def test_train_algo_exit_takes_the_plan_network_and_saves_it_weights_only(tmp_path):
    """``--arch plan --prior-beta`` reach the trainer (Jakarta Traffic), and the
    checkpoint it writes is weights-only, which ``exit:PATH`` plays."""
    from trafficenvs.agents.checkpoint import checkpoint_format
    from trafficenvs.cli import main

    out = tmp_path / "jk_exit.zip"
    assert main(["train", "jakarta_traffic", "--algo", "exit", "--arch", "plan",
                 "--prior-beta", "4", "--net", "16,16", "--timesteps", "64",
                 "--num-envs", "8", "--exit-steps", "8", "--search", "gumbel:n=2,m=2",
                 "--eval-every", "0", "--eval-games", "2", "--eval-against", "random",
                 "--no-progress", "--out", str(out)]) == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["config"]["arch"] == "plan" and summary["config"]["prior_beta"] == 4.0
    assert checkpoint_format(out) == "weights"
    agent = make_agent(f"exit:{out}", make_game("jakarta_traffic", num_players=2))
    assert agent.policy.prior.beta.item() == pytest.approx(4.0)


@pytest.mark.parametrize("name, kind", [("jakarta_traffic_exit_2p", "exit"),
                                        ("jakarta_traffic_2p", "ppo")])
def test_the_plan_trainer_continues_a_shipped_plan_network(name, kind):
    """``--init`` of a shipped Jakarta Traffic plan network with the greedy prior: the
    expert-iteration network (weights only) and the PPO model (a MaskablePPO zip, read
    without unpickling). The trainer's network then plays the checkpoint's moves."""
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[2] / "agents" / "checkpoints" / f"{name}.zip"
    jk = make_game("jakarta_traffic", num_players=2)
    x = ExpertIteration(jk, search="gumbel:n=2,m=2", num_envs=16, net=(256, 256),
                        arch="plan", prior_beta=6.0, seed=0)
    x.load_weights(shipped)
    out = x.venv.reset(seed=3)
    obs, legal = out.observation.copy(), np.array(out.action_mask, np.bool_)
    seats = np.zeros(len(obs), np.int64)
    np.testing.assert_array_equal(x.policy().act(obs, legal, seats),
                                  make_agent(f"{kind}:{shipped}", jk).act(obs, legal, seats))
