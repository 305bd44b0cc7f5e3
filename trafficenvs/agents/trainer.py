"""PPO written for the batched env: learning at the env's speed.

Why not MaskablePPO: the env steps millions of games a second, yet training through
Stable-Baselines3 ran 2.3-3.0 k learner steps/s in Traffic Jam, three quarters of it
in the PPO update (the masked categorical's normalisation over 600 actions alone was
17%) and under 1% in the env. This is one file in the manner of CleanRL's PPO, not a
framework: the same algorithm, network and defaults as the SB3 route
(``agents/training.py``), so the two compare, with the costs that do not serve this
env taken out:

- the rollout lives in tensors allocated once (``n_steps x num_envs``); each step copies
  the learner's observations and masks in once from the env's own numpy buffers,
  which it reads through ``torch.from_numpy`` views made once;
- the masked categorical is one fused masked log-softmax: illegal logits filled with
  a large negative finite number, ``log_softmax`` once, the action's log-probability
  gathered and the entropy computed from the same log-probabilities (no
  ``Categorical`` object, no second normalisation);
- torch runs on one thread by default, as the SB3 route does (measured: torch's
  default threads made the learner 12-54x slower next to numba's).

The env side is :class:`~trafficenvs.agents.sb3_bridge.SelfPlayVecEnv` unchanged in
what it does (the learner in one seat of every game, opponents from an
:class:`~trafficenvs.agents.sb3_bridge.OpponentPool` moving inside ``step``, reward
crediting, potential shaping), driven through its ``reset``/``step_async``/
``step_wait``/``action_masks`` with ``views=True`` (its live buffers, not copies).

The algorithm is SB3's PPO step for step: GAE(lambda) as its ``RolloutBuffer``
computes it, a truncated game (move limit) bootstrapped as its
``on_policy_algorithm.py`` does (``gamma * V(final observation)`` added to that
step's reward, then the step counts as done), the advantage normalised per
minibatch, the clipped surrogate, an unclipped value loss against the TD(lambda)
returns, the entropy bonus, gradients clipped to ``max_grad_norm``, Adam with
``eps=1e-5``. The network is SB3's ``MlpPolicy`` with
:class:`~trafficenvs.agents.ppo.ScaledExtractor` (separate pi and vf MLPs, Tanh,
orthogonal initialisation with SB3's gains) under SB3's parameter names, so its
weights load into an SB3 policy (a player: :meth:`BatchedPPO.policy`) and back; with
``arch="plan"`` it is Jakarta Traffic's plan network, with its greedy prior if asked
(``agents/plan_network.py``: the SB3 plan policy's own modules). The learner lives on
the CPU or a GPU (``device``); the env steps on the CPU.

Checkpoints (:meth:`BatchedPPO.save`) are the package's weights-only format
(``agents/checkpoint.py``: a zip of ``config.json`` and a tensor state dict): loading
one cannot run code; ``make_agent("ppo:PATH", game)`` plays them.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from torch import nn
from torch.nn import functional as F

from trafficenvs.agents.categorical_kernels import (
    listed_linear,
    sample_masked_categorical,
    sample_masked_tensor,
)
from trafficenvs.agents.policy import Policy
from trafficenvs.agents.ppo import PPOPolicy, ScaledExtractor
from trafficenvs.agents.sb3_bridge import OpponentPool, SelfPlayVecEnv
from trafficenvs.agents.training import PRECISIONS, potential_weight
from trafficenvs.bench.cpu import cpu_has_bf16
from trafficenvs.core.game import Game

#: what illegal logits are set to: finite, so ``exp`` gives exactly 0 and
#: ``0 * logp`` is 0 in the entropy (``-inf`` would make it NaN); SB3's masked
#: categorical uses the same number
ILLEGAL_LOGIT = -1e8
#: the update evaluates the action head at the legal lists only when they hold less
#: than this share of the rows' actions (see ``BatchedPPO._update``)
LISTED_HEAD_SHARE = 0.1


# -- the masked categorical ------------------------------------------------------------
def masked_log_probs(logits: th.Tensor, illegal: th.Tensor) -> th.Tensor:
    """Log-probabilities of the masked categorical, every action (``(B, A)``).

    ``illegal``: ``(B, A)`` bool, True where the action is not legal. One fill and one
    ``log_softmax``: illegal actions get probability exactly 0 (log-probability about
    ``ILLEGAL_LOGIT``). Every row needs a legal action.
    """
    return F.log_softmax(logits.masked_fill(illegal, ILLEGAL_LOGIT), dim=-1)


def entropy_from_log_probs(log_probs: th.Tensor, illegal: th.Tensor) -> th.Tensor:
    """The categorical's entropy per row from its log-probabilities (``masked_log_probs``).

    Illegal entries are set to 0 before ``exp`` (so they add ``1 * 0 = 0``) rather
    than read as ``exp(-1e8) * -1e8``: measured, ``exp`` of values that underflow takes
    a slow path, 12 times slower than on ordinary values (13 ms against 1 ms for
    Traffic Jam's 2048 x 600 minibatch, a fifth of the whole update), while the
    result is the same (0) and no gradient reaches an illegal logit either way."""
    lp = log_probs.masked_fill(illegal, 0.0)
    return -(lp.exp() * lp).sum(dim=-1)


def masked_log_prob_entropy(logits: th.Tensor, illegal: th.Tensor, actions: th.Tensor
                            ) -> tuple[th.Tensor, th.Tensor]:
    """``(log p(action), entropy)`` per row of the masked categorical, from one
    normalisation."""
    logp = masked_log_probs(logits, illegal)
    return (logp.gather(1, actions.view(-1, 1)).view(-1),
            entropy_from_log_probs(logp, illegal))


def legal_lists(illegal: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    """Each row's legal actions, in order, padded to the longest row: ``(index, valid)``,
    ``(B, K)`` each, ``K`` the most legal actions of any row (at least 1).

    Why: a position has few legal actions next to the action set (Traffic Jam: at most
    20 of 600 in a rollout, 7 on average), and every pass of the masked categorical
    over ``(B, A)`` cost about 1 ms of Traffic Jam's 60 ms minibatch (``exp`` of the
    masked entries more), the same order as the network's matrix products. Over the
    lists the categorical costs ``K / A`` of that. Padding entries repeat action 0
    and are not ``valid``.
    """
    rows, actions = (~illegal).nonzero(as_tuple=True)  # row-major: each row's in order
    counts = th.bincount(rows, minlength=illegal.shape[0])
    width = max(1, int(counts.max()))
    starts = th.cumsum(counts, 0) - counts
    dev = illegal.device
    index = th.zeros((illegal.shape[0], width), dtype=th.int64, device=dev)
    index[rows, th.arange(len(rows), device=dev) - starts[rows]] = actions
    valid = th.arange(width, device=dev).view(1, -1) < counts.view(-1, 1)
    return index, valid


def action_positions(index: th.Tensor, valid: th.Tensor, actions: th.Tensor) -> th.Tensor:
    """Where each row's action stands in its legal list (:func:`legal_lists`), ``(B,)``.
    Every action must be in its row's list (legal where it was chosen)."""
    return ((index == actions.view(-1, 1)) & valid).to(th.uint8).argmax(dim=1)


def listed_log_prob_entropy(logits: th.Tensor, index: th.Tensor, valid: th.Tensor,
                            actions: th.Tensor, positions: th.Tensor | None = None
                            ) -> tuple[th.Tensor, th.Tensor]:
    """``masked_log_prob_entropy`` over the legal lists of :func:`legal_lists`: the same
    values (up to rounding) and gradients, from ``(B, K)`` work instead of ``(B, A)``.

    The action's log-probability is read in the list at its position
    (``positions``, from :func:`action_positions`; computed here if not given), so
    the only read of the full ``(B, A)`` logits is the one gather of the lists: each
    gather from them costs a ``(B, A)`` fill and scatter in the backward pass.
    """
    if positions is None:
        positions = action_positions(index, valid, actions)
    listed = logits.gather(1, index).masked_fill(~valid, ILLEGAL_LOGIT)
    return listed_categorical(listed, valid, positions)


def listed_categorical(listed: th.Tensor, valid: th.Tensor, positions: th.Tensor
                       ) -> tuple[th.Tensor, th.Tensor]:
    """``(log p(action), entropy)`` per row from the logits of each row's legal list
    (``(B, K)``, padding entries already ``ILLEGAL_LOGIT``), the action at
    ``positions`` in its list."""
    logp = F.log_softmax(listed, dim=-1)
    chosen = logp.gather(1, positions.view(-1, 1)).view(-1)
    return chosen, entropy_from_log_probs(logp, ~valid)


def sample_categorical(log_probs: th.Tensor, illegal: th.Tensor,
                       generator: th.Generator | None = None
                       ) -> tuple[th.Tensor, th.Tensor]:
    """One action per row drawn from ``exp(log_probs)`` (``masked_log_probs``) and its
    log-probability: ``(actions, log p(action))``.

    By the inverse of the cumulative distribution, one uniform number per row (not
    Gumbel-max, whose ``B x A`` random numbers were half of the rollout's time in
    Traffic Jam), in the numba kernel of
    :func:`~trafficenvs.agents.categorical_kernels.sample_masked_categorical`, which reads only the
    legal entries (the rollout calls it on the logits directly).
    """
    return sample_masked_categorical(log_probs.float(), ~illegal, generator)


# -- GAE -------------------------------------------------------------------------------
def compute_gae(rewards: th.Tensor, values: th.Tensor, dones: th.Tensor,
                last_values: th.Tensor, gamma: float, gae_lambda: float,
                advantages: th.Tensor | None = None) -> tuple[th.Tensor, th.Tensor]:
    """GAE(lambda) advantages and TD(lambda) returns, ``(T, N)`` each, exactly as SB3's
    ``RolloutBuffer.compute_returns_and_advantage``.

    ``dones[t]``: the game ended on step ``t`` (SB3's ``episode_starts[t + 1]``; its
    last row is SB3's ``dones`` argument); ``rewards`` already hold the bootstrap of a
    truncated step (see the module); ``last_values``: ``V`` of the observations after
    the last step. ``advantages``: where to write them (default: a new tensor).
    """
    steps = rewards.shape[0]
    adv = th.empty_like(rewards) if advantages is None else advantages
    last = th.zeros_like(last_values)
    for t in reversed(range(steps)):
        next_values = last_values if t == steps - 1 else values[t + 1]
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_values * not_done - values[t]
        last = delta + gamma * gae_lambda * not_done * last
        adv[t] = last
    return adv, adv + values


# -- the network -----------------------------------------------------------------------
class _Heads(nn.Module):
    """SB3's ``MlpExtractor`` shape: separate policy and value MLPs."""

    def __init__(self, in_dim: int, net: Sequence[int]):
        super().__init__()
        self.policy_net = _mlp(in_dim, net)
        self.value_net = _mlp(in_dim, net)


def _mlp(in_dim: int, net: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in net:
        layers += [nn.Linear(in_dim, int(width)), nn.Tanh()]
        in_dim = int(width)
    return nn.Sequential(*layers)


def _orthogonal(module: nn.Module, gain: float, generator: th.Generator | None) -> None:
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain=gain, generator=generator)
            nn.init.zeros_(m.bias)


class ActorCritic(nn.Module):
    """SB3's ``MlpPolicy`` with :class:`ScaledExtractor`, under SB3's parameter names.

    ``features = obs / high``; ``net`` hidden layers of Tanh for the actor and,
    separately, for the critic; a linear action head (gain 0.01) and value head
    (gain 1), hidden layers orthogonal with gain sqrt(2), biases 0 (SB3's
    ``ortho_init``). The extractor is registered as ``features_extractor``,
    ``pi_features_extractor`` and ``vf_features_extractor`` (one module, shared, as
    SB3's PPO shares it), so :meth:`state_dict` has exactly an SB3 policy's keys.

    The batched trainer reads its network through this class's interface: ``forward``
    and ``heads`` (logits and values), ``value``, ``features_extractor``,
    ``prior_moves`` (a prior's moves to keep with the rollout; none here), ``net``,
    ``arch``, ``prior_beta`` and ``listable`` (the action head is one linear layer, so
    the update may evaluate it at the legal lists only);
    :class:`~trafficenvs.agents.plan_network.PlanActorCritic` is the other network
    with it.
    """

    listable = True
    arch = "mlp"
    prior_beta = None

    def __init__(self, observation_space: Any, num_actions: int,
                 net: Sequence[int] = (128, 128), generator: th.Generator | None = None):
        super().__init__()
        if not net or any(int(w) < 1 for w in net):
            raise ValueError(f"net must be one or more layer widths >= 1, got {net!r}")
        self.net = tuple(int(w) for w in net)
        self.num_actions = int(num_actions)
        self.features_extractor = ScaledExtractor(observation_space)
        self.pi_features_extractor = self.features_extractor
        self.vf_features_extractor = self.features_extractor
        dim = self.features_extractor.features_dim
        self.mlp_extractor = _Heads(dim, self.net)
        self.action_net = nn.Linear(self.net[-1], self.num_actions)
        self.value_net = nn.Linear(self.net[-1], 1)
        _orthogonal(self.mlp_extractor, float(np.sqrt(2)), generator)
        _orthogonal(self.action_net, 0.01, generator)
        _orthogonal(self.value_net, 1.0, generator)

    def prior_moves(self, observations: th.Tensor, legal: Any) -> None:
        """No prior: ``None`` (the plan network's greedy prior has moves here)."""
        return None

    def forward(self, observations: th.Tensor, prior_moves: None = None
                ) -> tuple[th.Tensor, th.Tensor]:
        """``(logits (B, A) unmasked, values (B,))``."""
        return self.heads(self.features_extractor(observations))

    def heads(self, features: th.Tensor, precision: str = "fp32", prior_moves: None = None
              ) -> tuple[th.Tensor, th.Tensor]:
        """:meth:`forward` from the features (``observation / high``; the extractor
        has no parameters, so the update computes them once per rollout).
        ``precision="bf16"``: the hidden layers in bfloat16 (autocast), the heads
        float32. ``prior_moves``: unused (no prior), for the common interface."""
        latent_pi, latent_vf = self._latents(features, precision)
        return self.action_net(latent_pi), self.value_net(latent_vf).view(-1)

    def _latents(self, features: th.Tensor, precision: str) -> tuple[th.Tensor, th.Tensor]:
        """The actor's and the critic's last hidden layers, float32 (``bf16``: computed
        under autocast, then converted)."""
        if precision == "bf16":
            with th.autocast(features.device.type, dtype=th.bfloat16):
                latent_pi = self.mlp_extractor.policy_net(features)
                latent_vf = self.mlp_extractor.value_net(features)
            latent_pi, latent_vf = latent_pi.float(), latent_vf.float()
        else:
            latent_pi = self.mlp_extractor.policy_net(features)
            latent_vf = self.mlp_extractor.value_net(features)
        return latent_pi, latent_vf

    def listed_heads(self, features: th.Tensor, index: th.Tensor, valid: th.Tensor,
                     precision: str = "fp32") -> tuple[th.Tensor, th.Tensor]:
        """:meth:`heads` with the logits at each row's legal list only (``(B, K)``,
        padding ``ILLEGAL_LOGIT``; :func:`legal_lists`), computed without the full
        ``(B, A)`` head (``categorical_kernels.listed_linear``; CPU)."""
        latent_pi, latent_vf = self._latents(features, precision)
        listed = listed_linear(latent_pi, self.action_net.weight, self.action_net.bias,
                               index, valid, ILLEGAL_LOGIT)
        return listed, self.value_net(latent_vf).view(-1)

    def value(self, observations: th.Tensor) -> th.Tensor:
        """``V`` only, ``(B,)``."""
        x = self.features_extractor(observations)
        return self.value_net(self.mlp_extractor.value_net(x)).view(-1)


def learner_device(device: str | th.device) -> th.device:
    """``device`` as a torch device the trainer can use: ``cpu``, or ``cuda`` where
    torch sees a GPU (a ``ValueError`` naming what is missing otherwise)."""
    try:
        dev = th.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}") from None
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if dev.type == "cuda" and not th.cuda.is_available():
        raise ValueError("device 'cuda': this torch sees no CUDA GPU "
                         "(torch.cuda.is_available() is False; a CPU build of torch, or "
                         "no GPU on this machine)")
    return dev


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def load_network_weights(net: nn.Module, game: Game, path: str | Path) -> None:
    """Load a checkpoint's network into ``net`` (:class:`ActorCritic` or the plan
    network): a weights-only checkpoint or an SB3 zip of the same game and layer
    widths (the SB3 policy's names are this network's); a plan network also from an
    older plan network (``plan_policy.plan_init_state`` widens it). Nothing is
    unpickled (``agents/checkpoint.py``); a network that does not fit raises
    ``ValueError``."""
    from trafficenvs.agents.checkpoint import (
        checkpoint_format,
        load_parameters,
        read_weights,
    )

    if checkpoint_format(path) == "weights":
        state = read_weights(path, game)[1]
    else:
        state = load_parameters(path).get("policy", {})
    if net.arch == "plan":
        from trafficenvs.agents.plan_policy import plan_init_state

        try:
            state = plan_init_state(state, net, str(path))
        except ValueError as err:
            raise ValueError(f"--init {path}: {err}") from None
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as err:  # names or sizes: another network or game
        raise ValueError(f"--init {path}: its network does not fit this one (another "
                         f"--net, --arch, game or player count?): "
                         f"{str(err).splitlines()[0][:200]}") from None


# -- the trainer -----------------------------------------------------------------------
class BatchedPPO:
    """PPO for the learner's seat of ``num_envs`` games at once (see the module).

    ``game``: the :class:`~trafficenvs.core.game.Game` (or env id) to learn;
    ``opponents``: an :class:`OpponentPool`, a policy or a list of them (the other
    seats). The defaults are ``TrainConfig``'s (``num_envs``, ``n_steps``,
    ``batch_size``, ``n_epochs``, ``learning_rate``, ``gamma``, ``ent_coef``, ``net``)
    and SB3 PPO's (``gae_lambda``, ``clip_range``, ``vf_coef``, ``max_grad_norm``), so
    a run here and one through ``trafficenvs train`` differ only in speed.

    ``potential``: potential-based shaping by the game's position estimate
    (``SelfPlayVecEnv.set_potential``), its weight falling linearly from
    ``potential`` to 0 at ``potential_until`` of the ``learn`` call's steps, as in
    ``trafficenvs train``. ``torch_threads`` (default 1; ``None`` leaves torch
    alone) and ``env_threads`` (numba's threads during :meth:`learn`, default 1,
    restored afterwards): why, see ``SelfPlayVecEnv`` and ``training.train``.
    ``update_threads``: torch's threads during the update only (default 0: every
    core this process may use; ``None``: as in the rollout). The env is idle then and
    the minibatches' matrix products are large, so the cores pay there (measured on 2
    cores: 1.4x the learner steps/s of one thread), while the rollout's small batches
    and numba's env want one thread each.

    ``arch``: ``"mlp"`` (:class:`ActorCritic`, default) or ``"plan"``: the plan network
    (:class:`~trafficenvs.agents.plan_network.PlanActorCritic`; a game with plan
    features), with the greedy prior started at ``prior_beta`` if that is given.

    ``device``: where the network, the rollout's tensors and the update live
    (``"cpu"``, default, or ``"cuda"``; the env steps on the CPU either way: each step
    copies the learner's observations and masks to the device and its actions back).
    On the CPU the rollout samples with the numba kernel and the update may use the
    listed head; on another device both are torch operations
    (``categorical_kernels.sample_masked_tensor``: the same draws from the same
    uniforms, which come from the trainer's CPU generator on every device).

    ``precision``: ``"fp32"`` (default) or ``"bf16"``: the update's hidden layers
    under ``torch.autocast`` in bfloat16 (the output heads, the categorical and the
    losses stay float32, so log-ratios keep float32 precision). Measured on a CPU with
    AVX512-BF16: the minibatch's forward and backward in half the time. The
    weights and the optimizer stay float32; the rollout is float32 either way.

    After :meth:`learn`, ``timings`` holds the seconds spent in the env
    (``env``), the rollout's forward passes and sampling (``forward``), GAE
    (``gae``) and the update (``update``), and ``stats`` the last update's losses.
    """

    def __init__(
        self,
        game: Game | str,
        opponents: OpponentPool | Policy | Sequence[Policy],
        *,
        num_envs: int = 256,
        n_steps: int = 32,
        batch_size: int = 2048,
        n_epochs: int = 4,
        learning_rate: float = 3e-4,
        gamma: float = 1.0,
        gae_lambda: float = 0.95,
        clip_range: float = 0.2,
        vf_coef: float = 0.5,
        ent_coef: float = 0.01,
        max_grad_norm: float = 0.5,
        net: Sequence[int] = (128, 128),
        seed: int = 0,
        potential: float = 0.0,
        potential_until: float = 0.75,
        max_cycles: int | None = None,
        torch_threads: int | None = 1,
        update_threads: int | None = 0,
        env_threads: int = 1,
        precision: str = "fp32",
        arch: str = "mlp",
        prior_beta: float | None = None,
        device: str | th.device = "cpu",
    ):
        for name, v, lo in (("num_envs", num_envs, 1), ("n_steps", n_steps, 1),
                            ("batch_size", batch_size, 1), ("n_epochs", n_epochs, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
        if not 0.0 < gamma <= 1.0 or not 0.0 <= gae_lambda <= 1.0:
            raise ValueError(f"gamma must be in (0, 1] and gae_lambda in [0, 1], got "
                             f"{gamma}, {gae_lambda}")
        if not 0.0 < potential_until <= 1.0:
            raise ValueError(f"potential_until must be in (0, 1], got {potential_until}")
        self.n_steps, self.num_envs = int(n_steps), int(num_envs)
        self.batch_size, self.n_epochs = int(batch_size), int(n_epochs)
        self.learning_rate, self.gamma, self.gae_lambda = learning_rate, gamma, gae_lambda
        self.clip_range, self.vf_coef, self.ent_coef = clip_range, vf_coef, ent_coef
        self.max_grad_norm = max_grad_norm
        self.potential, self.potential_until = float(potential), float(potential_until)
        self.env_threads = int(env_threads)
        self.torch_threads = torch_threads
        if update_threads == 0:
            update_threads = usable_cores()
        if update_threads is not None and (isinstance(update_threads, bool) or not isinstance(
                update_threads, (int, np.integer)) or update_threads < 1):
            raise ValueError(f"update_threads must be an int >= 0 or None, got "
                             f"{update_threads!r}")
        self.update_threads = None if update_threads is None else int(update_threads)
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got "
                             f"{precision!r}")
        self.precision = precision
        if precision == "bf16" and not cpu_has_bf16():
            # measured on a 2-core AVX2 CPU: 3.7-4.5x fewer learner steps/s than float32
            warnings.warn("precision='bf16' on a CPU without native bfloat16 (AVX512-BF16 "
                          "or AMX): torch emulates it and the update runs several times "
                          "slower than in float32", RuntimeWarning, stacklevel=2)
        self.device = learner_device(device)
        #: the CPU's numba paths (the sampler, the listed head): on a CPU learner
        self.cpu_kernels = self.device.type == "cpu"
        self.seed = int(seed)
        # views=True: the env hands out its live buffers (read once below), not copies
        self.env = SelfPlayVecEnv(game, self.num_envs, opponents, seed=seed,
                                  max_cycles=max_cycles, potential=potential,
                                  potential_gamma=gamma, torch_threads=torch_threads,
                                  views=True)
        self.game: Game = self.env.game
        #: the trainer's own random stream (initialisation, sampling, minibatches): the
        #: process's global torch RNG is left alone
        self.generator = th.Generator().manual_seed(self.seed)
        if arch == "plan":
            from trafficenvs.agents.plan_network import PlanActorCritic

            self.net: nn.Module = PlanActorCritic(self.game, net, prior_beta,
                                                  generator=self.generator)
        elif arch != "mlp":
            raise ValueError(f"arch must be 'mlp' or 'plan', got {arch!r}")
        elif prior_beta is not None:
            raise ValueError("prior_beta is the plan network's greedy prior: it needs "
                             "arch='plan'")
        else:
            self.net = ActorCritic(self.env.observation_space, self.game.num_actions, net,
                                   generator=self.generator)
        self.net.to(self.device)
        # fused: one kernel for every parameter's Adam step (measured on the 2-core
        # CPU: 0.23 ms a step against 0.92 for the default, 3-4% of the update); the
        # same algorithm as SB3's Adam (a torch without the fused CPU kernel, before
        # 2.4, gets the default one)
        try:
            self.optimizer = th.optim.Adam(self.net.parameters(), lr=learning_rate,
                                           eps=1e-5, fused=True)
        except (RuntimeError, TypeError):
            self.optimizer = th.optim.Adam(self.net.parameters(), lr=learning_rate, eps=1e-5)
        self.num_timesteps = 0
        self.timings = {"env": 0.0, "forward": 0.0, "gae": 0.0, "update": 0.0}
        self.stats: dict[str, float] = {}
        self._allocate()
        self._started = False

    def _allocate(self) -> None:
        """The rollout's storage, once, and views of the env's observation and mask
        buffers (the env writes them in place every step)."""
        t, n, g, dev = self.n_steps, self.num_envs, self.game, self.device
        self.obs = th.zeros((t, n, g.obs_dim), dtype=th.uint8, device=dev)
        self.illegal = th.zeros((t, n, g.num_actions), dtype=th.bool, device=dev)
        self.actions = th.zeros((t, n), dtype=th.int64, device=dev)
        self.log_probs = th.zeros((t, n), device=dev)
        self.values = th.zeros((t, n), device=dev)
        self.rewards = th.zeros((t, n), device=dev)
        self.dones = th.zeros((t, n), device=dev)
        self.advantages = th.zeros((t, n), device=dev)
        self.returns = th.zeros((t, n), device=dev)
        #: the prior's move per position (the plan network's greedy prior), computed
        #: once while collecting and reused by every epoch of the update
        self.prior = (th.zeros((t, n), dtype=th.int64, device=dev)
                      if self.net.prior_beta is not None else None)
        last = self.env.venv.last
        #: ``env_observation``, ``env_mask``: tensors over the env's own observation and
        #: (read-only) mask buffers, which every step rewrites in place: each step
        #: copies them into ``obs[t]`` and ``illegal[t]``, the only copy made
        with warnings.catch_warnings():
            # the mask is a read-only view (the env checks actions against it); it is
            # only ever read through this tensor
            warnings.simplefilter("ignore", UserWarning)
            self.env_observation = th.from_numpy(last.observation)
            self.env_mask = th.from_numpy(last.action_mask)

    # -- rollout ---------------------------------------------------------------------
    def _sample(self, logits: th.Tensor, t: int) -> None:
        """A sample of the masked categorical per row of step ``t`` and its
        log-probability, written into ``actions[t]`` and ``log_probs[t]`` (a numba
        kernel over the legal actions only, or its torch twin off the CPU:
        ``categorical_kernels``)."""
        if self.cpu_kernels:
            sample_masked_categorical(logits, self.env_mask, self.generator,
                                      actions=self.actions[t], log_probs=self.log_probs[t])
            return
        uniforms = th.rand(self.num_envs, generator=self.generator, dtype=th.float64)
        actions, log_probs = sample_masked_tensor(logits, ~self.illegal[t],
                                                  uniforms.to(self.device))
        self.actions[t], self.log_probs[t] = actions, log_probs

    def collect_rollout(self, total: int | None = None) -> None:
        """Fill the rollout storage with ``n_steps`` steps of every game, then GAE."""
        env, tm = self.env, self.timings
        if not self._started:
            t0 = time.perf_counter()
            env.reset()
            tm["env"] += time.perf_counter() - t0
            self._started = True
        self.net.eval()
        for t in range(self.n_steps):
            t0 = time.perf_counter()
            self.obs[t].copy_(self.env_observation)
            if self.cpu_kernels:
                th.logical_not(self.env_mask, out=self.illegal[t])
            else:  # the mask to the device, then inverted there
                self.illegal[t].copy_(self.env_mask).logical_not_()
            moves = self.net.prior_moves(self.obs[t], self.env_mask)
            if moves is not None:
                self.prior[t] = moves
                moves = self.prior[t]
            with th.no_grad():
                logits, values = self.net(self.obs[t], moves)
            self._sample(logits, t)
            self.values[t] = values
            t1 = time.perf_counter()
            env.step_async(self.actions[t].numpy() if self.cpu_kernels
                           else self.actions[t].cpu().numpy())
            _, rewards, dones, infos = env.step_wait()
            self.num_timesteps += self.num_envs
            if self.potential and total:
                env.set_potential(potential_weight(self.potential, self.potential_until,
                                                   self.num_timesteps, total))
            t2 = time.perf_counter()
            self.rewards[t] = th.from_numpy(rewards)
            self.dones[t] = th.from_numpy(dones)
            # a game cut by the move limit is not lost: bootstrap it by the value of the
            # position it was cut in, as SB3 does (on_policy_algorithm.collect_rollouts)
            cut = [i for i in np.flatnonzero(dones) if infos[i].get("TimeLimit.truncated")]
            if cut:
                final = th.from_numpy(np.stack([infos[i]["terminal_observation"]
                                                for i in cut])).to(self.device)
                with th.no_grad():
                    self.rewards[t, cut] += self.gamma * self.net.value(final)
            tm["env"] += t2 - t1
            tm["forward"] += (t1 - t0) + (time.perf_counter() - t2)
        t0 = time.perf_counter()
        with th.no_grad():
            last_values = self.net.value(self.env_observation.to(self.device))
            compute_gae(self.rewards, self.values, self.dones, last_values, self.gamma,
                        self.gae_lambda, advantages=self.advantages)
            th.add(self.advantages, self.values, out=self.returns)
        tm["gae"] += time.perf_counter() - t0

    # -- update ----------------------------------------------------------------------
    def update(self) -> dict[str, float]:
        """``n_epochs`` passes of minibatches of ``batch_size`` over the rollout (SB3's
        PPO ``train``); returns the means of its losses."""
        t0 = time.perf_counter()
        rollout_threads = th.get_num_threads()
        if self.update_threads is not None and self.update_threads != rollout_threads:
            th.set_num_threads(self.update_threads)
        try:
            return self._update()
        finally:
            if th.get_num_threads() != rollout_threads:
                th.set_num_threads(rollout_threads)
            self.timings["update"] += time.perf_counter() - t0

    def _update(self) -> dict[str, float]:
        self.net.train()
        size = self.n_steps * self.num_envs
        illegal = self.illegal.view(size, -1)
        # the features once per rollout, not once per minibatch and epoch (the
        # conversion and scaling cost an eighth of Traffic Jam's minibatch)
        with th.no_grad():
            features = self.net.features_extractor(self.obs.view(size, -1))
        # each row's legal actions once per rollout: the minibatches' categorical
        # works on these lists (``legal_lists``)
        legal_index, legal_valid = legal_lists(illegal)
        actions, old_logp = self.actions.view(-1), self.log_probs.view(-1)
        positions = action_positions(legal_index, legal_valid, actions)
        # the head at the legal lists only where they are a small part of the action
        # set (``listed_linear``): measured on a 2048 minibatch, Traffic Jam's 7 legal
        # of 600 actions 8.3 ms -> 1.0 ms; at Jakarta Traffic's 22% the two are level
        # and at Jamming Traffic's 32% the dense product wins
        prior = None if self.prior is None else self.prior.view(-1)
        listed_head = (self.net.listable and self.cpu_kernels
                       and int(legal_valid.sum())
                       < LISTED_HEAD_SHARE * legal_valid.shape[0] * self.game.num_actions)
        advantages, returns = self.advantages.view(-1), self.returns.view(-1)
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0,
                "clip_fraction": 0.0}
        count = 0
        for _ in range(self.n_epochs):
            order = th.randperm(size, generator=self.generator).to(self.device)
            for start in range(0, size, self.batch_size):
                idx = order[start:start + self.batch_size]
                # ``index_select``, not ``x[idx]``: the same rows, measured 3x faster
                # for the features' rows on the CPU
                mb_features = features.index_select(0, idx)
                mb_index = legal_index.index_select(0, idx)
                mb_valid = legal_valid.index_select(0, idx)
                if listed_head:
                    listed, values = self.net.listed_heads(mb_features, mb_index, mb_valid,
                                                           self.precision)
                    logp, entropy = listed_categorical(listed, mb_valid,
                                                       positions.index_select(0, idx))
                else:
                    logits, values = self.net.heads(
                        mb_features, self.precision,
                        None if prior is None else prior.index_select(0, idx))
                    logp, entropy = listed_log_prob_entropy(
                        logits, mb_index, mb_valid, actions.index_select(0, idx),
                        positions.index_select(0, idx))
                adv = advantages.index_select(0, idx)
                if len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                log_ratio = logp - old_logp.index_select(0, idx)
                ratio = log_ratio.exp()
                policy_loss = -th.min(adv * ratio, adv * th.clamp(
                    ratio, 1 - self.clip_range, 1 + self.clip_range)).mean()
                value_loss = F.mse_loss(returns.index_select(0, idx), values)
                entropy_loss = -entropy.mean()
                loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
                self.optimizer.step()
                with th.no_grad():
                    sums["policy_loss"] += policy_loss.item()
                    sums["value_loss"] += value_loss.item()
                    sums["entropy"] += -entropy_loss.item()
                    sums["approx_kl"] += ((ratio - 1) - log_ratio).mean().item()
                    sums["clip_fraction"] += ((ratio - 1).abs() > self.clip_range
                                              ).float().mean().item()
                count += 1
        self.stats = {k: v / count for k, v in sums.items()}
        var = returns.var().item()
        self.stats["explained_variance"] = (
            float("nan") if var == 0 else 1.0 - (returns - self.values.view(-1)).var().item() / var)
        return self.stats

    def learn(self, total_timesteps: int, callback: Any = None) -> BatchedPPO:
        """Train for ``total_timesteps`` learner steps, rounded up to whole rollouts of
        ``n_steps x num_envs`` (as SB3 does). ``callback(self)``, if given, runs after
        every update; returning ``False`` stops training."""
        import numba

        from trafficenvs.agents.sb3_bridge import set_torch_threads

        per = self.n_steps * self.num_envs
        rollouts = -(-int(total_timesteps) // per)
        total = self.num_timesteps + rollouts * per
        before = numba.get_num_threads()
        numba.set_num_threads(max(1, min(self.env_threads, numba.config.NUMBA_NUM_THREADS)))
        threads = th.get_num_threads()
        if self.torch_threads is not None:
            set_torch_threads(self.torch_threads)
        try:
            for _ in range(rollouts):
                self.collect_rollout(total)
                self.update()
                if callback is not None and callback(self) is False:
                    break
        finally:
            numba.set_num_threads(before)
            if th.get_num_threads() != threads:
                th.set_num_threads(threads)
        return self

    # -- players and checkpoints ------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """What :meth:`save` writes as ``config.json`` (``agents/checkpoint.py``)."""
        from trafficenvs.agents.checkpoint import weights_config

        return weights_config(
            self.game, self.net.net, arch=self.net.arch, prior_beta=self.net.prior_beta,
            training={"algorithm": "BatchedPPO", "timesteps": self.num_timesteps,
                      "num_envs": self.num_envs, "n_steps": self.n_steps,
                      "batch_size": self.batch_size, "n_epochs": self.n_epochs,
                      "learning_rate": self.learning_rate, "gamma": self.gamma,
                      "gae_lambda": self.gae_lambda, "clip_range": self.clip_range,
                      "vf_coef": self.vf_coef, "ent_coef": self.ent_coef,
                      "max_grad_norm": self.max_grad_norm, "seed": self.seed,
                      "precision": self.precision, "device": str(self.device)})

    def load_weights(self, path: str | Path) -> None:
        """Start from a checkpoint's network (``trafficenvs train --init``):
        :func:`load_network_weights`. The weights only: the optimizer starts afresh."""
        load_network_weights(self.net, self.game, path)

    def sb3_policy(self) -> Any:
        """The network as SB3's ``MaskableActorCriticPolicy`` (a copy): what the
        distillation of ``agents/distill.py`` fits; :meth:`load_sb3_policy` takes it
        back."""
        from trafficenvs.agents.checkpoint import sb3_policy

        return sb3_policy(self.config(), self.net.state_dict(), self.game)

    def load_sb3_policy(self, policy: Any) -> None:
        """Take the weights of an SB3 policy of this network (:meth:`sb3_policy`)."""
        self.net.load_state_dict(policy.state_dict(), strict=True)

    def save(self, path: str | Path) -> Path:
        """Write the network as a weights-only checkpoint (loads with
        ``PPOPolicy.load`` / ``make_agent("ppo:PATH", game)``, runs no code)."""
        from trafficenvs.agents.checkpoint import write_weights

        return write_weights(path, self.config(), self.net.state_dict())

    def policy(self, name: str = "learner", deterministic: bool = True) -> PPOPolicy:
        """A player with a copy of the current weights (argmax, or sampling with
        ``deterministic=False``: a frozen self-play opponent)."""
        from trafficenvs.agents.checkpoint import sb3_policy

        return PPOPolicy(sb3_policy(self.config(), self.net.state_dict(), self.game),
                         name=name, deterministic=deterministic)


__all__ = ["ILLEGAL_LOGIT", "LISTED_HEAD_SHARE", "PRECISIONS", "ActorCritic", "BatchedPPO",
           "action_positions", "compute_gae", "entropy_from_log_probs", "learner_device",
           "legal_lists", "listed_categorical", "listed_log_prob_entropy", "load_network_weights",
           "masked_log_prob_entropy", "masked_log_probs", "sample_categorical",
           "usable_cores"]
