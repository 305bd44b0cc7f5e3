"""The ``train`` and ``arena`` subcommands of the ``trafficenvs`` command line."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from trafficenvs.agents.zoo import split_agent_specs
from trafficenvs.registry import game_name, make_game

if TYPE_CHECKING:
    from trafficenvs.agents.training import TrainConfig

#: the arena command's ``--format`` choices, as tabulate's table formats
TABLE_FORMATS = {"markdown": "pipe", "text": "simple"}


def _int_at_least(text: str, low: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int, got {text!r}") from None
    if v < low:
        raise argparse.ArgumentTypeError(f"must be at least {low}, got {v}")
    return v


def positive_int(text: str) -> int:
    """An argparse type: an int of at least 1 (a zero batch or game count would hang
    or do nothing silently)."""
    return _int_at_least(text, 1)


def nonneg_int(text: str) -> int:
    """An argparse type: an int of at least 0."""
    return _int_at_least(text, 0)


def add_train_args(p: argparse.ArgumentParser) -> None:
    from trafficenvs.agents.training import (
        ALGOS,
        ARCHS,
        DEVICES,
        PRECISIONS,
        TRAINERS,
        TrainConfig,
    )

    d = TrainConfig(game="")
    p.add_argument("game", help="e.g. traffic_jam")
    p.add_argument("--players", type=positive_int, default=d.players, help="seats per game")
    p.add_argument("--timesteps", type=nonneg_int, default=d.timesteps,
                   help="how long to train. sb3 backend: the learner's decisions (its "
                        "moves; the opponents' moves are not counted; 0: only distil the "
                        "--teacher). rllib backend: env steps, every seat's moves counted "
                        "(so a 2-player run takes about half as many learner decisions)")
    p.add_argument("--opponents", default=d.opponents,
                   help="comma list of random, greedy, self, ppo:PATH, flatmc[:...], "
                        "mcts[:...] (equal shares of games)")
    p.add_argument("--seed", type=int, default=d.seed, help="seed of the run")
    p.add_argument("--num-envs", type=positive_int, default=d.num_envs, help="games played at once")
    p.add_argument("--n-steps", type=positive_int, default=d.n_steps,
                   help="rollout length per game")
    p.add_argument("--batch-size", type=positive_int, default=d.batch_size,
                   help="PPO minibatch size")
    p.add_argument("--n-epochs", type=positive_int, default=d.n_epochs,
                   help="PPO epochs per update")
    p.add_argument("--lr", type=float, default=d.learning_rate, help="learning rate")
    p.add_argument("--ent-coef", type=float, default=d.ent_coef, help="entropy bonus")
    p.add_argument("--net", default=",".join(map(str, d.net)), help="hidden layer sizes")
    # no default here (SUPPRESS: the flag is absent unless given), so the rllib backend
    # can tell a --trainer it would ignore from one left out; TrainConfig's applies
    p.add_argument("--trainer", choices=TRAINERS, default=argparse.SUPPRESS,
                   help=f"batched: PPO written for the batched env (faster on every game; "
                        f"weights-only checkpoints); sb3: sb3-contrib's MaskablePPO through "
                        f"the SB3 bridge (SB3 checkpoints) (default: {d.trainer})")
    p.add_argument("--algo", choices=ALGOS, default=d.algo,
                   help="ppo: PPO against --opponents; exit: expert iteration (self-play "
                        "by the gumbel search with the network at its leaves, the network "
                        "trained on the search's improved policy and the results; "
                        "--timesteps counts every seat's decisions)")
    p.add_argument("--search", default=d.search, metavar="SPEC",
                   help="--algo exit: the self-play search, a gumbel setting "
                        "(default gumbel:n=32,m=8)")
    p.add_argument("--exit-steps", type=positive_int, default=d.exit_steps,
                   help="--algo exit: moves of every game per iteration")
    p.add_argument("--buffer", type=positive_int, default=d.buffer,
                   help="--algo exit: decisions the replay buffer keeps")
    p.add_argument("--exit-opponents", default=d.exit_opponents, metavar="SPECS",
                   help="--algo exit: the self-play games' line-ups, rotated among games: "
                        "self (every seat the search) or an agent that plays one seat, "
                        "e.g. self,flatmc (default: self)")
    p.add_argument("--arch", choices=ARCHS, default=d.arch,
                   help="network: flat (mlp) or, for jakarta_traffic, plan (moves scored "
                        "by the cells they reach, agents/plan_policy.py)")
    p.add_argument("--prior-beta", type=float, default=None, metavar="BETA",
                   help="with --arch plan: add BETA (learned from there) to the greedy "
                        "player's move in the policy's logits (agents/prior_policy.py)")
    p.add_argument("--snapshot-every", type=int, default=d.snapshot_every,
                   help="steps between frozen self-play opponents")
    p.add_argument("--eval-every", type=int, default=d.eval_every,
                   help="steps between evaluations (0: none)")
    p.add_argument("--eval-games", type=positive_int, default=d.eval_games,
                   help="games per evaluation arena")
    p.add_argument("--eval-against", default=d.eval_against,
                   help="agents the learner is evaluated against (comma list; a search "
                        "agent's options follow it)")
    p.add_argument("--checkpoint-every", type=int, default=d.checkpoint_every,
                   help="steps between checkpoints (0: none)")
    p.add_argument("--out", default="", help="checkpoint path (default "
                   "runs/<game>_<players>p_seed<seed>_<time>/model.zip; the shipped "
                   "models in agents/checkpoints/ are only written when named here)")
    p.add_argument("--tensorboard", default=None, metavar="DIR",
                   help="write TensorBoard logs here (if tensorboard is installed)")
    p.add_argument("--shaping", action="store_true",
                   help="reward points as they are scored, on top of the result")
    p.add_argument("--potential", type=float, default=d.potential, metavar="W",
                   help="shape the reward by W times the change of the game's position "
                        "estimate across each learner decision (potential-based, so the "
                        "best policy is unchanged), W falling to 0 at --potential-until "
                        "of the run (default 0: off; Jamming and Jakarta Traffic)")
    p.add_argument("--potential-until", type=float, default=d.potential_until,
                   metavar="F", help="share of the PPO steps after which the potential's "
                                     "weight is 0 (default %(default)s)")
    p.add_argument("--init", default=None, metavar="PATH",
                   help="start from this checkpoint's weights (continue a run)")
    p.add_argument("--teacher", default=d.teacher, metavar="AGENT",
                   help="distil this agent (greedy, flatmc:..., mcts:...) into the network "
                        "before PPO (agents/distill.py)")
    p.add_argument("--teacher-decisions", type=positive_int, default=d.teacher_decisions,
                   help="teacher-labelled decisions per distillation round")
    p.add_argument("--teacher-rounds", type=positive_int, default=d.teacher_rounds,
                   help="distillation rounds (after the first the student plays half the "
                        "decisions: DAgger)")
    p.add_argument("--teacher-epochs", type=positive_int, default=d.teacher_epochs,
                   help="passes over the demonstrations per round")
    p.add_argument("--threads", type=positive_int, default=d.torch_threads, help="torch threads")
    p.add_argument("--env-threads", type=positive_int, default=d.env_threads,
                   help="numba threads for the games and opponents (1 leaves a core to torch)")
    p.add_argument("--update-threads", type=nonneg_int, default=d.update_threads,
                   help="torch threads during the PPO update only (0: every core this "
                        "process may use; the rollout keeps --threads)")
    p.add_argument("--precision", choices=PRECISIONS, default=d.precision,
                   help="--trainer batched: the update's hidden layers in fp32 or bf16 "
                        "(autocast; about twice as fast on CPUs with AVX512-BF16, several "
                        "times slower on CPUs without it)")
    p.add_argument("--device", choices=DEVICES, default=d.device,
                   help="--trainer batched: where the network, the rollout's tensors and "
                        "the update live (cuda: a GPU torch sees; the env steps on the CPU)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run_train)


#: train flags whose name is not their ``TrainConfig`` field's
RENAMED_TRAIN_FLAGS = {"lr": "learning_rate", "threads": "torch_threads"}
#: train flags that are not ``TrainConfig`` fields (the RLlib backend's, the CLI's own)
NOT_TRAIN_CONFIG = {"backend", "num_env_runners", "address", "no_progress", "run", "command"}


def train_config(args: argparse.Namespace) -> TrainConfig:
    """The :class:`~trafficenvs.agents.training.TrainConfig` of parsed ``train`` flags.

    Each option is declared once, in :func:`add_train_args` (its default read from
    ``TrainConfig``); this maps the flags onto the fields by name (``--n-steps`` is
    ``n_steps``), through :data:`RENAMED_TRAIN_FLAGS` where the flag is named for the
    user (``--lr``), and converts the few that are written differently on the command
    line (``--net 128,128``, ``--no-progress``, the game's name)."""
    from dataclasses import fields

    from trafficenvs.agents.training import TrainConfig

    values = {RENAMED_TRAIN_FLAGS.get(k, k): v for k, v in vars(args).items()
              if k not in NOT_TRAIN_CONFIG}
    values.update(game=game_name(args.game), net=tuple(int(x) for x in args.net.split(",")),
                  progress=not args.no_progress,
                  command="trafficenvs train " + " ".join(sys.argv[2:] if len(sys.argv) > 2
                                                           else []))
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(values) - known)
    if unknown:  # a flag added without its field: a bug, not a user error
        raise RuntimeError(f"train flags without a TrainConfig field: {unknown}")
    return TrainConfig(**values)


def run_train(args: argparse.Namespace) -> int:
    from trafficenvs.agents.training import train

    if args.timesteps == 0 and not args.teacher:
        raise ValueError("--timesteps 0 trains nothing without a --teacher to distil")
    if args.arch == "plan":  # refused before anything is built
        from trafficenvs.agents.plan_policy import plan_reader

        plan_reader(args.players, game_name(args.game))
    cfg = train_config(args)
    train(cfg)
    return 0


def add_arena_args(p: argparse.ArgumentParser) -> None:
    """The ``arena`` subcommand's options, on the parser ``trafficenvs.cli`` builds."""
    p.add_argument("game", help="e.g. traffic_jam")
    p.add_argument("--players", type=positive_int, default=2, help="seats at every table")
    p.add_argument("--agents", default="random,greedy",
                   help="comma list of random, greedy, ppo:PATH, ppo-sample:PATH, "
                        "flatmc[:n=64,...], mcts[:sims=400,...], gumbel[:n=64,...] (a bare "
                        "search name is the game's preset: --list-agents; a search "
                        "agent's options follow it: 'mcts:sims=400,rollout=greedy,greedy')")
    p.add_argument("--games", type=positive_int, default=4000,
                   help="games in all (the line-ups share them; not per pair)")
    p.add_argument("--seed", type=int, default=0, help="seed of the games and agents")
    p.add_argument("--num-envs", type=positive_int, default=None, help="games played at once")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the results here")
    p.add_argument("--format", choices=sorted(TABLE_FORMATS), default="markdown",
                   help="the tables as Markdown (to paste in a page) or plain text")
    p.add_argument("--threads", type=positive_int, default=1,
                   help="torch threads for the network players (default 1: their batches "
                        "are small, and two arena processes with torch's default of every "
                        "core each were measured 10x slower on 2 cores)")
    p.add_argument("--list-agents", action="store_true",
                   help="print the agents this game has (the search presets that the bare "
                        "names flatmc, mcts and gumbel stand for, with their measured "
                        "strength and cost) and play nothing")
    p.set_defaults(run=run_arena_cmd)


def agents_table(name: str, fmt: str) -> str:
    """The agents of game ``name``: the fixed ones, then each search preset with its
    setting, its win share against greedy and its milliseconds per decision."""
    from tabulate import tabulate

    from trafficenvs.agents.search import OPTIONS
    from trafficenvs.core.spec import get_spec

    spec = get_spec(name)
    rows = [["random", "uniform over the legal moves", "", ""]]
    if spec.greedy is not None:
        rows.append(["greedy", "the rule-based player (rules page)", "0.5", ""])
    rows.append(["ppo:PATH", "a trained network (agents/checkpoints/)", "", ""])
    for kind in OPTIONS:
        preset = spec.search_presets.get(kind)
        if preset is None:
            rows.append([kind, f"{kind} with its defaults (no preset)", "", ""])
            continue
        strength = ("" if preset.vs_greedy is None
                    else f"{preset.vs_greedy:.3f} ({preset.games} games)")
        cost = "" if preset.ms_per_decision is None else f"{preset.ms_per_decision:.1f}"
        rows.append([kind, f"`{preset.spec}`" if fmt == "pipe" else preset.spec, strength,
                     cost])
    return tabulate(rows, headers=["agent", "plays", "win share vs greedy (2 players)",
                                   "ms / decision"], tablefmt=fmt)


def run_arena_cmd(args: argparse.Namespace) -> int:
    """Play the arena the options ask for, print its tables, write its JSON if asked."""
    from trafficenvs.agents.arena import run_arena
    from trafficenvs.agents.zoo import make_agents

    name = game_name(args.game)
    if args.list_agents:
        sys.stdout.write(agents_table(name, TABLE_FORMATS[args.format]) + "\n")
        return 0
    game = make_game(name, num_players=args.players)
    specs = split_agent_specs(args.agents)
    agents = make_agents(specs, game, seed=args.seed)
    # only where a network player brought torch in: the others never import it
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(args.threads)
    try:
        res = run_arena(name, agents, args.players, args.games, seed=args.seed,
                        num_envs=args.num_envs)
    finally:
        if torch is not None and torch.get_num_threads() != before:
            torch.set_num_threads(before)
    sys.stdout.write(res.table(TABLE_FORMATS[args.format]) + "\n")
    if args.json:
        res.to_json(args.json)
    return 0
