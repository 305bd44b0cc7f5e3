"""``trafficenvs train --backend rllib``: PPO self-play on Ray RLlib, local or on a cluster.

Same idea as the default backend (``trafficenvs.agents.training``: a learner against
``random``, ``greedy``, frozen selves...), but the games are played by RLlib env
runners (``--num-env-runners K`` processes, on this machine or across a cluster
given by ``--address``) and PPO runs on RLlib's learner. Each iteration prints one
line (env steps, steps/s, the learner's win share per opponent group, illegal
actions); the run ends with an RLlib checkpoint directory and a JSON summary beside
it, as the default backend writes ``model.zip`` and ``model.json``.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trafficenvs.registry import game_name


@dataclass
class RLlibTrainConfig:
    """Everything that decides an RLlib run (stored in its summary)."""

    game: str
    players: int = 2
    #: env steps (moves of all seats) to train for, rounded up to whole iterations
    timesteps: int = 200_000
    opponents: str = "self,random,greedy"
    seed: int = 0
    num_env_runners: int = 2
    #: games each env runner plays at once (RLlib batches their module calls: with 8
    #: a runner sampled ~8x faster than with 1, docs/rllib.md)
    num_envs_per_env_runner: int = 8
    #: Ray cluster to join (``ray.init(address=...)``); None starts a local Ray
    address: str | None = None
    train_batch_size: int = 4000
    minibatch_size: int = 500
    num_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 1.0
    ent_coef: float = 0.01
    net: tuple[int, ...] = (128, 128)
    #: frozen selves kept (modules ``self_0..``)
    max_snapshots: int = 4
    #: iterations between refreshing one frozen self with the learner's weights
    snapshot_every: int = 5
    out: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    command: str = ""


def refresh_snapshot(algo: Any, slot: str, source: str = "learner") -> None:
    """Copy ``source``'s weights into the frozen module ``slot``, on the learner and on
    every env runner: PPO only pushes the weights of trained modules to the env
    runners, so a frozen module has to be pushed once by hand."""
    weights = algo.get_module(source).get_state()
    algo.learner_group.foreach_learner(
        lambda learner, w=weights: learner.module[slot].set_state(w))
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       policies=[slot], inference_only=True)


def default_out(game: str, players: int, seed: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"rllib_{game}_{players}p_seed{seed}_{stamp}" / "checkpoint"


def _row(it: int, result: dict[str, Any], wall: float, it_s: float) -> dict[str, Any]:
    er = result.get("env_runners", {})
    row: dict[str, Any] = {
        "iteration": it,
        "env_steps": int(result.get("num_env_steps_sampled_lifetime",
                                    er.get("num_env_steps_sampled_lifetime", 0))),
        "iter_env_steps": int(er.get("num_env_steps_sampled", 0)),
        "seconds": round(wall, 1),
        "iter_seconds": round(it_s, 2),
        "episodes": int(er.get("num_episodes", 0)),
        "illegal_actions": int(er.get("illegal_actions", 0) or 0),
    }
    for k, v in er.items():
        if k.startswith("learner_win_share"):
            row[k.replace("learner_", "")] = round(float(v), 4)
    return row


def train(cfg: RLlibTrainConfig) -> dict[str, Any]:
    """Run PPO self-play on RLlib as ``cfg`` says; returns the summary (also saved as
    ``<out>.json``). Joins the cluster at ``cfg.address`` or starts a local Ray, and
    shuts down only a Ray it started."""
    from trafficenvs.rllib import require_ray

    require_ray()
    import ray

    from trafficenvs.agents.zoo import split_agent_specs
    from trafficenvs.rllib.env import env_config
    from trafficenvs.rllib.selfplay import build_config

    name = game_name(cfg.game)
    groups = split_agent_specs(cfg.opponents)
    if not groups:
        raise ValueError("--opponents needs at least one of self, random, greedy, ...")
    out = Path(cfg.out or default_out(name, cfg.players, cfg.seed)).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    envc = env_config(name, cfg.players, **cfg.options)
    started = not ray.is_initialized()
    if started:
        # numba in every worker: one thread each (env runners are the parallelism)
        runtime_env = {"env_vars": {"NUMBA_NUM_THREADS": "1"}}
        if cfg.address:
            ray.init(address=cfg.address, runtime_env=runtime_env)
        else:
            ray.init(include_dashboard=False, runtime_env=runtime_env)
    algo = None
    try:
        algo = build_config(
            envc, groups, num_env_runners=cfg.num_env_runners,
            num_envs_per_env_runner=cfg.num_envs_per_env_runner,
            snapshots=cfg.max_snapshots, hiddens=cfg.net,
            train_batch_size=cfg.train_batch_size, minibatch_size=cfg.minibatch_size,
            num_epochs=cfg.num_epochs, lr=cfg.learning_rate, gamma=cfg.gamma,
            entropy_coeff=cfg.ent_coef, seed=cfg.seed,
        ).build_algo()
        selves = [m for m in algo.config.policies if str(m).startswith("self_")]
        for slot in sorted(selves):  # every frozen self starts as the initial learner
            refresh_snapshot(algo, slot)
        history: list[dict[str, Any]] = []
        t0 = time.perf_counter()
        it = 0
        steps = 0
        while steps < cfg.timesteps:
            t = time.perf_counter()
            result = algo.train()
            it += 1
            row = _row(it, result, time.perf_counter() - t0, time.perf_counter() - t)
            steps = row["env_steps"]
            history.append(row)
            rate = row["iter_env_steps"] / max(row["iter_seconds"], 1e-9)
            shares = ", ".join(f"{k.replace('win_share_', '')} {v:.3f}"
                               for k, v in row.items() if k.startswith("win_share_vs"))
            print(f"[iter {it:>4}, {steps:>9} env steps, {row['seconds']:7.1f} s, "
                  f"{rate:7.0f} steps/s] win share {row.get('win_share', float('nan')):.3f}"
                  f" ({shares}); illegal {row['illegal_actions']}", flush=True)
            if selves and cfg.snapshot_every > 0 and it % cfg.snapshot_every == 0:
                refresh_snapshot(algo, selves[(it // cfg.snapshot_every - 1) % len(selves)])
        wall = time.perf_counter() - t0
        algo.save_to_path(str(out))
    finally:
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()
    summary = {
        "backend": "rllib",
        "checkpoint": str(out),
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
        "iterations": it,
        "wall_seconds": round(wall, 1),
        "env_steps": steps,
        "env_steps_per_second": round(steps / wall, 1) if wall else 0.0,
        "illegal_actions": sum(r["illegal_actions"] for r in history),
        "final_win_share": {k: v for k, v in history[-1].items() if k.startswith("win_share")}
        if history else {},
        "history": history,
    }
    out.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"done: {it} iterations, {steps} env steps in {wall:.0f} s = "
          f"{summary['env_steps_per_second']:.0f} env steps/s; saved {out} "
          f"(summary {out.with_suffix('.json')})")
    return summary


def run_from_args(args: Any) -> int:
    """The ``train`` subcommand with ``--backend rllib`` (the shared options of the
    default backend that mean the same here are reused; the others are ignored)."""
    import sys

    cfg = RLlibTrainConfig(
        game=game_name(args.game), players=args.players, timesteps=args.timesteps,
        opponents=args.opponents, seed=args.seed, num_env_runners=args.num_env_runners,
        # --num-envs is the games played at once in all, shared by the runners
        num_envs_per_env_runner=max(1, min(64, args.num_envs // max(1, args.num_env_runners))),
        address=args.address, learning_rate=args.lr, ent_coef=args.ent_coef,
        net=tuple(int(x) for x in args.net.split(",")), num_epochs=args.n_epochs,
        minibatch_size=min(args.batch_size, RLlibTrainConfig.train_batch_size),
        max_snapshots=getattr(args, "max_snapshots", 4), out=args.out,
        options={"shaping": True} if args.shaping else {},
        command="trafficenvs train " + " ".join(sys.argv[2:]),
    )
    train(cfg)
    return 0


__all__ = ["RLlibTrainConfig", "refresh_snapshot", "run_from_args", "train"]
