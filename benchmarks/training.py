"""The two trainers side by side: learner steps per second and learning per sample.

For every game, ``trafficenvs train`` runs with the SB3 route (sb3-contrib's
MaskablePPO through ``SelfPlayVecEnv``) and with the batched trainer
(``agents/trainer.py``), in float32, with the update in bfloat16 (on CPUs that have
it) and with the learner on a GPU (where torch sees one: ``batched_cuda``), on the same
network, hyper-parameters, opponents (the command's defaults: random, greedy, self-play
snapshots), seeds and sample budget. Each run is evaluated against random and greedy
every ``--eval-every`` learner steps (``--eval-games`` games each; the evaluations'
time is left out of the speed). Per run it records the learner steps per second, the
share of the training time in the env (the games and the opponents' moves), the
learner's forward passes while collecting, and the update; per game it plots the win
shares against the samples (mean and the seeds' spread)::

    python -m benchmarks.training                      # 3 games x 3 seeds x 3 routes
    python -m benchmarks.training --games traffic_jam --seeds 1 --timesteps 50000
    python -m benchmarks.training --tiny               # a minute: the pipeline only

It writes ``benchmarks/results/training.json`` (its ``summary`` has, per game id,
``batched_steps_per_s``, ``sb3_steps_per_s`` and their ``ratio``, the bf16 figures, and
``gpu_steps_per_s`` with its ``gpu_ratio`` where the GPU route ran)
and ``benchmarks/results/training.png``. The runs of one seed follow each other route by
route, so a change in the machine's pace touches every route alike; still, run it on an
idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic")
#: route name -> the ``TrainConfig`` settings that make it
ROUTES: dict[str, dict[str, str]] = {
    "sb3": {"trainer": "sb3", "precision": "fp32"},
    "batched": {"trainer": "batched", "precision": "fp32"},
    "batched_bf16": {"trainer": "batched", "precision": "bf16"},
    # the learner on a GPU (the env on the CPU): measured where torch sees one
    "batched_cuda": {"trainer": "batched", "precision": "fp32", "device": "cuda"},
}
#: the settings of ``--tiny`` (a check of the pipeline, not a measurement)
TINY = {"timesteps": 1024, "num_envs": 16, "n_steps": 32, "batch_size": 256,
        "eval_every": 512, "eval_games": 20, "seeds": 1}


def phase_shares(route: str, phases: dict[str, float], train_seconds: float
                 ) -> dict[str, float]:
    """Shares of the training time (evaluations left out) in the env, the learner's
    forward passes while collecting (with sampling and GAE) and the update; ``other``
    is the rest (snapshots, checkpoints, the trainer's own bookkeeping)."""
    if route == "sb3":  # SB3's rollout holds the env's steps and its forward passes
        env, forward = phases["env"], phases["rollout"] - phases["env"]
    else:
        env, forward = phases["env"], phases["forward"] + phases["gae"]
    shares = {"env": env, "forward": forward, "update": phases["update"]}
    shares = {k: round(v / train_seconds, 4) for k, v in shares.items()}
    shares["other"] = round(max(0.0, 1.0 - sum(shares.values())), 4)
    return shares


def run_one(game: str, route: str, seed: int, settings: dict[str, Any], scratch: Path
            ) -> dict[str, Any]:
    """One ``trafficenvs train`` run; its speed, time shares and curve."""
    from trafficenvs.agents.training import TrainConfig, train

    cfg = TrainConfig(game=game, players=2, seed=seed, timesteps=settings["timesteps"],
                      num_envs=settings["num_envs"], n_steps=settings["n_steps"],
                      batch_size=settings["batch_size"], eval_every=settings["eval_every"],
                      eval_games=settings["eval_games"], checkpoint_every=0,
                      out=str(scratch / f"{game}_{route}_{seed}.zip"), progress=False,
                      **ROUTES[route])
    summary = train(cfg)
    # the summary's speed is not rounded to whole seconds as its wall time is
    train_seconds = summary["learner_steps"] / summary["training_steps_per_second"]
    return {
        "game": game, "route": route, "seed": seed,
        "learner_steps": summary["learner_steps"],
        "training_steps_per_second": summary["training_steps_per_second"],
        "train_seconds": round(train_seconds, 2),
        "eval_seconds": summary["eval_seconds"],
        "shares": phase_shares(route, summary["seconds_by_phase"], train_seconds),
        "curve": [{k: row[k] for k in row if k == "timesteps" or k.startswith("win_share")}
                  for row in summary["history"]],
        "final_win_share": summary["final_win_share"],
    }


def summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per game: each route's median learner steps/s over the seeds, the ratios to the
    SB3 route, and the final win shares' mean, min and max over the seeds."""
    out: dict[str, dict[str, Any]] = {}
    for game in dict.fromkeys(r["game"] for r in runs):
        mine = [r for r in runs if r["game"] == game]
        speed = {route: statistics.median(r["training_steps_per_second"] for r in mine
                                          if r["route"] == route)
                 for route in dict.fromkeys(r["route"] for r in mine)}
        row: dict[str, Any] = {f"{route}_steps_per_s": round(v, 1)
                               for route, v in speed.items()}
        if "sb3" in speed and "batched" in speed:
            row["ratio"] = round(speed["batched"] / speed["sb3"], 2)
        if "sb3" in speed and "batched_bf16" in speed:
            row["bf16_ratio"] = round(speed["batched_bf16"] / speed["sb3"], 2)
        if "batched_cuda" in speed:
            row["gpu_steps_per_s"] = round(speed["batched_cuda"], 1)
            if "sb3" in speed:
                row["gpu_ratio"] = round(speed["batched_cuda"] / speed["sb3"], 2)
        final: dict[str, dict[str, dict[str, float]]] = {}
        for route in speed:
            shares = [r["final_win_share"] for r in mine if r["route"] == route]
            final[route] = {vs: {"mean": round(statistics.fmean(s[vs] for s in shares), 4),
                                 "min": min(s[vs] for s in shares),
                                 "max": max(s[vs] for s in shares)}
                            for vs in shares[0]}
        row["final_win_share"] = final
        out[game] = row
    return out


def table(summary: dict[str, dict[str, Any]], runs: list[dict[str, Any]]) -> str:
    """The README's table (markdown): speed, ratio, time shares, final win shares."""
    from tabulate import tabulate

    rows = []
    for game, s in summary.items():
        for route in ROUTES:
            if f"{route}_steps_per_s" not in s:
                continue
            mine = [r for r in runs if r["game"] == game and r["route"] == route]
            share = {k: statistics.fmean(r["shares"][k] for r in mine)
                     for k in ("env", "forward", "update")}
            ratio = {"sb3": 1.0, "batched": s.get("ratio"),
                     "batched_bf16": s.get("bf16_ratio"),
                     "batched_cuda": s.get("gpu_ratio")}[route]
            final = s["final_win_share"][route]
            rows.append([game, route, f"{s[f'{route}_steps_per_s']:,.0f}",
                         "" if ratio is None else f"{ratio:.2f}x",
                         " / ".join(f"{share[k]:.0%}" for k in ("env", "forward", "update")),
                         *(f"{final[vs]['mean']:.3f} ({final[vs]['min']:.2f}-"
                           f"{final[vs]['max']:.2f})" if vs in final else ""
                           for vs in ("random", "greedy"))])
    return tabulate(rows, headers=["game", "trainer", "learner steps/s", "vs sb3",
                                   "env / forward / update", "final vs random",
                                   "final vs greedy"], tablefmt="github")


def plot(runs: list[dict[str, Any]], path: Path) -> Path:
    """Win share against learner steps, one column per game, a row per opponent: each
    route's mean over the seeds with the seeds' range shaded."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    games = list(dict.fromkeys(r["game"] for r in runs))
    against = ("random", "greedy")
    fig, axes = plt.subplots(len(against), len(games), figsize=(4.2 * len(games), 6.4),
                             squeeze=False, sharex="col")
    for j, game in enumerate(games):
        for route in ROUTES:
            mine = [r for r in runs if r["game"] == game and r["route"] == route]
            if not mine or not mine[0]["curve"]:
                continue
            steps = [row["timesteps"] for row in mine[0]["curve"]]
            for i, vs in enumerate(against):
                key = f"win_share_vs_{vs}"
                if key not in mine[0]["curve"][0]:
                    continue
                y = np.array([[row[key] for row in r["curve"]] for r in mine])
                ax = axes[i][j]
                ax.plot(steps, y.mean(0), label=route, marker="o", ms=3)
                ax.fill_between(steps, y.min(0), y.max(0), alpha=0.2)
                ax.set_title(f"{game}: vs {vs}", fontsize=10)
                ax.set_ylim(0, 1)
                ax.grid(alpha=0.3)
        axes[-1][j].set_xlabel("learner steps")
        axes[-1][j].xaxis.set_major_formatter(
            matplotlib.ticker.FuncFormatter(lambda x, _: f"{x / 1000:g}k"))
    for i in range(len(against)):
        axes[i][0].set_ylabel("win share")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("trafficenvs train: SB3 route and batched trainer, same samples "
                 "(mean of seeds, range shaded)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import torch as th

    from trafficenvs.bench.cpu import cpu_has_bf16, cpu_name

    return {"cpu": cpu_name(), "cores": len(os.sched_getaffinity(0)) if hasattr(
        os, "sched_getaffinity") else os.cpu_count(), "cpu_bf16": cpu_has_bf16(),
        "torch": th.__version__, "python": platform.python_version()}


def default_routes() -> list[str]:
    """The CPU routes, bf16 only where the CPU multiplies bfloat16 natively, and the GPU
    learner where torch sees a CUDA GPU."""
    import torch as th

    from trafficenvs.bench.cpu import cpu_has_bf16

    return [r for r in ROUTES if ("bf16" not in r or cpu_has_bf16())
            and ("cuda" not in r or th.cuda.is_available())]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default=",".join(GAMES))
    p.add_argument("--routes", default="",
                   help=f"comma list of {', '.join(ROUTES)} (default: all of them on a CPU "
                        "with native bfloat16, else sb3 and batched: bf16 is emulated there, "
                        "several times slower, and measures nothing useful)")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--timesteps", type=int, default=196_608,
                   help="learner steps per run (whole rollouts of 32 x 256)")
    p.add_argument("--eval-every", type=int, default=49_152)
    p.add_argument("--eval-games", type=int, default=1000)
    p.add_argument("--tiny", action="store_true",
                   help="a minute's run of the whole pipeline (CI): not a measurement")
    p.add_argument("--out", default=str(RESULTS / "training.json"))
    args = p.parse_args(argv)
    games = [g for g in args.games.split(",") if g]
    routes = [r for r in args.routes.split(",") if r] or default_routes()
    bad = [r for r in routes if r not in ROUTES]
    if bad or not routes:
        p.error(f"--routes: unknown {bad}; choose from {', '.join(ROUTES)}")
    settings: dict[str, Any] = {"timesteps": args.timesteps, "num_envs": 256, "n_steps": 32,
                                "batch_size": 2048, "eval_every": args.eval_every,
                                "eval_games": args.eval_games, "seeds": args.seeds}
    if args.tiny:
        settings.update(TINY)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for game in games:
            # compile the game's kernels and warm both routes before any run counts
            for route in routes:
                run_one(game, route, 0, {**settings, **TINY, "eval_every": 0,
                                         "eval_games": 2}, scratch)
            for seed in range(settings["seeds"]):
                for route in routes:
                    r = run_one(game, route, seed, settings, scratch)
                    runs.append(r)
                    print(f"{game:16s} {route:13s} seed {seed}: "
                          f"{r['training_steps_per_second']:9,.0f} learner steps/s, "
                          f"final {r['final_win_share']}", flush=True)
    summary = summarise(runs)
    result = {"summary": summary, "machine": machine(), "settings": settings,
              "command": "python -m benchmarks.training" + (" --tiny" if args.tiny else ""),
              "routes": routes,
              "seconds": round(time.perf_counter() - start, 1), "runs": runs}
    out.write_text(json.dumps(result, indent=1) + "\n")
    figure = plot(runs, out.with_suffix(".png"))
    print(table(summary, runs))
    print(f"wrote {out} and {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
