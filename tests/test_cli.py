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
    # too (tests/test_distill.py)
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
