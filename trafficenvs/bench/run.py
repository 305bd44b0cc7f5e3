"""``trafficenvs bench`` / ``python -m benchmarks.throughput``: measure, print, save.

Writes ``throughput.json`` (``throughput_quick.json`` with ``--quick``) and a PNG
plot next to it, in ``benchmarks/results/`` when run from a clone (else ``--out``).
``--quick`` takes under a minute: small batches, short timings, no cold compile,
no peers but PettingZoo's connect four, one PPO rollout per training route. The
training comparison runs on the first game named, with 2 players.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from trafficenvs.bench import measure, peers, training


def default_options(game: str) -> dict[str, Any]:
    """The configuration the benchmark measures: the game spec's ``bench_options``."""
    from trafficenvs.core.spec import get_spec

    return dict(get_spec(game).bench_options)

BATCHES = (1, 64, 256, 4096, 16384)
QUICK_BATCHES = (1, 256)
PGX_BATCHES = (4096, 16384)


def machine() -> dict[str, Any]:
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not started"
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": platform.python_version(), "numba": numba.__version__,
        "numpy": np.__version__, "cpu": cpu, "cores": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS, "threading_layer": layer,
        "date": time.strftime("%Y-%m-%d"),
    }


def bench_game(game: str, quick: bool, seconds: float, threads: list[int]) -> dict[str, Any]:
    options = default_options(game)
    batches = QUICK_BATCHES if quick else BATCHES
    res: dict[str, Any] = {"options": options, "sizes": measure.sizes(game, options)}
    res["startup"] = measure.bench_startup(game, options, cold=not quick)
    res["aec"] = measure.bench_aec(game, options, seconds)
    res["vector"] = [measure.bench_vec(game, options, b, t, seconds)
                     for b in batches for t in threads]
    res["nojit"] = measure.bench_nojit(game, options, min(seconds, 1.0))
    if not quick:
        res["memory"] = measure.bench_memory(game, options)
    return res


def run(games: list[str], quick: bool = False, seconds: float | None = None,
        pgx: bool = True, train: bool = True) -> dict[str, Any]:
    import numba

    secs = seconds if seconds is not None else (0.25 if quick else 1.5)
    threads = [t for t in (1, 2) if t <= numba.config.NUMBA_NUM_THREADS]
    result: dict[str, Any] = {"quick": quick, "seconds_per_figure": secs}
    result["bandwidth"] = measure.memory_bandwidth(64 if quick else 256)
    result["peers"] = {"connect_four_v3": peers.connect_four(secs)}
    result["games"] = {g: bench_game(g, quick, secs, threads) for g in games}
    # JAX and torch start thread pools that stay busy for a while after use, so the
    # pgx peer and the training comparison come after this package's figures
    if pgx and not quick:
        result["peers"]["pgx_connect_four"] = peers.pgx_connect_four(PGX_BATCHES, secs)
    if train:
        steps = training.ROLLOUT if quick else 4 * training.ROLLOUT
        result["training"] = training.bench_training(
            games[0], {**default_options(games[0]), "num_players": 2}, steps)
    result["machine"] = machine()
    return result


def default_out_dir() -> Path:
    here = Path("benchmarks")
    return here / "results" if here.is_dir() else Path(".")


def main(argv: list[str] | None = None) -> int:
    from trafficenvs.bench import report
    from trafficenvs.core.spec import specs

    known = [s.name for s in specs()]

    parser = argparse.ArgumentParser(prog="trafficenvs bench", description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help=f"games to measure (default: all {known})")
    parser.add_argument("--quick", action="store_true", help="under a minute: small batches")
    parser.add_argument("--seconds", type=float, default=None, help="wall time per figure")
    parser.add_argument("--no-pgx", action="store_true", help="skip the pgx peer")
    parser.add_argument("--no-train", action="store_true",
                        help="skip the MaskablePPO training comparison")
    parser.add_argument("--out", type=Path, default=None, help="output directory")
    args = parser.parse_args(argv)
    games = args.games or known
    for g in games:
        if g not in known:
            parser.error(f"unknown game {g!r}; known: {known}")
    result = run(games, quick=args.quick, seconds=args.seconds, pgx=not args.no_pgx,
                 train=not args.no_train)
    print(report.text_table(result))
    out_dir = args.out or default_out_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "throughput_quick" if args.quick else "throughput"
    path = out_dir / f"{stem}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    png = report.plot(result, out_dir / f"{stem}.png")
    print(f"wrote {path}" + (f" and {png}" if png else ""))
    return 0
