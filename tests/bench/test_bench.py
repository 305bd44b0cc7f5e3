"""The benchmark harness runs (so it cannot rot); it asserts on shape, never on speed."""

from __future__ import annotations

import json
import re

import pytest

import trafficenvs
from trafficenvs.bench import report
from trafficenvs.bench.run import main


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    assert main(["traffic_jam", "--quick", "--seconds", "0.05", "--no-train", "--out",
                 str(out)]) == 0
    return out, json.loads((out / "throughput_quick.json").read_text())


def test_quick_benchmark_writes_json_with_every_figure(quick_result):
    out, res = quick_result
    g = res["games"]["traffic_jam"]
    assert {v["batch"] for v in g["vector"]} == {1, 256}
    for v in g["vector"]:
        assert v["env_steps_per_s"] > 0 and v["kernel_steps_per_s"] > 0
    assert g["aec"]["env()"] > 0 and g["aec"]["raw"] > 0
    assert g["nojit"]["env_steps_per_s"] > 0
    assert g["startup"]["warm"]["total_s"] > 0
    game = trafficenvs.make_game("traffic_jam", **g["options"])
    assert g["sizes"]["record_bytes"] == game.record_dtype.itemsize
    assert g["sizes"]["obs_bytes_per_step"] == game.obs_dim  # one byte an entry (uint8)
    assert res["peers"]["connect_four_v3"]["env()"] > 0
    assert res["bandwidth"]["copy_gib_per_s"] > 0


def test_every_figure_is_a_median_of_at_least_three_runs_with_its_range(quick_result):
    _, res = quick_result
    assert res["repeats"] >= 3
    g = res["games"]["traffic_jam"]
    for v in g["vector"]:
        for key in ("env", "kernel"):
            lo, hi = v[f"{key}_range"]
            assert lo <= v[f"{key}_steps_per_s"] <= hi
    for kind in ("env()", "raw"):
        lo, hi = g["aec"]["range"][kind]
        assert lo <= g["aec"][kind] <= hi
        lo, hi = res["peers"]["connect_four_v3"]["range"][kind]
        assert lo <= res["peers"]["connect_four_v3"][kind] <= hi
    assert "threading_choice" in res["machine"] and "load_before" in res


def test_benchmark_prints_progress_as_it_goes(capsys):
    from trafficenvs.bench.run import run

    run(["traffic_jam"], quick=True, seconds=0.02, train=False)
    err = capsys.readouterr().err
    assert "traffic_jam: batch 256, 1 thread" in err and "done in" in err


def test_benchmark_refuses_fewer_than_three_repeats(capsys):
    with pytest.raises(SystemExit):
        main(["traffic_jam", "--quick", "--repeats", "2"])
    assert "at least 3" in capsys.readouterr().err


def test_shared_machine_figure_starts_and_stops_its_competitor(monkeypatch):
    """The load figure: 1 and 2 threads idle and with a busy process it starts itself,
    the ratio 2 threads / 1 thread under load, what batch 1 and the AEC loop keep; the
    competing process is gone afterwards."""
    import numba

    from trafficenvs.bench import load

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 numba threads")
    started = []
    real = load.busy_core

    def spy():
        cm = real()
        proc = cm.__enter__()
        started.append(proc)
        assert proc.poll() is None  # running during the loaded runs

        class Ctx:
            def __enter__(self):
                return proc

            def __exit__(self, *exc):
                return cm.__exit__(*exc)
        return Ctx()

    monkeypatch.setattr(load, "busy_core", spy)
    res = load.shared_machine("traffic_jam", {"num_players": 2}, 0.02, 3, batches=(64, 300))
    assert len(started) == 1 and started[0].poll() is not None
    assert set(res["ratio_2t_1t_loaded"]) == {"64", "300"}
    for cond in ("idle", "loaded"):
        for key in ("vec 64 x1", "vec 64 x2", "vec 300 x1", "vec 300 x2", "vec 1",
                    "aec env()"):
            st = res[cond][key]
            assert len(st["runs"]) == 3 and st["min"] <= st["median"] <= st["max"]
    assert res["kept_under_load"]["vec 1"] > 0 and res["kept_under_load"]["aec env()"] > 0


def test_quick_benchmark_draws_a_plot(quick_result):
    pytest.importorskip("matplotlib")  # part of the bench extra
    out, _ = quick_result
    png = out / "throughput_quick.png"
    assert png.exists() and png.read_bytes()[:4] == b"\x89PNG"


def test_readme_table_is_regenerated_from_the_json(quick_result, tmp_path):
    out, res = quick_result
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.START}\nold\n{report.END}\noutro\n")
    report.update_readme(out / "throughput_quick.json", readme)
    text = readme.read_text()
    assert "old" not in text and text.endswith("outro\n")
    assert re.search(r"^\| traffic_jam +\|", text, re.M)  # a row of the table
    assert "connect_four_v3" in text


def test_training_comparison_runs_both_routes():
    pytest.importorskip("sb3_contrib")
    from trafficenvs.bench.training import bench_training

    res = bench_training("traffic_jam", {"num_players": 2}, timesteps=256, rollout=256,
                         num_envs=16)
    routes = res["routes"]
    assert routes["pettingzoo_tutorial"]["learner_steps_per_s"] > 0
    ours = routes["trafficenvs_vecenv"]
    # opponents move inside our env's step: more env steps than learner decisions
    assert ours["env_steps_per_s"] > ours["learner_steps_per_s"] > 0
    assert res["ppo"]["batch_size"] == 256


def test_trafficenvs_bench_command_is_the_benchmark(capsys):
    from trafficenvs.cli import main as cli_main

    with pytest.raises(SystemExit):
        cli_main(["bench", "--help"])
    assert "--quick" in capsys.readouterr().out


def test_the_search_tables_in_the_docs_are_the_committed_results():
    """README and rules pages show benchmarks/results/search.json as it is (rewritten by
    ``python -m benchmarks.search --docs``); a 2-player entry's greedy share is the rest."""
    import json
    from pathlib import Path

    from benchmarks.search import END, START, greedy_share, markdown

    root = Path(__file__).resolve().parents[2]
    rows = json.loads((root / "benchmarks/results/search.json").read_text())
    for r in rows:
        assert r["ci"][0] <= r["win_share"] <= r["ci"][1]
        if r["players"] == 2:
            assert abs(greedy_share(r) - (1 - r["win_share"])) < 1e-9
    pages = {"README.md": rows}
    for game in {r["game"] for r in rows}:
        pages[f"docs/rules/{game}.md"] = [r for r in rows if r["game"] == game]
    for page, sel in pages.items():
        text = (root / page).read_text()
        block = text.split(START, 1)[1].split(END, 1)[0].strip()
        assert block == markdown(sel), f"{page}: run python -m benchmarks.search --docs"


def test_the_exit_ladder_in_the_readme_is_the_committed_results():
    """The README's expert-iteration ladder is benchmarks/results/exit.json as it is
    (rewritten by ``python -m benchmarks.exit --docs``), and every shipped
    expert-iteration network has its rows: alone and with its search, against greedy."""
    import json
    from pathlib import Path

    from benchmarks.exit import END, GAMES, START, entries, ladder_table

    root = Path(__file__).resolve().parents[2]
    rows = json.loads((root / "benchmarks/results/exit.json").read_text())
    for r in rows:
        assert r["ci"][0] <= r["win_share"] <= r["ci"][1]
    played = {(r["agent"], r["opponent"]) for r in rows}
    for game in GAMES:
        agents = {r["agent"].split(":")[0] for r in rows
                  if r["game"] == game and r["opponent"] == "greedy"}
        assert agents == {"exit", "gumbel"}, game
        # every pair of the ladder (the mixed-leaf search's too) has its row
        assert set(entries(game)) <= played, f"{game}: run python -m benchmarks.exit --missing"
    text = (root / "README.md").read_text()
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block.strip() == ladder_table(rows).strip(), "run python -m benchmarks.exit --docs"


def test_the_competing_process_stops_when_the_harness_is_killed():
    """A benchmark killed mid-way (Ctrl-C, kill) must not leave a core spinning."""
    import os
    import signal
    import subprocess
    import sys
    import time

    if not os.path.isdir("/proc"):
        pytest.skip("reads the process table from /proc")
    code = ("import time\nfrom trafficenvs.bench.load import busy_core\n"
            "with busy_core() as p:\n    print(p.pid, flush=True)\n    time.sleep(60)\n")
    harness = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        spinner = int(harness.stdout.readline())
        os.kill(harness.pid, signal.SIGKILL)  # no finally block runs
        harness.wait(timeout=10)
        for _ in range(100):
            try:
                with open(f"/proc/{spinner}/stat") as f:
                    state = f.read().split()[2]
            except FileNotFoundError:
                break
            if state == "Z":
                break
            time.sleep(0.05)
        else:
            os.kill(spinner, signal.SIGKILL)
            raise AssertionError("the competing process outlived the harness")
    finally:
        harness.kill()
