"""Learning from a teacher: demonstrations of a strong player, and fitting a policy to them.

PPO from scratch never found what the rule-based players do in Jamming and Jakarta
Traffic (0.000-0.004 against greedy after a million steps): the reward comes at the end
of hundreds of moves, and a random policy almost never wins a game against a player that
races to its towns. So ``trafficenvs train --teacher SPEC`` first *distils* a teacher
(``greedy``, or a search agent such as ``flatmc:...``, which beats greedy) into the
network, AlphaZero-style policy distillation without the tree:

1. :func:`collect` plays games in the vectorised env and records, at every decision,
   what the seat to move observed, its legal moves, the teacher's move there and, once
   the game is over, that seat's final result (C2's zero-sum return). Who actually moves
   is chosen per decision: the teacher with probability ``beta``, else the ``student``
   (DAgger, Ross et al. 2011): a student that has learned from the teacher's games also
   needs labels on the positions its own mistakes lead to.
2. :func:`fit` trains the MaskablePPO policy's actor by cross-entropy on the teacher's
   moves (the logits of illegal moves masked out, as MaskablePPO masks them) and its
   critic by squared error on the final results, so PPO can fine-tune from a policy
   that already plays and a value that already knows who is winning.

A search teacher sees only what its seat sees (``SearchPolicy`` determinizes every
rollout), so the demonstrations leak nothing hidden into the student.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from trafficenvs.agents.policy import Policy, act_rows
from trafficenvs.core.game import Game
from trafficenvs.registry import as_game, make_vec

if TYPE_CHECKING:
    from rich.progress import Progress


@dataclass
class Demonstrations:
    """Decisions of the seat to move, labelled by the teacher (row ``k`` is one decision)."""

    #: ``(M, obs_dim)`` uint8, the mover's observation
    observation: np.ndarray
    #: ``(M, num_actions)`` bool, its legal moves
    action_mask: np.ndarray
    #: ``(M,)`` int64, the teacher's move
    action: np.ndarray
    #: ``(M,)`` float32, the mover's final C2 return in that game (NaN: game not finished)
    ret: np.ndarray

    def __len__(self) -> int:
        return len(self.action)

    @classmethod
    def concat(cls, parts: list[Demonstrations]) -> Demonstrations:
        return cls(*(np.concatenate([getattr(p, k) for p in parts])
                     for k in ("observation", "action_mask", "action", "ret")))


def _progress_bar(what: str, disable: bool) -> Progress:
    """A rich progress bar for a count with a known total (``disable``: draws nothing).

    The bar, the count, the elapsed and the remaining time; rich redraws it in place on a
    terminal or a notebook and writes its final state once where output is a file.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn(f"  {what}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(), disable=disable)


def collect(game: Game | str, num_players: int | None, teacher: Policy, decisions: int, *,
            student: Policy | None = None, beta: float = 1.0, num_envs: int = 256,
            seed: int = 0, progress: bool = False, **options: Any) -> Demonstrations:
    """``decisions`` decisions of games played by the teacher (probability ``beta`` per
    decision) and ``student`` (the rest), every one labelled with the teacher's move.

    ``game`` is a :class:`~trafficenvs.core.game.Game` or an env id (made with
    ``num_players`` and ``options``). Every seat of every game is recorded, so the
    student learns to play every seat.
    Decisions of games still under way when the count is reached have no result
    (``ret`` NaN; :func:`fit` leaves them out of the value loss). ``progress`` shows a
    progress bar (rich's, like the training's): a search teacher can take minutes.
    """
    if decisions < 1:
        raise ValueError(f"decisions must be at least 1, got {decisions}")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    if student is None and beta < 1.0:
        raise ValueError("beta < 1 needs a student to play the other decisions")
    b = min(num_envs, decisions)
    venv = make_vec(as_game(game, num_players, **options), num_envs=b)
    game = venv.game
    num_players = game.num_players
    cap = decisions + b
    obs = np.zeros((cap, game.obs_dim), game.obs_dtype)
    mask = np.zeros((cap, game.num_actions), np.bool_)
    act = np.zeros(cap, np.int64)
    seat = np.zeros(cap, np.int64)
    episode = np.zeros(cap, np.int64)
    results: list[np.ndarray] = []  # results[e]: the returns of episode e
    rng = np.random.default_rng(seed)
    out = venv.reset(seed=seed)
    ep_of_row = np.arange(b, dtype=np.int64)
    results.extend([np.full(num_players, np.nan, np.float32)] * b)
    ret = np.zeros((b, num_players), np.float64)
    rows = np.arange(b)
    m = 0
    bar = _progress_bar("collecting decisions", disable=not progress)
    task = bar.add_task("collect", total=decisions)
    with bar:
        while m < decisions:
            labels = act_rows(teacher, venv, out, rows)
            played = labels
            if student is not None and beta < 1.0:
                mine = rng.random(b) >= beta
                if mine.any():
                    played = labels.copy()
                    played[mine] = act_rows(student, venv, out, rows[mine])
            k = min(b, cap - m)
            obs[m:m + k] = out.observation[:k]
            mask[m:m + k] = out.action_mask[:k]
            act[m:m + k] = labels[:k]
            seat[m:m + k] = out.current_player[:k]
            episode[m:m + k] = ep_of_row[:k]
            m += k
            out = venv.step(played)
            ret += out.rewards
            for i in np.flatnonzero(out.terminated | out.truncated):
                results[ep_of_row[i]] = ret[i].astype(np.float32)
                ret[i] = 0.0
                ep_of_row[i] = len(results)
                results.append(np.full(num_players, np.nan, np.float32))
            bar.update(task, completed=min(m, decisions))
    res = np.stack(results)
    m = decisions
    return Demonstrations(obs[:m].copy(), mask[:m].copy(), act[:m].copy(),
                          res[episode[:m], seat[:m]].astype(np.float32))


def fit(policy: Any, demos: Demonstrations, *, epochs: int = 4, batch_size: int = 1024,
        learning_rate: float = 1e-3, value_coef: float = 0.5, seed: int = 0,
        progress: bool = False) -> dict[str, float]:
    """Train an SB3 ``MaskableActorCriticPolicy`` on ``demos``: the actor by masked
    cross-entropy on the teacher's moves, the critic by squared error on the final
    results. Returns the last epoch's mean losses and the share of the teacher's
    moves the actor now ranks first (on the demonstrations themselves)."""
    import torch as th
    import torch.nn.functional as F

    from trafficenvs.agents.ppo import actor_logits

    n = len(demos)
    if n == 0:
        raise ValueError("no demonstrations to fit")
    gen = th.Generator().manual_seed(seed)
    obs = th.as_tensor(demos.observation)
    mask = th.as_tensor(demos.action_mask)
    act = th.as_tensor(demos.action)
    ret = th.as_tensor(demos.ret)
    has_ret = ~th.isnan(ret)
    opt = th.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)
    stats: dict[str, float] = {}
    for epoch in range(epochs):
        perm = th.randperm(n, generator=gen)
        tot = {"policy_loss": 0.0, "value_loss": 0.0, "agreement": 0.0}
        for start in range(0, n, batch_size):
            idx = perm[start:start + batch_size]
            features = policy.extract_features(obs[idx], policy.pi_features_extractor)
            if policy.share_features_extractor:
                latent_pi, latent_vf = policy.mlp_extractor(features)
            else:
                vf_features = policy.extract_features(obs[idx], policy.vf_features_extractor)
                latent_pi = policy.mlp_extractor.forward_actor(features)
                latent_vf = policy.mlp_extractor.forward_critic(vf_features)
            # the whole distribution the policy plays (with a greedy prior, its too)
            logits = actor_logits(policy, latent_pi, obs[idx], mask[idx])
            logits = logits.masked_fill(~mask[idx], -1e8)
            p_loss = F.cross_entropy(logits, act[idx])
            values = policy.value_net(latent_vf).squeeze(1)
            sel = has_ret[idx]
            v_loss = (F.mse_loss(values[sel], ret[idx][sel]) if bool(sel.any())
                      else values.sum() * 0.0)
            loss = p_loss + value_coef * v_loss
            opt.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            k = len(idx)
            tot["policy_loss"] += p_loss.item() * k
            tot["value_loss"] += v_loss.item() * k
            tot["agreement"] += (logits.argmax(1) == act[idx]).sum().item()
        stats = {key: v / n for key, v in tot.items()}
        if progress:
            print(f"  fit epoch {epoch + 1}/{epochs}: policy loss {stats['policy_loss']:.3f}, "
                  f"value loss {stats['value_loss']:.3f}, agreement {stats['agreement']:.3f}",
                  flush=True)
    policy.set_training_mode(False)
    return stats


__all__ = ["Demonstrations", "collect", "fit"]
