"""The SB3 bridge: reward crediting (PettingZoo #1147), seats, masks, episode ends."""

from __future__ import annotations

import numpy as np
import pytest

from tests.traffic_jam.positions import cards, pair, position

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from trafficenvs.agents import RandomPolicy, make_greedy  # noqa: E402
from trafficenvs.agents.sb3_bridge import (  # noqa: E402
    OpponentPool,
    SelfPlayVecEnv,
    SingleGameEnv,
)
from trafficenvs.registry import make_game  # noqa: E402

G2 = make_game("traffic_jam", num_players=2)
K = G2.num_kinds
LAYOUT = G2.obs_layout
#: my joy, my victory-pile size, then the other seat's (read by layout name)
TOTALS = [LAYOUT.at("seats", j, part) for j in (0, 1) for part in ("joy", "cards")]


def last_trip(rich_seat: int) -> dict:
    """Round 3, trip 2, stage 2, seat 0 to move; every car will land in a day jam.

    roads (stage 1):  day: truck truck      + van van | van truck  -> size 7 > 2: JAM
    victory piles:    rich seat: morning van (4) + day cab (4) = 8 joy in 2 cards
                      other seat: morning bus (2)              = 2 joy in 1 card
    Nobody scores this trip, so the rich seat wins the game.
    """
    victory = [[], []]
    victory[rich_seat] = cards(G2, "morning van, day cab")
    victory[1 - rich_seat] = cards(G2, "morning bus")
    return position(G2, round=2, trip=1, stage=1, to_move=0,
                    roads=cards(G2, "day truck, day truck"),
                    hands=[cards(G2, "day van, day van"), cards(G2, "day van, day truck")],
                    victory=victory)


def bridge(num_envs: int = 1, opponents=None, **kw) -> SelfPlayVecEnv:
    env = SelfPlayVecEnv("traffic_jam", num_envs, opponents or RandomPolicy(0), seed=3,
                         num_players=2, **kw)
    env.reset()
    return env


@pytest.mark.parametrize("rich_seat, credited", [(0, 1.0), (1, -1.0)])
def test_learner_is_credited_its_own_result_when_the_opponent_ends_the_game(rich_seat, credited):
    """PettingZoo #1147: the learner (seat 0) moves, the opponent's move ends the game.

    The SB3 reward of the learner's move is the learner's result, not the opponent's.
    """
    env = bridge()
    env.load_state_dict(0, last_trip(rich_seat), learner_seat=0)
    obs, rew, done, infos = env.step(np.array([pair(G2, *cards(G2, "day van, day van"))]))
    assert done[0]
    assert rew[0] == credited
    assert infos[0]["episode"]["r"] == credited
    assert infos[0]["learner_seat"] == 0


@pytest.mark.parametrize("rich_seat, credited", [(1, 1.0), (0, -1.0)])
def test_learner_moving_last_is_credited_its_own_result(rich_seat, credited):
    """The opponent (seat 0) moves inside the bridge, then the learner's move ends it."""
    env = bridge()
    env.load_state_dict(0, last_trip(rich_seat), learner_seat=1)
    assert env.venv.last.current_player[0] == 1
    _, rew, done, infos = env.step(np.array([pair(G2, *cards(G2, "day van, day truck"))]))
    assert done[0]
    assert rew[0] == credited


def test_terminal_observation_is_the_final_position_from_the_learners_seat():
    """The opponent made the last move, yet the final view is the learner's: its own
    joy and pile first (8 joy, 2 cards), then the opponent's (2 joy, 1 card)."""
    env = bridge()
    env.load_state_dict(0, last_trip(0), learner_seat=0)
    obs, _, done, infos = env.step(np.array([pair(G2, *cards(G2, "day van, day van"))]))
    term = infos[0]["terminal_observation"]
    assert term[TOTALS].tolist() == [8, 2, 2, 1]
    assert term[:K].sum() == 0  # the learner's hand is empty at the end
    assert infos[0]["TimeLimit.truncated"] is False
    # the returned observation is the learner's first decision of the next game
    assert obs[0, :K].sum() in (5.0, 6.0) and obs[0, TOTALS].tolist() == [0, 0, 0, 0]
    assert env.venv.last.current_player[0] == env.learner_seat[0]


def test_episode_returns_are_the_learners_game_results():
    """Greedy as the learner against random opponents, 64 games at once: every episode
    return is a C2 result (+1, -1 or 0 in 2 players) and greedy's mean is clearly
    positive; crediting the opponent's reward would make it clearly negative."""
    env = bridge(64)
    me = make_greedy(G2)
    obs = env.reset()
    returns = []
    while len(returns) < 400:
        b = env.venv.last
        obs, rew, done, infos = env.step(me.act(obs, env.action_masks(), b.current_player))
        returns += [infos[i]["episode"]["r"] for i in np.flatnonzero(done)]
    assert set(returns) <= {1.0, -1.0, 0.0}
    assert np.mean(returns) > 0.5


def test_seats_rotate_across_rows_and_games():
    """Row i's k-th game seats the learner at (i + k) % N, and every observation the
    learner gets is one where its seat is to move."""
    env = bridge(6)
    assert env.learner_seat.tolist() == [0, 1, 0, 1, 0, 1]
    rp = RandomPolicy(1)
    obs = env.reset()
    seen: dict[int, list[int]] = {i: [] for i in range(6)}
    for _ in range(60):
        b = env.venv.last
        assert np.array_equal(b.current_player, env.learner_seat)
        obs, rew, done, infos = env.step(rp.act(obs, env.action_masks(), b.current_player))
        for i in np.flatnonzero(done):
            seen[i].append(infos[i]["learner_seat"])
    for i, seats in seen.items():
        assert len(seats) >= 4
        assert seats == [(i + k) % 2 for k in range(len(seats))]


def test_action_masks_are_the_learners_legal_moves():
    """Stage 1: the legal actions are exactly the kinds in the learner's hand."""
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    env = bridge(8)
    obs = env.reset()
    assert is_masking_supported(env)
    masks = get_action_masks(env)
    assert masks.shape == (8, G2.num_actions) and masks.dtype == bool
    stage1 = obs[:, LAYOUT.field("stage").offset] == 1  # stage one-hot: first vehicles
    assert stage1.any()
    for i in np.flatnonzero(stage1):
        assert np.array_equal(np.flatnonzero(masks[i]), np.flatnonzero(obs[i, :K]))


def test_move_limit_cut_is_a_time_limit_truncation():
    """max_cycles=3: games are cut after 6 moves, rewarded 0, and SB3 is told to
    bootstrap (``TimeLimit.truncated``), with the learner's last view."""
    env = bridge(4, max_cycles=3)
    obs = env.reset()
    rp = RandomPolicy(2)
    ends = []
    for _ in range(10):
        obs, rew, done, infos = env.step(rp.act(obs, env.action_masks(), None))
        ends += [(rew[i], infos[i]) for i in np.flatnonzero(done)]
    assert ends
    for r, info in ends:
        assert r == 0.0 and info["TimeLimit.truncated"] is True
        assert info["terminal_observation"].shape == (G2.obs_dim,)


def test_opponent_pool_shares_games_by_group():
    """Groups share equally however many members each has."""
    pool = OpponentPool(seed=0)
    pool.add(RandomPolicy(0), "random")
    for k in range(3):
        pool.add(RandomPolicy(k, name=f"self@{k}"), "self")
    assert np.allclose(pool.probabilities(), [0.5, 1 / 6, 1 / 6, 1 / 6])
    pool.max_per_group = 3
    idx = pool.add(RandomPolicy(9, name="self@9"), "self")
    assert idx == 1 and pool.policies[1].name == "self@9"  # the oldest was replaced


def test_single_game_view_passes_sb3_check_env():
    from stable_baselines3.common.env_checker import check_env

    env = SingleGameEnv("traffic_jam", RandomPolicy(0), num_players=2)
    check_env(env, warn=True)
    obs, info = env.reset(seed=5)
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        obs, r, term, trunc, info = env.step(int(legal[0]))
        total += r
        done = term or trunc
    assert total in (1.0, -1.0, 0.0)
    assert obs[:K].sum() == 0  # the final view: hand played out


def test_maskable_ppo_learns_on_the_bridge_and_plays_from_its_checkpoint(tmp_path):
    """A few hundred steps of MaskablePPO run, save, and load back as an agent."""
    from sb3_contrib import MaskablePPO

    from trafficenvs.agents.ppo import DEFAULT_POLICY_KWARGS
    from trafficenvs.agents.zoo import make_agent

    env = SelfPlayVecEnv("traffic_jam", 8, RandomPolicy(0), seed=0, num_players=2)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1,
                        policy_kwargs=DEFAULT_POLICY_KWARGS, seed=0, device="cpu")
    model.learn(256)
    path = tmp_path / "tj.zip"
    model.save(path)
    agent = make_agent(f"ppo:{path}", G2)
    obs = env.reset()
    acts = agent.act(obs, env.action_masks(), None)
    assert env.action_masks()[np.arange(8), acts].all()
    with pytest.raises(ValueError, match="model expects"):
        make_agent(f"ppo:{path}", make_game("traffic_jam", num_players=3))
