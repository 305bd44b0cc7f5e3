"""The ``trafficenvs`` command line: ``list``, ``play``, ``train``, ``arena``, ``bench``.

``trafficenvs play traffic_jam --players 4`` seats you at ``player_0`` (``--seat``)
against random bots; the table is printed as text and your legal moves are listed
by readable names. Type a move's number, ``r`` for a random move, ``q`` to quit.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

import numpy as np

from trafficenvs.registry import list_envs, make


def play(
    game: str,
    players: int,
    seat: int = 0,
    seed: int | None = None,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
) -> int:
    """Play one game in the terminal; returns 0 when the game ends or the user quits."""
    env = make(game, num_players=players, wrapped=False, render_mode="ansi", render_seat=seat)
    if not 0 <= seat < players:
        raise SystemExit(f"--seat must be in 0..{players - 1}")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    me = env.possible_agents[seat]
    out = stdout.write
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        returns[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        if agent != me:
            env.step(int(rng.choice(legal)))
            continue
        out("\n" + env.render() + "\n\nYour moves:\n")
        for i, a in enumerate(legal):
            out(f"  {i:3d}: {env.action_name(int(a))}\n")
        while True:
            out(f"move [0-{len(legal) - 1}, r = random, q = quit]> ")
            stdout.flush()
            line = stdin.readline()
            if not line or line.strip() == "q":
                out("\nbye\n")
                return 0
            choice = line.strip()
            if choice == "r":
                action = int(rng.choice(legal))
                break
            if choice.isdigit() and int(choice) < len(legal):
                action = int(legal[int(choice)])
                break
            out(f"not a move: {choice!r}\n")
        out(f"you: {env.action_name(action)}\n")
        env.step(action)
    out("\n" + env.render() + "\n")
    out("result: " + ", ".join(f"{a} {returns[a]:+.2f}" for a in env.possible_agents) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trafficenvs", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the games")
    fmt = argparse.ArgumentDefaultsHelpFormatter
    p = sub.add_parser("play", help="play a game in the terminal against random bots",
                       formatter_class=fmt)
    p.add_argument("game", help="e.g. traffic_jam")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--seat", type=int, default=0, help="your seat (0 = first)")
    p.add_argument("--seed", type=int, default=None)
    from trafficenvs.agents.commands import add_arena_args, add_train_args

    add_train_args(sub.add_parser("train", help="train a MaskablePPO agent with self-play",
                                  formatter_class=fmt))
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
        if args.command in ("train", "arena"):
            return args.run(args)
        if args.command == "list":
            print("\n".join(list_envs()))
            return 0
        return play(args.game, args.players, args.seat, args.seed)
    except (ValueError, TypeError) as err:
        # a user's mistake (a misspelled game or agent, an option out of range): one
        # line, not a traceback; TRAFFICENVS_DEBUG=1 shows where it came from
        if os.environ.get("TRAFFICENVS_DEBUG") == "1":
            raise
        parser.exit(2, f"trafficenvs {args.command}: error: {err}\n")


if __name__ == "__main__":
    raise SystemExit(main())
