"""Self-play for RLlib: which module plays which seat, and the PPO config around it.

One trainable module, ``learner``, takes one seat of every game (a seat drawn per
game, so it learns every position at the table); the other seats of that game are
all played by one opponent group, drawn per game with equal shares:

- ``self``: frozen copies of the learner, modules ``self_0 .. self_{k-1}``. They
  start as copies of the initial learner and one of them (round robin) is replaced
  by the current learner every ``snapshot_every`` iterations
  (:func:`~trafficenvs.rllib.training.refresh_snapshot`), so the learner plays its
  recent past rather than a moving target;
- any agent of ``trafficenvs.agents`` by its command-line spec (``random``,
  ``greedy``, ``flatmc:n=16``...), as a :class:`~trafficenvs.rllib.modules.PolicyRLModule`.

The mapping is a picklable object (env runners may live on other machines) and a
pure function of the episode's id, so every seat of a game agrees on the draw
without shared state.
"""

from __future__ import annotations

import zlib
from typing import Any

LEARNER = "learner"


def opponent_module_id(group: str, index: int) -> str:
    """The module id of a fixed opponent group (``opp0_greedy``): ids stay short and
    distinct even for two groups of the same agent with other options."""
    kind = group.split(":", 1)[0]
    return f"opp{index}_{kind}"


class SelfPlayMapping:
    """``policy_mapping_fn``: the learner in one seat, one opponent group in the rest.

    ``groups``: opponent specs (``"self"``, ``"random"``, ``"greedy"``...);
    ``num_players`` seats; ``snapshots``: how many frozen selves exist.
    """

    def __init__(self, groups: list[str], num_players: int, snapshots: int = 1):
        if not groups:
            raise ValueError("self-play needs at least one opponent group (e.g. 'self')")
        self.groups = list(groups)
        self.num_players = int(num_players)
        self.snapshots = max(1, int(snapshots))

    def draw(self, episode_id: str) -> tuple[int, int, int]:
        """``(learner seat, opponent group index, snapshot index)`` of an episode."""
        h = zlib.crc32(str(episode_id).encode())
        n, g = self.num_players, len(self.groups)
        return h % n, (h // n) % g, (h // (n * g)) % self.snapshots

    def opponent_module(self, group_index: int, snapshot: int) -> str:
        group = self.groups[group_index]
        if group == "self":
            return f"self_{snapshot}"
        return opponent_module_id(group, group_index)

    def group_of(self, module_id: str) -> str:
        """The opponent group (as given) that ``module_id`` belongs to."""
        if module_id.startswith("self_"):
            return "self"
        for i, g in enumerate(self.groups):
            if g != "self" and opponent_module_id(g, i) == module_id:
                return g
        return module_id

    def module_ids(self) -> list[str]:
        """Every module id the mapping can return (learner first)."""
        ids = [LEARNER]
        for i, g in enumerate(self.groups):
            if g == "self":
                ids += [f"self_{k}" for k in range(self.snapshots)]
            else:
                ids.append(opponent_module_id(g, i))
        return ids

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        seat = int(str(agent_id).rsplit("_", 1)[-1])
        learner_seat, group, snap = self.draw(episode.id_)
        if seat == learner_seat:
            return LEARNER
        return self.opponent_module(group, snap)


def build_config(env_config: dict[str, Any], opponents: list[str], *,
                 num_env_runners: int = 2, num_envs_per_env_runner: int = 1,
                 snapshots: int = 4, hiddens: tuple[int, ...] = (128, 128),
                 train_batch_size: int = 2000, minibatch_size: int = 500,
                 num_epochs: int = 4, lr: float = 3e-4, gamma: float = 1.0,
                 entropy_coeff: float = 0.01, seed: int = 0) -> Any:
    """A ``PPOConfig`` for self-play on :class:`~trafficenvs.rllib.env.TrafficMultiAgentEnv`.

    Only ``learner`` is trained (``policies_to_train``); frozen selves share its
    network shape, fixed opponents are :class:`~trafficenvs.rllib.modules.PolicyRLModule`.
    ``gamma=1``: the only reward is the game's result (C2), so discounting would only
    teach the learner to prefer short games.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from trafficenvs.rllib.callbacks import SelfPlayStats
    from trafficenvs.rllib.env import TrafficMultiAgentEnv
    from trafficenvs.rllib.modules import MaskedPPOTorchRLModule, PolicyRLModule

    mapping = SelfPlayMapping(opponents, env_config["num_players"], snapshots)
    net = {"fcnet_hiddens": list(hiddens), "fcnet_activation": "relu",
           "vf_share_layers": False}
    specs: dict[str, Any] = {}
    for mid in mapping.module_ids():
        if mid == LEARNER or mid.startswith("self_"):
            specs[mid] = RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=net)
        else:
            k = mapping.module_ids().index(mid)
            specs[mid] = RLModuleSpec(module_class=PolicyRLModule, model_config={
                "agent": mapping.group_of(mid), "env_config": env_config,
                "seed": seed + 1009 * k})
    return (
        PPOConfig()
        .environment(TrafficMultiAgentEnv, env_config=env_config)
        .env_runners(num_env_runners=num_env_runners,
                     num_envs_per_env_runner=num_envs_per_env_runner,
                     num_cpus_per_env_runner=0 if num_env_runners else 1,
                     # RLlib's 60 s default drops the runners' samples when they come
                     # later (a loaded machine, a first step that compiles): the iteration
                     # then trains on nothing; wait up to 10 minutes instead
                     sample_timeout_s=600.0)
        .multi_agent(policies=set(mapping.module_ids()), policy_mapping_fn=mapping,
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=lr, gamma=gamma, entropy_coeff=entropy_coeff)
        .callbacks(SelfPlayStats)
        .debugging(seed=seed)
    )
