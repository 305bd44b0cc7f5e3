"""The command line a new user meets: one-line errors with suggestions, no silent zeros."""

from __future__ import annotations

import pytest

from trafficenvs.cli import main


def test_a_misspelled_game_is_one_line_with_a_suggestion(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["arena", "trafic_jam", "--games", "4"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'traffic_jam'" in err


def test_a_misspelled_agent_is_one_line_with_a_suggestion(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["arena", "traffic_jam", "--games", "4", "--agents", "random,gredy"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'greedy'" in err


@pytest.mark.parametrize("argv,message", [
    (["arena", "traffic_jam", "--num-envs", "0"], "must be at least 1"),
    (["arena", "traffic_jam", "--games", "-3"], "must be at least 1"),
    (["train", "traffic_jam", "--batch-size", "0"], "must be at least 1"),
    # 0 PPO steps is allowed with a --teacher (distil only); without one it is refused
    # too (tests/agents/test_distill.py)
    (["train", "traffic_jam", "--timesteps", "-1"], "must be at least 0"),
])
def test_counts_that_would_hang_or_do_nothing_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_help_shows_the_defaults(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # one line per option: no wrapped "(default: ..."
    with pytest.raises(SystemExit):
        main(["arena", "-h"])
    out = capsys.readouterr().out
    assert "(default: 4000)" in out and "(default: random,greedy)" in out


def _one_line_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_missing_or_broken_checkpoint_is_one_line(tmp_path, capsys):
    err = _one_line_error(["arena", "traffic_jam", "--players", "2", "--games", "4",
                           "--agents", f"random,ppo:{tmp_path / 'none.zip'}"], capsys)
    assert "no checkpoint" in err
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    err = _one_line_error(["arena", "traffic_jam", "--players", "2", "--games", "4",
                           "--agents", f"random,ppo:{bad}"], capsys)
    assert "not a readable checkpoint zip" in err and "Error: Error" not in err


def test_train_init_from_a_checkpoint_of_another_network_is_one_line(tmp_path, capsys):
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[2] / "agents/checkpoints/traffic_jam_2p.zip"
    err = _one_line_error(["train", "traffic_jam", "--players", "2", "--timesteps", "64",
                           "--net", "32,32", "--init", str(shipped), "--no-progress",
                           "--out", str(tmp_path / "m.zip")], capsys)
    assert "does not fit" in err


def test_replay_into_a_missing_folder_is_one_line(tmp_path, capsys):
    err = _one_line_error(["replay", "traffic_jam", "--agents", "random,random",
                           "--out", str(tmp_path / "no" / "such" / "game.gif")], capsys)
    assert "No such file or directory" in err and "such/game.gif" in err


def test_timesteps_help_says_what_each_backend_counts(capsys):
    with pytest.raises(SystemExit):
        main(["train", "-h"])
    out = " ".join(capsys.readouterr().out.split())
    assert "sb3 backend: the learner's decisions" in out and "rllib backend: env steps" in out


def test_every_train_flag_is_declared_once_and_maps_onto_a_train_config_field():
    """The train options live in one place (add_train_args, defaults from TrainConfig):
    parsing them gives a TrainConfig with every flag's value, and a field without a
    flag is one the command line deliberately leaves at its default."""
    import argparse
    from dataclasses import fields

    from trafficenvs.agents.commands import add_train_args, train_config
    from trafficenvs.agents.training import TrainConfig

    p = argparse.ArgumentParser()
    add_train_args(p)
    args = p.parse_args(["jakarta_traffic", "--players", "3", "--lr", "0.001", "--net", "32,16",
                         "--threads", "2", "--n-steps", "16", "--no-progress",
                         "--teacher-rounds", "3"])
    cfg = train_config(args)
    assert (cfg.game, cfg.players, cfg.learning_rate, cfg.net, cfg.torch_threads,
            cfg.n_steps, cfg.progress, cfg.teacher_rounds) == (
        "jakarta_traffic", 3, 0.001, (32, 16), 2, 16, False, 3)
    flagged = {a.dest for a in p._actions if a.dest != "help"}  # noqa: SLF001
    from trafficenvs.agents.commands import NOT_TRAIN_CONFIG, RENAMED_TRAIN_FLAGS

    mapped = {RENAMED_TRAIN_FLAGS.get(d, d) for d in flagged - NOT_TRAIN_CONFIG}
    names = {f.name for f in fields(TrainConfig)}
    assert mapped <= names
    assert names - mapped == {"gamma", "max_snapshots", "options", "command", "progress"}
