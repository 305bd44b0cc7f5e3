"""Where the cores pay in training: torch threads and env (numba) threads of ``trafficenvs train``.

The question: "use torch on all cores it pays to, the env on one numba thread
(measure both)". This script trains the shipped recipe's network (256x256, 256 games,
``n_steps=32``, minibatch 2048, 4 epochs) against the greedy player for a fixed number of
learner steps, once per combination of torch threads and env threads, and reports
learner steps per second (the median of ``--repeats`` runs after a warm-up run)::

    python -m benchmarks.train_threads                     # every game, 1 and 2 threads
    python -m benchmarks.train_threads --games jakarta_traffic --arch plan

It writes ``benchmarks/results/train_threads.json``. Run it on an idle machine: each
figure is a whole training process's pace, and another job on a core changes it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic")

_CHILD = """
import json
from trafficenvs.agents.training import TrainConfig, train
cfg = TrainConfig(game={game!r}, players=2, timesteps={steps}, opponents="greedy", seed=0,
                  net=(256, 256), arch={arch!r}, eval_every=0, eval_games=10, checkpoint_every=0,
                  snapshot_every=0, torch_threads={torch}, env_threads={env},
                  out={out!r}, progress=False)
s = train(cfg)  # its wall time: the whole training, not the final evaluation
print(json.dumps({{"learner_steps_per_s": s["learner_steps_per_second"]}}))
"""


def measure(game: str, arch: str, torch: int, env: int, steps: int, out: str) -> float:
    """Learner steps per second of one training process (numba's cache warm)."""
    code = _CHILD.format(game=game, arch=arch, steps=steps, torch=torch, env=env, out=out)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    if res.returncode != 0:
        raise RuntimeError(f"training subprocess failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])["learner_steps_per_s"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default=",".join(GAMES))
    p.add_argument("--arch", default="mlp", choices=("mlp", "plan"),
                   help="the network (trafficenvs train --arch)")
    p.add_argument("--steps", type=int, default=65536, help="learner steps per run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(RESULTS / "train_threads.json"))
    args = p.parse_args(argv)
    scratch = str(Path("runs") / "train_threads" / "model.zip")
    rows = []
    for game in args.games.split(","):
        measure(game, args.arch, 1, 1, 8192, scratch)  # warm numba's cache
        for torch in (1, 2):
            for env in (1, 2):
                rates = [measure(game, args.arch, torch, env, args.steps, scratch)
                         for _ in range(args.repeats)]
                row = {"game": game, "arch": args.arch, "torch_threads": torch,
                       "env_threads": env, "median": statistics.median(rates),
                       "min": min(rates), "max": max(rates)}
                rows.append(row)
                print(f"{game:16s} {args.arch} torch {torch} env {env}: "
                      f"{row['median']:8.0f} learner steps/s "
                      f"({row['min']:.0f}-{row['max']:.0f})", flush=True)
    Path(args.out).write_text(json.dumps({"measured": time.strftime("%Y-%m-%d %H:%M"),
                                          "steps": args.steps, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
