"""``python -m benchmarks.training``: the trainers side by side (its pipeline, on a tiny
budget, and the figures it reduces runs to)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from benchmarks.training import GAMES, main, phase_shares, summarise  # noqa: E402

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def test_time_shares_split_the_training_time_by_phase():
    # SB3: the rollout holds the env's steps; the rest of it is the learner's forward
    assert phase_shares("sb3", {"rollout": 4.0, "env": 1.0, "update": 5.0, "eval": 9.0},
                        10.0) == {"env": 0.1, "forward": 0.3, "update": 0.5, "other": 0.1}
    assert phase_shares("batched", {"env": 2.0, "forward": 2.5, "gae": 0.5, "update": 5.0,
                                    "eval": 3.0}, 10.0) == {
        "env": 0.2, "forward": 0.3, "update": 0.5, "other": 0.0}


def _run(route, seed, speed, random, greedy):
    return {"game": "traffic_jam", "route": route, "seed": seed,
            "training_steps_per_second": speed,
            "final_win_share": {"random": random, "greedy": greedy}}


def test_the_summary_takes_each_routes_median_speed_and_the_seeds_spread():
    runs = [_run("sb3", 0, 1000.0, 0.7, 0.2), _run("sb3", 1, 3000.0, 0.8, 0.3),
            _run("sb3", 2, 2000.0, 0.9, 0.1),
            _run("batched", 0, 9000.0, 0.6, 0.2), _run("batched", 1, 5000.0, 0.8, 0.2),
            _run("batched", 2, 6000.0, 0.7, 0.2)]
    s = summarise(runs)["traffic_jam"]
    assert s["sb3_steps_per_s"] == 2000.0 and s["batched_steps_per_s"] == 6000.0
    assert s["ratio"] == 3.0 and "bf16_ratio" not in s
    assert s["final_win_share"]["sb3"]["random"] == {"mean": 0.8, "min": 0.7, "max": 0.9}


@pytest.mark.parametrize("native, routes", [(True, ["sb3", "batched", "batched_bf16"]),
                                             (False, ["sb3", "batched"])])
def test_bf16_is_measured_by_default_only_where_the_cpu_has_it(monkeypatch, native, routes):
    import torch as th

    import trafficenvs.bench.cpu as cpu
    from benchmarks.training import default_routes

    monkeypatch.setattr(cpu, "cpu_has_bf16", lambda: native)
    monkeypatch.setattr(th.cuda, "is_available", lambda: False)
    assert default_routes() == routes
    monkeypatch.setattr(th.cuda, "is_available", lambda: True)
    assert default_routes() == [*routes, "batched_cuda"]


def test_the_gpu_route_is_summarised_beside_the_cpu_ones():
    runs = [_run("sb3", 0, 2000.0, 0.8, 0.2), _run("batched", 0, 6000.0, 0.8, 0.2),
            _run("batched_cuda", 0, 50000.0, 0.8, 0.2)]
    s = summarise(runs)["traffic_jam"]
    assert (s["gpu_steps_per_s"], s["gpu_ratio"]) == (50000.0, 25.0)


def test_the_tiny_run_writes_the_json_summary_and_the_plot(tmp_path, capsys):
    out = tmp_path / "training.json"
    assert main(["--tiny", "--games", "traffic_jam", "--routes", "sb3,batched,batched_bf16",
                 "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    s = result["summary"]["traffic_jam"]
    for key in ("sb3_steps_per_s", "batched_steps_per_s", "batched_bf16_steps_per_s"):
        assert s[key] > 0
    assert s["ratio"] == round(s["batched_steps_per_s"] / s["sb3_steps_per_s"], 2)
    assert len(result["runs"]) == 3
    for r in result["runs"]:
        assert [row["timesteps"] for row in r["curve"]] == [512, 1024]
        assert set(r["final_win_share"]) == {"random", "greedy"}
        assert 0.0 <= sum(r["shares"].values()) <= 1.0 + 1e-3
    assert out.with_suffix(".png").stat().st_size > 10_000
    assert "| traffic_jam" in capsys.readouterr().out


def test_the_shipped_results_have_every_games_figures():
    result = json.loads((RESULTS / "training.json").read_text())
    assert "--tiny" not in result["command"]
    for game in GAMES:
        s = result["summary"][game]
        assert s["ratio"] == round(s["batched_steps_per_s"] / s["sb3_steps_per_s"], 2)
        assert result["settings"]["seeds"] == 3 and result["settings"]["eval_games"] == 1000
    assert (RESULTS / "training.png").exists()
