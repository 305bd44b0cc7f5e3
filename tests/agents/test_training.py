"""``trafficenvs train`` end to end, for a few hundred steps (CI-sized)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sb3_contrib")

from trafficenvs.cli import main  # noqa: E402


def test_train_command_writes_checkpoints_evaluations_and_a_playable_model(tmp_path, capsys):
    """The SB3 route (``--trainer sb3``): its checkpoints, evaluations and phases (the
    batched trainer's own are in ``test_trainer.py``)."""
    out = tmp_path / "tj_2p.zip"
    assert main([
        "train", "traffic_jam", "--trainer", "sb3", "--players", "2", "--timesteps", "1024",
        "--num-envs", "16",
        "--n-steps", "32", "--batch-size", "256", "--n-epochs", "1",
        "--opponents", "random,greedy,self", "--snapshot-every", "512",
        "--eval-every", "512", "--eval-games", "40", "--checkpoint-every", "512",
        "--out", str(out), "--no-progress", "--seed", "3",
    ]) == 0
    assert out.exists() and (tmp_path / "tj_2p_512_steps.zip").exists()
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["learner_steps"] >= 1024
    assert summary["env_steps"] >= 2 * summary["learner_steps"] - 16  # 2 seats move
    assert [h["timesteps"] for h in summary["history"]] == [512, 1024]
    assert set(summary["final_win_share"]) == {"random", "greedy"}
    # where the time went: the rollout (env inside it), the update, the evaluations
    phases = summary["seconds_by_phase"]
    assert set(phases) == {"rollout", "update", "eval", "env"}
    assert 0 < phases["env"] < phases["rollout"] and phases["update"] > 0
    assert phases["rollout"] + phases["update"] + phases["eval"] <= summary["wall_seconds"] + 0.1
    assert summary["training_steps_per_second"] > summary["learner_steps_per_second"]
    assert "win share (40 games each) vs random" in capsys.readouterr().out
    # the checkpoint plays in the arena, and can seed a further run
    assert main(["arena", "traffic_jam", "--players", "2", "--games", "40",
                 "--agents", f"random,ppo:{out}"]) == 0
    assert "ppo:tj_2p" in capsys.readouterr().out
    assert main(["train", "traffic_jam", "--players", "2", "--timesteps", "256",
                 "--num-envs", "8", "--n-steps", "32", "--batch-size", "128",
                 "--eval-every", "0", "--checkpoint-every", "0", "--init", str(out),
                 "--out", str(tmp_path / "more.zip"), "--no-progress"]) == 0


@pytest.mark.parametrize("game,extra", [("jamming_traffic", ["--shaping"]),
                                        ("jakarta_traffic", ["--shaping", "--trainer", "sb3"])])
def test_every_game_trains_against_its_greedy_player_and_keeps_the_callers_threads(
        game, extra, tmp_path, capsys):
    """Training (the default batched trainer, and the SB3 route) runs the env on
    ``--env-threads`` numba threads and restores the caller's counts afterwards (a
    notebook keeps its own setting)."""
    import numba
    import torch as th

    before = numba.get_num_threads()
    torch_before = th.get_num_threads()
    th.set_num_threads(2)  # a caller's own setting, other than the run's 1
    out = tmp_path / f"{game}.zip"
    ok = main([
        "train", game, "--players", "2", "--timesteps", "256", "--num-envs", "8",
        "--n-steps", "32", "--batch-size", "128", "--n-epochs", "1",
        "--opponents", "random,greedy", "--eval-every", "256", "--eval-games", "8",
        "--checkpoint-every", "0", "--env-threads", "1", "--out", str(out),
        "--no-progress", *extra,
    ])
    caller_threads = th.get_num_threads()
    th.set_num_threads(torch_before)
    assert ok == 0
    assert numba.get_num_threads() == before
    assert caller_threads == 2  # torch's threads given back too
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["config"]["env_threads"] == 1
    assert set(summary["final_win_share"]) == {"random", "greedy"}
    assert summary["learner_steps"] >= 256


def test_train_without_out_writes_under_runs_and_rounds_to_whole_rollouts(
        tmp_path, monkeypatch, capsys):
    """A new user's run never overwrites the shipped models: without --out it goes to a
    new directory under runs/. The step count it reports is the one it runs (whole
    rollouts), the evaluation lines name their real game count, a search agent can be
    an opponent and an evaluation opponent, and the learning curve is saved as CSV."""
    import csv

    monkeypatch.chdir(tmp_path)
    assert main([
        "train", "traffic_jam", "--players", "2", "--timesteps", "300", "--num-envs", "8",
        "--n-steps", "32", "--batch-size", "128", "--n-epochs", "1",
        "--opponents", "greedy,flatmc:n=2,rollout=greedy", "--eval-every", "256",
        "--eval-games", "12", "--eval-against", "random,flatmc:n=2",
        "--checkpoint-every", "0", "--no-progress",
    ]) == 0
    text = capsys.readouterr().out
    assert "training 512 learner steps: 300 rounded up" in text
    assert "(12 games each)" in text
    runs = list((tmp_path / "runs").glob("traffic_jam_2p_seed0_*/model.zip"))
    assert len(runs) == 1 and not (tmp_path / "agents").exists()
    summary = json.loads(runs[0].with_suffix(".json").read_text())
    assert summary["learner_steps"] == 512
    assert set(summary["final_win_share"]) == {"random", "flatmc:n=2"}
    with open(runs[0].with_suffix(".curve.csv")) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["timesteps"]) for r in rows] == [256, 512]
    assert {"win_share_vs_random", "win_share_vs_flatmc:n=2"} <= set(rows[0])
