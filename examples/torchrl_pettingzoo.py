"""TorchRL on a trafficenvs game: PettingZoo's AEC env through TorchRL's PettingZooWrapper.

Run: ``python examples/torchrl_pettingzoo.py [game]`` (needs ``pip install -e ".[torchrl]"``).

``use_mask=True`` makes the wrapper read each agent's ``action_mask`` and put it on the
action spec, so ``rand_action`` (and a masked policy) only takes legal moves; in the AEC
turn order only the agent to move acts in a step, the others' actions are ignored.
The script checks the specs (TorchRL's ``check_env_specs``), plays a random masked
rollout and prints what each group of agents collected.
"""

from __future__ import annotations

import sys

import torch
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import check_env_specs

import trafficenvs


def make_env(game: str = "traffic_jam", num_players: int = 2, seed: int = 0) -> PettingZooWrapper:
    """``game`` as a TorchRL env: every agent in one group ("player"), masks on."""
    aec = trafficenvs.make(game, num_players=num_players)
    return PettingZooWrapper(env=aec, use_mask=True, categorical_actions=True, seed=seed,
                             group_map={"player": list(aec.possible_agents)})


def main(game: str = "traffic_jam", steps: int = 300) -> dict[str, float]:
    """Check the specs, play ``steps`` random masked steps (games restart when they end),
    and return what happened: steps, games finished, illegal moves taken (0), each
    player's summed reward."""
    env = make_env(game)
    check_env_specs(env)
    torch.manual_seed(0)
    rollout = env.rollout(steps, break_when_any_done=False)
    acted = rollout["player", "mask"]  # (steps, players): the agent to move in each step
    action = rollout["player", "action"]
    legal = rollout["player", "action_mask"].gather(-1, action.unsqueeze(-1)).squeeze(-1)
    reward = rollout["next", "player", "reward"].squeeze(-1)
    out = {"steps": int(rollout.batch_size[0]),
           "movers_per_step": float(acted.sum(-1).float().mean()),
           "games_finished": int(rollout["next", "done"].sum()),
           "illegal_moves": int((acted & ~legal).sum()),
           "reward_per_player": [round(float(x), 3) for x in reward.sum(0)]}
    print(f"{game}: {out}")
    return out


if __name__ == "__main__":
    main(*sys.argv[1:2])
