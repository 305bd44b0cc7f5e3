"""No broken state is accepted: Jakarta Traffic.

A state dict is refused when its position cannot arise in play (the rules page,
K1-K9), with a ``ValueError`` naming the key;
a value of the wrong type is a ``TypeError`` (also a ``ValueError``) naming the key,
never coerced; a huge int is named, never a raw ``OverflowError``. The crafted
positions start from real ones (random play) and change one thing. Every position
random play reaches (every player count and option set, the finished and the cut-off
ones too) still loads and gives back the same dict.

The loader refuses before any compiled code reads the record, so most refusals are
checked in process; the values a kernel would use as an index out of bounds are also
tried in a subprocess, which must survive every one of them.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import trafficenvs
from tests.jakarta_traffic.positions import TEST_TILES, position
from tests.jakarta_traffic.positions import game as jk_game
from trafficenvs.core.statedict import StateDictError
from trafficenvs.jakarta_traffic.rules.layout import PHASES, TYPES

HUGE = 10**30

# ----------------------------------------------------------------------------- helpers


def _random_states(options: dict[str, Any], steps: int, num_envs: int = 8, seed: int = 0,
                   every: int = 1) -> tuple[Any, list[dict], list[dict]]:
    """``(venv, states, final states)``: the positions random play passes (auto-reset),
    and the last position of every game that ended (finished, or cut by the round cap
    or the move limit)."""
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=num_envs, **options)
    out = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states, finals = [], []
    for t in range(steps):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
        out = venv.step(acts)
        for i in np.flatnonzero(out.terminated | out.truncated):
            finals.append(venv.game.to_dict(out.final_records[i]))
        if t % every == 0:
            states += [venv.state_dict(i) for i in range(num_envs)]
    return venv, states, finals


def _refused(venv, state: dict[str, Any], key: str, exc: type = ValueError) -> str:
    """Loading ``state`` raises ``exc`` (a ``StateDictError``) whose message names ``key``."""
    with pytest.raises(exc) as info:
        venv.load_state_dict(0, state)
    msg = str(info.value)
    assert f"state dict: {key}" in msg, msg
    assert isinstance(info.value, StateDictError), msg
    assert not isinstance(info.value, OverflowError), msg
    return msg


def _phase(states: list[dict], phase: str, **want: Any) -> dict:
    """A copy of the first position in ``phase`` (and with ``want``'s values)."""
    for s in states:
        if s["phase"] == phase and not s["over"] and all(s[k] == v for k, v in want.items()):
            return copy.deepcopy(s)
    raise AssertionError(f"random play reached no {phase!r} position with {want}")


def _set(d: Any, path: tuple, value: Any) -> None:
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


CONFIGS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 2, "shaping": True},
    {"num_players": 3, "max_rounds": 4},
    {"num_players": 4, "max_rounds": 2, "shaping": True},
    {"num_players": 2, "tiles": TEST_TILES},
    {"num_players": 4, "tiles": TEST_TILES, "max_rounds": 6},
    {"num_players": 3, "max_cycles": 12},  # cut by the move limit, mid-turn
]


CAP = 200  # the fixture's round cap (random games end in about 150 rounds)


@pytest.fixture(scope="module")
def jk():
    """A 2-player game with a round cap, and positions of every phase from random play."""
    return _random_states({"num_players": 2, "max_rounds": CAP}, 700, num_envs=16, seed=1)


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("options", CONFIGS,
                         ids=lambda o: "-".join(f"{k}={v}" if k != "tiles" else "tiles"
                                                for k, v in o.items()))
def test_positions_from_random_play_are_accepted(options):
    venv, states, finals = _random_states(options, 240, num_envs=8, seed=2, every=3)
    for s in states:
        venv.load_state_dict(0, json.loads(json.dumps(s)))
        assert venv.state_dict(0) == s
    if "max_rounds" in options or "max_cycles" in options:
        assert finals, "no game was cut"
    _accept_finals(venv.game, finals)


def _accept_finals(game, finals: list[dict]) -> None:
    """Each last position (finished, or cut by the round cap or the move limit) loads
    back to the same dict and keeps the rules' invariants."""
    for s in finals:
        rec = game.from_dict(json.loads(json.dumps(s)))[0]
        assert game.to_dict(rec) == s
        game.check_invariants(rec)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_finished_games_are_accepted(num_players):
    """Greedy players end games quickly: their last positions (over, winners derived)."""
    from trafficenvs.agents import make_greedy

    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=4, num_players=num_players)
    policy = make_greedy(venv.game)
    out = venv.reset(seed=num_players)
    finals: list[dict] = []
    for _ in range(2000):
        out = venv.step(policy.act(out.observation, out.action_mask, out.current_player))
        finals += [venv.game.to_dict(out.final_records[i])
                   for i in np.flatnonzero(out.terminated)]
        if len(finals) >= 6:
            break
    assert len(finals) >= 6 and all(s["over"] for s in finals)
    _accept_finals(venv.game, finals)


def test_every_phase_and_the_ends_are_reached_and_accepted(jk):
    venv, states, finals = jk
    assert {s["phase"] for s in states} == set(PHASES)
    assert any(s["over"] for s in finals)
    assert any(s["end_triggered"] and not s["over"] for s in states)


def test_a_game_cut_by_the_round_cap_is_accepted_as_it_ends():
    _, _, finals = _random_states({"num_players": 2, "max_rounds": 1}, 40, num_envs=4)
    cut = [s for s in finals if not s["over"]]
    assert cut and all(s["round"] == 1 and s["to_move"] == 0 for s in cut)
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=1, num_players=2, max_rounds=1)
    for s in cut:
        venv.load_state_dict(0, s)
        assert venv.state_dict(0) == s


# ----------------------------------------------------------------------------- K9 rounds


def test_the_round_counter_stays_within_the_round_cap(jk):
    venv, states, _ = jk
    s = _phase(states, "honk", to_move=1, end_triggered=False)
    s["round"] = CAP  # the cut: only the position the last round left
    msg = _refused(venv, s, "round")
    assert f"max_rounds={CAP}" in msg
    s["to_move"], s["turn_start"] = 0, s["mopeds"][0]
    venv.load_state_dict(0, s)  # the cut itself
    s["round"] = CAP + 1
    _refused(venv, s, "round")
    s["round"] = HUGE
    _refused(venv, s, "round")


def test_a_finished_game_has_played_a_round(jk):
    venv, _, finals = jk
    s = copy.deepcopy(next(f for f in finals if f["over"]))
    venv.load_state_dict(0, s)
    s["round"] = 0
    _refused(venv, s, "round")


def test_the_end_is_triggered_by_a_seat_that_has_played_this_round(jk):
    """The 4th star triggers the end after its seat's turn; the round ends after the last
    seat, so while the game goes on the seat to move comes after the one that triggered."""
    venv, states, _ = jk
    s = _phase(states, "honk", to_move=1, end_triggered=False)
    s["players"][0]["stars"] = [3, 3, 3, 3]
    s["players"][1]["stars"] = []
    s["order_board"]["star_piles"] = [5, 5, 5, 3, 3]
    s["end_triggered"] = True
    venv.load_state_dict(0, s)  # seat 0 triggered it, seat 1 plays the last turn
    s["players"][0]["stars"], s["players"][1]["stars"] = [], [3, 3, 3, 3]
    msg = _refused(venv, s, "to_move")  # seat 1 to move would have triggered it itself
    assert "K9" in msg


def test_a_seat_holds_at_most_five_stars(jk):
    venv, states, _ = jk
    s = _phase(states, "honk", to_move=1)
    s["players"][0]["stars"] = [7, 7, 7, 7, 7, 5]
    s["order_board"]["star_piles"] = [0, 4, 5, 5, 5]
    s["end_triggered"] = True
    _refused(venv, s, "players[0].stars")
    s["players"][0]["stars"] = [3] * 200  # was a raw OverflowError (int8 star count)
    _refused(venv, s, "players[0].stars")


# ----------------------------------------------------------------------------- K4-K7 pieces


@pytest.mark.parametrize(("path", "value", "key"), [
    (("players", 0, "energy"), 4, "players[0].energy"),
    (("players", 1, "energy"), -1, "players[1].energy"),
    (("players", 0, "bubbles"), 4, "players[0].bubbles"),  # 3 tokens a colour
    (("players", 1, "bubbles"), -1, "players[1].bubbles"),
    (("order_board", "star_piles", 0), 6, "order_board.star_piles[0]"),
    (("order_board", "star_piles", 2), 4, "order_board.star_piles"),  # a 4 lost
    (("stacks", "Sate", "count"), 4, "stacks.Sate.count"),  # players + 1 = 3
    (("stacks", "Ibu", "count"), -1, "stacks.Ibu.count"),
    (("mopeds", 0), [5, 0], "mopeds[0]"),
    (("mopeds", 1), [0, -1], "mopeds[1]"),
    (("forced_dice",), [7], "forced_dice[0]"),
    (("forced_dice",), [0], "forced_dice[0]"),
    (("forced_dice",), [1] * 17, "forced_dice"),
    (("last_dice",), [0, 3], "last_dice"),  # a detour rolls both dice
    (("last_dice",), [7, 1], "last_dice[0]"),
    (("players", 0, "delivered"), ["Sate"] * 300, "players[0].delivered"),
    (("players", 0, "orders"), ["Sate", "Sate"], "players[0].orders"),
    (("players", 0, "orders"), ["Ibu", "Bapak"], "players[0].orders"),
])
def test_pieces_in_range_and_conserved(jk, path, value, key):
    venv, states, _ = jk
    s = _phase(states, "honk")
    _set(s, path, value)
    _refused(venv, s, key)


@pytest.mark.parametrize("column", ["orders", "addresses"])
def test_the_order_board_is_a_permutation(jk, column):
    venv, states, _ = jk
    s = _phase(states, "honk")
    s["order_board"][column][1] = s["order_board"][column][0]
    _refused(venv, s, "order_board")


def test_order_tokens_and_stacks(jk):
    venv, states, _ = jk
    s = _phase(states, "honk")
    name = next(t for t in TYPES if s["stacks"][t]["count"] > 0)
    bad = copy.deepcopy(s)
    bad["stacks"][name]["count"] -= 1  # a token lost
    _refused(venv, bad, f"stacks.{name}")
    bad = copy.deepcopy(s)
    row = next(r for r in range(5) for c in range(5) if s["board"][r][c].startswith("building"))
    col = next(c for c in range(5) if s["board"][row][c].startswith("building"))
    bad["stacks"][name]["at"] = [row, col]  # orders lie only on pick-up tiles
    _refused(venv, bad, f"stacks.{name}.at")
    bad = copy.deepcopy(s)
    empty = next((t for t in TYPES if s["stacks"][t]["count"] == 0), None)
    if empty is None:
        bad["stacks"][name]["at"] = None
        _refused(venv, bad, f"stacks.{name}.at")
    else:
        bad["stacks"][empty]["at"] = bad["stacks"][name]["at"]
        _refused(venv, bad, f"stacks.{empty}.at")


def test_the_marker_never_lies_under_a_moped(jk):
    """A honk needs a tile without mopeds (K5); a moped parking on the marker takes it
    off the board (K7)."""
    venv, states, _ = jk
    s = _phase(states, "honk")
    s["marker"] = list(s["mopeds"][1])
    _refused(venv, s, "marker")
    free = next([r, c] for r in range(5) for c in range(5)
                if [r, c] not in s["mopeds"]
                and all(st["at"] != [r, c] for st in s["stacks"].values()))
    s["marker"] = free
    venv.load_state_dict(0, s)


def test_the_drive_phase_follows_a_honk(jk):
    venv, states, _ = jk
    s = _phase(states, "drive")
    assert s["marker"] is not None
    venv.load_state_dict(0, s)
    bad = dict(s, marker=None)  # no honk put the marker anywhere
    _refused(venv, bad, "marker")
    name = next(t for t in TYPES if s["stacks"][t]["count"] > 0)
    bad = copy.deepcopy(s)
    bad["stacks"][name]["at"] = s["marker"]  # the honked tile had no stack
    if s["board"][s["marker"][0]][s["marker"][1]].startswith("pickup"):
        _refused(venv, bad, "marker")


@pytest.mark.parametrize("phase", ["honk", "drive", "detour_pick"])
def test_the_turn_starts_where_the_mover_stands_until_it_parks(jk, phase):
    venv, states, _ = jk
    s = _phase(states, phase)
    r, c = s["mopeds"][s["to_move"]]
    s["turn_start"] = [r, (c + 1) % 5]
    _refused(venv, s, "turn_start")


def test_buildings_are_never_side_by_side(jk):
    """The rulebook's set-up keeps buildings apart ("not placed adjacent to each other
    orthogonally") and no honk moves one (K5): a building only turns in place. (Two
    buildings in one row are allowed: the rulebook fixes a bad deal by swapping a
    building with another tile.)"""
    venv, states, _ = jk
    s = _phase(states, "honk")
    b = s["board"]
    cells = [(r, c) for r in range(5) for c in range(5)]
    bx = next((r, c) for r, c in cells if b[r][c].startswith("building"))
    # move another building next to it, swapping it with a tile there
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        y = (bx[0] + dr, bx[1] + dc)
        if 0 <= y[0] < 5 and 0 <= y[1] < 5 and not b[y[0]][y[1]].startswith("building"):
            break
    other = next((r, c) for r, c in cells if b[r][c].startswith("building") and (r, c) != bx
                 and abs(r - y[0]) + abs(c - y[1]) > 1)
    b[y[0]][y[1]], b[other[0]][other[1]] = b[other[0]][other[1]], b[y[0]][y[1]]
    for st in s["stacks"].values():  # keep the stacks and mopeds where they may be
        if st["at"] == list(y):
            st["at"] = list(other)
    s["mopeds"] = [list(other) if m == list(y) else m for m in s["mopeds"]]
    s["turn_start"] = s["mopeds"][s["to_move"]]
    if s["marker"] == list(other):
        s["marker"] = None
    msg = _refused(venv, s, "board")
    assert "side by side" in msg


def test_the_rest_of_a_stack_needs_a_vacant_pick_up_tile():
    """place_stack with every pick-up tile taken by a stack or a moped: the mover would
    have no legal action; with one tile vacant the same position loads."""
    g = jk_game(3)
    board = """
    Bh0BC Ph0   Ch0 Cb0 Cs0
    Ch0   Ph0   Bb0Sp Cb0 Ph0
    Bb0Re Cs0   Ch0 Ph0 Cb0
    Cs0   Ph0   Ch0 Bs0Wo Cb0
    Ph0   Cs0   Bs0Ma Ch0 Ph0
    """
    stacks = {"Sate": ((0, 1), 3), "Bakso": ((2, 3), 4), "Nasi Goreng": ((3, 1), 4),
              "Ibu": ((4, 0), 4), "Bapak": ((4, 4), 4)}
    st = position(g, textwrap.dedent(board), mopeds=[(0, 1), (1, 1), (1, 4)],
                  players=[{"orders": ["Sate"], "energy": 2}], stacks=stacks,
                  phase="place_stack", pending="Sate", turn_start=[0, 0])
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=1, num_players=3,
                                tiles=TEST_TILES)
    msg = _refused(venv, st, "phase")
    assert "vacant" in msg
    st["mopeds"][2] = [0, 2]  # seat 2 on a charging station: (1, 4) is vacant
    venv.load_state_dict(0, st)
    assert venv.state_dict(0)["phase"] == "place_stack"


# ----------------------------------------------------------------------------- types, sizes


@pytest.mark.parametrize(("path", "value", "key"), [
    (("round",), HUGE, "round"), (("moves",), HUGE, "moves"), (("moves",), 2**31, "moves"),
    (("to_move",), HUGE, "to_move"), (("players", 0, "energy"), HUGE, "players[0].energy"),
    (("players", 1, "bubbles"), -HUGE, "players[1].bubbles"),
    (("players", 0, "stars"), [HUGE], "players[0].stars[0]"),
    (("stacks", "Sate", "count"), HUGE, "stacks.Sate.count"),
    (("order_board", "star_piles", 4), HUGE, "order_board.star_piles[4]"),
    (("mopeds", 1), [HUGE, 0], "mopeds[1][0]"), (("marker",), [0, HUGE], "marker[1]"),
    (("turn_start",), [HUGE, 0], "turn_start[0]"), (("forced_dice",), [HUGE], "forced_dice[0]"),
    (("last_dice",), [HUGE, 1], "last_dice[0]"), (("rng", "key"), 2**64, "rng.key"),
    (("rng", "counter"), -1, "rng.counter"),
])
def test_huge_ints_name_their_key(jk, path, value, key):
    venv, states, _ = jk
    s = _phase(states, "honk")
    _set(s, path, value)
    _refused(venv, s, key)


@pytest.mark.parametrize(("path", "value", "key"), [
    (("num_players",), 2.0, "num_players"),  # the header compared it by ==
    (("round",), 1.0, "round"), (("moves",), 1.5, "moves"), (("to_move",), True, "to_move"),
    (("to_move",), 0.0, "to_move"), (("phase",), 0, "phase"), (("phase",), ["honk"], "phase"),
    (("over",), 0, "over"), (("end_triggered",), "false", "end_triggered"),
    (("forced_dice",), False, "forced_dice"), (("forced_dice",), [2.0], "forced_dice[0]"),
    (("last_dice",), False, "last_dice"), (("board",), False, "board"),
    (("board", 1), "pickup hub 0", "board[1]"), (("board", 2, 2), 7, "board[2][2]"),
    (("spares", 0), 5, "spares[0]"), (("spares",), False, "spares"),
    (("mopeds",), False, "mopeds"), (("mopeds", 0), [1.0, 2], "mopeds[0][0]"),
    (("players",), False, "players"), (("players", 0), [], "players[0]"),
    (("players", 1, "energy"), 2.5, "players[1].energy"),
    (("players", 0, "orders"), False, "players[0].orders"),
    (("players", 0, "orders"), [3], "players[0].orders[0]"),
    (("players", 1, "stars"), [7.0], "players[1].stars[0]"),
    (("players", 1, "delivered"), [None], "players[1].delivered[0]"),
    (("stacks",), [], "stacks"), (("stacks", "Ibu"), 3, "stacks.Ibu"),
    (("stacks", "Ibu", "count"), 3.0, "stacks.Ibu.count"),
    (("marker",), (1, 2), "marker"), (("marker",), "r1c2", "marker"),
    (("turn_start",), {"row": 0}, "turn_start"), (("pending",), 0, "pending"),
    (("order_board",), [], "order_board"),
    (("order_board", "orders"), False, "order_board.orders"),
    (("order_board", "orders", 0), 0, "order_board.orders[0]"),
    (("order_board", "star_piles"), [5.0] * 5, "order_board.star_piles[0]"),
    (("rng",), {"key": 1.0, "counter": 0}, "rng.key"),
])
def test_wrong_types_are_not_coerced(jk, path, value, key):
    venv, states, _ = jk
    s = _phase(states, "honk")
    _set(s, path, value)
    with pytest.raises(TypeError) as info:
        venv.load_state_dict(0, s)
    assert isinstance(info.value, ValueError)  # the loaders' type errors are both
    assert f"state dict: {key}" in str(info.value), str(info.value)


def test_a_rotation_is_0_to_3(jk):
    venv, states, _ = jk
    s = _phase(states, "honk")
    kind, pattern, _rot = s["board"][1][1].split(" ", 3)[:3]
    for rot in ("4", "-1", "1.0", "01", "", "3 3"):
        bad = copy.deepcopy(s)
        bad["board"][1][1] = f"{kind} {pattern} {rot}"
        _refused(venv, bad, "board[1][1]")


# ----------------------------------------------------------------------------- no crash


_PROBE = r"""
import copy, json, sys
import numpy as np
import trafficenvs

venv = trafficenvs.make_vec("jakarta_traffic", num_envs=2, num_players=2)
venv.reset(seed=3)
base = venv.state_dict(0)
results = {}
for name, edits in json.loads(sys.argv[1]).items():
    s = copy.deepcopy(base)
    for path, value in edits:
        d = s
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    try:
        venv.load_state_dict(0, s)
    except ValueError as e:
        results[name] = ["refused", type(e).__name__, str(e)]
        continue
    # accepted: play it on (what a crash would need)
    for _ in range(200):
        masks = venv.last.action_mask
        venv.step(np.array([np.flatnonzero(masks[0])[0], np.flatnonzero(masks[1])[0]]))
    results[name] = ["accepted", "", ""]
print(json.dumps(results))
"""

#: values the kernels would use as an index (or a count they index with) out of bounds
_OOB = {
    "rotation 4": [[["board", 0, 0], "pickup hub 4"]],
    "moped off the board": [[["mopeds", 0], [0, 5]]],
    "moped at -1": [[["mopeds", 1], [-1, 0]]],
    "marker at 25": [[["marker"], [5, 0]]],
    "turn start off the board": [[["turn_start"], [2, 7]]],
    "seat 2 of 2 to move": [[["to_move"], 2]],
    "seat -1 to move": [[["to_move"], -1]],
    "phase 6": [[["phase"], "game_over"]],
    "pending type 9": [[["pending"], "Soto"]],
    "energy 7": [[["players", 0, "energy"], 7]],
    "bubbles 9 (bonus table index)": [[["players", 0, "bubbles"], 9]],
    "127 orders held": [[["players", 0, "orders"], ["Bakso"] * 127]],
    "star pile 200": [[["order_board", "star_piles", 0], 200]],
    "stack count 127": [[["stacks", "Bakso", "count"], 127]],
    "stack at cell 30": [[["stacks", "Bakso", "at"], [6, 0]]],
    "300 stars": [[["players", 0, "stars"], [3] * 300]],
    "300 deliveries": [[["players", 1, "delivered"], ["Ibu"] * 300]],
    "die 9": [[["last_dice"], [9, 9]]],
    "17 forced dice": [[["forced_dice"], [1] * 17]],
    "a building spare": [[["spares", 0], "building hub Business Center"]],
    "huge round": [[["round"], HUGE]],
    "detour_pick without a double 6": [[["phase"], "detour_pick"], [["last_dice"], [1, 2]]],
    "deliver with nothing to deliver": [[["phase"], "deliver"]],
    "place_stack without a pending type": [[["phase"], "place_stack"]],
}


def test_out_of_bounds_values_are_refused_and_never_crash_the_process():
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(_OOB)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(results) == set(_OOB)
    for name, (verdict, exc, msg) in results.items():
        assert verdict == "refused", name
        assert msg.startswith("state dict: "), (name, exc, msg)
        assert exc != "OverflowError", (name, msg)
