"""TorchRL's PettingZooWrapper on every game: the example in examples/ runs, the specs
check passes, one agent moves per step (AEC turn order), no illegal move is taken, and
a finished game's rewards are zero-sum (C2)."""

from __future__ import annotations

import runpy
import warnings
from pathlib import Path

import pytest

pytest.importorskip("torchrl")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "torchrl_pettingzoo.py"


@pytest.mark.parametrize("game", ["traffic_jam", "jamming_traffic", "jakarta_traffic"])
def test_torchrl_example_plays_every_game_legally(game):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL warns that it tests PettingZoo 1.24 only
        main = runpy.run_path(str(EXAMPLE))["main"]
        out = main(game, steps=400)
    assert out["steps"] == 400
    assert out["movers_per_step"] == 1.0
    assert out["illegal_moves"] == 0
    if game == "traffic_jam":  # 24 moves a game at 2 players: several finish
        assert out["games_finished"] >= 5
        assert abs(sum(out["reward_per_player"])) < 1e-4
