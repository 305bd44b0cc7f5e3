"""The ``plan`` network for Jakarta Traffic: a MaskablePPO policy that scores cells and
points each move at the cells it leads to.

Why: with the flat network (:data:`~trafficenvs.agents.ppo.DEFAULT_POLICY_KWARGS`)
distilling the greedy player taught the student only 4-10% of its honks and 0.56 of
all its moves, and PPO from there reached 0.03-0.06 against it. A honk is
one of about a hundred legal actions, and what makes it good is where my drives end
after it: a fact of the maze that a flat layer cannot trace. The network here gets it
as data and keeps the structure of the decision:

- :class:`PlanExtractor` reads the plan features from the observation (the game's
  ``plan_reader()``, :class:`~trafficenvs.jakarta_traffic.strategy.plan.PlanReader`: for each
  honk, drive or detour where my drives and the next player's would end; per cell the
  turns to it and the next stops from it), inside the policy, so a checkpoint plays
  from the plain observation everywhere (arena, search opponents, distillation) with
  nothing else to load;
- :class:`PlanHead` scores every cell with one small network shared by the 25 cells
  (the cell's features and a summary of the whole position), and gives each honk,
  drive or detour the score of the best cell its drives reach (a learned score when
  none), less the best cell the next player's drives reach after it by a third
  per-cell score (what the cell is worth to that player: a honk that cuts it off is
  how the greedy player wins races), added to a flat logit per action; the cell
  actions (a double-6 pick, where the rest of a stack goes) get a second per-cell
  score. The accept, decline and deliver decisions use the flat logits.

The value network sees the scaled observation and the per-cell features. Everything
else is SB3's MaskableActorCriticPolicy, so ``MaskablePPO``, ``trafficenvs train
--arch plan`` and :func:`~trafficenvs.agents.distill.fit` use it unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, create_mlp
from torch import nn

from trafficenvs.agents.ppo import inverse_bounds

#: a score far below any learned one, for "no drive" in the max over exits
_FLOOR = -1e4
#: the game with plan features (its Game's ``plan_reader()``): the default of the
#: ``game`` arguments below, so a checkpoint saved before the game was an argument of
#: the extractor loads as it was trained
PLAN_GAME = "jakarta_traffic"


def plan_reader(num_players: int, game: str = PLAN_GAME) -> Any:
    """The game's plan features for ``num_players`` (found through the game, as agents
    find games): its ``plan_reader()``. A ``ValueError`` for a game without one."""
    from trafficenvs.registry import make_game

    g = make_game(game, num_players=num_players)
    if not hasattr(g, "plan_reader"):
        raise ValueError(f"{g.name} has no plan features (the plan network is Jakarta "
                         f"Traffic's)")
    return g.plan_reader()


class PlanSizes:
    """The sizes of a plan network's inputs, from its reader."""

    def __init__(self, reader: Any):
        self.cells = reader.n_cells
        self.per_cell = reader.cell_features
        self.cell_block = reader.n_cells * reader.cell_features
        self.actions = reader.plan_actions
        #: entries of ``ends`` and of ``next_ends`` each
        self.ends = reader.plan_actions * 4
        self.a_cell = reader.a_cell


class PlanExtractor(BaseFeaturesExtractor):
    """Features ``[observation / high, cell features / bounds, my drive ends, the next
    player's drive ends]`` (flat).

    The drive ends stay cell numbers (``no_drive`` for none); :class:`PlanHead` gathers
    by them. ``num_players`` picks the observation's layout, ``game`` the game (one with
    a ``plan_reader``)."""

    def __init__(self, observation_space: spaces.Box, num_players: int = 2,
                 game: str = PLAN_GAME):
        obs_dim = int(np.prod(observation_space.shape))
        reader = plan_reader(num_players, game)
        sizes = PlanSizes(reader)
        super().__init__(observation_space, obs_dim + sizes.cell_block + 2 * sizes.ends)
        if reader.obs_dim != obs_dim:
            raise ValueError(f"plan network for {num_players} players expects observations "
                             f"of {reader.obs_dim} entries, got {obs_dim}")
        self.register_buffer("inv_high", inverse_bounds(observation_space))
        self.register_buffer("inv_cells", th.as_tensor(
            np.tile(1.0 / reader.cell_bounds, reader.n_cells).astype(np.float32)))
        self.obs_dim = obs_dim
        self.sizes = sizes
        self.reader = reader
        self.game = game
        self.num_players = num_players

    def forward(self, observations: th.Tensor) -> th.Tensor:
        obs = th.flatten(observations, start_dim=1)
        ends, cells, next_ends = self.reader(obs.detach().to("cpu", th.uint8).numpy())
        b = obs.shape[0]
        cells_t = th.from_numpy(cells.reshape(b, -1)).to(obs.device).float()
        ends_t = th.from_numpy(np.concatenate([ends.reshape(b, -1), next_ends.reshape(b, -1)],
                                              1)).to(obs.device).float()
        return th.cat([obs.float() * self.inv_high, cells_t * self.inv_cells, ends_t], 1)


def _mlp(n_in: int, sizes: list[int]) -> nn.Sequential:
    """Linear and tanh layers of ``sizes`` (SB3's MLP, as in its own extractor)."""
    return nn.Sequential(*create_mlp(n_in, -1, sizes, nn.Tanh))


class PlanMlpExtractor(nn.Module):
    """The actor's and critic's trunks over ``[observation, cell features]``; the
    actor's latent carries the cell features and both players' drive ends on to
    :class:`PlanHead`."""

    def __init__(self, obs_dim: int, sizes: PlanSizes, pi: list[int], vf: list[int]):
        super().__init__()
        self.dense = obs_dim + sizes.cell_block
        self.obs_dim = obs_dim
        self.policy_net = _mlp(self.dense, pi)
        self.value_net = _mlp(self.dense, vf)
        self.hidden_pi = pi[-1]
        self.latent_dim_pi = pi[-1] + sizes.cell_block + 2 * sizes.ends
        self.latent_dim_vf = vf[-1]

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return th.cat([self.policy_net(features[:, :self.dense]),
                       features[:, self.obs_dim:]], 1)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.value_net(features[:, :self.dense])


class PlanHead(nn.Module):
    """Action logits from the actor's latent (module docstring)."""

    def __init__(self, hidden: int, num_actions: int, sizes: PlanSizes, context: int = 32,
                 cell_hidden: int = 64):
        super().__init__()
        self.hidden = hidden
        self.sizes = sizes
        self.flat = nn.Linear(hidden, num_actions)
        self.context = nn.Linear(hidden, context)
        self.no_drive = nn.Linear(hidden, 1)
        self.cell = nn.Sequential(nn.Linear(sizes.per_cell + context, cell_hidden), nn.Tanh(),
                                  nn.Linear(cell_hidden, 3))

    def cell_scores(self, latent: th.Tensor) -> th.Tensor:
        """``(B, cells, 3)``: each cell's drive score, cell-action score and worth to the
        next player."""
        z = self.sizes
        h = latent[:, :self.hidden]
        cells = latent[:, self.hidden:self.hidden + z.cell_block].reshape(-1, z.cells,
                                                                          z.per_cell)
        ctx = self.context(h)[:, None, :].expand(-1, z.cells, -1)
        return self.cell(th.cat([cells, ctx], 2))

    def forward(self, latent: th.Tensor) -> th.Tensor:
        z = self.sizes
        h = latent[:, :self.hidden]
        b = latent.shape[0]
        o = self.hidden + z.cell_block
        ends = latent[:, o:o + z.ends].long()
        next_ends = latent[:, o + z.ends:].long()
        score = self.cell_scores(latent)
        # column ``cells`` is "no drive" (the reader's ``no_drive``), below every score
        floor = th.full((b, 1), _FLOOR, dtype=h.dtype, device=h.device)
        drive = th.cat([score[:, :, 0], floor], 1)
        best = th.gather(drive, 1, ends).reshape(b, z.actions, 4).amax(2)
        best = th.where(best > _FLOOR / 2, best, self.no_drive(h))
        theirs = th.gather(th.cat([score[:, :, 2], floor], 1), 1,
                           next_ends).reshape(b, z.actions, 4).amax(2)
        theirs = th.where(theirs > _FLOOR / 2, theirs, th.zeros_like(theirs))
        logits = self.flat(h)
        c0, c1 = z.a_cell, z.a_cell + z.cells
        return th.cat([logits[:, :z.actions] + best - theirs, logits[:, z.actions:c0],
                       logits[:, c0:c1] + score[:, :, 1], logits[:, c1:]], 1)


class PlanPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy with :class:`PlanMlpExtractor` and :class:`PlanHead`
    (use with :class:`PlanExtractor` as the features extractor: :func:`plan_policy_kwargs`)."""

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch
        pi, vf = (arch["pi"], arch["vf"]) if isinstance(arch, dict) else (arch, arch)
        fx = self.features_extractor
        if not isinstance(fx, PlanExtractor):
            raise TypeError("PlanPolicy needs the PlanExtractor features extractor "
                            "(plan_policy_kwargs)")
        self.mlp_extractor = PlanMlpExtractor(fx.obs_dim, fx.sizes, list(pi), list(vf))

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = PlanHead(self.mlp_extractor.hidden_pi, int(self.action_space.n),
                                   self.features_extractor.sizes)
        if self.ortho_init:
            self.action_net.apply(lambda m: self.init_weights(m, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)


def widen_plan_state(old: dict[str, th.Tensor], policy: PlanPolicy) -> dict[str, th.Tensor]:
    """``policy``'s state dict with the weights of ``old``, a plan network's state dict
    from before features were added at the end of each cell's (the next player's
    ``next_pays``) and outputs at the end of the cell scorer's (its worth to the next
    player): the new input columns and output rows start at zero, so the widened
    network plays exactly as the old one did and PPO learns what the new inputs are
    worth. Same-shaped entries are copied; the observation's scales (buffers) are the
    policy's own."""
    new = policy.state_dict()
    z = policy.features_extractor.sizes
    obs_dim = policy.features_extractor.obs_dim
    out: dict[str, th.Tensor] = {}
    for k, v in new.items():
        # the scales, and a greedy prior's weight (``prior_policy.py``): the policy's own
        if k.endswith(("inv_cells", "inv_high")) or (k.startswith("prior.") and k not in old):
            out[k] = v.clone()
            continue
        w = old.get(k)
        if w is None:
            raise ValueError(f"the old plan network has no {k}")
        if w.shape == v.shape:
            out[k] = w.clone()
            continue
        t = th.zeros_like(v)
        if k.endswith(("policy_net.0.weight", "value_net.0.weight")):
            pc = (w.shape[1] - obs_dim) // z.cells  # the old features per cell
            t[:, :obs_dim] = w[:, :obs_dim]
            for x in range(z.cells):
                a, b = obs_dim + x * z.per_cell, obs_dim + x * pc
                t[:, a:a + pc] = w[:, b:b + pc]
        elif k.endswith("cell.0.weight"):
            pc = w.shape[1] - (v.shape[1] - z.per_cell)  # the context follows the cell's
            t[:, :pc] = w[:, :pc]
            t[:, z.per_cell:] = w[:, pc:]
        elif k.endswith(("cell.2.weight", "cell.2.bias")):
            t[:w.shape[0]] = w
        else:
            raise ValueError(f"{k}: {tuple(w.shape)} in the old plan network, "
                             f"{tuple(v.shape)} now; only added cell features widen")
        out[k] = t
    return out


def load_plan_init(model: Any, path: str) -> None:
    """Start ``model`` (a MaskablePPO with :class:`PlanPolicy`) from the checkpoint at
    ``path``: loaded as it is when the shapes match, else widened
    (:func:`widen_plan_state`) from an older plan network, so a run can continue from
    a model trained before the newer features."""
    from trafficenvs.agents.checkpoint import load_parameters

    params = load_parameters(path)  # the weights only: nothing in the file is unpickled
    state = plan_init_state(params["policy"], model.policy, path)
    if state is params["policy"]:
        model.set_parameters(params, exact_match=True, device="cpu")
    else:
        model.policy.load_state_dict(state)


def plan_init_state(old: dict[str, th.Tensor], policy: Any, path: str
                    ) -> dict[str, th.Tensor]:
    """The state dict that starts ``policy`` (a plan network: an SB3 :class:`PlanPolicy`
    or the batched trainer's ``PlanActorCritic``) from ``old``, the state dict of the
    checkpoint at ``path``: ``old`` itself when every shape fits, else
    :func:`widen_plan_state`'s. A ``ValueError`` if ``old`` has the greedy prior and
    ``policy`` not (its learned weight would be lost)."""
    if "prior.beta" in old and getattr(policy, "prior", None) is None:
        raise ValueError(f"{path} was trained with the greedy prior: continue it with "
                         f"--prior-beta (its learned beta is kept)")
    if all(old.get(k) is not None and old[k].shape == v.shape
           for k, v in policy.state_dict().items()):
        return old
    # from a plan network without the greedy prior: its weights, the prior's own start
    return widen_plan_state(old, policy)


def plan_policy_kwargs(num_players: int, net: tuple[int, ...],
                       game: str = PLAN_GAME) -> dict[str, Any]:
    """``policy_kwargs`` of a MaskablePPO with the plan network (``policy=PlanPolicy``);
    a ``ValueError`` for a game without plan features."""
    plan_reader(num_players, game)
    return {"features_extractor_class": PlanExtractor,
            "features_extractor_kwargs": {"num_players": num_players, "game": game},
            "net_arch": {"pi": list(net), "vf": list(net)}}


__all__ = ["PlanExtractor", "PlanHead", "PlanMlpExtractor", "PlanPolicy", "PlanSizes",
           "load_plan_init", "plan_init_state", "plan_policy_kwargs", "plan_reader",
           "widen_plan_state"]
