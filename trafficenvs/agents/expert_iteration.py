"""Expert iteration: the Gumbel search teaches the network that guides it.

Why: every other learner of the package is capped by what it learns from (greedy's
moves, or PPO's exploitation of a fixed opponent), while search adds strength and
keeps adding it with budget. Expert iteration (Anthony et al., 2017; AlphaZero's
loop) puts the search in the learning loop:

1. **self-play**: ``num_envs`` games at once, every seat played by the Gumbel search
   (``agents/gumbel_kernels.py``) with the current network as its evaluator (its
   actor's logits the priors, its critic the leaves' values; the leaves of all games
   evaluated in one batch per simulation). The search never peeks: it runs on copies
   determinized for the seat to move;
2. each decision is kept with the search's **improved policy** (``softmax(logits +
   sigma(completed q))`` over the legal moves: Danihelka et al., ICLR 2022; not the
   argmax of a cheap search, whose labels were too noisy to learn from) and, once the
   game ends, the mover's **result** from that decision on (the rewards still to
   come: what the critic predicts and the search backs up);
3. the network is trained on a **replay buffer** of the most recent decisions:
   cross-entropy to the improved policy plus ``vf_coef`` times the squared error of
   the value;
4. the next iteration searches with the new network.

``opponents`` (default ``("self",)``: pure self-play) can add fixed agents to the
self-play games: the games rotate among the entries, and in a game of an agent spec
(``flatmc``, ``greedy``, ``exit:PATH``...) that agent plays one seat (rotated from game
to game) while the search plays the others. Only the search's decisions are kept, with
the search's seats' results. Why: the network learns on the positions it meets against
the player it is measured against (the game's best search), and its value target
learns what wins against that player, not only against itself.

The network is the batched PPO trainer's, and so are its checkpoints (the weights-only
format, ``agents/checkpoint.py``): :class:`~trafficenvs.agents.trainer.ActorCritic`
(``arch="mlp"``, SB3's ``MlpPolicy`` shape) or, for Jakarta Traffic,
:class:`~trafficenvs.agents.plan_network.PlanActorCritic` (``arch="plan"``, with
``prior_beta`` its greedy prior): a flat network could not learn that game's route
planning (it lost to greedy 0.98 of its games after expert iteration), the plan network
with the prior is the shipped PPO model's. The arena plays the network alone as
``exit:PATH`` (or ``ppo:PATH``), and
``gumbel:...,net=PATH`` searches with it. ``--init`` starts from a PPO checkpoint of
the same network (the shipped models), ``--teacher`` distils an agent first (as the
PPO trainers do).

Curves per iteration (evaluations every ``eval_every`` decisions): the network alone
(``learner``) and the network with the search (``learner+search``) against each
evaluation opponent (greedy and the game's strongest search preset by default).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from torch import nn
from torch.nn import functional as F

from trafficenvs.agents.policy import act_rows
from trafficenvs.agents.ppo import PPOPolicy
from trafficenvs.agents.search import SearchPolicy, parse_search_spec
from trafficenvs.agents.trainer import ActorCritic, masked_log_probs, usable_cores
from trafficenvs.core.game import Game
from trafficenvs.registry import as_game, make_vec

#: the self-play search when none is named: small, since every simulation is a
#: batched forward of the network on the CPU
DEFAULT_SEARCH = "gumbel:n=32,m=8"


def search_spec(spec: str) -> str:
    """``spec`` checked as the search expert iteration plays: a ``gumbel`` setting
    (its network is the trainer's own, so ``net=`` is refused)."""
    kind, options = parse_search_spec(spec)
    if kind != "gumbel":
        raise ValueError(f"expert iteration searches with gumbel (priors and values from "
                         f"the network); got {spec!r}")
    if options.get("net"):
        raise ValueError(f"{spec!r}: the network at the leaves is the one being trained; "
                         "leave net= out")
    return spec


def greedy_search_spec(spec: str) -> str:
    """The setting to *play* (evaluate) with: ``spec`` without the root's Gumbel noise
    (``gscale=0``) unless it sets ``gscale`` itself; the noise is self-play's
    exploration."""
    return spec if "gscale=" in spec else f"{spec},gscale=0"


class ReplayBuffer:
    """The most recent ``capacity`` decisions (a ring): observation, legal moves,
    improved policy and value target, in preallocated arrays."""

    def __init__(self, capacity: int, obs_dim: int, num_actions: int, obs_dtype: Any):
        if capacity < 1:
            raise ValueError(f"the replay buffer needs room for a decision, got {capacity}")
        self.capacity = int(capacity)
        self.obs = np.zeros((capacity, obs_dim), obs_dtype)
        self.legal = np.zeros((capacity, num_actions), np.bool_)
        self.policy = np.zeros((capacity, num_actions), np.float32)
        self.value = np.zeros(capacity, np.float32)
        self.size = 0
        self.pos = 0
        self.added = 0

    def add(self, obs: np.ndarray, legal: np.ndarray, policy: np.ndarray,
            value: np.ndarray) -> None:
        """Append ``k`` decisions (the oldest are overwritten once full)."""
        k = len(value)
        if k > self.capacity:  # only the newest fit
            obs, legal, policy, value = obs[-self.capacity:], legal[-self.capacity:], \
                policy[-self.capacity:], value[-self.capacity:]
            k = self.capacity
        idx = (self.pos + np.arange(k)) % self.capacity
        self.obs[idx] = obs
        self.legal[idx] = legal
        self.policy[idx] = policy
        self.value[idx] = value
        self.pos = int((self.pos + k) % self.capacity)
        self.size = min(self.capacity, self.size + k)
        self.added += k


class ExpertIteration:
    """Expert iteration for ``game`` (a :class:`Game` or env id; see the module).

    ``search``: the self-play search (a ``gumbel`` setting, default
    :data:`DEFAULT_SEARCH`); ``num_envs`` games played at once and
    ``steps_per_iteration`` moves of each per iteration; ``buffer_size`` decisions
    kept; per iteration ``n_epochs`` passes' worth (over the decisions it added) of
    minibatches of ``batch_size`` drawn from the buffer. ``torch_threads`` during
    self-play (default 1, next to numba's compiled search) and ``update_threads``
    during training (0: every usable core), as the batched PPO trainer chooses them.
    ``arch``: ``"mlp"`` (the flat network, hidden widths ``net``) or ``"plan"`` (the
    plan network with ``net`` after its features, and the greedy prior when
    ``prior_beta`` is given; Jakarta Traffic), see the module. ``opponents``: the
    self-play games' line-ups, rotated among games (``"self"``: every seat searches;
    an agent spec: that agent plays one seat), see the module.
    """

    def __init__(self, game: Game | str, search: str = DEFAULT_SEARCH, num_envs: int = 256,
                 steps_per_iteration: int = 32, buffer_size: int = 200_000,
                 batch_size: int = 512, n_epochs: int = 4, learning_rate: float = 3e-4,
                 vf_coef: float = 1.0, max_grad_norm: float = 0.5,
                 net: Sequence[int] = (128, 128), seed: int = 0, num_players: int | None = None,
                 torch_threads: int | None = 1, update_threads: int | None = 0,
                 max_cycles: int | None = None, arch: str = "mlp",
                 prior_beta: float | None = None, opponents: Sequence[str] = ("self",)):
        for label, v in (("num_envs", num_envs), ("steps_per_iteration", steps_per_iteration),
                         ("batch_size", batch_size), ("n_epochs", n_epochs)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{label} must be an int >= 1, got {v!r}")
        if not learning_rate > 0 or not vf_coef >= 0:
            raise ValueError("learning_rate must be > 0 and vf_coef >= 0")
        self.game: Game = as_game(game, num_players)
        if getattr(self.game, "shaping", False):
            raise ValueError("expert iteration learns from the result: make the game "
                             "without shaping")
        self.search_spec = search_spec(search)
        self.num_envs, self.steps_per_iteration = int(num_envs), int(steps_per_iteration)
        self.batch_size, self.n_epochs = int(batch_size), int(n_epochs)
        self.learning_rate, self.vf_coef = float(learning_rate), float(vf_coef)
        self.max_grad_norm = float(max_grad_norm)
        self.seed = int(seed)
        self.torch_threads = torch_threads
        self.update_threads = usable_cores() if update_threads == 0 else update_threads
        self.generator = th.Generator().manual_seed(self.seed)
        g = self.game
        self.arch = arch
        if arch == "mlp":
            if prior_beta is not None:
                raise ValueError("the greedy prior (prior_beta) needs arch='plan'")
            self.net: nn.Module = ActorCritic(g.observation_box(), g.num_actions, net,
                                              generator=self.generator)
        elif arch == "plan":  # refuses a game without plan features
            from trafficenvs.agents.plan_network import PlanActorCritic

            self.net = PlanActorCritic(g, net, prior_beta, generator=self.generator)
        else:
            raise ValueError(f"--arch must be one of mlp, plan, got {arch!r}")
        self.net_widths = tuple(int(w) for w in net)
        self.optimizer = th.optim.Adam(self.net.parameters(), lr=learning_rate, eps=1e-5)
        self.buffer = ReplayBuffer(buffer_size, g.obs_dim, g.num_actions, g.obs_dtype)
        self.searcher = SearchPolicy(g, self.search_spec, name="self-play",
                                     evaluator=self.evaluate)
        self.searcher.seed_rows(self.seed)
        self.venv = make_vec(g, num_envs=self.num_envs, max_cycles=max_cycles)
        self._init_opponents(opponents)
        self._out: Any = None
        #: per row: each seat's rewards so far in its game, and the game's first step
        self._ret = np.zeros((self.num_envs, g.num_players), np.float64)
        self._start = np.zeros(self.num_envs, np.int64)
        #: decisions of games still being played, by global step
        self._pending: dict[int, tuple[np.ndarray, ...]] = {}
        self._step = 0
        self.decisions = 0
        self.games = 0
        self.game_moves = 0
        self.iteration = 0
        self.timings = {"self_play": 0.0, "train": 0.0}
        self.stats: dict[str, float] = {}

    def _init_opponents(self, opponents: Sequence[str]) -> None:
        """The opponents' agents and each row's line-up: row ``i``'s ``k``-th game plays
        entry ``(i + k) % G`` of the ``G`` entries, its agent in seat
        ``((i + k) // G) % P`` (so seats rotate within each entry)."""
        from trafficenvs.agents.zoo import make_agent

        specs = [str(s).strip() for s in opponents]
        if not specs or any(not s for s in specs):
            raise ValueError(f"opponents must name at least one of self or an agent, "
                             f"got {list(opponents)!r}")
        self.opponent_specs = tuple(specs)
        self.opponents: list[Any] = [
            None if s == "self" else make_agent(s, self.game, seed=self.seed + 7919 * (j + 1))
            for j, s in enumerate(specs)]
        self._game_no = np.zeros(self.num_envs, np.int64)
        self._lineup = np.zeros(self.num_envs, np.int64)
        self._opp_seat = np.full(self.num_envs, -1, np.int64)
        for i in range(self.num_envs):
            self._next_lineup(i)
        #: the opponents' decisions (not kept, not in ``decisions``)
        self.opponent_decisions = 0

    def _next_lineup(self, i: int) -> None:
        g = len(self.opponent_specs)
        k = i + int(self._game_no[i])
        self._lineup[i] = k % g
        self._opp_seat[i] = (-1 if self.opponents[k % g] is None
                             else (k // g) % self.game.num_players)

    # -- the network as the search's evaluator ---------------------------------------
    def forward(self, observation: np.ndarray, action_mask: np.ndarray
                ) -> tuple[th.Tensor, th.Tensor]:
        """The network's unmasked logits ``(B, A)`` and values ``(B,)`` (with grad
        unless called under ``no_grad``): the plan network's with its prior's bonus,
        which needs the legal moves."""
        return network_outputs(self.net, observation, action_mask)

    def evaluate(self, observation: np.ndarray, action_mask: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The current network's ``(logits, values)`` for the seats to move."""
        with th.no_grad():
            logits, values = self.forward(observation, action_mask)
        return logits.numpy(), values.numpy()

    # -- self-play -------------------------------------------------------------------
    def self_play(self, steps: int | None = None) -> dict[str, float]:
        """Play ``steps`` moves of every game (default ``steps_per_iteration``); the
        games that end go to the buffer. Returns what was added."""
        steps = self.steps_per_iteration if steps is None else int(steps)
        t0 = time.perf_counter()
        added0, games0 = self.buffer.added, self.games
        self.net.eval()
        threads = th.get_num_threads()
        if self.torch_threads is not None and self.torch_threads != threads:
            th.set_num_threads(int(self.torch_threads))
        try:
            if self._out is None:
                self._out = self.venv.reset(seed=self.seed)
            rows = np.arange(self.num_envs)
            for _ in range(steps):
                out = self._out
                obs = out.observation.copy()
                legal = np.array(out.action_mask, np.bool_)
                seats = out.current_player.copy()
                mine = self._opp_seat != seats
                actions, policy = self._act(out, mine)
                before = self._ret[rows, seats].copy()
                self._pending[self._step] = (obs, legal, policy, seats, before, mine)
                self._out = out = self.venv.step(actions)
                self._ret += out.rewards
                ended = np.flatnonzero(out.terminated | out.truncated)
                for i in ended:
                    self._finish_game(int(i), int(out.final_records[i]["moves"]))
                self._step += 1
                kept = int(mine.sum())
                self.decisions += kept
                self.opponent_decisions += self.num_envs - kept
                oldest = int(self._start.min())
                for s in [s for s in self._pending if s < oldest]:
                    del self._pending[s]
        finally:
            if th.get_num_threads() != threads:
                th.set_num_threads(threads)
        self.timings["self_play"] += time.perf_counter() - t0
        return {"decisions_added": self.buffer.added - added0,
                "games": self.games - games0}

    def _act(self, out: Any, mine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every row's move and the search's improved policy (zeros where an opponent
        moved): the search for the rows ``mine``, each opponent's agent for its own."""
        actions = np.zeros(self.num_envs, np.int64)
        policy = np.zeros((self.num_envs, self.game.num_actions), np.float32)
        sel = np.flatnonzero(mine)
        if sel.size:
            actions[sel] = act_rows(self.searcher, self.venv, out, sel)
            policy[sel] = self.searcher.last_policy(sel.size)
        for j, agent in enumerate(self.opponents):
            sel = np.flatnonzero(~mine & (self._lineup == j))
            if agent is not None and sel.size:
                actions[sel] = act_rows(agent, self.venv, out, sel)
        return actions, policy

    def _finish_game(self, i: int, moves: int) -> None:
        """Row ``i``'s game ended on this step: its search's decisions, each with the
        mover's rewards from that decision to the end, go to the buffer; the row's next
        game takes the next line-up."""
        parts = [p for p in (self._pending[s] for s in range(int(self._start[i]),
                                                             self._step + 1)) if p[5][i]]
        if parts:  # none: every move was the opponent's
            seats = np.array([p[3][i] for p in parts])
            before = np.array([p[4][i] for p in parts])
            value = (self._ret[i, seats] - before).astype(np.float32)
            self.buffer.add(np.stack([p[0][i] for p in parts]),
                            np.stack([p[1][i] for p in parts]),
                            np.stack([p[2][i] for p in parts]), value)
        self._game_no[i] += 1
        self._next_lineup(i)
        self._ret[i] = 0.0
        self._start[i] = self._step + 1
        self.games += 1
        self.game_moves += moves

    # -- training --------------------------------------------------------------------
    def losses(self, idx: th.Tensor) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """``(policy loss, value loss, agreement)`` on buffer rows ``idx``: the
        cross-entropy of the masked policy to the improved policy, the value's squared
        error, and the share of rows where the network's favourite is the target's."""
        b = self.buffer
        rows = idx.numpy()
        legal = b.legal[rows]
        illegal = ~th.from_numpy(legal)
        target = th.from_numpy(b.policy[rows])
        z = th.from_numpy(b.value[rows])
        logits, values = self.forward(b.obs[rows], legal)
        logp = masked_log_probs(logits, illegal)
        policy_loss = -(target * logp.masked_fill(illegal, 0.0)).sum(dim=1).mean()
        value_loss = F.mse_loss(values, z)
        with th.no_grad():
            agree = (logp.argmax(dim=1) == target.argmax(dim=1)).float().mean()
        return policy_loss, value_loss, agree

    def train(self, decisions: int) -> dict[str, float]:
        """Gradient steps on the buffer worth ``n_epochs`` passes over ``decisions``
        rows (at least one step); returns the mean losses."""
        if self.buffer.size == 0:
            return {}
        t0 = time.perf_counter()
        threads = th.get_num_threads()
        if self.update_threads is not None and self.update_threads != threads:
            th.set_num_threads(int(self.update_threads))
        self.net.train()
        n = max(1, -(-self.n_epochs * int(decisions) // self.batch_size))
        sums = np.zeros(3)
        try:
            for _ in range(n):
                idx = th.randint(self.buffer.size, (min(self.batch_size, self.buffer.size),),
                                 generator=self.generator)
                policy_loss, value_loss, agree = self.losses(idx)
                loss = policy_loss + self.vf_coef * value_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
                self.optimizer.step()
                sums += (policy_loss.item(), value_loss.item(), agree.item())
        finally:
            if th.get_num_threads() != threads:
                th.set_num_threads(threads)
            self.timings["train"] += time.perf_counter() - t0
        self.stats = dict(zip(("policy_loss", "value_loss", "agreement"),
                              (float(x) for x in sums / n)))
        self.stats["gradient_steps"] = n
        return self.stats

    def iterate(self) -> dict[str, float]:
        """One iteration: self-play, then training on the buffer."""
        played = self.self_play()
        stats = self.train(played["decisions_added"]) if played["decisions_added"] else {}
        self.iteration += 1
        return {"iteration": self.iteration, **played, **stats}

    # -- players and checkpoints ------------------------------------------------------
    def training_info(self) -> dict[str, Any]:
        """How the network was trained (a checkpoint's ``training``)."""
        return {"algorithm": "ExpertIteration", "search": self.search_spec,
                "arch": self.arch, "iterations": self.iteration,
                "decisions": self.decisions, "games": self.games,
                "num_envs": self.num_envs, "steps_per_iteration": self.steps_per_iteration,
                "buffer_size": self.buffer.capacity, "batch_size": self.batch_size,
                "n_epochs": self.n_epochs, "learning_rate": self.learning_rate,
                "vf_coef": self.vf_coef, "seed": self.seed,
                "opponents": list(self.opponent_specs)}

    def config(self) -> dict[str, Any]:
        """What :meth:`save` writes as ``config.json`` (the weights-only format)."""
        from trafficenvs.agents.checkpoint import weights_config

        return weights_config(self.game, self.net_widths, training=self.training_info(),
                              arch=self.net.arch, prior_beta=self.net.prior_beta)

    def save(self, path: str | Path) -> Path:
        """The network as a weights-only checkpoint (``exit:PATH``): loading it runs
        no code."""
        from trafficenvs.agents.checkpoint import write_weights

        return write_weights(path, self.config(), self.net.state_dict())

    def load_weights(self, path: str | Path) -> None:
        """Start from a checkpoint's network (weights-only or an SB3 zip of the same
        game, ``arch`` and ``net``; a plan network also from an older plan network):
        :func:`~trafficenvs.agents.trainer.load_network_weights`."""
        from trafficenvs.agents.trainer import load_network_weights

        load_network_weights(self.net, self.game, path)

    def sb3_policy(self) -> Any:
        """An SB3 policy with the network's weights (a copy; distillation and
        :meth:`policy` use it)."""
        from trafficenvs.agents.checkpoint import sb3_policy

        return sb3_policy(self.config(), self.net.state_dict(), self.game)

    def policy(self, name: str = "learner") -> PPOPolicy:
        """The network alone as a player (argmax over the legal moves; a copy)."""
        return PPOPolicy(self.sb3_policy(), name=name)

    def search_player(self, name: str = "learner+search", spec: str | None = None
                      ) -> SearchPolicy:
        """The network with the search as a player: a frozen copy of the network at
        the leaves of ``spec`` (default: the self-play search without root noise)."""
        frozen = copy.deepcopy(self.net).eval()

        def evaluate(observation: np.ndarray, action_mask: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
            with th.no_grad():
                logits, values = network_outputs(frozen, observation, action_mask)
            return logits.numpy(), values.numpy()

        return SearchPolicy(self.game, search_spec(spec or greedy_search_spec(self.search_spec)),
                            name=name, evaluator=evaluate)


def network_outputs(net: nn.Module, observation: np.ndarray, action_mask: np.ndarray
                    ) -> tuple[th.Tensor, th.Tensor]:
    """Unmasked logits ``(B, A)`` and values ``(B,)`` of ``net`` (the batched trainer's
    :class:`ActorCritic` or plan network): with the plan network's greedy prior, its
    bonus at greedy's move, computed from the observations and legal moves."""
    obs = th.from_numpy(np.ascontiguousarray(observation))
    return net(obs, net.prior_moves(obs, action_mask))


__all__ = ["DEFAULT_SEARCH", "ExpertIteration", "ReplayBuffer", "greedy_search_spec",
           "network_outputs", "search_spec"]
