"""``trafficenvs train``: MaskablePPO against a pool of opponents, with self-play.

The learner plays one seat of every game in a :class:`SelfPlayVecEnv`; the other
seats are played by opponents drawn per game from a pool: ``random``, ``greedy``,
fixed checkpoints (``ppo:PATH``) and ``self`` (frozen copies of the learner, a new
one every ``snapshot_every`` steps, the oldest replaced beyond ``max_snapshots``).
Search agents (``flatmc:...``, ``mcts:...``) can be opponents too. Each group gets
an equal share of the games. Every ``eval_every`` steps the learner (argmax moves)
plays an arena of ``eval_games`` games against each of ``eval_against`` (default
random and greedy); the win shares go to the console, TensorBoard
(``eval/win_share_vs_*``), the run's JSON summary (``<out>.json``, "history") and the
learning curve ``<out>.curve.csv`` (rewritten after every evaluation, so a run that
is stopped keeps its curve). Checkpoints are written every ``checkpoint_every``
steps next to ``out``; without ``out`` a run writes under ``runs/``, never over the
shipped models in ``agents/checkpoints/``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trafficenvs.agents.arena import run_arena
from trafficenvs.agents.greedy import has_greedy
from trafficenvs.agents.policy import Policy
from trafficenvs.agents.zoo import make_agent, split_agent_specs
from trafficenvs.core.game import Game
from trafficenvs.registry import game_name, make_game


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored beside the checkpoint)."""

    game: str
    players: int = 2
    timesteps: int = 2_000_000
    opponents: str = "random,greedy,self"
    seed: int = 0
    num_envs: int = 256
    n_steps: int = 32
    batch_size: int = 2048
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 1.0
    ent_coef: float = 0.01
    net: tuple[int, ...] = (128, 128)
    #: the network: "mlp" (flat, every game) or "plan" (Jakarta Traffic: cells scored
    #: and moves pointed at the cells they reach, ``agents/plan_policy.py``)
    arch: str = "mlp"
    #: with ``arch="plan"``: the greedy player's move gets this (learned) bonus in the
    #: policy's logits (``agents/prior_policy.py``); None: no prior
    prior_beta: float | None = None
    snapshot_every: int = 100_000
    max_snapshots: int = 8
    eval_every: int = 200_000
    eval_games: int = 1000
    #: agents to evaluate against (comma list as on the command line; "" for random and,
    #: if the game has one, greedy)
    eval_against: str = ""
    checkpoint_every: int = 500_000
    out: str = ""
    tensorboard: str | None = None
    shaping: bool = False
    #: potential-based shaping by the game's position estimate (``SelfPlayVecEnv.
    #: set_potential``): its weight at the start, falling linearly to 0 at
    #: ``potential_until`` of the PPO steps (0: off)
    potential: float = 0.0
    potential_until: float = 0.75
    torch_threads: int = 1
    #: numba threads for the env and the opponents (see ``train``)
    env_threads: int = 1
    #: torch threads during the PPO update only (0: every core this process may use,
    #: ``trainer.usable_cores``); the rollout keeps ``torch_threads``. The env is idle
    #: while the update runs and its minibatches' matrix products are large, so the
    #: cores pay there (both trainers)
    update_threads: int = 0
    #: the batched trainer's update arithmetic: "fp32", or "bf16" (hidden layers in
    #: bfloat16 under autocast; ``trainer.BatchedPPO``)
    precision: str = "fp32"
    #: the batched trainer's learner device: "cpu" or "cuda" (network, rollout tensors
    #: and update there; the env steps on the CPU)
    device: str = "cpu"
    progress: bool = True
    #: start from this checkpoint's weights (continue or fine-tune a run)
    init: str | None = None
    #: distil this agent into the network before PPO ("" none; ``greedy``,
    #: ``flatmc:...``, ``mcts:...``; see ``agents/distill.py``)
    teacher: str = ""
    #: teacher-labelled decisions per distillation round
    teacher_decisions: int = 200_000
    #: distillation rounds: the first plays the teacher's games, each further one
    #: (DAgger) lets the student play half the decisions, the teacher labelling all
    teacher_rounds: int = 2
    #: passes over all demonstrations so far, per round
    teacher_epochs: int = 6
    #: who trains: "batched" (``agents/trainer.py``: PPO written for the batched env,
    #: weights-only checkpoints; the default, as it trains faster on every game with
    #: the same learning per sample: ``benchmarks/training.py``) or "sb3"
    #: (sb3-contrib's MaskablePPO through the SB3 bridge, SB3 checkpoints)
    trainer: str = "batched"
    #: the algorithm: "ppo" (either trainer) or "exit" (expert iteration,
    #: ``agents/exit_training.py``: search with the network in the loop)
    algo: str = "ppo"
    #: --algo exit: the self-play search (a gumbel setting; "" the default of
    #: ``agents/expert_iteration.py``)
    search: str = ""
    #: --algo exit: moves of every game per iteration
    exit_steps: int = 32
    #: --algo exit: decisions the replay buffer keeps
    buffer: int = 200_000
    #: --algo exit: the self-play games' line-ups, rotated among games: "self" (every
    #: seat the search) or agent specs (that agent plays one seat; e.g. "self,flatmc")
    exit_opponents: str = "self"
    #: the command line that started the run (recorded with the checkpoint)
    command: str = ""
    options: dict[str, Any] = field(default_factory=dict)


def _evaluate(model: Any, cfg: TrainConfig, against: list[str], seed: int) -> dict[str, float]:
    """Win share of the learner (argmax) against each of ``against``."""
    from trafficenvs.agents.ppo import PPOPolicy

    share = evaluate_player(PPOPolicy(model.policy, name="learner"), cfg, against, seed)
    model.policy.set_training_mode(False)
    return share


def evaluate_player(me: Policy, cfg: TrainConfig, against: list[str], seed: int
                    ) -> dict[str, float]:
    """Win share of the player ``me`` (named ``learner``) against each of ``against``,
    ``cfg.eval_games`` games each on the run's game without shaping (the arena judges
    by the result)."""
    game = make_game(cfg.game, num_players=cfg.players, **cfg.options)
    out = {}
    for spec in against:
        other = make_agent(spec, game, seed=seed)
        res = run_arena(game, [me, other], games=cfg.eval_games, seed=seed,
                        num_envs=min(cfg.eval_games, 1024))
        out[other.name] = res.stats("learner").win_share
    return out


def opponent_pool(cfg: TrainConfig, game: Game) -> tuple[Any, list[str]]:
    """The run's opponents (``cfg.opponents``) as an ``OpponentPool``, and the groups
    named (``"self"`` among them: snapshots of the learner join during training)."""
    from trafficenvs.agents.sb3_bridge import OpponentPool

    groups = split_agent_specs(cfg.opponents)
    if not groups:
        raise ValueError("--opponents needs at least one of random, greedy, self, ppo:PATH")
    pool = OpponentPool(max_per_group=cfg.max_snapshots, seed=cfg.seed)
    for k, g in enumerate(groups):
        if g == "self":
            pool.weights["self"] = 1.0
        else:
            pool.add(make_agent(g, game, seed=cfg.seed + 17 * (k + 1)), group=g)
    return pool, groups


def distil_teacher(model: Any, cfg: TrainConfig, game: Game,
            eval_against: list[str], history: list[dict[str, Any]], t0: float,
            out: Path) -> None:
    """Distil ``cfg.teacher`` into ``model``'s policy and critic (``agents/distill.py``):
    round 1 on the teacher's own games, each later round (DAgger) on games where the
    student plays half the decisions; every round refits on all demonstrations so far
    and is evaluated like a PPO checkpoint (a row of the learning curve with 0
    timesteps and its ``round``)."""
    from trafficenvs.agents.distill import Demonstrations, collect, fit
    from trafficenvs.agents.ppo import PPOPolicy

    teacher = make_agent(cfg.teacher, game, seed=cfg.seed + 7)
    parts: list[Demonstrations] = []
    for r in range(cfg.teacher_rounds):
        student = PPOPolicy(model.policy, name="student") if r else None
        t_round = time.perf_counter()
        parts.append(collect(game, None, teacher, cfg.teacher_decisions,
                             student=student, beta=0.5 if r else 1.0,
                             num_envs=min(cfg.num_envs, cfg.teacher_decisions),
                             seed=cfg.seed + 1000 * (r + 1), progress=cfg.progress))
        t_fit = time.perf_counter()
        st = fit(model.policy, Demonstrations.concat(parts), epochs=cfg.teacher_epochs,
                 seed=cfg.seed + r, progress=cfg.progress)
        wall = time.perf_counter() - t0
        shares = _evaluate(model, cfg, eval_against, seed=cfg.seed + 10**6 + r)
        history.append({"timesteps": 0, "round": r + 1, "seconds": round(wall, 1),
                        "collect_seconds": round(t_fit - t_round, 1),
                        "fit_seconds": round(time.perf_counter() - t_fit, 1),
                        "agreement": round(st["agreement"], 4),
                        **{f"win_share_vs_{k}": round(v, 4) for k, v in shares.items()}})
        write_curve(out.with_suffix(".curve.csv"), history)
        msg = ", ".join(f"vs {k} {v:.3f}" for k, v in shares.items())
        print(f"[distil round {r + 1}/{cfg.teacher_rounds}, {wall:7.1f} s] "
              f"{sum(map(len, parts))} decisions of {teacher.name}, agreement "
              f"{st['agreement']:.3f}; win share ({cfg.eval_games} games each) {msg}",
              flush=True)


def default_out(game: str, players: int, seed: int) -> Path:
    """Where a run without ``--out`` writes: a new directory under ``runs/``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{game}_{players}p_seed{seed}_{stamp}" / "model.zip"


def step_checkpoint(out: Path, steps: int) -> Path:
    """The numbered checkpoint every ``--checkpoint-every`` keeps beside ``out``
    (``<out>_<steps>_steps.zip``), one name for every trainer."""
    return out.with_name(f"{out.stem}_{steps}_steps.zip")


def write_curve(path: Path, history: list[dict[str, Any]]) -> None:
    """The learning curve so far as CSV (one row per evaluation)."""
    import csv

    keys: list[str] = []
    for row in history:
        keys += [k for k in row if k not in keys]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(history)


def train(cfg: TrainConfig) -> dict[str, Any]:
    """Run MaskablePPO training as ``cfg`` says; returns a summary (also saved as JSON).

    The env runs on ``cfg.env_threads`` numba threads (default one: a few hundred
    games per step are little work, below or near the batch where the env's loops
    go parallel at all (``core/threads.py``), and torch wants the cores; with
    numba's OpenMP layer, whose idle workers spin while torch computes, training on a
    busy 2-core machine ran about 10x slower with two). torch runs on
    ``cfg.torch_threads`` while collecting and ``cfg.update_threads`` (0: every usable
    core) in the update. The caller's thread counts (numba's and torch's) are
    restored afterwards.
    """
    import numba

    if cfg.algo not in ALGOS:
        raise ValueError(f"--algo must be one of {', '.join(ALGOS)}, got {cfg.algo!r}")
    if cfg.algo == "exit":
        from trafficenvs.agents.exit_training import train_exit

        return train_exit(cfg)  # it sets its threads itself, and restores them
    if cfg.exit_opponents != TrainConfig.exit_opponents:
        raise ValueError("--exit-opponents belongs to --algo exit; PPO's opponents are "
                         "--opponents")
    if cfg.trainer not in TRAINERS:
        raise ValueError(f"--trainer must be one of {', '.join(TRAINERS)}, got {cfg.trainer!r}")
    import torch as th

    if cfg.trainer == "batched":
        from trafficenvs.agents.batched_training import train_batched as run
    else:
        run = _train
    # the caller's thread counts are given back whatever the run set (a notebook keeps
    # its own): the trainers set them for the run (SelfPlayVecEnv, the evaluations)
    before, torch_before = numba.get_num_threads(), th.get_num_threads()
    numba.set_num_threads(max(1, min(cfg.env_threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        return run(cfg)
    finally:
        numba.set_num_threads(before)
        if th.get_num_threads() != torch_before:
            th.set_num_threads(torch_before)


def training_speed(steps: int, wall: float, eval_seconds: float,
                   distil_seconds: float = 0.0) -> dict[str, float]:
    """The summary's ``eval_seconds``, ``distil_seconds`` and
    ``training_steps_per_second``: PPO's learner steps per second of the run less its
    evaluations (which play ``eval_games`` arena games each time and say nothing of
    the trainer's speed) and its distillation (``--teacher``, before PPO)."""
    train_wall = max(wall - eval_seconds - distil_seconds, 1e-9)
    return {"eval_seconds": round(eval_seconds, 1), "distil_seconds": round(distil_seconds, 1),
            "training_steps_per_second": round(steps / train_wall, 1)}


ARCHS = ("mlp", "plan")
TRAINERS = ("sb3", "batched")
ALGOS = ("ppo", "exit")
#: the batched trainer's update arithmetic: float32, or the hidden layers in bfloat16
PRECISIONS = ("fp32", "bf16")
#: the batched trainer's learner devices
DEVICES = ("cpu", "cuda")


def potential_weight(start: float, until: float, n: int, total: int) -> float:
    """The potential shaping's weight after ``n`` of ``total`` PPO steps: ``start``
    falling linearly to 0 at ``until * total`` and 0 after, so the last part of a run
    learns from the true result alone (its value function too)."""
    return start * max(0.0, 1.0 - n / (until * total))


def policy_network(cfg: TrainConfig, name: str) -> tuple[Any, dict]:
    """MaskablePPO's ``policy`` and ``policy_kwargs`` for ``cfg.arch``."""
    from trafficenvs.agents.ppo import DEFAULT_POLICY_KWARGS

    if cfg.prior_beta is not None and cfg.arch != "plan":
        raise ValueError("--prior-beta needs --arch plan")
    if cfg.arch == "plan":  # a game without plan features is refused by plan_reader
        from trafficenvs.agents.plan_policy import PlanPolicy, plan_policy_kwargs

        kwargs = plan_policy_kwargs(cfg.players, cfg.net, name)
        if cfg.prior_beta is None:
            return PlanPolicy, kwargs
        from trafficenvs.agents.prior_policy import PriorPlanPolicy

        return PriorPlanPolicy, {**kwargs, "prior_beta": float(cfg.prior_beta)}
    if cfg.arch != "mlp":
        raise ValueError(f"--arch must be one of {', '.join(ARCHS)}, got {cfg.arch!r}")
    net = {"pi": list(cfg.net), "vf": list(cfg.net)}
    return "MlpPolicy", dict(DEFAULT_POLICY_KWARGS, net_arch=net)


def check_ppo_options(cfg: TrainConfig, name: str) -> tuple[Any, dict[str, Any]]:
    """Both PPO trainers' checks of the options they share, before anything is built
    (so a mistake is one line, not a traceback minutes in); returns the SB3 route's
    ``(policy, policy_kwargs)`` (:func:`policy_network`)."""
    if cfg.update_threads < 0:
        raise ValueError(f"--update-threads must be >= 0, got {cfg.update_threads}")
    if not 0.0 < cfg.potential_until <= 1.0:
        raise ValueError(f"--potential-until must be in (0, 1], got {cfg.potential_until}")
    return policy_network(cfg, name)  # refuses a bad --arch/--prior-beta


def _train(cfg: TrainConfig) -> dict[str, Any]:
    import torch as th
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from trafficenvs.agents.ppo import PPOPolicy
    from trafficenvs.agents.sb3_bridge import SelfPlayVecEnv
    from trafficenvs.agents.trainer import usable_cores

    if cfg.precision != "fp32":
        raise ValueError(f"--precision {cfg.precision} is the batched trainer's "
                         f"(--trainer batched); SB3's PPO trains in fp32")
    if cfg.device != "cpu":
        raise ValueError(f"--device {cfg.device} is the batched trainer's (--trainer "
                         f"batched); the SB3 route trains on the CPU")
    name = game_name(cfg.game)
    policy, policy_kwargs = check_ppo_options(cfg, name)
    update_threads = cfg.update_threads or usable_cores()
    th.set_num_threads(cfg.torch_threads)
    # argument checks of torch distributions cost ~10% of training time here
    th.distributions.Distribution.set_default_validate_args(False)
    out = Path(cfg.out or default_out(name, cfg.players, cfg.seed))
    out.parent.mkdir(parents=True, exist_ok=True)
    options = dict(cfg.options)
    if cfg.shaping:
        options["shaping"] = True
    game = make_game(name, num_players=cfg.players, **options)

    pool, groups = opponent_pool(cfg, game)
    env = SelfPlayVecEnv(game, cfg.num_envs, pool, seed=cfg.seed, potential=cfg.potential,
                         potential_gamma=cfg.gamma, torch_threads=cfg.torch_threads)

    tb = cfg.tensorboard
    if tb:
        try:
            import tensorboard  # noqa: F401
        except ImportError:
            print("tensorboard is not installed: no TensorBoard logs")
            tb = None
    model = MaskablePPO(
        policy, env, n_steps=cfg.n_steps, batch_size=cfg.batch_size,
        n_epochs=cfg.n_epochs, learning_rate=cfg.learning_rate, gamma=cfg.gamma,
        ent_coef=cfg.ent_coef, policy_kwargs=policy_kwargs, seed=cfg.seed, verbose=0,
        tensorboard_log=tb, device="cpu",
    )
    if cfg.init and cfg.arch == "plan":
        from trafficenvs.agents.plan_policy import load_plan_init

        load_plan_init(model, cfg.init)  # also from a plan network before newer features
    elif cfg.init:
        from trafficenvs.agents.checkpoint import load_parameters

        # the weights only (SB3's set_parameters reads them the same way, but a path
        # goes through the checks of a regular file of a checkpoint's size first)
        try:
            model.set_parameters(load_parameters(cfg.init), exact_match=True, device="cpu")
        except RuntimeError as err:  # torch's size mismatch: another network or game
            raise ValueError(f"--init {cfg.init}: its network does not fit this one "
                             f"(another --net, --arch, game or player count?): "
                             f"{str(err).splitlines()[0][:200]}") from None
    history: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    eval_against = (split_agent_specs(cfg.eval_against) if cfg.eval_against
                    else ["random"] + (["greedy"] if has_greedy(name) else []))
    distil_seconds = 0.0
    if cfg.teacher:
        distil_teacher(model, cfg, game, eval_against, history, t0, out)
        distil_seconds = time.perf_counter() - t0
    if "self" in groups:
        pool.add(PPOPolicy.frozen(model, "self@0"), group="self")

    batch = cfg.n_steps * cfg.num_envs
    total = -(-cfg.timesteps // batch) * batch  # SB3 runs whole rollouts of n_steps
    if total != cfg.timesteps:
        print(f"training {total} learner steps: {cfg.timesteps} rounded up to whole "
              f"rollouts of {cfg.n_steps} steps x {cfg.num_envs} games", flush=True)

    timings = {"rollout": 0.0, "update": 0.0, "eval": 0.0}

    class Hooks(BaseCallback):
        """Self-play snapshots, evaluations and checkpoints on their schedules; torch's
        threads for the update (``update_threads``) and the seconds of each phase."""

        def __init__(self) -> None:
            super().__init__()
            self.next_snap = cfg.snapshot_every
            self.next_eval = cfg.eval_every
            self.next_ckpt = cfg.checkpoint_every
            self.mark: tuple[str, float] | None = None

        def _phase(self, name: str | None) -> None:
            now = time.perf_counter()
            if self.mark is not None:
                timings[self.mark[0]] += now - self.mark[1]
            self.mark = None if name is None else (name, now)

        def _on_rollout_start(self) -> None:  # after the update (or at the start)
            self._phase("rollout")
            th.set_num_threads(cfg.torch_threads)

        def _on_rollout_end(self) -> None:  # SB3's train() follows
            self._phase("update")
            th.set_num_threads(update_threads)

        def _on_training_end(self) -> None:
            self._phase(None)
            th.set_num_threads(cfg.torch_threads)

        def _on_step(self) -> bool:
            n = self.num_timesteps
            if cfg.potential:
                env.set_potential(potential_weight(cfg.potential, cfg.potential_until, n,
                                                   total))
            if "self" in groups and n >= self.next_snap:
                pool.add(PPOPolicy.frozen(self.model, f"self@{n}"), group="self")
                self.next_snap += cfg.snapshot_every
            if cfg.eval_every > 0 and n >= self.next_eval:
                self.next_eval += cfg.eval_every
                self._eval(n)
            if cfg.checkpoint_every > 0 and n >= self.next_ckpt:
                self.model.save(step_checkpoint(out, n))
                self.next_ckpt += cfg.checkpoint_every
            return True

        def _eval(self, n: int) -> None:
            wall = time.perf_counter() - t0
            shares = _evaluate(self.model, cfg, eval_against, seed=cfg.seed + n)
            spent = time.perf_counter() - t0 - wall
            timings["eval"] += spent
            if self.mark is not None:  # the evaluation is not the rollout's time
                self.mark = (self.mark[0], self.mark[1] + spent)
            row = {"timesteps": n, "env_steps": env.env_steps, "seconds": round(wall, 1),
                   **{f"win_share_vs_{k}": round(v, 4) for k, v in shares.items()}}
            history.append(row)
            write_curve(out.with_suffix(".curve.csv"), history)
            for k, v in shares.items():
                self.logger.record(f"eval/win_share_vs_{k}", v)
            msg = ", ".join(f"vs {k} {v:.3f}" for k, v in shares.items())
            print(f"[{n:>9} steps, {wall:7.1f} s] win share ({cfg.eval_games} games each) "
                  f"{msg}", flush=True)

    if total:
        model.learn(total, callback=Hooks(), progress_bar=cfg.progress,
                    tb_log_name=f"{name}_{cfg.players}p")
    wall = time.perf_counter() - t0
    model.save(out)
    final = _evaluate(model, cfg, eval_against, seed=cfg.seed + 10**9)
    timings["env"] = env.step_seconds
    summary = {
        "checkpoint": str(out),
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(cfg).items()},
        "wall_seconds": round(wall, 1),
        "learner_steps": int(model.num_timesteps),
        "env_steps": int(env.env_steps),
        "env_steps_per_second": round(env.env_steps / wall, 1),
        "learner_steps_per_second": round(model.num_timesteps / wall, 1),
        **training_speed(model.num_timesteps, wall, timings["eval"], distil_seconds),
        "seconds_by_phase": {k: round(v, 4) for k, v in timings.items()},
        "final_win_share": {k: round(v, 4) for k, v in final.items()},
        "history": history,
    }
    out.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"done: {model.num_timesteps} learner steps ({env.env_steps} env steps) in {wall:.0f} s "
        f"= {env.env_steps / wall:.0f} env steps/s; saved {out}"
    )
    print(f"final win share ({cfg.eval_games} games each): "
          + ", ".join(f"vs {k} {v:.3f}" for k, v in final.items()))
    return summary


__all__ = ["ALGOS", "DEVICES", "PRECISIONS", "TRAINERS", "TrainConfig", "check_ppo_options",
           "distil_teacher", "evaluate_player", "opponent_pool", "policy_network",
           "potential_weight", "step_checkpoint", "train", "training_speed", "write_curve"]
