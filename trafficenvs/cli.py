"""The trafficenvs command line: list, play, replay, train, arena, bench.

``trafficenvs play traffic_jam --players 4`` seats you at ``player_0`` (``--seat``)
against bots (``--opponents random,greedy``); see :mod:`trafficenvs.play`.
``trafficenvs replay jamming_traffic --agents greedy,random --out game.gif`` writes
an animated GIF of one game (:func:`trafficenvs.replay.record_gif`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from trafficenvs.play import play
from trafficenvs.registry import list_envs

__all__ = ["main", "play"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trafficenvs", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the games")
    fmt = argparse.ArgumentDefaultsHelpFormatter
    from trafficenvs.agents.commands import add_arena_args, add_train_args, positive_int

    p = sub.add_parser("play", help="play a game in the terminal against bots",
                       formatter_class=fmt)
    p.add_argument("game", help="e.g. traffic_jam")
    p.add_argument("--players", type=positive_int, default=4, help="seats at the table")
    p.add_argument("--seat", type=int, default=0, help="your seat (0 = first)")
    p.add_argument("--seed", type=int, default=None, help="seed of the game (none: random)")
    p.add_argument("--opponents", default="random",
                   help="the bots, as arena agents (random, greedy, mcts[:sims=200], "
                        "ppo:PATH...), dealt to the other seats in turn")
    r = sub.add_parser("replay", help="write an animated GIF of one game between agents",
                       formatter_class=fmt)
    r.add_argument("game", help="e.g. jamming_traffic")
    r.add_argument("--agents", default="greedy,random",
                   help="comma list of arena agents; seat k plays agent k mod their number")
    r.add_argument("--out", default=None, metavar="PATH", help="the GIF (default <game>.gif)")
    r.add_argument("--players", type=positive_int, default=None,
                   help="seats (default: one per agent, at least the game's minimum)")
    r.add_argument("--seed", type=int, default=0, help="seed of the game and agents")
    r.add_argument("--seat", type=int, default=None,
                   help="whose hidden cards the frames show (default: nobody's)")
    r.add_argument("--fps", type=float, default=2.0, help="frames per second")
    r.add_argument("--max-moves", type=positive_int, default=None,
                   help="stop after this many moves (default: the whole game)")
    r.add_argument("--scale", type=float, default=1.0, help="frame size factor (0.5 halves)")

    t = sub.add_parser("train", help="train a MaskablePPO agent with self-play",
                       formatter_class=fmt)
    add_train_args(t)
    # the Ray RLlib backend (trafficenvs.rllib, docs/rllib.md)
    t.add_argument("--backend", choices=["sb3", "rllib"], default="sb3",
                   help="sb3: MaskablePPO in this process; rllib: PPO on Ray RLlib env runners")
    t.add_argument("--num-env-runners", type=positive_int, default=2,
                   help="rllib: env runner processes playing the games")
    t.add_argument("--address", default=None,
                   help="rllib: Ray cluster to join (e.g. auto or ray://HOST:10001); "
                        "default: a local Ray")
    add_arena_args(sub.add_parser("arena", help="play agents against each other, rate them",
                                  formatter_class=fmt))
    sub.add_parser("bench", help="throughput benchmarks (see `trafficenvs bench -h`)",
                   add_help=False)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        from trafficenvs.bench.run import main as bench_main

        return bench_main(argv[1:])
    args = parser.parse_args(argv)
    try:
        if args.command == "train" and args.backend == "rllib":
            if args.algo != "ppo":
                raise ValueError("--algo exit trains in this process (its search is the "
                                 "package's); the rllib backend trains with RLlib's PPO")
            if getattr(args, "trainer", None) is not None:  # given (no default: SUPPRESS)
                raise ValueError(f"--trainer {args.trainer} trains in this process; the "
                                 f"rllib backend trains with RLlib's PPO (leave --trainer "
                                 f"out)")
            if args.teacher or args.timesteps == 0:
                raise ValueError("--teacher and --timesteps 0 (distil only) need the sb3 "
                                 "backend; the rllib backend trains by PPO alone")
            if args.arch != "mlp":
                raise ValueError("--arch plan needs the sb3 backend; the rllib backend "
                                 "trains its own flat network")
            if args.prior_beta is not None:
                raise ValueError("--prior-beta needs the sb3 backend and --arch plan")
            if args.device != "cpu":
                raise ValueError("--device is the batched trainer's; the rllib backend "
                                 "places its learner by its own settings (docs/rllib.md)")
            if args.precision != "fp32":
                raise ValueError("--precision bf16 is the batched trainer's; the rllib "
                                 "backend trains in fp32")
            if args.potential:
                raise ValueError("--potential needs the sb3 backend (its self-play env "
                                 "shapes the reward)")
            from trafficenvs.rllib.training import run_from_args

            return run_from_args(args)
        if args.command in ("train", "arena"):
            return args.run(args)
        if args.command == "list":
            print("\n".join(list_envs()))
            return 0
        if args.command == "replay":
            return run_replay(args)
        return play(args.game, args.players, args.seat, args.seed, opponents=args.opponents)
    except (ValueError, TypeError, FileNotFoundError) as err:
        # a user's mistake (a misspelled game or agent, an option out of range, a
        # checkpoint that is not there or is refused): one line, not a traceback;
        # TRAFFICENVS_DEBUG=1 shows where it came from
        if os.environ.get("TRAFFICENVS_DEBUG") == "1":
            raise
        parser.exit(2, f"trafficenvs {args.command}: error: {err}\n")


def run_replay(args: argparse.Namespace) -> int:
    from trafficenvs.registry import game_name
    from trafficenvs.replay import record_gif

    name = game_name(args.game)
    out = args.out or f"{name}.gif"
    frames = record_gif(name, args.agents, out, seed=args.seed, num_players=args.players,
                        seat=args.seat, fps=args.fps, max_moves=args.max_moves,
                        scale=args.scale)
    sys.stdout.write(f"wrote {out}: {frames} frames ({frames - 1} moves)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
