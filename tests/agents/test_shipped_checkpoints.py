"""The shipped checkpoints (``agents/checkpoints``: PPO models and expert-iteration
networks) fit their games and play legal moves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from trafficenvs.agents.arena import run_arena  # noqa: E402
from trafficenvs.agents.checkpoint import checkpoint_format, read_weights  # noqa: E402
from trafficenvs.agents.zoo import make_agent  # noqa: E402
from trafficenvs.registry import make_game  # noqa: E402

CHECKPOINT_DIR = Path(__file__).parents[2] / "agents" / "checkpoints"
CHECKPOINTS = sorted(CHECKPOINT_DIR.glob("*.zip"))


GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic")


def test_every_game_has_a_shipped_two_player_checkpoint():
    names = {p.stem for p in CHECKPOINTS}
    assert {f"{g}_2p" for g in GAMES} <= names


def test_every_game_ships_its_expert_iteration_network_weights_only():
    """The ``exit:PATH`` networks are weights-only checkpoints: a ``config.json`` and
    tensors, nothing that could run code when loaded."""
    names = {p.stem for p in CHECKPOINTS}
    assert {f"{g}_exit_2p" for g in GAMES} <= names
    for g in GAMES:
        path = CHECKPOINT_DIR / f"{g}_exit_2p.zip"
        assert checkpoint_format(path) == "weights", path.name
        config, _ = read_weights(path, make_game(g, num_players=2))
        assert config["game"] == g and config["players"] == 2


@pytest.mark.parametrize("path", CHECKPOINTS, ids=lambda p: p.stem)
def test_a_shipped_checkpoint_plays_its_game_and_records_how_it_was_made(path):
    summary = json.loads(path.with_suffix(".json").read_text())
    cfg = summary["config"]
    game_name, players = cfg["game"], cfg["players"]
    exit_net = cfg.get("algo") == "exit"
    assert path.stem == f"{game_name}_{'exit_' if exit_net else ''}{players}p"
    # the command that made it (or, for a run started from Python, a note saying so)
    assert cfg["command"].startswith("trafficenvs train") or "trafficenvs train" in summary["note"]
    assert summary["wall_seconds"] > 0 and summary["history"]
    game = make_game(game_name, num_players=players)
    ppo = make_agent(f"{'exit' if exit_net else 'ppo'}:{path}", game)  # the spaces fit
    res = run_arena(game_name, [ppo, make_agent("random", game, seed=1)], players, 8, seed=3)
    assert res.games == 8  # an illegal move would have raised
