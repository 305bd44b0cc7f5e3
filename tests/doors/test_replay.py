"""Animated replays: ``record_gif`` and ``trafficenvs replay`` write a GIF of one game."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from trafficenvs.agents.policy import RandomPolicy
from trafficenvs.replay import play_frames, record_gif

ENV = dict(os.environ, NUMBA_NUM_THREADS="1")


def test_gif_has_a_frame_per_move_plus_the_start(tmp_path):
    moves: list[str] = []
    frames = list(play_frames("traffic_jam", ["greedy", "random"], seed=5, moves=moves))
    assert len(frames) == len(moves) + 1 == 3 * 2 * 2 * 2 + 1  # 3 rounds, 2 trips, 2 stages
    assert moves[0].startswith("player_0 (greedy): ") and moves[1].startswith("player_1 (random)")
    path = tmp_path / "game.gif"
    n = record_gif("traffic_jam", ["greedy", "random"], path, seed=5)
    assert n == len(frames)
    with Image.open(path) as im:
        assert im.format == "GIF" and im.is_animated and im.n_frames == n
        assert im.size == (frames[0].shape[1], frames[0].shape[0] + 26)  # + the caption
        assert 600 <= im.size[0] <= 1400 and 400 <= im.size[1] <= 1200
        im.seek(n - 1)
        last = np.asarray(im.convert("RGB"))
    # the last frame is the final position (colours survive the palette closely)
    h = frames[-1].shape[0]
    assert np.abs(last[:h].astype(int) - frames[-1].astype(int)).mean() < 8
    assert path.stat().st_size < 5_000_000


def test_agents_may_be_policies_a_spec_string_and_game_options(tmp_path):
    path = tmp_path / "jt.gif"
    n = record_gif("jamming_traffic", [RandomPolicy(1), "greedy", "random"], path, seed=2,
                   max_moves=12, scale=0.5, map="small")
    assert n == 13
    with Image.open(path) as im:
        assert im.n_frames == 13 and im.size == (600, 373)
    n = record_gif("jakarta_traffic", "greedy,random", tmp_path / "jk.gif", max_moves=4)
    assert n == 5


@pytest.mark.parametrize("kwargs,match", [
    ({"agents": "random,gredy"}, "did you mean 'greedy'"),
    ({"agents": []}, "at least one agent"),
    ({"agents": ["random", 3]}, "Policy"),
    ({"fps": 0}, "fps"),
    ({"scale": -1}, "scale"),
])
def test_bad_arguments_are_clear_errors(tmp_path, kwargs, match):
    args = {"agents": "random", **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        record_gif("traffic_jam", path=tmp_path / "x.gif", **args)
    assert not (tmp_path / "x.gif").exists()


def test_command_line_writes_the_gif(tmp_path):
    out = tmp_path / "cli.gif"
    run = subprocess.run(
        [sys.executable, "-m", "trafficenvs.cli", "replay", "traffic_jam", "--agents",
         "greedy,random,random", "--out", str(out), "--max-moves", "6", "--seed", "1"],
        capture_output=True, text=True, env=ENV, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "7 frames" in run.stdout
    with Image.open(out) as im:
        assert im.n_frames == 7
    bad = subprocess.run(
        [sys.executable, "-m", "trafficenvs.cli", "replay", "trafic_jam", "--out",
         str(tmp_path / "no.gif")], capture_output=True, text=True, env=ENV, timeout=600)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "did you mean 'traffic_jam'" in bad.stderr
