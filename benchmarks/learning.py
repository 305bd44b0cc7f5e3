"""Learning curves at equal budget: MaskablePPO on one observation version of every game.

The proof of the v1 observations: the same ``trafficenvs train`` run (same
budget, opponents, network, seeds) on each game, evaluated against random and greedy
every ``--eval-every`` learner steps. Run it once per observation version and plot::

    python -m benchmarks.learning --timesteps 1000000          # the installed version
    python -m benchmarks.learning --plot                       # the figure from the JSONs

Each run writes ``benchmarks/results/learning_v<version>.json`` (the version is read
from the env ids, so the same script makes the v0 curves when run on the last v0 commit,
``git worktree add /tmp/v0 19f91b3 && cd /tmp/v0 && PYTHONPATH=. python
/path/to/benchmarks/learning.py``: it uses only the ``train`` API both versions share).
``--plot`` draws every JSON found into ``benchmarks/results/learning.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic")


def version() -> int:
    """The observation version of the installed package (from its env ids)."""
    import trafficenvs

    versions = {int(e.rsplit("-v", 1)[1]) for e in trafficenvs.list_envs()}
    if len(versions) != 1:
        raise RuntimeError(f"the games are at different versions: {sorted(versions)}")
    return versions.pop()


def run(games: list[str], timesteps: int, eval_every: int, eval_games: int, seed: int,
        out_dir: Path) -> dict[str, Any]:
    """Train each game once with the same settings; the evaluation histories."""
    from trafficenvs.agents.training import TrainConfig, train

    v = version()
    result: dict[str, Any] = {"version": v, "timesteps": timesteps, "eval_every": eval_every,
                              "eval_games": eval_games, "seed": seed, "games": {}}
    path = RESULTS / f"learning_v{v}.json"
    if path.exists():  # add to the games run before with the same settings
        old = json.loads(path.read_text())
        if all(old.get(k) == result[k] for k in ("timesteps", "eval_every", "eval_games",
                                                   "seed")):
            result["games"] = old["games"]
    # the curves were measured with MaskablePPO: the SB3 route, where a trainer is chosen
    # (the commits before the batched trainer have no such setting)
    route = {"trainer": "sb3"} if "trainer" in TrainConfig.__dataclass_fields__ else {}
    for g in games:
        cfg = TrainConfig(game=g, players=2, timesteps=timesteps, seed=seed,
                          eval_every=eval_every, eval_games=eval_games,
                          checkpoint_every=0, progress=False,
                          out=str(out_dir / f"v{v}" / f"{g}_2p.zip"), **route)
        t0 = time.perf_counter()
        summary = train(cfg)
        result["games"][g] = {
            "history": summary["history"],
            "final_win_share": summary["final_win_share"],
            "wall_seconds": round(time.perf_counter() - t0, 1),
            "learner_steps": summary["learner_steps"],
            "checkpoint": summary["checkpoint"],
            "config": summary["config"],
        }
        path.write_text(json.dumps(result, indent=1) + "\n")
        print(f"{g}: final {summary['final_win_share']} -> {path}", flush=True)
    return result


def plot(paths: list[Path], out: Path) -> None:
    """Win share against random and greedy over training, one panel per game."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [json.loads(p.read_text()) for p in paths]
    fig, axes = plt.subplots(1, len(GAMES), figsize=(5 * len(GAMES), 3.6), sharey=True)
    styles = {"random": ":", "greedy": "-"}
    for ax, g in zip(axes, GAMES):
        for r in runs:
            h = r["games"].get(g, {}).get("history", [])
            if not h:
                continue
            x = [row["timesteps"] for row in h]
            for opp, ls in styles.items():
                key = f"win_share_vs_{opp}"
                if key in h[0]:
                    ax.plot(x, [row[key] for row in h], ls, marker="o", ms=3,
                            label=f"v{r['version']} vs {opp}",
                            color="C0" if r["version"] == 0 else "C1")
        ax.set_title(g)
        ax.set_xlabel("learner steps")
        ax.axhline(0.5, color="grey", lw=0.5)
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("win share (400 games)")
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("games", nargs="*", default=list(GAMES))
    p.add_argument("--timesteps", type=int, default=1_000_000, help="learner steps per game")
    p.add_argument("--eval-every", type=int, default=100_000)
    p.add_argument("--eval-games", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", type=Path, default=Path("runs/learning"),
                   help="where the checkpoints go")
    p.add_argument("--plot", action="store_true", help="only draw the figure from the JSONs")
    a = p.parse_args(argv)
    if a.plot:
        paths = sorted(RESULTS.glob("learning_v*.json"))
        if not paths:
            p.error(f"no learning_v*.json in {RESULTS}")
        plot(paths, RESULTS / "learning.png")
        print(f"wrote {RESULTS / 'learning.png'} from {[x.name for x in paths]}")
        return 0
    run(a.games, a.timesteps, a.eval_every, a.eval_games, a.seed, a.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
