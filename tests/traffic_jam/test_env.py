"""Traffic Jam through its public doors: registry, envs, errors, decks, renders, CLI."""

from __future__ import annotations

import io
import json

import numpy as np
import pettingzoo
import pytest

import trafficenvs
from tests.traffic_jam.positions import cards, position
from trafficenvs.cli import main, play
from trafficenvs.traffic_jam.rules.deck import DEFAULT_DECK, load_deck, min_deck_size

# --------------------------------------------------------------------------- registry


def test_list_envs_names_traffic_jam():
    assert "traffic_jam-v1" in trafficenvs.list_envs()


@pytest.mark.parametrize("env_id", ["traffic_jam-v1", "traffic_jam_v1", "traffic_jam",
                                    "trafficenvs/traffic_jam-v1"])
def test_make_accepts_the_usual_spellings_of_the_id(env_id):
    env = trafficenvs.make(env_id, num_players=3)
    env.reset(seed=1)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]


def test_pettingzoo_registry_makes_the_env_with_its_options():
    env = pettingzoo.make("aec", "trafficenvs/traffic_jam-v1", num_players=3)
    env.reset(seed=0)
    assert env.num_agents == 3
    assert env.unwrapped.game.num_players == 3


def test_pettingzoo_registry_passes_max_cycles_for_truncation():
    env = pettingzoo.make("aec", "trafficenvs/traffic_jam-v1", max_cycles=1, num_players=2)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, rew, term, trunc, _ = env.last()
        if term or trunc:
            assert trunc and not term and rew == 0
            env.step(None)
        else:
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.unwrapped.record["moves"] == 2  # one move per player


@pytest.mark.parametrize("n", [1, 7, 0])
def test_wrong_player_counts_are_refused(n):
    with pytest.raises(ValueError, match="2 to 6 players"):
        trafficenvs.make("traffic_jam", num_players=n)


def test_unknown_options_are_refused_with_the_valid_ones_named():
    with pytest.raises(TypeError, match="unknown options \\['colour'\\].*num_players"):
        trafficenvs.make_vec("traffic_jam", num_envs=2, colour="red")


def test_unknown_game_is_refused():
    with pytest.raises(ValueError, match="unknown env"):
        trafficenvs.make("traffic_jammed")


# --------------------------------------------------------------------------- illegal moves


def test_raw_env_raises_on_an_illegal_action_and_changes_nothing():
    env = trafficenvs.make("traffic_jam", num_players=3, wrapped=False)
    env.reset(seed=4)
    before = env.state_dict()
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)
    assert env.state_dict() == before


def test_wrapped_env_ends_the_game_with_minus_one_for_an_illegal_action():
    env = trafficenvs.make("traffic_jam", num_players=3)
    env.reset(seed=4)
    mask = env.observe("player_0")["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards["player_0"] == -1


def test_vec_env_refuses_illegal_actions_and_steps_no_game():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=4, num_players=2)
    out = venv.reset(seed=0)
    before = [venv.state_dict(i) for i in range(4)]
    actions = np.array([np.flatnonzero(m)[0] for m in out.action_mask])
    actions[2] = np.flatnonzero(~out.action_mask[2])[0]
    with pytest.raises(ValueError, match=r"illegal actions in games \[2\]"):
        venv.step(actions)
    assert [venv.state_dict(i) for i in range(4)] == before


def test_vec_env_refuses_actions_of_the_wrong_shape():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=4, num_players=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(3, np.int64))


# --------------------------------------------------------------------------- vectorised env


def test_vec_env_auto_resets_and_reports_the_final_step():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=3, num_players=2)
    out = venv.reset(seed=10)
    ended = np.zeros(3, int)
    for _ in range(3 * 24 + 1):
        out = venv.step(np.array([np.flatnonzero(m)[-1] for m in out.action_mask]))
        ended += out.terminated
        if out.terminated.any():
            rows = out.terminated
            assert np.allclose(out.rewards[rows].sum(1), 0)
            assert out.action_mask[rows].any(1).all()  # the new game is playable
            for i in np.flatnonzero(rows):
                assert venv.state_dict(i)["moves"] == 0
    assert (ended == 3).all()  # 24 moves a game for 2 players


def test_vec_env_truncates_at_max_cycles_with_zero_rewards():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=2, max_cycles=3)
    out = venv.reset(seed=0)
    for t in range(6):
        out = venv.step(np.array([np.flatnonzero(m)[0] for m in out.action_mask]))
        assert out.truncated.all() == (t == 5)
    assert not out.terminated.any() and (out.rewards == 0).all()


def test_vec_state_dict_can_set_up_a_position():
    game = trafficenvs.make_game("traffic_jam", num_players=2)
    venv = trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=2)
    venv.reset(seed=0)
    st = position(game, hands=[cards(game, "day van, day van, day van, day van, day bus, "
                                         "day bus"), None])
    venv.load_state_dict(1, st)
    legal = np.flatnonzero(venv._buf.action_mask[1])  # noqa: SLF001
    assert [game.action_name(venv.records[1], a) for a in legal] == [
        "play day van (5)", "play day bus (3)"]


# --------------------------------------------------------------------------- state dicts


def test_state_dict_is_json_and_round_trips():
    env = trafficenvs.make("traffic_jam", num_players=4, wrapped=False)
    env.reset(seed=9)
    d = json.loads(json.dumps(env.state_dict()))
    env2 = trafficenvs.make("traffic_jam", num_players=4, wrapped=False)
    env2.reset(seed=0)
    env2.load_state_dict(d)
    assert env2.state_dict() == env.state_dict()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(colour=1), "unknown keys"),
        (lambda d: d.pop("deck"), "missing"),
        (lambda d: d["hands"][0].pop(), "hands\\[0\\] holds 5 cards"),
        (lambda d: d["deck"].pop(), "not conserved"),
        (lambda d: d["deck"].__setitem__(0, "day:rocket:9:free"), "unknown card"),
        (lambda d: d.update(num_players=3), "3 players"),
        (lambda d: d.update(stage=2), "stage must be"),
        (lambda d: d.update(game="jakarta_traffic"), "not 'traffic_jam'"),
        (lambda d: d["pending"][1].update(first=d["deck"][0]), "pending\\[1\\]"),
    ],
)
def test_malformed_state_dicts_are_refused(change, message):
    env = trafficenvs.make("traffic_jam", num_players=4, wrapped=False)
    env.reset(seed=2)
    d = env.state_dict()
    change(d)
    with pytest.raises(ValueError, match=message):
        env.load_state_dict(d)


# --------------------------------------------------------------------------- decks (T2)


def test_default_deck_is_the_ruled_reconstruction():
    deck = load_deck()
    assert deck.size == 72
    per_time = [sum(n for k, n in zip(deck.kinds, deck.counts) if k.time == t) for t in range(3)]
    assert per_time == [24, 26, 22]
    day_van = [n for k, n in zip(deck.kinds, deck.counts) if k.name == "day:van:5:free"]
    assert day_van == [4]
    assert len(deck.kinds) == 24


def test_a_user_deck_can_be_a_list_a_csv_or_a_json_file(tmp_path):
    rows = [("morning", "van", 4, "free")] * 30 + [("night", "ice cream truck", 2, "jam")] * 10
    env = trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=2, deck=rows)
    assert env.game.num_kinds == 2 and env.num_actions == 2 + 4
    out = env.reset(seed=0)
    assert out.action_mask.any(1).all()
    csv_path = tmp_path / "deck.csv"
    csv_path.write_text("time,type,joy,condition\n" + "".join(
        f"{t},{ty},{j},{c}\n" for t, ty, j, c in rows))
    assert load_deck(csv_path) == load_deck(rows)
    json_path = tmp_path / "deck.json"
    json_path.write_text(json.dumps([dict(zip(("time", "type", "joy", "condition"), r))
                                     for r in rows]))
    assert load_deck(json_path) == load_deck(rows)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("noon", "van", 1, "free")], "time must be"),
        ([("day", "rocket", 1, "free")], "type must be"),
        ([("day", "van", 1, "sometimes")], "condition must be"),
        ([("day", "van", "lots", "free")], "joy must be an integer"),
        ([("day", "van", 1)], "4-tuple"),
        ([{"time": "day", "type": "van", "joy": 1}], "missing"),
        ([], "needs cards"),
        ([("day", "van", j, "free") for j in range(40)], "at most 32 distinct"),
        ([("day", "van", 1, "free")] * 200, "at most 128 cards"),
    ],
)
def test_malformed_decks_are_refused(rows, message):
    with pytest.raises(ValueError, match=message):
        load_deck(rows)


def test_a_deck_too_small_for_the_players_is_refused():
    rows = [("day", "van", 1, "free")] * (min_deck_size(4) - 1)
    with pytest.raises(ValueError, match="needs at least 40 cards"):
        trafficenvs.make("traffic_jam", num_players=4, deck=rows)


def test_a_csv_deck_needs_its_header(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("when,what,joy,condition\nday,van,1,free\n")
    with pytest.raises(ValueError, match="header"):
        load_deck(p)
    assert DEFAULT_DECK.exists()


# --------------------------------------------------------------------------- renders


def test_rgb_render_is_a_picture_of_the_table():
    env = trafficenvs.make("traffic_jam", num_players=4, render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(6):
        obs = env.observe(env.agent_selection)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] > 300 and img.shape[1] > 600
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 10  # cards, text and lanes drawn


def test_ansi_render_shows_roads_scores_and_the_viewers_hand_only():
    env = trafficenvs.make("traffic_jam", num_players=2, render_mode="ansi", render_seat=0)
    env.reset(seed=0)
    text = env.render()
    for word in ("morning", "day", "night", "joy", "Hand of player_0", "round 1/3"):
        assert word in text
    assert "Hand of player_1" not in text
    # no seat: a spectator sees no hand (T6; the mover's hand used to be shown)
    spectator = trafficenvs.make("traffic_jam", num_players=2, render_mode="ansi")
    spectator.reset(seed=0)
    assert "Hand of" not in spectator.render()


# --------------------------------------------------------------------------- CLI


def test_cli_plays_a_whole_game_with_random_moves():
    out = io.StringIO()
    assert play("traffic_jam", 3, seed=2, stdin=io.StringIO("r\n" * 100 + "0\n" * 10),
                stdout=out) == 0
    text = out.getvalue()
    assert "Your moves:" in text and "car on" in text and "result: player_0" in text
    assert "game over" in text


def test_cli_lists_legal_moves_by_name_and_can_quit():
    out = io.StringIO()
    play("traffic_jam", 4, seed=1, stdin=io.StringIO("zzz\n0\nq\n"), stdout=out)
    text = out.getvalue()
    assert "not a move: 'zzz'" in text and "you: play" in text and "bye" in text


def test_cli_list_prints_the_ids(capsys):
    assert main(["list"]) == 0
    assert "traffic_jam-v1" in capsys.readouterr().out
