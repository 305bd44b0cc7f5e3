"""``python -m benchmarks.gpu`` / ``trafficenvs bench --device cuda``: the GPU build, measured.

One script that does every run a GPU machine is needed for, in one go (such machines
are lent by the minute):

1. **exactness**: the GPU env against the CPU env, play digest for play digest
   (``tests/play_digest.py`` in a clone: observations, masks, rewards, records, state
   dicts, greedy choices), or where the tests are not at hand, traces of random play
   compared array for array (:func:`trafficenvs.testing.play_trace`);
2. **throughput** of every game at batches 2^12 to 2^22 (until GPU memory runs out):
   random legal actions sampled on the GPU, then ``step`` (which writes every row's
   observation and mask, checks the actions and waits for the GPU once); the median
   of 3 timed runs after a warm-up;
3. **pgx** connect four on the same GPU at the same batches (JAX and pgx must be
   installed: see docs/gpu.md for carrying wheels);
4. **bandwidth**: the GPU's device-to-device copy rate, the bytes each game's step
   writes and reads per game, and the share of the copy rate that reaches.

It writes ``benchmarks/results/gpu.json`` (in a clone; ``--out`` elsewhere) and prints
a table. Compiled kernels are cached on disk (numba-cuda's cache, under the package's
cache directory), so a second run skips compilation. Under numba-cuda's simulator
(``NUMBA_ENABLE_CUDASIM=1 NUMBA_DISABLE_JIT=1``, no GPU) ``--tiny`` runs every part
end to end on tiny sizes: that is how CI keeps the script working.
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


def games() -> list[str]:
    """Every game of the package (its specs; the template game is not among them)."""
    from trafficenvs.core.spec import specs

    return [s.name for s in specs()]


BATCHES = tuple(2**k for k in range(12, 23))
TINY_BATCHES = (4, 8)
REPO = Path(__file__).resolve().parents[2]


def _log(msg: str, t0: float = time.perf_counter()) -> None:
    print(f"[{time.perf_counter() - t0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def _sync(device: str) -> None:
    from numba import cuda

    from trafficenvs.core.cuda_vector import parse_device

    with cuda.gpus[parse_device(device)[1]]:
        cuda.synchronize()


# -- 1. exactness ---------------------------------------------------------------------
def exactness(device: str, tiny: bool) -> dict[str, Any]:
    """Play digests (GPU vs CPU) where ``tests/`` is at hand, else random-play traces."""
    tests = REPO / "tests"
    if (tests / "play_digest.py").exists():
        sys.path.insert(0, str(tests))
        try:
            import play_digest
        finally:
            sys.path.remove(str(tests))
        size = "tiny"
        # (--tiny checks the script under the simulator, where the tests cover play)
        names = ["tj-2p"] if tiny else list(play_digest.CONFIGS)
        out: dict[str, Any] = {"method": f"play digests, size {size} "
                               f"({play_digest.SIZES[size][0]} games x "
                               f"{play_digest.SIZES[size][1]} steps)", "configs": {}}
        for name in names:
            t = time.perf_counter()
            cpu, _ = play_digest.digest(name, size)
            gpu, _ = play_digest.digest(name, size, device=device)
            out["configs"][name] = {"equal": cpu == gpu, "cpu": cpu[:16], "gpu": gpu[:16],
                                    "seconds": round(time.perf_counter() - t, 2)}
            _log(f"exactness {name}: {'equal' if cpu == gpu else 'DIFFERENT'}")
    else:
        from trafficenvs.testing import play_trace

        out = {"method": "random-play traces (tests/ not found)", "configs": {}}
        for game in games():
            kw = {"num_envs": 4 if tiny else 64, "steps": 40 if tiny else 300}
            a = play_trace(game, device="cpu", **kw)
            b = play_trace(game, device=device, **kw)
            same = sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k]) for k in a)
            out["configs"][game] = {"equal": same}
            _log(f"exactness {game}: {'equal' if same else 'DIFFERENT'}")
    out["all_equal"] = all(c["equal"] for c in out["configs"].values())
    return out


# -- 2. throughput ----------------------------------------------------------------------
def bytes_per_step(game: Any) -> dict[str, int]:
    """Bytes one game's step moves in GPU memory: what it writes for the learner (the
    observation, mask, player, rewards and flags), and everything (the sampler's and
    the check's reads and writes, the record read and written once)."""
    obs = game.obs_dim * np.dtype(game.obs_dtype).itemsize
    out = obs + game.num_actions + 8 + 4 * game.num_players + 2
    sampler = game.num_actions + 2 * 16 + 8
    check = 8 + 1 + 8 + 8 + 1
    rec = 2 * np.dtype(game.record_dtype).itemsize
    return {"outputs": out, "all": out + sampler + check + 8 + rec,
            "record": np.dtype(game.record_dtype).itemsize}


def _free_bytes(device: str) -> float:
    from numba import cuda

    from trafficenvs.core.cuda_vector import parse_device

    with cuda.gpus[parse_device(device)[1]]:
        return float(cuda.current_context().get_memory_info()[0])  # (inf when simulated)


def throughput(game_id: str, batches: tuple[int, ...], device: str, seconds: float,
               repeats: int = 3) -> dict[str, Any]:
    """Steps/s of ``game_id`` at each batch (median of ``repeats``; range and compile
    time too), stopping at the first batch that does not fit in GPU memory."""
    import trafficenvs
    from trafficenvs.core import sampler
    from trafficenvs.core.spec import get_spec

    options = dict(get_spec(game_id).bench_options)
    game = trafficenvs.make_game(game_id, **options)
    per = bytes_per_step(game)
    res: dict[str, Any] = {"options": options, "bytes_per_step": per, "batches": {}}
    per_game_mem = 2 * per["record"] + 2 * game.obs_dim + 2 * game.num_actions + 128
    for b in batches:
        if b * per_game_mem > 0.8 * _free_bytes(device):
            res["stopped"] = f"batch {b} would not fit in GPU memory"
            _log(f"{game_id}: {res['stopped']}")
            break
        try:
            t = time.perf_counter()
            env = trafficenvs.make_vec(game_id, num_envs=b, device=device, **options)
            states = sampler.rng_states(b, 1, device=device)
            acts = env.as_device_array(np.zeros(b, np.int64))
            out = env.reset(seed=0)

            def run(k: int, env=env, out=out, states=states, acts=acts) -> None:
                for _ in range(k):
                    sampler.sample_legal(out.action_mask, states, acts)
                    env.step(acts)
                _sync(device)

            run(2)
            compile_s = time.perf_counter() - t
            k = 1  # steps per timed run: about ``seconds`` long
            while True:
                t = time.perf_counter()
                run(k)
                dt = time.perf_counter() - t
                if dt >= seconds / 4 or k >= 2**16:
                    break
                k *= 4
            k = max(1, int(k * seconds / max(dt, 1e-9)))
            rates = []
            for _ in range(repeats):
                t = time.perf_counter()
                run(k)
                rates.append(k * b / (time.perf_counter() - t))
            del env, states, acts, out
        except Exception as err:  # noqa: BLE001  (out of memory is a CUDA error)
            res["stopped"] = f"batch {b}: {type(err).__name__}: {err}"[:300]
            _log(f"{game_id}: {res['stopped']}")
            break
        med = float(np.median(rates))
        res["batches"][str(b)] = {"steps_per_s": med, "range": [min(rates), max(rates)],
                                  "steps_per_run": k, "first_call_s": round(compile_s, 2)}
        _log(f"{game_id} batch {b}: {med / 1e6:.3f} M steps/s")
    return res


# -- 3. pgx ---------------------------------------------------------------------------
def pgx(batches: tuple[int, ...], seconds: float) -> dict[str, Any] | None:
    """pgx connect four at ``batches`` on JAX's default device (the GPU where JAX has
    one), in a process of its own that does not take the GPU's memory up front."""
    from trafficenvs.bench.peers import pgx_connect_four

    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        return pgx_connect_four(batches, seconds)
    except Exception as err:  # noqa: BLE001
        return {"error": f"{type(err).__name__}: {err}"[:300]}


# -- 4. bandwidth ---------------------------------------------------------------------
def copy_bandwidth(device: str, mib: int) -> dict[str, float]:
    """GiB/s of a device-to-device copy of ``mib`` MiB (bytes copied per second; each
    byte is read once and written once), the median of 5 after a warm-up."""
    from numba import cuda

    from trafficenvs.core.cuda_vector import parse_device

    n = mib * 2**20
    with cuda.gpus[parse_device(device)[1]]:
        src = cuda.to_device(np.ones(n, np.uint8))
        dst = cuda.device_array(n, np.uint8)
        dst.copy_to_device(src)
        cuda.synchronize()
        rates = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(4):
                dst.copy_to_device(src)
            cuda.synchronize()
            rates.append(4 * n / (time.perf_counter() - t) / 2**30)
    return {"copy_gib_per_s": float(np.median(rates)), "mib": mib}


def shares(result: dict[str, Any]) -> None:
    """Add to each batch the GiB/s its steps move and their share of the copy rate."""
    bw = result["bandwidth"]["copy_gib_per_s"]
    for g in result["games"].values():
        per = g["bytes_per_step"]
        for row in g["batches"].values():
            for kind in ("outputs", "all"):
                gib = row["steps_per_s"] * per[kind] / 2**30
                row[f"{kind}_gib_per_s"] = gib
                row[f"{kind}_share_of_copy"] = gib / bw if bw else None


def gpu_info(device: str) -> dict[str, Any]:
    import numba
    from numba import cuda

    from trafficenvs.core import cuda_drivers
    from trafficenvs.core.cuda_vector import parse_device

    info: dict[str, Any] = {"python": platform.python_version(), "numba": numba.__version__,
                            "date": time.strftime("%Y-%m-%d %H:%M"),
                            "simulated": cuda_drivers.simulated(),
                            "block": cuda_drivers.BLOCK}
    try:
        import numba_cuda

        info["numba_cuda"] = numba_cuda.__version__
    except (ImportError, AttributeError):
        pass
    with cuda.gpus[parse_device(device)[1]]:
        dev = cuda.get_current_device()
        info["gpu"] = str(getattr(dev, "name", b"?"), "utf-8", "replace") if isinstance(
            getattr(dev, "name", None), bytes) else str(getattr(dev, "name", "?"))
        info["compute_capability"] = list(getattr(dev, "compute_capability", (0, 0)))
    return info


def table(result: dict[str, Any]) -> str:
    """The throughput table as text: M steps/s per game and pgx, by batch."""
    games = list(result["games"])
    pg = (result.get("pgx") or {}).get("batches", {})
    batches = sorted({int(b) for g in result["games"].values() for b in g["batches"]}
                     | {int(b) for b in pg})
    head = ["batch", *games, "pgx connect four"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for b in batches:
        row = [str(b)]
        for g in games:
            r = result["games"][g]["batches"].get(str(b))
            row.append(f"{r['steps_per_s'] / 1e6:.2f} M "
                       f"({100 * r['outputs_share_of_copy']:.0f}% of copy)" if r else "-")
        r = pg.get(str(b))
        row.append(f"{r['steps_per_s'] / 1e6:.2f} M" if r else "-")
        lines.append(" | ".join(row))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gpu",
                                description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda", help="cuda or cuda:K (default cuda)")
    p.add_argument("--tiny", action="store_true",
                   help="tiny sizes (the simulator's CI run): checks the script, not speed")
    p.add_argument("--seconds", type=float, default=None, help="length of each timed run")
    p.add_argument("games", nargs="*", default=None, help="games (default: all)")
    p.add_argument("--max-batch", type=int, default=2**22)
    p.add_argument("--skip", nargs="*", default=[], choices=["exact", "pgx", "bandwidth"])
    p.add_argument("--out", type=Path, default=None, help="JSON path (default "
                   "benchmarks/results/gpu.json in a clone, gpu_tiny.json with --tiny)")
    a = p.parse_args(argv)
    from trafficenvs.core import cuda_drivers

    if not cuda_drivers.gpu_present():
        print("no CUDA GPU (numba-cuda finds none; the [gpu] extra installed?). Under the "
              "simulator: NUMBA_ENABLE_CUDASIM=1 NUMBA_DISABLE_JIT=1 ... --tiny",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    batches = TINY_BATCHES if a.tiny else tuple(b for b in BATCHES if b <= a.max_batch)
    seconds = a.seconds if a.seconds is not None else (0.05 if a.tiny else 0.5)
    result: dict[str, Any] = {"machine": gpu_info(a.device), "tiny": a.tiny,
                              "seconds_per_run": seconds, "repeats": 3}
    _log(f"GPU: {result['machine'].get('gpu')}; batches {batches[0]}..{batches[-1]}")
    if "exact" not in a.skip:
        result["exactness"] = exactness(a.device, a.tiny)
    result["bandwidth"] = ({"copy_gib_per_s": 0.0} if "bandwidth" in a.skip
                           else copy_bandwidth(a.device, 1 if a.tiny else 1024))
    result["games"] = {g: throughput(g, batches, a.device, seconds)
                       for g in (a.games or games())}
    shares(result)
    if "pgx" not in a.skip:
        _log("pgx connect four")
        result["pgx"] = pgx(batches, seconds)
    result["total_s"] = round(time.perf_counter() - t0, 1)
    name = "gpu_tiny.json" if a.tiny else "gpu.json"
    results = REPO / "benchmarks" / "results"
    out = a.out or (results / name if results.parent.is_dir() else Path(name))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(table(result))
    ok = result.get("exactness", {}).get("all_equal", True)
    print(f"exactness: {'equal' if ok else 'DIFFERENT'}; {result['total_s']} s; wrote {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
