"""The yardsticks, measured in the same run: PettingZoo's connect four and pgx's.

``connect_four_v3`` (PettingZoo classic, needs pygame: the ``bench``/``dev`` extra)
in the same AEC loop as ours, wrapped and raw. pgx ``connect_four`` on JAX (CPU)
batched with ``jax.vmap`` and pgx's auto-reset, random legal actions drawn on
device each step, as pgx's own benchmark does, in a process of its own
(``pgx_worker.py``) so that its timed windows alternate with ours
(:func:`head_to_head`). A peer that is not installed gives ``None``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from trafficenvs.bench.measure import aec_loop, stat, time_calls


def connect_four(seconds: float, repeats: int = 3) -> dict[str, Any] | None:
    """Medians of ``repeats`` runs (ranges under ``range``), wrapped and raw."""
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError:
        return None
    out: dict[str, Any] = {"range": {}}
    for kind, make in (("env()", connect_four_v3.env), ("raw", connect_four_v3.raw_env)):
        st = aec_loop(make(), seconds, repeats=max(2, repeats))
        out[kind] = st["median"]
        out["range"][kind] = [st["min"], st["max"]]
    return out


class PgxPeer:
    """pgx connect four running in its own process (``bench/pgx_worker.py``), timed on
    request, so that its windows can alternate with this package's.

    Use as a context manager; ``None`` from :meth:`start` when pgx or JAX is missing.
    Before each of the harness's own windows call :meth:`settle`: it waits until
    JAX's threads in the worker have stopped using CPU (JAX keeps its pool running for
    a while after work), so the worker does not slow the figure taken next.
    """

    def __init__(self, proc: subprocess.Popen, info: dict[str, Any]):
        self.proc = proc
        self.info = info

    @classmethod
    def start(cls) -> PgxPeer | None:
        proc = subprocess.Popen(
            [sys.executable, "-m", "trafficenvs.bench.pgx_worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        peer = cls(proc, {})
        try:
            first = peer._read()
        except (RuntimeError, ValueError):
            peer.close()
            raise
        if "error" in first:
            peer.close()
            return None
        peer.info = {k: v for k, v in first.items() if k != "ready"}
        return peer

    def _read(self) -> dict[str, Any]:
        """The worker's next answer (a line that is not a JSON object, such as a
        library's message on stdout, is skipped)."""
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the pgx worker ended without an answer")
            if line.startswith("{"):
                return json.loads(line)

    def _ask(self, req: dict[str, Any]) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        ans = self._read()
        if "error" in ans:
            raise RuntimeError(f"pgx worker: {ans['error']}")
        return ans

    def use(self, batch: int) -> float:
        """Build the batched step for ``batch`` games; the compile seconds."""
        return float(self._ask({"batch": batch})["compile_s"])

    def rate(self, seconds: float) -> float:
        """Steps/s of one timed window of ``seconds``."""
        return float(self._ask({"run": seconds})["steps_per_s"])

    def cpu_seconds(self) -> float | None:
        """CPU time the worker has used (all its threads), from ``/proc``; None
        elsewhere."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def settle(self, quiet_s: float = 0.2, limit_s: float = 5.0) -> float:
        """Wait until the worker used no CPU (within one clock tick) for ``quiet_s``,
        at most ``limit_s``; the seconds waited."""
        t0 = time.perf_counter()
        last = self.cpu_seconds()
        if last is None:  # no /proc: a fixed wait
            time.sleep(1.0)
            return time.perf_counter() - t0
        tick = 1.0 / os.sysconf("SC_CLK_TCK")
        while time.perf_counter() - t0 < limit_s:
            time.sleep(quiet_s)
            now = self.cpu_seconds()
            if now - last <= tick:
                break
            last = now
        return time.perf_counter() - t0

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> PgxPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pgx_connect_four(batches: tuple[int, ...], seconds: float, repeats: int = 3,
                     peer: PgxPeer | None = None) -> dict[str, Any] | None:
    """Steps/s of pgx connect four at each batch size (compile time apart): the median
    of ``repeats`` timed runs, with their range. ``peer``: a running worker (else one
    is started and stopped here); None when pgx is not installed."""
    own = peer is None
    if own:
        peer = PgxPeer.start()
        if peer is None:
            return None
    try:
        out: dict[str, Any] = {**peer.info, "batches": {}}
        for b in batches:
            compile_s = peer.use(b)
            st = stat([peer.rate(seconds) for _ in range(repeats)])
            out["batches"][str(b)] = {"steps_per_s": st["median"],
                                      "range": [st["min"], st["max"]],
                                      "compile_s": compile_s}
        return out
    finally:
        if own:
            peer.close()


def head_to_head(peer: PgxPeer, steppers: dict[str, Callable[[], int]], batch: int,
                 seconds: float, repeats: int = 3) -> dict[str, Any]:
    """Each game's batched env against pgx connect four at ``batch``, window for
    window: every round times pgx, then each game (after the worker is quiet), so a
    change in the machine's pace between rounds reaches both sides of a ratio alike.

    ``steppers``: per game a warm function that steps its env and returns the steps
    taken (``measure.vec_stepper``). Per game: the median ratio env / pgx of the
    rounds with its range, both rates, and the most CPU the worker used during one of
    the game's windows (0 means it was quiet).
    """
    peer.use(batch)
    peer.rate(min(seconds, 0.2))  # warm
    pgx_runs: list[float] = []
    env_runs: dict[str, list[float]] = {g: [] for g in steppers}
    busy: dict[str, float] = {g: 0.0 for g in steppers}
    for _ in range(repeats):
        pgx_runs.append(peer.rate(seconds))
        for g, fn in steppers.items():
            peer.settle()
            c0 = peer.cpu_seconds()
            n, dt = time_calls(fn, seconds)
            c1 = peer.cpu_seconds()
            env_runs[g].append(n / dt)
            if c0 is not None:
                busy[g] = max(busy[g], c1 - c0)
    out: dict[str, Any] = {"batch": batch, "pgx": stat(pgx_runs), "games": {}}
    for g, runs in env_runs.items():
        out["games"][g] = {"env": stat(runs),
                           "ratio": stat([e / p for e, p in zip(runs, pgx_runs)]),
                           "peer_cpu_s_in_window": busy[g]}
    return out
