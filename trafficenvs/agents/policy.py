"""The policy interface every agent shares, and the random agent.

A policy maps a *batch* of decisions to a batch of actions::

    actions = policy.act(observation, action_mask, current_player)

with ``observation`` ``(B, obs_dim)`` uint8 (each row from the seat to move,
C4), ``action_mask`` ``(B, num_actions)`` bool and ``current_player`` ``(B,)`` int
(the absolute seat; most policies ignore it, since the observation is already from
that seat). It returns ``(B,)`` int64 legal actions. The same call serves the
vectorised env (pass a ``VecStep``'s fields, or a subset of its rows), the SB3
bridge's opponents and the AEC env (a batch of one: :func:`act_aec`).

Policies are stateless between calls (the games they play are in the env), so one
policy object can play any number of games and seats at once.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """Anything with a ``name`` and a batched ``act``."""

    name: str

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, current_player: np.ndarray
    ) -> np.ndarray:
        """``(B,)`` int64 legal actions for a batch of decisions."""
        ...


def act_rows(agent: Policy, venv: Any, out: Any, rows: np.ndarray) -> np.ndarray:
    """``agent``'s moves for ``rows`` of a vectorised env's step ``out`` (its
    ``observation``, ``action_mask`` and ``current_player``), passing those rows' game
    records to an agent that searches the games themselves (``needs_records``)."""
    extra = {"records": venv.records[rows]} if getattr(agent, "needs_records", False) else {}
    return agent.act(out.observation[rows], out.action_mask[rows], out.current_player[rows],
                     **extra)


def sample_masked(rng: np.random.Generator, action_mask: np.ndarray) -> np.ndarray:
    """A uniformly random legal action per row, for the whole batch at once.

    Gumbel-max over the mask: each legal action gets an independent uniform key and
    the largest wins, which is uniform over the legal set (no Python loop per row).
    """
    mask = np.asarray(action_mask, bool)
    keys = rng.random(mask.shape, dtype=np.float32)
    keys[~mask] = -1.0
    return keys.argmax(axis=1).astype(np.int64)


class RandomPolicy:
    """Uniformly random legal moves (the baseline every agent must beat)."""

    def __init__(self, seed: int | None = None, name: str = "random"):
        self.name = name
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the random stream (the SB3 bridge reseeds opponents on reset)."""
        self.rng = np.random.default_rng(seed)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, current_player: np.ndarray
    ) -> np.ndarray:
        return sample_masked(self.rng, action_mask)


def act_aec(policy: Policy, env: Any) -> int | None:
    """The policy's move for the AEC env's agent to move (``None`` once it is done).

    ``env`` is a ``trafficenvs.make(...)`` env; the observation dict's ``action_mask``
    and the agent's seat make a batch of one.
    """
    obs, _, term, trunc, _ = env.last()
    if term or trunc:
        return None
    seat = env.possible_agents.index(env.agent_selection)
    action = policy.act(
        obs["observation"][None, :],
        obs["action_mask"][None, :].astype(bool),
        np.array([seat], np.int64),
    )
    return int(action[0])
