"""``trafficenvs train --trainer batched``: the train command's run with
:class:`~trafficenvs.agents.trainer.BatchedPPO` instead of SB3's MaskablePPO.

The run is the SB3 route's (``agents/training.py``) in everything: the same options,
the flat or the plan network (``--arch plan``, with ``--prior-beta`` its greedy
prior: ``agents/plan_network.py``), opponents (``random``, ``greedy``, ``ppo:PATH`` and ``self``
snapshots taken every ``snapshot_every`` steps, the newest ``max_snapshots`` kept),
potential shaping and its schedule, evaluations every ``eval_every`` steps written to
the ``.curve.csv``, checkpoints every ``checkpoint_every`` steps, the final checkpoint,
its evaluation and the ``.json`` summary beside it. What it writes are weights-only
checkpoints (``agents/checkpoint.py``): the arena, ``play``, ``replay`` and the
Gymnasium opponents load them as ``ppo:PATH``, and loading one runs no code.

Distillation (``--teacher``, DAgger rounds) runs the SB3 route's own code on an SB3
copy of the network (the same parameter names) and hands the weights back before PPO;
``--init`` starts from either kind of checkpoint's weights (a plan network also from an
older plan network, widened as the SB3 route does). ``--tensorboard DIR`` writes the
update's losses, the learner steps/s and the evaluations' win shares to
``DIR/BatchedPPO_<n>`` (the SB3 route writes ``DIR/MaskablePPO_<n>``), where
tensorboard is installed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from trafficenvs.agents.greedy import has_greedy
from trafficenvs.agents.zoo import split_agent_specs
from trafficenvs.registry import game_name, make_game

if TYPE_CHECKING:
    from trafficenvs.agents.training import TrainConfig


def tensorboard_writer(directory: str | None, name: str = "BatchedPPO") -> Any:
    """A TensorBoard ``SummaryWriter`` on a new ``directory/<name>_<n>`` (``n`` one past
    the highest there, as SB3 numbers its runs), or ``None`` without a directory or
    without tensorboard installed (said once, not an error: the logs are optional)."""
    if not directory:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        print("tensorboard is not installed: no TensorBoard logs")
        return None
    root = Path(directory)
    taken = [int(p.name.rsplit("_", 1)[1]) for p in root.glob(f"{name}_*")
             if p.name.rsplit("_", 1)[1].isdigit()] if root.is_dir() else []
    return SummaryWriter(log_dir=str(root / f"{name}_{max(taken, default=0) + 1}"))


def train_batched(cfg: TrainConfig) -> dict[str, Any]:
    """Run ``cfg`` with the batched trainer; returns the summary (also saved as JSON,
    with the same keys as the SB3 route's)."""
    from trafficenvs.agents.trainer import BatchedPPO
    from trafficenvs.agents.training import (
        check_ppo_options,
        default_out,
        distil_teacher,
        evaluate_player,
        opponent_pool,
        step_checkpoint,
        training_speed,
        write_curve,
    )

    name = game_name(cfg.game)
    check_ppo_options(cfg, name)
    out = Path(cfg.out or default_out(name, cfg.players, cfg.seed))
    out.parent.mkdir(parents=True, exist_ok=True)
    options = dict(cfg.options, shaping=True) if cfg.shaping else dict(cfg.options)
    game = make_game(name, num_players=cfg.players, **options)
    pool, groups = opponent_pool(cfg, game)
    ppo = BatchedPPO(game, pool, num_envs=cfg.num_envs, n_steps=cfg.n_steps,
                     batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
                     learning_rate=cfg.learning_rate, gamma=cfg.gamma, ent_coef=cfg.ent_coef,
                     net=cfg.net, seed=cfg.seed, potential=cfg.potential,
                     potential_until=cfg.potential_until, torch_threads=cfg.torch_threads,
                     update_threads=cfg.update_threads, env_threads=cfg.env_threads,
                     precision=cfg.precision, arch=cfg.arch, prior_beta=cfg.prior_beta,
                     device=cfg.device)
    eval_against = (split_agent_specs(cfg.eval_against) if cfg.eval_against
                    else ["random"] + (["greedy"] if has_greedy(name) else []))
    if cfg.init:
        ppo.load_weights(cfg.init)
    history: list[dict[str, Any]] = []
    eval_seconds = [0.0]
    t0 = time.perf_counter()
    if cfg.teacher:
        # the SB3 route's distillation, on an SB3 copy of the network (same names)
        student = SimpleNamespace(policy=ppo.sb3_policy())
        t_distil = time.perf_counter()
        distil_teacher(student, cfg, game, eval_against, history, t0, out)
        ppo.load_sb3_policy(student.policy)
        distil_seconds = time.perf_counter() - t_distil
    else:
        distil_seconds = 0.0
    if "self" in groups:
        pool.add(ppo.policy("self@0", deterministic=False), group="self")
    per = cfg.n_steps * cfg.num_envs
    total = -(-cfg.timesteps // per) * per
    if total != cfg.timesteps:
        print(f"training {total} learner steps: {cfg.timesteps} rounded up to whole "
              f"rollouts of {cfg.n_steps} steps x {cfg.num_envs} games", flush=True)
    due = {"snap": cfg.snapshot_every, "eval": cfg.eval_every, "ckpt": cfg.checkpoint_every}

    def evaluate(n: int) -> dict[str, float]:
        return evaluate_player(ppo.policy("learner"), cfg, eval_against, seed=cfg.seed + n)

    def hooks(trainer: BatchedPPO) -> bool:
        n = trainer.num_timesteps
        if progress is not None:
            progress.update(task, completed=n)
        if writer is not None:
            for k, v in trainer.stats.items():
                writer.add_scalar(f"train/{k}", v, n)
            writer.add_scalar("time/learner_steps_per_s",
                              n / max(time.perf_counter() - t0 - eval_seconds[0], 1e-9), n)
        if "self" in groups and n >= due["snap"]:
            pool.add(trainer.policy(f"self@{n}", deterministic=False), group="self")
            due["snap"] += cfg.snapshot_every
        if cfg.eval_every > 0 and n >= due["eval"]:
            due["eval"] += cfg.eval_every
            wall = time.perf_counter() - t0
            shares = evaluate(n)
            eval_seconds[0] += time.perf_counter() - t0 - wall
            history.append({"timesteps": n, "env_steps": trainer.env.env_steps,
                            "seconds": round(wall, 1),
                            **{f"win_share_vs_{k}": round(v, 4) for k, v in shares.items()}})
            write_curve(out.with_suffix(".curve.csv"), history)
            if writer is not None:
                for k, v in shares.items():
                    writer.add_scalar(f"eval/win_share_vs_{k}", v, n)
            msg = ", ".join(f"vs {k} {v:.3f}" for k, v in shares.items())
            print(f"[{n:>9} steps, {wall:7.1f} s] win share ({cfg.eval_games} games each) "
                  f"{msg}", flush=True)
        if cfg.checkpoint_every > 0 and n >= due["ckpt"]:
            trainer.save(step_checkpoint(out, n))
            due["ckpt"] += cfg.checkpoint_every
        return True

    writer = tensorboard_writer(cfg.tensorboard)
    progress = task = None
    if cfg.progress and total:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        progress = Progress("learner steps", BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn())
        task = progress.add_task("train", total=total)
        progress.start()
    try:
        if total:
            ppo.learn(total, callback=hooks)
    finally:
        if progress is not None:
            progress.stop()
        if writer is not None:
            writer.close()
    wall = time.perf_counter() - t0
    ppo.save(out)
    final = evaluate(10**9)
    env_steps = ppo.env.env_steps
    summary = {
        "checkpoint": str(out),
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(cfg).items()},
        "wall_seconds": round(wall, 1),
        "learner_steps": int(ppo.num_timesteps),
        "env_steps": int(env_steps),
        "env_steps_per_second": round(env_steps / wall, 1),
        "learner_steps_per_second": round(ppo.num_timesteps / wall, 1),
        **training_speed(ppo.num_timesteps, wall, eval_seconds[0], distil_seconds),
        "seconds_by_phase": {k: round(v, 4) for k, v in
                             {**ppo.timings, "eval": eval_seconds[0]}.items()},
        "final_win_share": {k: round(v, 4) for k, v in final.items()},
        "history": history,
    }
    out.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"done: {ppo.num_timesteps} learner steps ({env_steps} env steps) in {wall:.0f} s "
          f"= {ppo.num_timesteps / wall:.0f} learner steps/s; saved {out}")
    print(f"final win share ({cfg.eval_games} games each): "
          + ", ".join(f"vs {k} {v:.3f}" for k, v in final.items()))
    return summary


__all__ = ["tensorboard_writer", "train_batched"]
