"""stable-baselines3 bridge: the learner holds one seat per game, opponents the rest.

:class:`SelfPlayVecEnv` is an SB3 ``VecEnv`` over the vectorised env. Row ``i`` is
one game in which the learner sits at seat ``(i + k) % N`` in its ``k``-th game
(seats rotate across rows and over time, so every seat is learned equally), and an
opponent drawn from an :class:`OpponentPool` plays every other seat. One SB3 step
is: the learner's action in every game, then opponent moves, only in the games
where it is not yet the learner's turn again, until it is (or the game has ended
and the next one has reached the learner's seat).

Reward crediting (the bug of PettingZoo's SB3 tutorial, PettingZoo issue #1147,
which returned the reward of the agent to move *next*): the reward of an SB3 step
is the sum, over every env step from the learner's move up to its next turn, of
the reward column of *the learner's own seat* (``VecStep.rewards`` is in absolute
seat order). No reward of any other seat is ever read. Rewards of a new game that
arrive before the learner's first move in it go to that first move.

Episode ends: when a game ends (on the learner's move or an opponent's), the step
reports ``done``, ``info["terminal_observation"]`` is the final position seen from
*the learner's seat* (whoever moved last), ``info["TimeLimit.truncated"]`` marks a
move-limit cut (so SB3 bootstraps it), ``info["episode"]`` has the return and
length (SB3's ``ep_rew_mean``), and the returned observation is the learner's first
decision in the next game. ``action_masks()`` gives sb3-contrib's MaskablePPO the
legal actions of every row.

:class:`SingleGameEnv` is the same thing as a ``gymnasium.Env`` over one game.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from trafficenvs.agents.policy import Policy, act_rows
from trafficenvs.core.game import Game
from trafficenvs.registry import as_game, make_vec


class OpponentPool:
    """Opponent policies with sampling weights by *group*.

    ``pool.add(policy, group)``: policies of a group share its weight equally, so
    ``weights={"random": 1, "greedy": 1, "self": 1}`` plays a third of the games
    against random, a third against greedy and a third against the frozen past
    learners, however many of those there are. ``max_per_group`` bounds a group;
    adding beyond it replaces the group's oldest member (in place: games under way
    against it go on against its successor).
    """

    def __init__(self, weights: dict[str, float] | None = None, max_per_group: int = 8,
                 seed: int | None = None):
        self.policies: list[Policy] = []
        self.groups: list[str] = []
        self.weights = dict(weights or {})
        self.max_per_group = max_per_group
        self._next_slot: dict[str, int] = {}
        self.rng = np.random.default_rng(seed)

    def add(self, policy: Policy, group: str | None = None) -> int:
        """Add ``policy`` to ``group`` (default: its name); returns its index."""
        group = group or policy.name
        self.weights.setdefault(group, 1.0)
        members = [i for i, g in enumerate(self.groups) if g == group]
        if len(members) >= self.max_per_group:
            k = self._next_slot.get(group, 0)
            idx = members[k % len(members)]
            self._next_slot[group] = k + 1
            self.policies[idx] = policy
            return idx
        self.policies.append(policy)
        self.groups.append(group)
        return len(self.policies) - 1

    def probabilities(self) -> np.ndarray:
        """Each policy's chance of being drawn for a game."""
        w = np.zeros(len(self.policies))
        present = {g: self.groups.count(g) for g in set(self.groups)}
        total = sum(self.weights[g] for g in present)
        if total <= 0:
            raise ValueError("opponent pool weights sum to zero")
        for i, g in enumerate(self.groups):
            w[i] = self.weights[g] / present[g] / total
        return w

    def sample(self, n: int) -> np.ndarray:
        """Indices of ``n`` opponents, one per new game."""
        if not self.policies:
            raise ValueError("the opponent pool is empty")
        return self.rng.choice(len(self.policies), size=n, p=self.probabilities())

    def seed(self, seed: int) -> None:
        """Reseed the draws and every member that can be reseeded (``policy.seed``)."""
        self.rng = np.random.default_rng(seed)
        for j, p in enumerate(self.policies):
            if hasattr(p, "seed") and callable(p.seed):
                p.seed(seed + 1 + j)


def as_pool(opponents: OpponentPool | Policy | Sequence[Policy]) -> OpponentPool:
    if isinstance(opponents, OpponentPool):
        return opponents
    pool = OpponentPool()
    for p in [opponents] if hasattr(opponents, "act") else opponents:
        pool.add(p)
    return pool


def set_torch_threads(n: int) -> None:
    """Set torch's intra-op threads to ``n`` (why: see :class:`SelfPlayVecEnv`)."""
    import torch

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"torch_threads must be an int >= 1 or None, got {n!r}")
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


class SelfPlayVecEnv(VecEnv):
    """SB3 ``VecEnv``: ``num_envs`` games, the learner in one seat of each (see module).

    ``env_id`` is a :class:`~trafficenvs.core.game.Game` or an env id made with
    ``options`` (``num_players`` and the game's own).

    ``torch_threads`` (default 1): torch's thread count is set to it, for the whole
    process, when the env is made. Measured: with torch's default (one thread per
    core) the opponents' and the learner's small networks ran 12-54x slower than on one
    thread, their threads fighting numba's for the cores. ``None`` leaves torch as it is.

    ``views=True``: ``reset``, ``step_wait`` and ``action_masks`` return the env's live
    buffers (the observations, the done flags, the read-only masks), written in place
    by the next step, instead of copies. For a trainer that copies each step once into
    its own rollout storage (``agents/trainer.py``); SB3 keeps references, so it
    needs the copies (the default).
    """

    def __init__(
        self,
        env_id: Game | str,
        num_envs: int,
        opponents: OpponentPool | Policy | Sequence[Policy],
        seed: int | None = None,
        max_cycles: int | None = None,
        potential: float = 0.0,
        potential_gamma: float = 1.0,
        torch_threads: int | None = 1,
        views: bool = False,
        **options: Any,
    ):
        self.views = bool(views)
        if torch_threads is not None:
            set_torch_threads(torch_threads)
        self.venv = make_vec(as_game(env_id, **options), num_envs=num_envs,
                             max_cycles=max_cycles)
        self.game = self.venv.game
        self.pool = as_pool(opponents)
        self.render_mode = None
        g = self.game
        obs_space = g.observation_box()
        super().__init__(num_envs, obs_space, spaces.Discrete(g.num_actions))
        #: Gymnasium ``VectorEnv`` names for the per-game spaces (SB3 calls them
        #: ``observation_space`` / ``action_space``)
        self.single_observation_space = obs_space
        self.single_action_space = self.action_space
        n = num_envs
        self.num_players = g.num_players
        self.learner_seat = np.zeros(n, np.int64)
        self.opponent = np.zeros(n, np.int64)
        self.games_started = np.zeros(n, np.int64)
        self._rows = np.arange(n)
        self._all = np.ones(n, bool)
        self._acc = np.zeros(n, np.float64)
        self._carry = np.zeros(n, np.float64)
        self._ep_ret = np.zeros(n, np.float64)
        self._ep_len = np.zeros(n, np.int64)
        self._done = np.zeros(n, bool)
        self._trunc = np.zeros(n, bool)
        self._term_obs = np.zeros((n, g.obs_dim), g.obs_dtype)
        self._info_extra: list[dict[str, Any]] = [{} for _ in range(n)]
        self._actions: np.ndarray | None = None
        self._default_seed = seed
        #: env steps (every seat's moves) since construction, for throughput figures
        self.env_steps = 0
        #: seconds spent in :meth:`step_wait` (the games, the opponents' moves and
        #: the learner's rewards), for the trainers' time shares
        self.step_seconds = 0.0
        self._phi = np.zeros(n, np.float64)
        self._potential_rows: Any = None
        #: weight and discount of the potential-based shaping (:meth:`set_potential`)
        self.potential = 0.0
        self.potential_gamma = 1.0
        self.set_potential(potential, potential_gamma)

    # -- shaping ----------------------------------------------------------------
    def set_potential(self, weight: float, gamma: float | None = None) -> None:
        """Shape the learner's reward by ``weight * (gamma * phi(s') - phi(s))`` (Ng et
        al. 1999; ``gamma``: the learner's discount, kept from the last call, first 1),
        where phi is the game's own position estimate for the learner's seat (its
        ``evaluate`` verb, the search agents' cut-off value, in the result's scale) at
        each of its decisions, and 0 once the game is over.

        Why: the result comes once, after 40-400 decisions; the estimate's change
        across one decision and the opponents' answers to it credits that decision at
        once. Being a difference of potentials it adds only ``-weight * phi(s_0)`` to
        a game's discounted return, so the policy that wins most is still the best one, and
        annealing ``weight`` to 0 (``trafficenvs train --potential``) ends training on
        the true reward. The estimate reads the whole record but, as in the searches,
        only what every seat sees: it never looks at hidden cards or the generator.
        ``weight`` 0 turns it off. A ``ValueError`` for a game without an estimate."""
        weight = float(weight)
        if not np.isfinite(weight) or weight < 0:
            raise ValueError(f"potential weight must be a finite number >= 0, got {weight}")
        if gamma is not None:
            if not 0.0 < float(gamma) <= 1.0:
                raise ValueError(f"potential gamma must be in (0, 1], got {gamma}")
            self.potential_gamma = float(gamma)
        if weight > 0 and self._potential_rows is None:
            from trafficenvs.agents.search import compiled_kernels
            from trafficenvs.core.verbs import EVAL_SCRATCH, has_verb

            if not has_verb(self.game.record_dtype, "evaluate"):
                raise ValueError(f"{self.game.name} has no position estimate (evaluate verb) "
                                 f"for potential shaping")

            n = self.num_envs
            self._potential_rows = (compiled_kernels().evaluate_rows,
                                    np.zeros((n, self.num_players), np.float64),
                                    np.zeros((n, EVAL_SCRATCH), np.float64))
            self._phi = self._phi_now()
        self.potential = weight

    def _phi_now(self) -> np.ndarray:
        """The estimate of every row's position for its learner (see :meth:`set_potential`)."""
        fn, ret, evs = self._potential_rows
        out = np.zeros(self.num_envs, np.float64)
        fn(self.venv.records, self.game.cfg, self.learner_seat, ret, evs, out, threads=1)
        return out

    def _shaped(self) -> np.ndarray:
        """This step's shaping per row (0 without a potential); the rows' potentials
        move on to the positions the learner now faces."""
        if self._potential_rows is None:
            return np.zeros(self.num_envs)
        phi = self._phi_now()
        # a game that ended this step: its end has potential 0; the new game starts
        # from its own first position's (that start carries no shaping)
        shaped = self.potential * (self.potential_gamma * np.where(self._done, 0.0, phi)
                                   - self._phi)
        self._phi = phi
        return shaped

    # -- games ------------------------------------------------------------------
    def _start_games(self, rows: np.ndarray) -> None:
        """Seat the learner and draw an opponent for the new games in ``rows``."""
        self.learner_seat[rows] = (rows + self.games_started[rows]) % self.num_players
        self.games_started[rows] += 1
        self.opponent[rows] = self.pool.sample(len(rows))

    def _collect(self, out: Any, active: np.ndarray) -> None:
        """Credit the learner's own seat's rewards of one env step; handle game ends."""
        self.env_steps += int(active.sum())
        r = out.rewards[self._rows, self.learner_seat]
        self._acc += np.where(self._done, 0.0, r)
        self._carry += np.where(self._done, r, 0.0)
        ended = (out.terminated | out.truncated) & active
        if not ended.any():
            return
        rows = np.flatnonzero(ended)
        for i in rows:
            if self._done[i]:
                # a whole game passed without a learner move (possible only in games
                # where a seat can be skipped): nothing of it is the learner's
                self._carry[i] = 0.0
                continue
            self._done[i] = True
            self._trunc[i] = bool(out.truncated[i])
            self._term_obs[i] = out.final_observation[i]
            self._info_extra[i] = {
                "learner_seat": int(self.learner_seat[i]),
                "opponent": self.pool.policies[self.opponent[i]].name,
            }
        self._start_games(rows)

    def _advance(self) -> None:
        """Opponents move until it is the learner's turn in every game."""
        while True:
            b = self.venv.last
            need = b.current_player != self.learner_seat
            if not need.any():
                return
            actions = np.zeros(self.num_envs, np.int64)
            rows = np.flatnonzero(need)
            ids = self.opponent[rows]
            for pid in np.unique(ids):
                sel = rows[ids == pid]
                actions[sel] = act_rows(self.pool.policies[pid], self.venv, b, sel)
            out = self.venv.step(actions, active=need, final_seat=self.learner_seat)
            self._collect(out, need)

    # -- the VecEnv API -----------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds[0] is not None else self._default_seed
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self._reset_seeds()
        self.pool.seed(int(seed))
        self.venv.reset(seed=int(seed))
        self.games_started[:] = 0
        self._acc[:] = 0
        self._carry[:] = 0
        self._ep_ret[:] = 0
        self._ep_len[:] = 0
        self._done[:] = False
        self._start_games(self._rows)
        self._advance()
        self._acc[:] = self._carry
        self._carry[:] = 0
        if self._potential_rows is not None:
            self._phi = self._phi_now()
        return self._out(self.venv.last.observation)

    def _out(self, a: np.ndarray) -> np.ndarray:
        """``a`` itself with ``views``, else a copy."""
        return a if self.views else a.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_async() first")
        start = time.perf_counter()
        self._done[:] = False
        self._trunc[:] = False
        out = self.venv.step(self._actions, final_seat=self.learner_seat)
        self._actions = None
        self._collect(out, self._all)
        self._advance()
        rewards = (self._acc + self._shaped()).astype(np.float32)
        self._ep_ret += self._acc
        self._ep_len += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(self._done):
            infos[i] = {
                "terminal_observation": self._term_obs[i].copy(),
                "TimeLimit.truncated": bool(self._trunc[i]),
                "episode": {"r": float(self._ep_ret[i]), "l": int(self._ep_len[i]), "t": 0.0},
                **self._info_extra[i],
            }
            self._ep_ret[i] = 0.0
            self._ep_len[i] = 0
        self._acc[:] = self._carry
        self._carry[:] = 0
        self.step_seconds += time.perf_counter() - start
        return self._out(self.venv.last.observation), rewards, self._out(self._done), infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` bool: the learner's legal actions in each game."""
        return self._out(self.venv.last.action_mask)

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        if method_name == "action_masks":
            return [result[i] for i in idx]
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    # -- for tests and people --------------------------------------------------------
    def load_state_dict(self, i: int, state: dict[str, Any], learner_seat: int) -> np.ndarray:
        """Put game ``i`` in ``state`` with the learner at ``learner_seat``; opponents
        move until the learner's turn. Returns the learner's observation there."""
        self.venv.load_state_dict(i, state)
        self.learner_seat[i] = learner_seat
        self._acc[i] = 0.0
        self._advance()
        self._acc[i] += self._carry[i]
        self._carry[i] = 0.0
        if self._potential_rows is not None:
            self._phi[i] = self._phi_now()[i]
        return self.venv.last.observation[i].copy()


class SingleGameEnv(gymnasium.Env):
    """One game as a ``gymnasium.Env``: the learner's decisions, opponents inside.

    ``reset(seed=s)`` starts game seed ``s`` with the learner at seat 0; later
    ``reset()`` calls go on with the next game (the learner's seat rotates). On a
    step that ends the game the observation is the learner's final view.

    An illegal action (one outside ``action_masks()``) loses: the episode ends with
    reward -1 and ``info["illegal_action"]``, as PettingZoo's classic games do, so
    generic gymnasium tools that ignore masks (``check_env``) can still drive it.
    The legal actions are also in ``info["action_mask"]`` after every reset and step
    (all False once the game has ended). Registered with Gymnasium as
    ``trafficenvs/<Title>-v<version>`` (``trafficenvs/gym_envs.py``).
    """

    metadata = {"render_modes": []}

    def __init__(self, env_id: str, opponents: OpponentPool | Policy | Sequence[Policy],
                 max_cycles: int | None = None, torch_threads: int | None = 1, **options: Any):
        self.vec = SelfPlayVecEnv(env_id, 1, opponents, max_cycles=max_cycles,
                                  torch_threads=torch_threads, **options)
        self.observation_space = self.vec.observation_space
        self.action_space = self.vec.action_space
        self._obs: np.ndarray | None = None
        self._next_obs: np.ndarray | None = None

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None or self._next_obs is None:
            if seed is None:
                seed = int(self.np_random.integers(2**62))
            self.vec.seed(seed)
            obs = self.vec.reset()[0]
        else:
            obs = self._next_obs
        self._next_obs = None
        return obs, {"learner_seat": int(self.vec.learner_seat[0]),
                     "action_mask": self.action_masks().copy()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.vec.action_masks()[0, int(action)]:
            self._next_obs = None  # the abandoned game is not continued
            obs = self.vec.venv.last.observation[0].copy()
            return obs, -1.0, True, False, {
                "illegal_action": True, "action_mask": np.zeros(self.action_space.n, np.bool_)}
        obs, rew, done, infos = self.vec.step(np.array([int(action)]))
        info = infos[0]
        if done[0]:
            self._next_obs = obs[0]
            trunc = info["TimeLimit.truncated"]
            # the game is over: no move is legal in it (the next game's mask comes
            # with the next reset)
            info["action_mask"] = np.zeros(self.action_space.n, np.bool_)
            return info["terminal_observation"], float(rew[0]), not trunc, trunc, info
        info["action_mask"] = self.action_masks().copy()
        return obs[0], float(rew[0]), False, False, info

    def action_masks(self) -> np.ndarray:
        return self.vec.action_masks()[0]
