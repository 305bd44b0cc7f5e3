"""``trafficenvs train --algo exit``: expert iteration (``agents/expert_iteration.py``)
with the train command's options, curves, checkpoints and summary.

What the options mean here: ``--timesteps`` is the search's self-play decisions in
all (every seat's moves count, all of them kept; with ``--exit-opponents`` the
opponents' moves are neither counted nor kept), ``--exit-opponents`` the self-play
games' line-ups (``self``, the default, or agents that play one seat of their share of
the games, see ``agents/expert_iteration.py``),
``--exit-steps`` the moves of each of the ``--num-envs`` games per iteration,
``--search`` the self-play search (a ``gumbel`` setting), ``--buffer`` the decisions
the replay buffer keeps, ``--n-epochs`` the passes' worth of minibatches of
``--batch-size`` per iteration over the decisions it added, ``--lr``, ``--net``,
``--init`` (a PPO checkpoint of the same network) and ``--teacher`` (distilled before
the first iteration, as the PPO trainers do). Every ``--eval-every`` decisions (and at
the end) the network alone (``learner``) and the network with the search
(``learner+search``: the self-play setting without its root noise) play
``--eval-games`` games against each of ``--eval-against`` (default: greedy and the
game's strongest search preset). Every ``--checkpoint-every`` decisions the network
is also kept as ``<out>_<decisions>_steps.zip`` (as the PPO trainers keep theirs;
``<out>`` itself is rewritten every iteration). ``--arch plan`` (and
``--prior-beta``) trains the plan network (Jakarta Traffic; ``--init`` the shipped
PPO model of that network). Options that belong to PPO (opponents, rollouts, entropy,
shaping, its self-play snapshots and discount) are refused, not ignored.
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

#: PPO's options, which expert iteration has no use for: refused when set
PPO_ONLY = {"opponents": "--opponents", "n_steps": "--n-steps", "ent_coef": "--ent-coef",
            "snapshot_every": "--snapshot-every", "tensorboard": "--tensorboard",
            "shaping": "--shaping", "potential": "--potential", "precision": "--precision",
            "device": "--device",
            "trainer": "--trainer",
            # TrainConfig's, with no flag: PPO's discount and its opponents' pool
            "gamma": "gamma", "max_snapshots": "max_snapshots"}


def refuse_ppo_options(cfg: TrainConfig) -> None:
    """A ``ValueError`` naming each PPO option set to other than its default."""
    from trafficenvs.agents.training import TrainConfig

    d = TrainConfig(game="")
    bad = [flag for key, flag in PPO_ONLY.items() if getattr(cfg, key) != getattr(d, key)]
    if bad:
        raise ValueError(f"--algo exit does not take {', '.join(bad)} (PPO's options); "
                         "see trafficenvs train --help")


def eval_opponents(cfg: TrainConfig, game: Any) -> list[str]:
    """``--eval-against``, or greedy and the game's strongest search preset."""
    from trafficenvs.agents.search import strongest_preset

    if cfg.eval_against:
        return split_agent_specs(cfg.eval_against)
    best = strongest_preset(game)
    return (["greedy"] if has_greedy(game.name) else ["random"]) + ([best] if best else [])


def opponent_label(spec: str, game: Any) -> str:
    """The curve's name for an evaluation opponent: ``best_search`` for the game's
    strongest search preset (its setting is in the summary), else the spec."""
    from trafficenvs.agents.search import strongest_preset

    return "best_search" if spec == strongest_preset(game) else spec


def evaluate_both(trainer: Any, cfg: TrainConfig, against: list[str], seed: int
                  ) -> dict[str, float]:
    """Win shares of the network alone (``net_vs_X``) and of the network with the
    search (``search_vs_X``) against each opponent ``X`` (:func:`opponent_label`)."""
    from trafficenvs.agents.training import evaluate_player

    labels = {spec: opponent_label(spec, trainer.game) for spec in against}
    shares: dict[str, float] = {}
    for who, player in (("net", trainer.policy("learner")),
                        ("search", trainer.search_player("learner"))):
        for spec in against:
            share = evaluate_player(player, cfg, [spec], seed)
            shares[f"{who}_vs_{labels[spec]}"] = next(iter(share.values()))
    return shares


def train_exit(cfg: TrainConfig) -> dict[str, Any]:
    """Run expert iteration as ``cfg`` says; returns the summary (also saved as JSON
    beside the checkpoint, the curve as ``.curve.csv``)."""
    import numba
    import torch as th

    from trafficenvs.agents.expert_iteration import DEFAULT_SEARCH, ExpertIteration
    from trafficenvs.agents.training import default_out

    refuse_ppo_options(cfg)
    name = game_name(cfg.game)
    out = Path(cfg.out or default_out(name, cfg.players, cfg.seed))
    out.parent.mkdir(parents=True, exist_ok=True)
    game = make_game(name, num_players=cfg.players, **cfg.options)
    before, torch_before = numba.get_num_threads(), th.get_num_threads()
    numba.set_num_threads(max(1, min(cfg.env_threads, numba.config.NUMBA_NUM_THREADS)))
    th.set_num_threads(cfg.torch_threads)
    try:
        trainer = ExpertIteration(
            game, search=cfg.search or DEFAULT_SEARCH, num_envs=cfg.num_envs,
            steps_per_iteration=cfg.exit_steps, buffer_size=cfg.buffer,
            batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
            learning_rate=cfg.learning_rate, net=cfg.net, seed=cfg.seed,
            torch_threads=cfg.torch_threads, update_threads=cfg.update_threads,
            arch=cfg.arch, prior_beta=cfg.prior_beta,
            opponents=split_agent_specs(cfg.exit_opponents))
        against = eval_opponents(cfg, game)
        return _run(trainer, cfg, game, against, out)
    finally:
        numba.set_num_threads(before)
        if th.get_num_threads() != torch_before:
            th.set_num_threads(torch_before)


def _run(trainer: Any, cfg: TrainConfig, game: Any, against: list[str], out: Path
         ) -> dict[str, Any]:
    from trafficenvs.agents.training import distil_teacher, step_checkpoint, write_curve

    if cfg.init:
        trainer.load_weights(cfg.init)
    history: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    distil_seconds = 0.0
    if cfg.teacher:  # the PPO routes' distillation, on an SB3 copy of the network
        student = SimpleNamespace(policy=trainer.sb3_policy())
        distil_teacher(student, cfg, game, against, history, t0, out)
        trainer.net.load_state_dict(student.policy.state_dict(), strict=True)
        distil_seconds = time.perf_counter() - t0
    eval_seconds = 0.0
    due = cfg.eval_every
    due_ckpt = cfg.checkpoint_every

    def evaluate(row: dict[str, Any], seed: int) -> None:
        nonlocal eval_seconds
        t_eval = time.perf_counter()
        shares = evaluate_both(trainer, cfg, against, seed)
        eval_seconds += time.perf_counter() - t_eval
        row.update({k: round(v, 4) for k, v in shares.items()})
        print(f"[{row.get('label', 'iteration')} {row['iteration']:>4}, "
              f"{trainer.decisions:>9} decisions, "
              f"{row['seconds']:7.1f} s] " + ", ".join(f"{k} {v:.3f}" for k, v in
                                                       shares.items()), flush=True)

    progress = task = None
    if cfg.progress and cfg.timesteps > 0:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        progress = Progress("decisions", BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn())
        task = progress.add_task("exit", total=cfg.timesteps)
        progress.start()
    try:
        while trainer.decisions < cfg.timesteps:
            before = trainer.decisions
            stats = trainer.iterate()
            if trainer.decisions == before:
                raise RuntimeError("an iteration of self-play made no decision of the "
                                   "search's: do the opponents hold every seat?")
            row = {"iteration": stats["iteration"], "decisions": trainer.decisions,
                   "games": trainer.games,
                   "seconds": round(time.perf_counter() - t0, 1),
                   **{k: round(float(v), 4) for k, v in stats.items()
                      if k in ("policy_loss", "value_loss", "agreement")}}
            if cfg.eval_every > 0 and trainer.decisions >= due:
                due += cfg.eval_every
                evaluate(row, cfg.seed + trainer.iteration)
            history.append(row)
            write_curve(out.with_suffix(".curve.csv"), history)
            trainer.save(out)  # the newest network, every iteration: a run can stop
            if cfg.checkpoint_every > 0 and trainer.decisions >= due_ckpt:
                trainer.save(step_checkpoint(out, trainer.decisions))
                due_ckpt += cfg.checkpoint_every
            if progress is not None:
                progress.update(task, completed=min(trainer.decisions, cfg.timesteps))
    finally:
        if progress is not None:
            progress.stop()
    wall = time.perf_counter() - t0
    trainer.save(out)
    final: dict[str, Any] = {"label": "final, iteration", "iteration": trainer.iteration,
                             "seconds": round(wall, 1)}
    # written once before the final evaluation (a run stopped during it keeps its
    # summary, without final_win_share) and again with it
    run_eval = eval_seconds  # the evaluations inside ``wall``

    def summary(final_row: dict[str, Any] | None) -> dict[str, Any]:
        return _write_summary(out, trainer, cfg, against, history, wall, run_eval,
                              eval_seconds, distil_seconds, final_row)

    summary(None)
    evaluate(final, cfg.seed + 10**9)
    result = summary(final)
    print(f"done: {trainer.iteration} iterations, {trainer.decisions} decisions in "
          f"{wall:.0f} s; saved {out}")
    return result


def _write_summary(out: Path, trainer: Any, cfg: TrainConfig, against: list[str],
                   history: list[dict[str, Any]], wall: float, run_eval: float,
                   eval_seconds: float, distil_seconds: float,
                   final: dict[str, Any] | None) -> dict[str, Any]:
    """The run's summary, saved as JSON beside the checkpoint. ``wall`` is the run's
    time before its final evaluation, ``run_eval`` the evaluations' share of it (so
    that ``decisions_per_second`` counts self-play and training only);
    ``eval_seconds`` all evaluations' time, the final one's included; ``final`` is
    the final evaluation's row (``None``: not played yet, and no
    ``final_win_share``)."""
    summary: dict[str, Any] = {
        "checkpoint": str(out),
        "algorithm": "expert iteration",
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(cfg).items()},
        "search": trainer.search_spec,
        "eval_against": against,
        "wall_seconds": round(wall, 1),
        "iterations": trainer.iteration,
        "decisions": int(trainer.decisions),
        "opponent_decisions": int(trainer.opponent_decisions),
        "games": int(trainer.games),
        "mean_game_moves": round(trainer.game_moves / max(trainer.games, 1), 1),
        "decisions_per_second": round(trainer.decisions / max(
            wall - run_eval - distil_seconds, 1e-9), 1),
        "eval_seconds": round(eval_seconds, 1),
        "distil_seconds": round(distil_seconds, 1),
        "seconds_by_phase": {k: round(v, 4) for k, v in trainer.timings.items()},
        "history": history,
    }
    if final is not None:
        summary["final_win_share"] = {k: v for k, v in final.items() if "_vs_" in k}
    out.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


__all__ = ["PPO_ONLY", "eval_opponents", "evaluate_both", "opponent_label",
           "refuse_ppo_options", "train_exit"]
