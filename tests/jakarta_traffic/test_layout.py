"""Jakarta Traffic's observation and action layouts: the rules page shows them, the
kernel writes by them, and the action ranges are what the mask and the names say."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trafficenvs.core.layout import check_doc
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DELIVER,
    A_DETOUR,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    NCELLS,
    NTYPES,
    NUM_ACTIONS,
    OBS_ROUND_CAP,
    PHASES,
    SIDE,
    TYPES,
    obs_dim,
)
from trafficenvs.jakarta_traffic.spec import SPEC
from trafficenvs.registry import make_game, make_vec

PAGE = Path(__file__).resolve().parents[2] / SPEC.rules_page


def test_rules_page_shows_the_observation_and_action_layouts():
    g = make_game("jakarta_traffic", **SPEC.doc_options)
    check_doc(g.obs_layout, PAGE, "observation")
    check_doc(g.action_layout, PAGE, "action")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_layouts_cover_the_observation_row_and_the_action_space_exactly(n):
    g = make_game("jakarta_traffic", num_players=n)
    assert g.obs_layout.size == g.obs_dim == obs_dim(n)
    assert g.action_layout.size == g.num_actions == NUM_ACTIONS
    assert g.obs_layout.field("players").count == n
    for name, offset in g.obs_layout.offsets().items():
        assert int(g.cfg[0][name]) == offset


def _random_rows(n, steps=60, num_envs=8, seed=3):
    """(observation, mask, state dict, record) of every game after each random step."""
    venv = make_vec("jakarta_traffic", num_envs=num_envs, num_players=n)
    out = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        for i in range(num_envs):
            yield (out.observation[i].copy(), out.action_mask[i].copy(), venv.state_dict(i),
                   venv.records[i].copy(), venv.game)
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
        out = venv.step(acts)


def _onehot(obs, at, n):
    """The index of the 1 in ``obs[at:at + n]`` (a one-hot part), -1 if none."""
    v = obs[at:at + n]
    assert v.sum() <= 1
    return int(v.argmax()) if v.any() else -1


@pytest.mark.parametrize("n", [2, 4])
def test_named_observation_fields_hold_what_the_state_says(n):
    for obs, _, state, rec, g in _random_rows(n):
        lay = g.obs_layout
        me = state["to_move"]
        assert lay.slice(obs, "round")[0] == min(state["round"], OBS_ROUND_CAP)
        assert lay.slice(obs, "end_triggered")[0] == state["end_triggered"]
        assert lay.slice(obs, "phase").tolist() == [int(p == state["phase"]) for p in PHASES]
        assert lay.slice(obs, "marker_off")[0] == (state["marker"] is None)
        assert lay.slice(obs, "star_piles").tolist() == state["order_board"]["star_piles"]
        dice = lay.slice(obs, "dice").reshape(2, 6)
        assert [_onehot(d, 0, 6) + 1 for d in dice] == state["last_dice"]
        for j in range(n):  # seats from the observer's on (C4)
            s = (me + j) % n
            pl = state["players"][s]
            assert obs[lay.at("players", j, "energy")] == pl["energy"]
            assert obs[lay.at("players", j, "bubbles")] == pl["bubbles"]
            assert obs[lay.at("players", j, "stars")] == len(pl["stars"])
            assert obs[lay.at("players", j, "points")] == sum(pl["stars"])
            r, c = state["mopeds"][s]
            assert (_onehot(obs, lay.at("players", j, "row"), 5),
                    _onehot(obs, lay.at("players", j, "col"), 5)) == (r, c)
            held = [int(t in pl["orders"]) for t in TYPES]
            assert obs[lay.at("players", j, "holds"):][:NTYPES].tolist() == held
        r, c = state["mopeds"][me]
        assert obs[lay.at("cells", r * SIDE + c, "me")] == 1
        if state["marker"] is not None:
            r, c = state["marker"]
            assert obs[lay.at("cells", r * SIDE + c, "marker")] == 1
        for t, name in enumerate(TYPES):
            st = state["stacks"][name]
            assert obs[lay.at("types", t, "stack_n")] == st["count"]
            slot = state["order_board"]["orders"].index(name)
            assert _onehot(obs, lay.at("types", t, "slot"), 5) == slot
            if st["count"]:
                x = st["at"][0] * SIDE + st["at"][1]
                assert _onehot(obs, lay.at("cells", x, "stack"), 5) == t
        for x in range(NCELLS):
            kind = g.tiles.tiles[rec["cell_tile"][x]].kind
            assert _onehot(obs, lay.at("cells", x, "kind"), 3) == kind


RANGE_PHASES = {
    "rotate": {"honk"}, "swap": {"honk"}, "drive": {"honk", "drive"},
    "detour": {"honk", "drive"}, "cell": {"detour_pick", "place_stack"},
    "accept": {"accept"}, "decline": {"accept", "deliver"}, "deliver": {"deliver"},
}
RANGE_NAMES = {
    "rotate": "honk: rotate", "swap": "honk: swap", "drive": "drive out",
    "detour": "detour", "cell": ("park on", "put the rest of the stack"),
    "accept": "accept", "decline": ("decline", "do not deliver"), "deliver": "deliver (",
}


def test_every_legal_action_lies_in_a_range_of_its_phase_and_is_named_for_it():
    seen = set()
    for _, mask, state, rec, g in _random_rows(3, steps=120):
        lay = g.action_layout
        for a in np.flatnonzero(mask):
            f = next(f for f in lay if f.offset <= a < f.stop)
            assert state["phase"] in RANGE_PHASES[f.name], (a, f.name, state["phase"])
            assert g.action_name(rec, int(a)).startswith(RANGE_NAMES[f.name])
            seen.add(f.name)
    assert {"rotate", "swap", "drive", "detour", "cell", "accept", "decline"} <= seen


def test_action_constants_are_the_layout_ranges():
    lay = make_game("jakarta_traffic", num_players=2).action_layout
    assert [A_ROTATE, A_SWAP, A_DRIVE, A_DETOUR, A_CELL, A_ACCEPT, A_DECLINE,
            A_DELIVER] == [f.offset for f in lay]
    assert lay.field("swap").length == 4 * NCELLS and lay.field("deliver").length == NTYPES
