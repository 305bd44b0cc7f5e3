"""Jakarta Traffic through its public doors: registry, envs, observations, state dicts,
tile sets, renders and the CLI."""

from __future__ import annotations

import copy
import io
import json

import numpy as np
import pytest

import trafficenvs
from tests.jakarta_traffic.positions import TEST_TILES, drive, game, legal, play, position, vec_at
from trafficenvs.cli import play as cli_play
from trafficenvs.jakarta_traffic import load_tiles
from trafficenvs.jakarta_traffic.rules.layout import (
    A_DELIVER,
    A_DETOUR,
    A_ROTATE,
    A_SWAP,
    BUILDING,
    CHARGING,
    NUM_ACTIONS,
    PICKUP,
    TYPES,
    obs_dim,
)
from trafficenvs.jakarta_traffic.rules.tiles import DEFAULT_TILES, exit_table

# --------------------------------------------------------------------------- making envs


def test_the_issue_examples_work():
    env = trafficenvs.make("jakarta_traffic-v1", num_players=4, render_mode="rgb_array")
    env.reset(seed=1)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    venv = trafficenvs.make_vec("jakarta_traffic-v1", num_envs=4096, num_players=3)
    out = venv.reset(seed=0)
    assert out.observation.shape == (4096, obs_dim(3))
    assert out.action_mask.shape == (4096, NUM_ACTIONS) and out.action_mask.any(1).all()


def test_package_level_env_constructors():
    from trafficenvs import jakarta_traffic as jt

    assert jt.raw_env(num_players=2).unwrapped.game.num_players == 2
    assert jt.env(num_players=3).unwrapped.game.num_players == 3
    assert jt.vec_env(5, num_players=4).num_envs == 5


@pytest.mark.parametrize("n", [1, 5])
def test_two_to_four_players(n):
    with pytest.raises(ValueError, match="2 to 4 players"):
        trafficenvs.make("jakarta_traffic", num_players=n)


def test_raw_env_raises_on_an_illegal_action_and_changes_nothing():
    env = trafficenvs.make("jakarta_traffic", num_players=3, wrapped=False)
    env.reset(seed=4)
    before = env.state_dict()
    mask = env.observe(env.agent_selection)["action_mask"]
    with pytest.raises(ValueError, match="illegal action"):
        env.step(int(np.flatnonzero(mask == 0)[0]))
    assert env.state_dict() == before


def test_truncation_by_max_cycles_gives_zero_rewards():
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=3, num_players=2, max_cycles=5)
    out = venv.reset(seed=0)
    for _ in range(10):
        out = venv.step(np.array([np.flatnonzero(m)[-1] for m in out.action_mask]))
    assert out.truncated.all() and (out.rewards == 0).all()


def test_action_names_read_like_the_rules():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)]))
    rec = venv.records[0]
    assert g.action_name(rec, A_ROTATE + 3 * 7) == "honk: rotate r2c3 a quarter turn clockwise"
    assert g.action_name(rec, A_SWAP + 4 * 7 + 2) == (
        "honk: swap your spare tile into r2c3, rotation 2")
    assert g.action_name(rec, drive("E")) == "drive out east to r1c2"
    assert g.action_name(rec, A_DETOUR) == "detour (roll the dice)"
    assert g.action_name(rec, A_DELIVER + 3) == "deliver (Ibu goes to the bottom)"


# --------------------------------------------------------------------------- observation (C4)


def test_observation_is_from_the_observers_seat():
    g = game(3)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (2, 2), (4, 4)],
                              players=[{"energy": 1}, {"energy": 2}, {"energy": 0}]))
    env = trafficenvs.make("jakarta_traffic", num_players=3, tiles=TEST_TILES, wrapped=False)
    env.reset(seed=0)
    env.load_state_dict(venv.state_dict(0))
    lay = env.unwrapped.game.obs_layout
    for seat, me in ((0, (0, 0)), (1, (2, 2))):
        obs = env.observe(f"player_{seat}")["observation"]
        cells = lay.slice(obs, "cells").reshape(25, -1)
        me_at = lay.at("cells", 0, "me") - lay.field("cells").offset
        others_at = lay.at("cells", 0, "others") - lay.field("cells").offset
        assert np.flatnonzero(cells[:, me_at]).tolist() == [me[0] * 5 + me[1]]
        assert cells[:, others_at].sum() == 2
        # me first, then the others in turn order after me: energies rotate with the seat
        energies = [1, 2, 0]
        assert [obs[lay.at("players", j, "energy")] for j in range(3)] == (
            energies[seat:] + energies[:seat])
        assert obs[lay.at("players", 0, "row") + me[0]] == 1
        assert obs[lay.at("players", 0, "col") + me[1]] == 1
    mask = env.observe("player_1")["action_mask"]
    assert not mask.any()  # not on turn


def test_observation_shows_the_paths_kinds_tokens_and_order_board():
    g = game(2)
    st = position(g, mopeds=[(0, 0), (4, 0)], stacks={"Sate": ((1, 1), 3)}, marker=[1, 3])
    venv = vec_at(g, st)
    obs = venv._buf.observation[0]  # noqa: SLF001
    lay = g.obs_layout

    def cell(x, part, n=1):
        return obs[lay.at("cells", x, part):][:n].tolist()

    assert cell(0, "ends", 4) == [1, 1, 1, 1]  # a hub
    assert cell(0, "kind", 3) == [0, 1, 0] and cell(3, "kind", 3) == [0, 0, 1]  # r1c1, r1c4
    sate = TYPES.index("Sate")
    assert cell(6, "stack", 5) == [int(t == sate) for t in range(5)]  # r2c2
    assert cell(8, "marker") == [1]  # r2c4
    assert obs[lay.at("types", sate, "stack_n")] == 3

    def part(name, n):
        return obs[lay.at("types", sate, name):][:n].tolist()

    # Sate: third order slot (4 stars) -> fourth address slot = Workshop on r3c5
    assert part("slot", 5) == [0, 0, 1, 0, 0] and part("pays", 1) == [4]
    assert part("addr_row", 5) == [0, 0, 1, 0, 0] and part("addr_col", 5) == [0, 0, 0, 0, 1]
    assert obs.dtype == np.uint8 and (obs <= g.obs_high).all() and obs.shape == (g.obs_dim,)


# --------------------------------------------------------------------------- state dicts


def test_state_dict_is_json_and_round_trips_with_forced_dice():
    env = trafficenvs.make("jakarta_traffic", num_players=4, wrapped=False)
    env.reset(seed=9)
    d = env.state_dict()
    d["forced_dice"] = [6, 6, 3]
    env.load_state_dict(json.loads(json.dumps(d)))
    assert env.state_dict() == d
    env2 = trafficenvs.make("jakarta_traffic", num_players=4, wrapped=False)
    env2.reset(seed=0)
    env2.load_state_dict(json.loads(json.dumps(env.state_dict())))
    assert env2.state_dict() == env.state_dict()
    mask = env.observe(env.agent_selection)["action_mask"]
    assert mask[A_DETOUR]
    env.step(A_DETOUR)
    assert env.state_dict()["phase"] == "detour_pick"
    assert env.state_dict()["forced_dice"] == [3]


def test_forced_dice_then_the_games_own_dice_are_reproducible():
    g = game(2)
    st = position(g, mopeds=[(0, 0), (4, 0)], forced_dice=[2, 2])
    a, b = vec_at(g, st), vec_at(g, st)
    for v in (a, b):
        play(v, A_DETOUR)
        play(v, A_DETOUR)  # player_1 rolls the record's own dice
    assert a.state_dict(0) == b.state_dict(0)
    assert a.state_dict(0)["mopeds"][0] == [1, 1]


def _mutations():
    def players(i, **kw):
        return lambda d: d["players"][i].update(kw)

    return [
        (lambda d: d.update(colour=1), "unknown keys"),
        (lambda d: d.pop("board"), "missing"),
        (lambda d: d.update(game="traffic_jam"), "not 'jakarta_traffic'"),
        (lambda d: d.update(num_players=3), "3 players"),
        (lambda d: d.update(phase="dance"), "phase"),
        (lambda d: d.update(to_move=4), "to_move"),
        (players(0, energy=4), "energy must be an int in 0..3"),
        (players(0, bubbles=-1), "bubbles"),
        (players(0, orders=["Ibu", "Bapak"]), "one passenger"),
        (players(0, orders=["Sate", "Sate"]), "two orders, not two of one type"),
        (players(0, orders=["Soup"]), "'Soup' is not one of"),
        (players(0, stars=[6]), "no star is worth 6"),
        (players(0, stars=[7]), "7-point stars are not conserved"),
        (lambda d: d["stacks"]["Sate"].update(count=4), "Sate orders are not conserved"),
        (lambda d: d["board"][0].__setitem__(0, "pickup hexagon 0"), "unknown tile pattern"),
        (lambda d: d["board"][0].__setitem__(0, "pickup hub 7"), "rotation 0-3"),
        (lambda d: d["spares"].__setitem__(0, "building hub Spa"), "no more|never a spare"),
        (lambda d: d["order_board"]["orders"].__setitem__(0, "Ibu"), "each order type"),
        (lambda d: d.update(marker=[5, 0]), "marker"),
        (lambda d: d.update(forced_dice=[7]), "forced die"),
        (lambda d: d.update(phase="deliver"), "deliver: the mover"),
        (lambda d: d.update(phase="accept", pending="Sate"), "accept: the mover"),
        (lambda d: d.update(phase="detour_pick"), "double 6"),
        (lambda d: d.update(over=True), "finished game"),
        (lambda d: d.update(end_triggered=True), "exactly when a player holds 4"),
    ]


@pytest.mark.parametrize(("change", "message"), _mutations())
def test_malformed_state_dicts_are_refused(change, message):
    env = trafficenvs.make("jakarta_traffic", num_players=4, wrapped=False)
    env.reset(seed=2)
    d = copy.deepcopy(env.state_dict())
    change(d)
    with pytest.raises(ValueError, match=message):
        env.load_state_dict(d)


def test_stacks_lie_only_on_pick_up_tiles():
    g = game(2)
    with pytest.raises(ValueError, match="only on pick-up tiles"):
        vec_at(g, position(g, stacks={"Sate": ((0, 0), 3)}))  # r1c1 is a charging station


# --------------------------------------------------------------------------- tile sets (K2, K3)


def test_default_tile_set_is_the_ruled_mix():
    ts = load_tiles()
    kinds = [(t.kind, ts.patterns[t.pattern].name) for t in ts.tiles]
    assert len(kinds) == 30
    assert [kinds.count((PICKUP, p)) for p in ("hub", "bend", "bridge")] == [6, 7, 7]
    for kind in (CHARGING, BUILDING):
        assert [kinds.count((kind, p)) for p in ("hub", "bend", "bridge")] == [1, 2, 2]
    assert DEFAULT_TILES.exists()


def test_the_frame_joins_the_rim_ends_in_clockwise_pairs():
    ex = exit_table()
    # 1st-2nd: r1c1 N with r1c2 N; 5th-6th: r1c5 E... the corner: r1c5 N with r1c5 E
    assert ex[0, 0] == 1 * 4 + 0 and ex[1, 0] == 0 * 4 + 0
    assert ex[4, 0] == 4 * 4 + 1
    assert ex[9, 1] == 14 * 4 + 1  # r2c5 E - r3c5 E
    assert ex[24, 2] == 23 * 4 + 2  # r5c5 S - r5c4 S
    assert ex[20, 2] == 20 * 4 + 3  # r5c1 S - r5c1 W
    assert ex[5, 3] == 0 * 4 + 3  # r2c1 W - r1c1 W
    # every path end is joined to exactly one other (an involution without fixed points)
    flat = ex.reshape(-1)
    assert all(flat[flat[i]] == i and flat[i] != i for i in range(100))


def test_a_user_tile_set_can_be_a_dict_or_a_json_file(tmp_path):
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=4, num_players=4, tiles=TEST_TILES)
    assert venv.reset(seed=0).action_mask.any(1).all()
    p = tmp_path / "tiles.json"
    p.write_text(json.dumps(TEST_TILES))
    assert load_tiles(p) == load_tiles(TEST_TILES)


def _tiles(**change):
    d = copy.deepcopy(json.loads(DEFAULT_TILES.read_text()))
    for key, val in change.items():
        if key == "pattern":
            d["patterns"]["odd"] = val
            d["tiles"].append({"kind": "pickup", "pattern": "odd", "count": 1})
        else:
            d["tiles"] = val(d["tiles"])
    return d


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (_tiles(pattern={"N": "N", "E": "C", "S": "C", "W": "C"}), "cannot lead to itself"),
        (_tiles(pattern={"N": "E", "E": "S", "S": "C", "W": "C"}), "but not back"),
        (_tiles(pattern={"N": "C", "E": "C", "S": "C", "W": "X"}), "'C' or an edge letter"),
        (_tiles(pattern={"N": "S", "E": "W", "S": "N", "W": "E"}), "no path reaches"),
        (_tiles(pattern={"N": "C", "E": "C", "S": "C"}), "each edge"),
        (_tiles(tiles=lambda t: t[:-1]), "exactly five buildings"),
        (_tiles(tiles=lambda t: t + [dict(t[-1])]), "exactly five buildings"),
        (_tiles(tiles=lambda t: [r for r in t if r["kind"] != "charging"]), "charging"),
        (_tiles(tiles=lambda t: t + [{"kind": "pickup", "pattern": "loop"}]), "unknown pattern"),
        (_tiles(tiles=lambda t: t + [{"kind": "garage", "pattern": "hub"}]), "kind must be"),
        (_tiles(tiles=lambda t: t + [{"kind": "pickup", "pattern": "hub", "address": "Spa"}]),
         "only buildings"),
        (_tiles(tiles=lambda t: t + [{"kind": "pickup", "pattern": "hub", "count": 40}]),
         "at most 64 tiles"),
        ({"patterns": {}}, "keys 'patterns' and 'tiles'"),
    ],
)
def test_malformed_tile_sets_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        load_tiles(spec)


def test_a_dead_end_edge_is_refused():
    """Three ends to the spot and one left over: that end would lead nowhere (K2)."""
    with pytest.raises(ValueError, match="but not back|each edge|'C' or an edge"):
        load_tiles(_tiles(pattern={"N": "C", "E": "C", "S": "C", "W": ""}))


def test_a_tile_set_must_hold_a_spare_for_every_player():
    d = _tiles(tiles=lambda t: [r if r.get("pattern") != "hub" or r["kind"] != "pickup"
                                else dict(r, count=3) for r in t])  # 17 pick-up tiles
    trafficenvs.make("jakarta_traffic", num_players=2, wrapped=False, tiles=d)  # 15 + 2
    with pytest.raises(ValueError, match="3 players need 18 pick-up tiles"):
        trafficenvs.make("jakarta_traffic", num_players=3, tiles=d)


# --------------------------------------------------------------------------- renders


def test_rgb_render_is_a_picture_of_the_board_order_board_and_phones():
    env = trafficenvs.make("jakarta_traffic", num_players=4, render_mode="rgb_array")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    img = env.render()
    assert img.shape[0] >= 500 and img.shape[1] >= 800
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 20


def test_ansi_render_shows_the_grid_tokens_order_board_and_phones():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], stacks={"Sate": ((1, 1), 3)},
                              marker=[1, 3]))
    text = venv.render(0, "ansi")
    for word in ("round 1, player_0 to move", "Sa3", "*", "[BC]", "<^>", "(o)", "alleys:",
                 "Order board", "Nasi Goreng 5 stars -> Residency at r4c2", "player_1 at r5c1"):
        assert word in text, word
    assert "0" in text.splitlines()[5]  # player_0's moped under r1c1


# --------------------------------------------------------------------------- CLI


def test_cli_plays_a_whole_game_with_random_moves():
    out = io.StringIO()
    assert cli_play("jakarta_traffic", 2, seed=3, stdin=io.StringIO("r\n" * 3000),
                    stdout=out) == 0
    text = out.getvalue()
    assert "Your moves:" in text and "result: player_0" in text


def test_cli_lists_moves_by_name_and_can_quit():
    out = io.StringIO()
    cli_play("jakarta_traffic", 3, seed=1, stdin=io.StringIO("zzz\n0\n0\n0\nq\n"), stdout=out)
    text = out.getvalue()
    assert "not a move: 'zzz'" in text and "you: honk: rotate" in text and "bye" in text


def test_legal_helper_agrees_with_is_legal():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)]))
    ok = set(legal(venv))
    from trafficenvs.jakarta_traffic.rules.legality import is_legal

    for a in range(NUM_ACTIONS):
        assert bool(is_legal(venv.records[0], g.cfg[0], a)) == (a in ok), a


def test_a_finished_game_round_trips_with_its_winners():
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=1, num_players=3)
    out = venv.reset(seed=5)
    rng = np.random.default_rng(0)
    while not (out.terminated[0] or out.truncated[0]):
        out = venv.step(np.array([rng.choice(np.flatnonzero(out.action_mask[0]))]))
    assert out.terminated[0]
    g = venv.game
    final = out.final_records[0]
    g.check_invariants(final)
    d = json.loads(json.dumps(g.to_dict(final)))
    assert d["over"] and d["end_triggered"]
    assert max(len(p["stars"]) for p in d["players"]) >= 4
    back = g.from_dict(d)[0]
    assert g.to_dict(back) == d
    assert back["winner"].tolist() == final["winner"].tolist()
    g.check_invariants(back)
    best = g.scores(final).max()
    assert all(final["winner"][p] == (g.scores(final)[p] == best) for p in range(3)) or \
        final["winner"].sum() == 1  # a tie on score is broken by K9's tie-breaks


def test_round_cap_truncates_the_game_with_no_result():
    """K9: ``max_rounds`` cuts the game once that many rounds are complete (reward 0)."""
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=3, num_players=2, max_rounds=2)
    out = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    cut = np.zeros(3, bool)
    for _ in range(200):
        out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
        for i in np.flatnonzero(out.truncated):
            assert not out.terminated[i] and (out.rewards[i] == 0).all()
            assert venv.game.to_dict(out.final_records[i])["round"] == 2
        cut |= out.truncated
        assert not out.terminated.any()
        if cut.all():
            break
    assert cut.all()
    env = trafficenvs.make("jakarta_traffic", num_players=2, max_rounds=1, wrapped=False)
    env.reset(seed=1)
    for _agent in env.agent_iter():
        obs, rew, term, trunc, _ = env.last()
        if term or trunc:
            assert trunc and not term and rew == 0
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.record["round"] == 1


def test_round_cap_must_be_a_non_negative_int():
    with pytest.raises(ValueError, match="max_rounds"):
        trafficenvs.make("jakarta_traffic", num_players=2, max_rounds=-1)
