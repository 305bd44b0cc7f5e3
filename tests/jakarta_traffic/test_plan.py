"""The plan features (``jakarta_traffic/strategy/plan.py``) against a plain-Python reading of the
state dict, and the plan network (``agents/plan_policy.py``) that uses them.

The reference follows the rules page: a honk turns a tile clockwise or lays the spare
in its place (K5), a drive follows the path to the next parking spot (K3, K6); a turn is
a drive after at most one honk of a tile without stack, moped or marker; turns between
cells are a breadth-first search over those one-turn sets, 7 beyond 5 turns.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch as th

from tests.jakarta_traffic.positions import drive, game, position, rotate, vec_at
from tests.jakarta_traffic.test_observation_v1 import Position, cell_of_rc, random_games
from trafficenvs.jakarta_traffic.rules.layout import (
    A_CELL,
    A_DETOUR,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    TYPES,
)
from trafficenvs.jakarta_traffic.strategy.plan import (
    CELL_BOUNDS,
    CELL_FEATURE_NAMES,
    NO_DRIVE,
    PLAN_ACTIONS,
    PlanReader,
)
from trafficenvs.registry import make_game

FAR = 7

# --------------------------------------------------------------------------- the reference


def _honked(st, seat, a):
    """The state dict after honk ``a`` of seat ``seat`` (only the board changes here)."""
    st = copy.deepcopy(st)
    if a < A_SWAP:
        x, k = divmod(a - A_ROTATE, 3)
        kind, pat, rot, *addr = st["board"][x // 5][x % 5].split(" ", 3)
        spec = f"{kind} {pat} {(int(rot) + k + 1) % 4}"
        st["board"][x // 5][x % 5] = " ".join([spec, *addr])
    else:
        x, r = divmod(a - A_SWAP, 4)
        st["board"][x // 5][x % 5] = f"{st['spares'][seat]} {r}"
    return st


def _honks(st, seat, x, blocked):
    """Every honk of seat ``seat``'s options (rotations, its spare) of a tile that may be
    honked, except the tile ``x`` a turn starts on."""
    for y in range(25):
        if y == x or y in blocked:
            continue
        yield from (A_ROTATE + 3 * y + k for k in range(3))
        if not st["board"][y // 5][y % 5].startswith("building"):
            yield from (A_SWAP + 4 * y + r for r in range(4))


def _ends(g, st, seat, x):
    """Where each drive out of ``x`` parks (None: no drive)."""
    P = Position(g, st)
    P.pos[seat] = x
    return [None if (f := P.drive(seat, e)) is None else f[0] for e in range(4)]


_GAMES = {}


def default_game(n):
    if n not in _GAMES:
        _GAMES[n] = make_game("jakarta_traffic", num_players=n)
    return _GAMES[n]


def _blocked(g, st):
    P = Position(g, st)
    out = set(P.stack_at) | set(P.pos)
    if st["marker"] is not None:
        out.add(cell_of_rc(st["marker"]))
    return out


def ref_distances(g, st, seat):
    """Turns between every two cells, a honk of seat ``seat``'s options per turn."""
    blocked = _blocked(g, st)
    one = []
    for x in range(25):
        reach = {d for d in _ends(g, st, seat, x) if d is not None}
        for a in _honks(st, seat, x, blocked):
            reach |= {d for d in _ends(g, _honked(st, seat, a), seat, x) if d is not None}
        one.append(reach)
    dist = np.full((25, 25), FAR)
    for s in range(25):
        dist[s, s] = 0
        seen, front = {s}, {s}
        for level in range(1, 6):
            front = set().union(*(one[x] for x in front)) - seen
            for y in front:
                dist[s, y] = level
            seen |= front
    return dist


def ref_cells(g, st, seat):
    """The per-cell features of seat ``seat`` (names: ``CELL_FEATURE_NAMES``)."""
    P = Position(g, st)
    dist = ref_distances(g, st, seat)
    me = P.pos[seat]
    held = st["players"][seat]["orders"]
    others = [P.pos[s] for s in range(P.n) if s != seat]
    takeable = {t for t in TYPES if P.may_take(seat, t, energy=1)}
    stacks = [x for x, t in P.stack_at.items() if t in takeable]
    out = []
    for x in range(25):
        out.append({
            "my_turns": dist[me, x],
            "their_turns": min(dist[q, x] for q in others),
            "deliver_pays": sum(P.pays(t) for t in held if P.address_of[t] == x),
            "can_take_stack": int(P.stack_at.get(x) in takeable),
            "charging": int(P.kind[x] == "charging"),
            "building": int(P.kind[x] == "building"),
            "turns_to_delivery": min([dist[x, P.address_of[t]] for t in held], default=FAR),
            "turns_to_stack": min([dist[x, c] for c in stacks], default=FAR),
            "turns_to_charging": min([dist[x, c] for c in range(25)
                                      if P.kind[c] == "charging" and c != x], default=FAR),
            "others_here": others.count(x),
            "me_here": int(x == me),
            "next_pays": sum(P.pays(t) for t in st["players"][(seat + 1) % P.n]["orders"]
                             if P.address_of[t] == x),
        })
    return out


# --------------------------------------------------------------------------- positions


def plan_positions(n, count, seed):
    """(observation, mask, state dict, seat to move) of random positions of mixed greedy
    and random play, default tiles."""
    found = []
    for venv, out in random_games({"num_players": n}, num_envs=8, steps=200, seed=seed):
        if len(found) >= count:
            break
        for i in range(0, 8, 3):
            if len(found) < count and not out.terminated[i]:
                found.append((out.observation[i].copy(), out.action_mask[i].copy(),
                              venv.state_dict(i), int(out.current_player[i])))
    return found


def _reader(g):
    return PlanReader(g.cfg, g.obs_dim)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_each_honk_shows_where_my_drives_would_end_after_it(n):
    """Every legal honk in the honk phase: my four drives on the honked board (K5, K6);
    every drive: where it parks; the detour: no drive."""
    checked = 0
    g = default_game(n)
    for ob, mask, st, seat in plan_positions(n, 400, seed=n):
        if st["phase"] != "honk":
            continue
        ends, _, _ = _reader(g)(ob[None])
        me = cell_of_rc(st["mopeds"][seat])
        for a in np.flatnonzero(mask[:PLAN_ACTIONS]):
            if a < A_DRIVE:
                want = _ends(g, _honked(st, seat, a), seat, me)
            elif a < A_DETOUR:
                want = [_ends(g, st, seat, me)[a - A_DRIVE], None, None, None]
            else:
                want = [None] * 4
            got = [None if v == NO_DRIVE else int(v) for v in ends[0, a]]
            assert got == want, (a, st)
            checked += 1
    assert checked > 3000


@pytest.mark.parametrize("n", [2, 3, 4])
def test_each_honk_shows_where_the_next_players_drives_would_end_after_it(n):
    """The next player's moped (the one my honk may cut off): after every legal honk,
    its four drives on the honked board, my spare laid for a swap (K5, K6); after a
    drive or the detour, its drives as the board lies."""
    checked = 0
    g = default_game(n)
    for ob, mask, st, seat in plan_positions(n, 400, seed=20 + n):
        if st["phase"] != "honk":
            continue
        _, _, theirs = _reader(g)(ob[None])
        nxt = (seat + 1) % n
        q = cell_of_rc(st["mopeds"][nxt])
        for a in np.flatnonzero(mask[:PLAN_ACTIONS]):
            board = _honked(st, seat, a) if a < A_DRIVE else st
            want = _ends(g, board, nxt, q)
            got = [None if v == NO_DRIVE else int(v) for v in theirs[0, a]]
            assert got == want, (a, st)
            checked += 1
    assert checked > 3000


@pytest.mark.parametrize("n", [2, 4])
def test_cell_features_count_turns_and_the_next_stops_like_the_table(n):
    """Each cell's features from the state dict (the reference above), any phase."""
    g = default_game(n)
    for ob, _, st, seat in plan_positions(n, 40, seed=10 + n):
        # the observation is the seat to move's: features are that seat's
        _, cells, _ = _reader(g)(ob[None])
        want = ref_cells(g, st, seat)
        for x in range(25):
            got = dict(zip(CELL_FEATURE_NAMES, cells[0, x].tolist()))
            assert got == {k: int(v) for k, v in want[x].items()}, (x, st)


def test_the_features_stay_within_their_bounds():
    g = default_game(3)
    for ob, _, _, _ in plan_positions(3, 300, seed=5):
        ends, cells, theirs = _reader(g)(ob[None])
        assert (ends <= NO_DRIVE).all() and (theirs <= NO_DRIVE).all()
        assert (cells <= CELL_BOUNDS.astype(np.uint8)).all()


DRAWN = """
Ch0 Ps0 Ph0 Bh0BC Ph0
Ph0 Ph0 Ph0 Ph0 Ch0
Bb0Sp Ph0 Ph0 Ph0 Bs0Wo
Ph0 Bb0Re Ph0 Ch0 Ph0
Ch0 Ph0 Ph0 Bs0Ma Ch0
"""


def test_turning_a_bridge_on_my_path_changes_where_my_drives_end():
    """Drawn (2 players, test tiles): my moped on the hub r1c1, a bridge on r1c2 (N and
    S to its spot, E-W across). As it lies: north goes by the alley to r1c2's N end and
    parks there (r1c2), east crosses the bridge to r1c3, south and west (by the alley
    to r2c1's W end) park on r2c1. Turned a quarter: north crosses it to r2c2, east
    parks on r1c2. A half turn of the bridge, or turning the hub r4c4, changes nothing."""
    g = game(2)
    venv = vec_at(g, position(g, DRAWN, mopeds=[(0, 0), (4, 0)]))
    ob = venv._buf.observation[:1].copy()  # noqa: SLF001
    ends, _, _ = PlanReader(g.cfg, g.obs_dim)(ob)
    r1c2, r1c3, r2c1, r2c2 = 1, 2, 5, 6
    assert ends[0, rotate((0, 1), 1)].tolist() == [r2c2, r1c2, r2c1, r2c1]
    as_lies = [r1c2, r1c3, r2c1, r2c1]
    for a in (rotate((0, 1), 2), rotate((3, 3), 1)):
        assert ends[0, a].tolist() == as_lies
    assert [ends[0, drive(e)].tolist() for e in "NESW"] == [
        [d, NO_DRIVE, NO_DRIVE, NO_DRIVE] for d in as_lies]
    assert ends[0, A_DETOUR].tolist() == [NO_DRIVE] * 4


def test_the_drawn_position_counts_turns_to_the_cells():
    """The same position: r1c2 and r1c3 are one turn away, and so is r2c2 (after
    turning the bridge); my own tile is 0 turns away and I am there."""
    g = game(2)
    st = position(g, DRAWN, mopeds=[(0, 0), (4, 0)])
    venv = vec_at(g, st)
    _, cells, _ = PlanReader(g.cfg, g.obs_dim)(venv._buf.observation[:1].copy())  # noqa: SLF001
    mine = cells[0, :, CELL_FEATURE_NAMES.index("my_turns")]
    assert mine[0] == 0 and mine[1] == mine[2] == mine[6] == 1
    assert cells[0, 0, CELL_FEATURE_NAMES.index("me_here")] == 1
    assert cells[0, 20, CELL_FEATURE_NAMES.index("others_here")] == 1
    want = ref_cells(g, st, 0)
    for x in range(25):
        assert dict(zip(CELL_FEATURE_NAMES, cells[0, x].tolist())) == {
            k: int(v) for k, v in want[x].items()}


def test_bad_observations_are_refused():
    g = default_game(2)
    r = _reader(g)
    with pytest.raises(ValueError, match="uint8 observations of shape"):
        r(np.zeros((2, g.obs_dim), np.float32))
    with pytest.raises(ValueError, match="uint8 observations of shape"):
        r(np.zeros((2, g.obs_dim + 1), np.uint8))


def test_one_row_gives_the_same_features_alone_or_in_a_batch():
    pos = plan_positions(2, 64, seed=3)
    obs = np.stack([p[0] for p in pos])
    g = default_game(2)
    every = PlanReader(g.cfg, g.obs_dim, threads=2)(obs)
    for i in (0, 17, 63):
        alone = _reader(g)(obs[i:i + 1])
        for a, b in zip(alone, every):
            assert (a[0] == b[i]).all()


# --------------------------------------------------------------------------- the network


def plan_network(n=2, net=(32, 32)):
    from sb3_contrib import MaskablePPO

    from trafficenvs.agents import make_greedy
    from trafficenvs.agents.plan_policy import PlanPolicy, plan_policy_kwargs
    from trafficenvs.agents.sb3_bridge import SelfPlayVecEnv

    g = default_game(n)
    env = SelfPlayVecEnv("jakarta_traffic", 4, [make_greedy(g)], seed=0, num_players=n)
    return MaskablePPO(PlanPolicy, env, n_steps=16, batch_size=32,
                       policy_kwargs=plan_policy_kwargs(n, net), device="cpu", seed=0)


def test_a_move_is_scored_by_the_best_cell_its_drives_reach_less_the_next_players():
    """With the flat logits zero, a honk or drive's logit is the best drive score of the
    cells my drives reach after it (the no-drive score when none) less the best worth
    to the next player of the cells its drives reach after it (0 when none); a cell
    action's logit is the cell's second score."""
    model = plan_network()
    head = model.policy.action_net
    with th.no_grad():
        for p in head.flat.parameters():
            p.zero_()
        for p in head.no_drive.parameters():
            p.zero_()
        head.no_drive.bias.fill_(-3.0)
        head.cell[2].weight.normal_()  # scores that differ from cell to cell
    pos = plan_positions(2, 20, seed=4)
    obs = np.stack([p[0] for p in pos])
    pol = model.policy
    feats = pol.extract_features(th.as_tensor(obs), pol.pi_features_extractor)
    latent = pol.mlp_extractor.forward_actor(feats)
    with th.no_grad():
        score = head.cell_scores(latent)
        logits = head(latent)
    ends, _, theirs = _reader(default_game(2))(obs)
    subtracted = 0
    for i in range(len(obs)):
        for a in range(PLAN_ACTIONS):
            mine = [int(c) for c in ends[i, a] if c != NO_DRIVE]
            next_cells = [int(c) for c in theirs[i, a] if c != NO_DRIVE]
            want = max(score[i, mine, 0]).item() if mine else -3.0
            if next_cells:
                want -= max(score[i, next_cells, 2]).item()
                subtracted += 1
            assert logits[i, a].item() == pytest.approx(want, abs=1e-5)
        for x in range(25):
            assert logits[i, A_CELL + x].item() == pytest.approx(score[i, x, 1].item(),
                                                                  abs=1e-5)
    assert subtracted > 0


def test_an_older_plan_network_widens_to_play_exactly_as_it_did():
    """A plan network from before the next player's features (its cell scorer one input
    and one output short): widened, the new inputs and outputs start at zero, so every
    logit and value is the old network's."""
    from trafficenvs.agents.plan_policy import widen_plan_state

    model = plan_network()
    pol = model.policy
    z = pol.features_extractor.sizes
    obs_dim = pol.features_extractor.obs_dim
    new = pol.state_dict()
    old = {k: v.clone() for k, v in new.items()}
    keep = [c for x in range(z.cells) for c in range(obs_dim + x * z.per_cell,
                                                     obs_dim + (x + 1) * z.per_cell - 1)]
    cols = list(range(obs_dim)) + keep
    for k in ("mlp_extractor.policy_net.0.weight", "mlp_extractor.value_net.0.weight"):
        old[k] = new[k][:, cols].clone()
    w = new["action_net.cell.0.weight"]
    old["action_net.cell.0.weight"] = th.cat([w[:, :z.per_cell - 1], w[:, z.per_cell:]], 1)
    old["action_net.cell.2.weight"] = new["action_net.cell.2.weight"][:2].clone()
    old["action_net.cell.2.bias"] = new["action_net.cell.2.bias"][:2].clone()
    # what the old network computed: the new one with the new weights at zero
    with th.no_grad():
        for k in ("mlp_extractor.policy_net.0.weight", "mlp_extractor.value_net.0.weight"):
            dead = sorted(set(range(new[k].shape[1])) - set(cols))
            pol.state_dict()[k][:, dead] = 0
        pol.state_dict()["action_net.cell.0.weight"][:, z.per_cell - 1] = 0
        pol.state_dict()["action_net.cell.2.weight"][2] = 0
        pol.state_dict()["action_net.cell.2.bias"][2] = 0
    obs = th.as_tensor(np.stack([p[0] for p in plan_positions(2, 30, seed=8)]))
    with th.no_grad():
        want = pol.get_distribution(obs).distribution.logits, pol.predict_values(obs)
        pol.load_state_dict({k: v.normal_() if v.is_floating_point() and "inv_" not in k
                             else v for k, v in pol.state_dict().items()})
        pol.load_state_dict(widen_plan_state(old, pol))
        got = pol.get_distribution(obs).distribution.logits, pol.predict_values(obs)
    for a, b in zip(want, got):
        assert th.allclose(a, b, atol=1e-5)


def test_a_plan_checkpoint_plays_only_legal_moves_and_loads_back_the_same(tmp_path):
    from sb3_contrib import MaskablePPO

    from trafficenvs.agents.ppo import PPOPolicy

    model = plan_network(3)
    model.learn(64)
    path = tmp_path / "plan.zip"
    model.save(path)
    back = PPOPolicy(MaskablePPO.load(path, device="cpu").policy)
    pos = plan_positions(3, 50, seed=6)
    obs = np.stack([p[0] for p in pos])
    mask = np.stack([p[1] for p in pos])
    a = PPOPolicy(model.policy).act(obs, mask, np.zeros(len(obs), np.int64))
    assert mask[np.arange(len(a)), a].all()
    assert (back.act(obs, mask, np.zeros(len(obs), np.int64)) == a).all()


def test_a_run_starts_from_a_plan_checkpoint_of_the_same_shape_as_saved(tmp_path):
    """``--init`` with the current plan network: every weight as saved (no widening)."""
    from trafficenvs.agents.plan_policy import load_plan_init

    model = plan_network()
    model.learn(32)
    path = tmp_path / "plan.zip"
    model.save(path)
    other = plan_network()
    load_plan_init(other, str(path))
    for k, v in model.policy.state_dict().items():
        assert th.equal(other.policy.state_dict()[k], v), k


def test_the_plan_network_refuses_another_player_count():
    from trafficenvs.agents.plan_policy import PlanExtractor, plan_reader

    g = default_game(3)
    with pytest.raises(ValueError, match="for 2 players expects observations"):
        PlanExtractor(g.observation_box(), num_players=2)
    with pytest.raises(ValueError, match="traffic_jam has no plan features"):
        plan_reader(2, "traffic_jam")


def test_train_arch_plan_distils_trains_and_plays_in_the_arena(tmp_path):
    import json

    from trafficenvs.cli import main

    out = tmp_path / "plan.zip"
    assert main([
        "train", "jakarta_traffic", "--players", "2", "--arch", "plan", "--timesteps", "512",
        "--teacher", "greedy", "--teacher-decisions", "600", "--teacher-rounds", "1",
        "--teacher-epochs", "1", "--num-envs", "8", "--n-steps", "32", "--batch-size", "64",
        "--eval-every", "0", "--eval-games", "10", "--net", "32,32", "--opponents", "greedy",
        "--out", str(out), "--no-progress",
    ]) == 0
    assert json.loads(out.with_suffix(".json").read_text())["config"]["arch"] == "plan"
    assert main(["arena", "jakarta_traffic", "--players", "2", "--games", "6",
                 "--agents", f"greedy,ppo:{out}"]) == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "traffic_jam", "--arch", "plan"], "traffic_jam has no plan features"),
    (["train", "jakarta_traffic", "--arch", "plan", "--backend", "rllib"], "sb3 backend"),
    # the greedy prior (tests/agents/test_prior_policy.py) is a part of the plan network
    (["train", "jakarta_traffic", "--prior-beta", "3"], "--prior-beta needs --arch plan"),
    (["train", "jakarta_traffic", "--prior-beta", "3", "--backend", "rllib"], "sb3 backend"),
])
def test_arch_plan_elsewhere_is_a_users_mistake(argv, message, capsys):
    from trafficenvs.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
