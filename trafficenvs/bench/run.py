"""``trafficenvs bench`` / ``python -m benchmarks.throughput``: measure, print, save.

Writes ``throughput.json`` (``throughput_quick.json`` with ``--quick``) and a PNG
plot next to it, in ``benchmarks/results/`` when run from a clone (else ``--out``).
Every figure is the median of at least 3 timed runs after a warm-up (min and max in
the JSON); progress goes to stderr as it runs. The full run adds the shared-machine
figure (``bench/load.py``: each game with a competing busy process the harness starts
and stops). ``--quick`` takes under a minute on an idle 2-core machine: batches 1 and
256, short runs, no cold compile, no shared-machine figure, no peers but PettingZoo's
connect four, one PPO rollout per training route. The training comparison runs on
the first game named, with 2 players. The full run ends with each game against pgx
connect four at batch 4096, their timed windows alternating (``peers.head_to_head``):
the ratio the README quotes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from trafficenvs.bench import measure, peers, training
from trafficenvs.bench.cpu import cpu_name
from trafficenvs.bench.load import shared_machine


def default_options(game: str) -> dict[str, Any]:
    """The configuration the benchmark measures: the game spec's ``bench_options``."""
    from trafficenvs.core.spec import get_spec

    return dict(get_spec(game).bench_options)

BATCHES = (1, 64, 256, 4096, 16384)
QUICK_BATCHES = (1, 256)
PGX_BATCHES = (4096, 16384)
#: the batch of the targets' ratio (every game against pgx, alternating windows)
HEAD_TO_HEAD_BATCH = 4096


def machine() -> dict[str, Any]:
    import numba

    from trafficenvs import threading_report

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not started"
    cpu = cpu_name()
    return {
        "python": platform.python_version(), "numba": numba.__version__,
        "numpy": np.__version__, "cpu": cpu, "cores": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS, "threading_layer": layer,
        "threading_choice": threading_report()["why"],
        "date": time.strftime("%Y-%m-%d"),
    }


class Progress:
    """One line per figure on stderr as the benchmark goes (seconds since start)."""

    def __init__(self, quiet: bool = False):
        self.t0 = time.perf_counter()
        self.quiet = quiet

    def __call__(self, what: str) -> None:
        if not self.quiet:
            print(f"[{time.perf_counter() - self.t0:6.1f} s] {what}", file=sys.stderr,
                  flush=True)


def bench_game(game: str, quick: bool, seconds: float, threads: list[int], repeats: int,
               progress: Progress, load: bool) -> dict[str, Any]:
    options = default_options(game)
    batches = QUICK_BATCHES if quick else BATCHES
    res: dict[str, Any] = {"options": options, "sizes": measure.sizes(game, options)}
    progress(f"{game}: AEC loop")
    res["aec"] = measure.bench_aec(game, options, seconds, repeats)
    res["vector"] = []
    for b in batches:
        for t in threads:
            v = measure.bench_vec(game, options, b, t, seconds, repeats)
            res["vector"].append(v)
            progress(f"{game}: batch {b}, {t} thread{'s' if t > 1 else ''}: "
                     f"{v['env_steps_per_s']:,.0f} steps/s "
                     f"(kernel-only {v['kernel_steps_per_s']:,.0f})")
    # after the figures above, which compiled this game's kernels into the cache
    progress(f"{game}: start-up ({'warm' if quick else 'cold and warm'})")
    res["startup"] = measure.bench_startup(game, options, cold=not quick, filled=True)
    progress(f"{game}: pure Python")
    res["nojit"] = measure.bench_nojit(game, options, min(seconds, 0.5 if quick else 1.0))
    if not quick:
        progress(f"{game}: memory")
        res["memory"] = measure.bench_memory(game, options)
    if load and max(threads) >= 2:
        res["shared_machine"] = shared_machine(game, options, seconds, repeats,
                                               progress=progress)
        r = res["shared_machine"]["ratio_2t_1t_loaded"]
        k = res["shared_machine"]["kept_under_load"]
        progress(f"{game}: under load, 2 threads / 1 thread: "
                 + ", ".join(f"batch {b} {x:.2f}" for b, x in r.items())
                 + f"; kept: batch 1 {k['vec 1']:.2f}, AEC {k['aec env()']:.2f}")
    return res


def run(games: list[str], quick: bool = False, seconds: float | None = None,
        pgx: bool = True, train: bool = True, repeats: int = 3, load: bool | None = None,
        quiet: bool = False) -> dict[str, Any]:
    """Every figure for ``games`` (see the module docstring); ``load`` (default: not
    with ``quick``) adds the shared-machine figures."""
    import numba

    progress = Progress(quiet)
    repeats = max(3, repeats)
    secs = seconds if seconds is not None else (0.1 if quick else 1.0)
    load = (not quick) if load is None else load
    threads = [t for t in (1, 2) if t <= numba.config.NUMBA_NUM_THREADS]
    result: dict[str, Any] = {"quick": quick, "seconds_per_figure": secs, "repeats": repeats,
                              "load_before": _loadavg()}
    result["bandwidth"] = measure.memory_bandwidth(64 if quick else 256)
    progress("PettingZoo connect four")
    result["peers"] = {"connect_four_v3": peers.connect_four(secs, repeats)}
    result["games"] = {g: bench_game(g, quick, secs, threads, repeats, progress, load)
                       for g in games}
    # JAX and torch start thread pools that stay busy for a while after use: pgx runs
    # in a process of its own (waited on until quiet before each of our windows) and
    # the training comparison comes last
    if pgx and not quick:
        progress("pgx connect four")
        with_pgx(result, games, secs, max(threads), repeats, progress)
    if train:
        progress("MaskablePPO training routes")
        steps = training.ROLLOUT if quick else 4 * training.ROLLOUT
        result["training"] = training.bench_training(
            games[0], {**default_options(games[0]), "num_players": 2}, steps)
    result["machine"] = machine()
    result["load_after"] = _loadavg()
    result["wall_s"] = time.perf_counter() - progress.t0
    progress(f"done in {result['wall_s']:.0f} s")
    return result


def with_pgx(result: dict[str, Any], games: list[str], secs: float, threads: int,
             repeats: int, progress: Progress) -> None:
    """pgx connect four at :data:`PGX_BATCHES`, then every game against it window for
    window at batch 4096 (``peers.head_to_head``): the ratios the targets speak of."""
    peer = peers.PgxPeer.start()
    if peer is None:
        result["peers"]["pgx_connect_four"] = None
        return
    with peer:
        result["peers"]["pgx_connect_four"] = peers.pgx_connect_four(
            PGX_BATCHES, secs, repeats, peer=peer)
        steppers = {}
        for g in games:
            fn, _ = measure.vec_stepper(g, default_options(g), HEAD_TO_HEAD_BATCH, threads)
            fn()  # warm
            steppers[g] = fn
        progress(f"each game against pgx, alternating, batch {HEAD_TO_HEAD_BATCH}, "
                 f"{threads} thread{'s' if threads > 1 else ''}")
        h2h = peers.head_to_head(peer, steppers, HEAD_TO_HEAD_BATCH, secs, repeats)
    result["head_to_head"] = h2h
    progress("against pgx: " + ", ".join(
        f"{g} {d['ratio']['median']:.2f}x" for g, d in h2h["games"].items()))


def _loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def default_out_dir() -> Path:
    here = Path("benchmarks")
    return here / "results" if here.is_dir() else Path(".")


def main(argv: list[str] | None = None) -> int:
    from trafficenvs.bench import report

    argv = sys.argv[1:] if argv is None else list(argv)
    device = next((argv[i + 1] for i, x in enumerate(argv[:-1]) if x == "--device"),
                  next((x.split("=", 1)[1] for x in argv if x.startswith("--device=")),
                       "cpu"))
    if device != "cpu":  # the GPU build's benchmark (bench/gpu.py) takes it from here
        from trafficenvs.bench import gpu

        return gpu.main(argv)
    from trafficenvs.core.spec import specs

    known = [s.name for s in specs()]

    parser = argparse.ArgumentParser(prog="trafficenvs bench", description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help=f"games to measure (default: all {known})")
    parser.add_argument("--quick", action="store_true",
                        help="under a minute: batches 1 and 256, short runs, no cold "
                             "start, no pgx, no shared-machine figure")
    parser.add_argument("--seconds", type=float, default=None,
                        help="wall time per timed run (default 1.0, 0.1 with --quick)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs per figure (at least 3); the median is quoted")
    parser.add_argument("--no-load", action="store_true",
                        help="skip the shared-machine figure (a competing busy process)")
    parser.add_argument("--no-pgx", action="store_true", help="skip the pgx peer")
    parser.add_argument("--no-train", action="store_true",
                        help="skip the MaskablePPO training comparison")
    parser.add_argument("--out", type=Path, default=None, help="output directory")
    parser.add_argument("--device", default="cpu",
                        help="cpu (this benchmark) or cuda / cuda:K: the GPU build's "
                             "benchmark (see `python -m benchmarks.gpu -h`)")
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error(f"--repeats must be at least 3 (a figure is a median), got {args.repeats}")
    if args.seconds is not None and args.seconds <= 0:
        parser.error(f"--seconds must be positive, got {args.seconds}")
    games = args.games or known
    for g in games:
        if g not in known:
            parser.error(f"unknown game {g!r}; known: {known}")
    result = run(games, quick=args.quick, seconds=args.seconds, pgx=not args.no_pgx,
                 train=not args.no_train, repeats=args.repeats,
                 load=False if args.no_load else None)
    print(report.text_table(result))
    out_dir = args.out or default_out_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "throughput_quick" if args.quick else "throughput"
    path = out_dir / f"{stem}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    png = report.plot(result, out_dir / f"{stem}.png")
    print(f"wrote {path}" + (f" and {png}" if png else ""))
    return 0
