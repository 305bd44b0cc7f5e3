"""``benchmarks/search_gap.py``: where a model gives up value against a search agent.

Shape only (the figures are measurements): every decision counted once in its phase,
what a move gives up against the best is never negative, a pick of the best gives
up nothing; and the phase labels come from the observation layout.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import trafficenvs
from benchmarks.search_gap import ROOT, main, measure, phase_names


def test_phase_labels_come_from_the_layout():
    names = phase_names(trafficenvs.make_game("jakarta_traffic", num_players=2).obs_layout)
    assert names == ["honk", "drive", "detour_pick", "accept", "place_stack", "deliver"]
    jam = phase_names(trafficenvs.make_game("jamming_traffic", num_players=2).obs_layout)
    assert jam == ["set-up", "place", "move", "stop", "over"]
    assert phase_names(trafficenvs.make_game("traffic_jam", num_players=2).obs_layout) is None


def test_every_decision_is_valued_once_and_nothing_is_better_than_the_best():
    res = measure("jakarta_traffic", 2, str(ROOT / "agents/checkpoints/jakarta_traffic_2p.zip"),
                  "flatmc:n=1,depth=2,rollout=greedy", decisions=60, num_envs=8)
    assert res["decisions"] == sum(r["decisions"] for r in res["phases"]) == 60
    for r in res["phases"]:
        for who in ("model", "greedy"):
            assert r[f"{who}_gives_up"] >= 0
            assert 0 <= r[f"{who}_picks_best"] <= 1
            if r[f"{who}_picks_best"] == 1:
                assert r[f"{who}_gives_up"] == 0


def test_the_command_writes_its_json(tmp_path, capsys):
    out = tmp_path / "gap.json"
    assert main(["--decisions", "20", "--search", "flatmc:n=1,depth=2,rollout=greedy",
                 "--out", str(out)]) == 0
    assert json.loads(out.read_text())["model"] == "agents/checkpoints/jakarta_traffic_2p.zip"
    assert "value the model gives up" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--decisions", "0"])


def test_the_search_hands_out_its_move_values_only_for_what_it_searched():
    from trafficenvs.agents.search import SearchPolicy

    g = trafficenvs.make_game("jakarta_traffic", num_players=2)
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=4, num_players=2)
    out = venv.reset(seed=0)
    s = SearchPolicy(g, "flatmc:n=1,depth=2,rollout=greedy")
    with pytest.raises(ValueError, match="no act of 4 rows"):
        s.last_values(4)
    picked = s.act(out.observation, out.action_mask, out.current_player,
                   records=venv.records)
    q = s.last_values(4)
    legal = out.action_mask.astype(bool)
    assert np.isnan(q[~legal]).all() and not np.isnan(q[legal]).any()
    assert (q[np.arange(4), picked] == np.nanmax(q, 1)).all()
    with pytest.raises(ValueError, match="only flatmc"):
        SearchPolicy(g, "mcts:sims=4").last_values(1)
