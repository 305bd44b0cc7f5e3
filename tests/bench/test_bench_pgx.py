"""The pgx yardstick: pgx in a process of its own, and each game timed against it
window for window (asserts on order and shape, never on speed)."""

from __future__ import annotations

import copy
import json

import pytest

from trafficenvs.bench import peers, report


class FakePeer:
    """Stands in for the pgx worker: records the order of the calls; pgx's rate
    doubles each round (a machine that speeds up between rounds)."""

    def __init__(self, log):
        self.log = log
        self.pace = 100.0

    def use(self, batch):
        self.log.append(("use", batch))
        return 0.0

    def rate(self, seconds):
        self.log.append(("pgx", seconds))
        if seconds >= 1.0:  # a timed round (the warm-up asks for less)
            self.pace *= 2
        return self.pace

    def settle(self):
        self.log.append(("settle",))
        return 0.0

    def cpu_seconds(self):
        return 1.0


def test_every_round_times_pgx_and_then_each_game_after_the_worker_is_quiet(monkeypatch):
    log = []
    peer = FakePeer(log)

    def stepper(name):
        def fn():
            log.append(("env", name))
            return 1
        return fn

    # every game's window counts as one second of wall time with the pace of pgx's
    # last round behind it: the ratio per round must then be the same in every round
    monkeypatch.setattr(peers, "time_calls", lambda fn, s: (fn() * peer.pace * 3, 1.0))
    out = peers.head_to_head(peer, {"a": stepper("a"), "b": stepper("b")}, 64, 1.0, 3)
    timed = [e for e in log if e[0] in ("pgx", "env", "settle") and e != ("pgx", 0.2)]
    one_round = [("pgx", 1.0), ("settle",), ("env", "a"), ("settle",), ("env", "b")]
    assert log[0] == ("use", 64)
    assert timed == one_round * 3
    for g in ("a", "b"):
        r = out["games"][g]["ratio"]
        assert r["runs"] == [3.0, 3.0, 3.0], r  # per round, not medians of each side
        assert out["games"][g]["peer_cpu_s_in_window"] == 0.0
    assert out["pgx"]["runs"] == [200.0, 400.0, 800.0]


def test_the_readme_quotes_the_alternating_ratio_when_the_run_has_one():
    res = json.loads(open("benchmarks/results/throughput.json").read())
    name = next(iter(res["games"]))
    h = copy.deepcopy(res)
    h["head_to_head"] = {
        "batch": 4096,
        "pgx": {"median": 1e6, "min": 9e5, "max": 1.1e6, "runs": [9e5, 1e6, 1.1e6]},
        "games": {name: {"env": {"median": 2e6, "min": 2e6, "max": 2e6, "runs": [2e6] * 3},
                         "ratio": {"median": 2.345, "min": 2.01, "max": 2.99,
                                   "runs": [2.01, 2.345, 2.99]},
                         "peer_cpu_s_in_window": 0.0}},
    }
    assert report.headline(h, name)["vec_vs_pgx"] == pytest.approx(2.345)
    table = report.markdown_table(h)
    assert "2.35x (2.01-2.99)" in table and "median of 3 rounds" in table
    assert "2.35x" in report.text_table(h)


def test_the_pgx_worker_runs_pgx_in_its_own_process_and_ends_with_its_input():
    pytest.importorskip("pgx")
    peer = peers.PgxPeer.start()
    assert peer is not None
    with peer:
        assert peer.info["version"]
        assert peer.use(16) >= 0
        assert peer.rate(0.05) > 0
        used = peer.cpu_seconds()
        assert used is None or used > 0
        assert peer.settle(quiet_s=0.05, limit_s=2.0) <= 3.0
        fig = peers.pgx_connect_four((16,), 0.02, 3, peer=peer)
        b = fig["batches"]["16"]
        assert b["range"][0] <= b["steps_per_s"] <= b["range"][1]
    assert peer.proc.poll() is not None  # gone once its input closed


def test_the_full_run_ends_with_each_game_against_pgx(monkeypatch):
    pytest.importorskip("pgx")
    from trafficenvs.bench import run

    monkeypatch.setattr(run, "HEAD_TO_HEAD_BATCH", 64)
    monkeypatch.setattr(run, "PGX_BATCHES", (64,))
    result = {"peers": {}}
    seen = []
    run.with_pgx(result, ["traffic_jam", "jakarta_traffic"], 0.02, 1, 3, seen.append)
    h = result["head_to_head"]
    assert h["batch"] == 64 and set(h["games"]) == {"traffic_jam", "jakarta_traffic"}
    for d in h["games"].values():
        assert len(d["ratio"]["runs"]) == 3 and d["ratio"]["min"] <= d["ratio"]["median"]
    assert "64" in result["peers"]["pgx_connect_four"]["batches"]
    assert any("against pgx" in s for s in seen)
