"""``trafficenvs play`` driven as a person would, through scripted stdin in a subprocess:
grouped moves, help, bad entries, a line per bot move, whole games that end cleanly."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

import trafficenvs
from trafficenvs.play import build_menu, format_level, move_menu, play

ENV = dict(os.environ, NUMBA_NUM_THREADS="1")


def run_play(args: list[str], stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trafficenvs.cli", "play", *args], input=stdin,
                          capture_output=True, text=True, env=ENV, timeout=900)


@pytest.mark.parametrize("game,players,opponents", [
    ("traffic_jam", 4, "greedy"),
    ("jakarta_traffic", 2, "greedy"),
    ("jamming_traffic", 3, "random,greedy"),
])
def test_a_whole_game_against_bots_ends_cleanly(game, players, opponents):
    run = run_play([game, "--players", str(players), "--seed", "3", "--opponents", opponents],
                   "r\n" * 6000)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and run.stderr == ""
    out = run.stdout
    assert "result: player_0" in out and "bye" not in out
    assert "player_1 (greedy): " in out or "player_1 (random): " in out
    assert "you: " in out


def test_help_and_bad_entries_give_a_message_not_a_traceback():
    run = run_play(["traffic_jam", "--players", "3", "--seed", "1"],
                   "help\nzzz\n99\n-1\nb\n\n0\nq\n")
    assert run.returncode == 0 and run.stderr == ""
    out = run.stdout
    assert "Commands:" in out and "b          back up one level" in out
    for bad in ("'zzz'", "'99'", "'-1'", "''"):
        assert f"not a move: {bad}" in out
    assert "already at the top" in out
    assert "you: play " in out and out.rstrip().endswith("bye")


def test_end_of_input_quits_politely():
    run = run_play(["jakarta_traffic", "--players", "2", "--seed", "1"], "")
    assert run.returncode == 0 and "bye" in run.stdout and run.stderr == ""


@pytest.mark.parametrize("args,message", [
    (["traffic_jam", "--seat", "7"], "--seat must be in 0..3"),
    (["trafic_jam"], "did you mean 'traffic_jam'"),
    (["traffic_jam", "--opponents", "gredy"], "did you mean 'greedy'"),
    (["traffic_jam", "--players", "9"], "2 to 6 players"),
])
def test_a_users_mistake_is_one_line(args, message):
    run = run_play(args, "q\n")
    assert run.returncode == 2 and message in run.stderr and run.stderr.count("\n") == 1


def test_bots_hidden_picks_stay_hidden_until_revealed():
    """Traffic Jam: a bot's line says only that it put cards face down; the cards are
    named when they are turned over."""
    out = io.StringIO()
    play("traffic_jam", 3, seed=2, stdin=io.StringIO("0\nq\n"), stdout=out, opponents="greedy")
    text = out.getvalue()
    assert "player_1 (greedy): puts a card face down" in text
    assert "player_2 (greedy): puts a card face down" in text
    assert "revealed: player_0 " in text and "player_1 " in text.split("revealed:")[1]


def test_traffic_jam_car_then_surprise():
    """Stage 2: pick the car's card, then the surprise (30 pairs become 6 + 5 choices)."""
    out = io.StringIO()
    play("traffic_jam", 2, seed=0, stdin=io.StringIO("0\n0\n\n0\n1\nq\n"), stdout=out)
    text = out.getvalue()
    assert "car on " in text and " > " not in text.split("Your moves:")[0]
    i = text.index("Your moves:\n   0: car on")
    assert "surprise " in text[i:]
    assert "you: car on " in text


def test_jamming_pick_a_road_then_where_the_car_goes():
    out = io.StringIO()
    # set-up (a short list), then the place phase, then a road and its car's move
    moves = "0\n" + "r\n" * 2 + "0\n0\n0\nq\n"
    play("jamming_traffic", 2, seed=1, stdin=io.StringIO(moves), stdout=out)
    text = out.getvalue()
    assert "   0: road 0" in text or " 0: road " in text
    assert "end turn" in text


def test_jakarta_honk_a_tile_then_how():
    out = io.StringIO()
    play("jakarta_traffic", 3, seed=1, stdin=io.StringIO("zzz\n0\n0\n0\nq\n"), stdout=out)
    text = out.getvalue()
    assert "not a move: 'zzz'" in text and "honk: turn or swap a tile" in text
    assert "you: honk: rotate r1c1" in text and "bye" in text


def test_menu_groups_and_packs_to_80_columns():
    root = build_menu([(["a", "x"], 1), (["a", "y"], 2), (["b"], 3)])
    assert [c.label for c in root.children] == ["a", "b"] and root.children[0].moves() == [1, 2]
    env = trafficenvs.make("jamming_traffic", num_players=4, wrapped=False)
    env.reset(seed=0)
    import numpy as np

    rng = np.random.default_rng(0)
    for _ in range(60):  # into a move phase, where a turn has 100-150 moves
        a = env.agent_selection
        env.step(int(rng.choice(np.flatnonzero(env.observe(a)["action_mask"]))))
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    menu = move_menu(env.game, env.record, legal)
    assert sorted(menu.moves()) == sorted(int(a) for a in legal)
    text = format_level(menu, "Your moves")
    assert len(text.splitlines()) <= 8 and max(map(len, text.splitlines())) <= 80
