"""The shipped checkpoints (``agents/checkpoints``) fit their games and play legal moves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from trafficenvs.agents.arena import run_arena  # noqa: E402
from trafficenvs.agents.zoo import make_agent  # noqa: E402
from trafficenvs.registry import make_game  # noqa: E402

CHECKPOINTS = sorted((Path(__file__).parents[2] / "agents" / "checkpoints").glob("*.zip"))


def test_every_game_has_a_shipped_two_player_checkpoint():
    names = {p.stem for p in CHECKPOINTS}
    assert {"traffic_jam_2p", "jamming_traffic_2p", "jakarta_traffic_2p"} <= names


@pytest.mark.parametrize("path", CHECKPOINTS, ids=lambda p: p.stem)
def test_a_shipped_checkpoint_plays_its_game_and_records_how_it_was_made(path):
    summary = json.loads(path.with_suffix(".json").read_text())
    cfg = summary["config"]
    game_name, players = cfg["game"], cfg["players"]
    assert path.stem == f"{game_name}_{players}p"
    # the command that made it (or, for a run started from Python, a note saying so)
    assert cfg["command"].startswith("trafficenvs train") or "trafficenvs train" in summary["note"]
    assert summary["wall_seconds"] > 0 and summary["history"]
    game = make_game(game_name, num_players=players)
    ppo = make_agent(f"ppo:{path}", game)  # checks the spaces fit
    res = run_arena(game_name, [ppo, make_agent("random", game, seed=1)], players, 8, seed=3)
    assert res.games == 8  # an illegal move would have raised
