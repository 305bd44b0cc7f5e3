"""Threads: the serial and parallel builds play the same games, an env's thread count
is its own, and the package chooses numba's threading layer only when the user has not
(core/threads.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import trafficenvs
from trafficenvs.core import driver, sampler, threads
from trafficenvs.core.spec import get_spec
from trafficenvs.core.threads import SERIAL_BELOW, Batched

GAMES = {"traffic_jam": {"num_players": 4}, "jamming_traffic": {"num_players": 4},
         "jakarta_traffic": {"num_players": 3}}
TWO = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")


def _play(game: str, options: dict, batch: int, num_threads: int, steps: int):
    """Random legal play from seed 3; every output of every step, as bytes."""
    venv = trafficenvs.make_vec(game, num_envs=batch, num_threads=num_threads, **options)
    out = venv.reset(seed=3)
    states = sampler.rng_states(batch, 9)
    actions = np.zeros(batch, np.int64)
    trace = []
    for _ in range(steps):
        sampler.sample_legal(out.action_mask, states, actions, threads=num_threads)
        out = venv.step(actions)
        trace.append(b"".join(np.ascontiguousarray(getattr(out, f)).tobytes() for f in (
            "observation", "action_mask", "current_player", "rewards", "terminated",
            "truncated", "final_observation")))
    seats = (np.arange(batch) % venv.num_players).astype(np.int64)
    trace.append(venv.observe(seats).tobytes())
    trace.append(venv.records.tobytes())
    return trace


@TWO
@pytest.mark.parametrize("game", GAMES)
def test_parallel_and_serial_builds_play_the_same_games(game):
    """A batch big enough for the parallel build (2 threads) and the same batch on one
    thread (the serial build) give identical observations, masks, rewards, ends and
    records at every step, games finishing and restarting included."""
    batch = SERIAL_BELOW + 37
    steps = 400
    assert _play(game, GAMES[game], batch, 2, steps) == _play(game, GAMES[game], batch, 1, steps)


@pytest.fixture
def groups(monkeypatch):
    """A fresh table of build choices (the package keeps one per process)."""
    table: dict = {}
    monkeypatch.setattr(threads, "GROUPS", table)
    return table


@TWO
def test_batched_loop_picks_the_serial_build_below_the_threshold(groups):
    calls = []

    class Spy:
        def __init__(self, name):
            self.name = name

        def __call__(self, *args):
            calls.append(self.name)

    loop = Batched.__new__(Batched)
    loop.parallel, loop.serial, loop.costs = Spy("parallel"), Spy("serial"), {}
    loop(np.zeros(SERIAL_BELOW - 1))
    loop(np.zeros(SERIAL_BELOW), threads=1)
    loop(np.zeros(SERIAL_BELOW), threads=2)
    assert calls == ["serial", "serial", "parallel"]


class FakeClock:
    """A clock that only the fake builds move, and the log of the builds they ran."""

    def __init__(self, monkeypatch):
        self.now = 0.0
        self.calls: list[str] = []
        monkeypatch.setattr(threads, "_clock", lambda: self.now)

    def loop(self, serial_cost, parallel_cost, name: str = "") -> Batched:
        """A Batched loop whose builds 'take' ``cost(clock)`` microseconds per row (or a
        constant), logged as ``name + build``."""
        def build(kind, cost):
            def run(x):
                c = cost(self) if callable(cost) else cost
                self.calls.append(name + kind)
                self.now += 1e-6 * c * len(x)
            return run

        loop = Batched.__new__(Batched)
        loop.serial = build("serial", serial_cost)
        loop.parallel = build("parallel", parallel_cost)
        loop.costs = {}
        return loop


@TWO
@pytest.mark.parametrize("serial_cost, parallel_cost, faster", [(1.0, 3.0, "serial"),
                                                                (3.0, 1.0, "parallel")])
def test_large_batches_run_the_build_that_has_been_faster(monkeypatch, groups, serial_cost,
                                                          parallel_cost, faster):
    """Above the threshold both builds are timed as they run; after a warm-up of each,
    the faster one runs, and the other is tried again in trials of EXPLORE_BURST calls
    (so the choice can change when the machine's load does), each trial that confirms
    the choice doubling the wait before the next, up to EXPLORE_MAX calls."""
    clock = FakeClock(monkeypatch)
    loop = clock.loop(serial_cost, parallel_cost)
    rows = np.zeros(SERIAL_BELOW)
    warm = 2 * threads.WARM_CALLS
    n = warm + 4 * threads.EXPLORE_MAX
    for _ in range(n):
        loop(rows, threads=2)
    calls = clock.calls
    assert calls[:warm] == ["parallel"] * threads.WARM_CALLS + ["serial"] * threads.WARM_CALLS
    tail = calls[warm:]
    slower = {"serial": "parallel", "parallel": "serial"}[faster]
    assert tail.count(faster) > 0.97 * len(tail)
    starts = [i for i in range(1, len(tail)) if tail[i] == slower and tail[i - 1] != slower]
    runs = "".join("s" if c == slower else "." for c in tail).split(".")
    assert {len(r) for r in runs if r} == {threads.EXPLORE_BURST}
    gaps = np.diff(starts)
    # the call after a trial schedules the next one
    assert gaps[0] == 2 * threads.EXPLORE_EVERY + threads.EXPLORE_BURST
    assert all(b >= a for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] == threads.EXPLORE_MAX + threads.EXPLORE_BURST


@TWO
def test_one_slow_call_does_not_move_the_choice(monkeypatch, groups):
    """The parallel build is twice as fast, but one of its calls takes 10x (a worker
    woken late): the choice stays parallel. Folded in as it came, that one timing
    made the parallel cost the higher and ran the serial build until the next trial."""
    clock = FakeClock(monkeypatch)
    spike_at = 2 * threads.WARM_CALLS + 50

    def parallel_cost(c):
        return 10.0 if len(c.calls) == spike_at else 1.0

    loop = clock.loop(2.0, parallel_cost)
    rows = np.zeros(SERIAL_BELOW)
    for _ in range(spike_at + 100):
        loop(rows, threads=2)
    assert clock.calls[spike_at] == "parallel"
    assert clock.calls[spike_at:] == ["parallel"] * 100


@TWO
def test_a_lasting_change_of_cost_still_moves_the_choice_within_a_few_calls(monkeypatch,
                                                                            groups):
    """Clipping one call's timing at SPIKE times the running cost must not hide a real
    change: from some call on the parallel build costs 4x, and the serial build takes
    over within a handful of calls."""
    clock = FakeClock(monkeypatch)
    change_at = 2 * threads.WARM_CALLS + 50

    def parallel_cost(c):
        return 8.0 if len(c.calls) >= change_at else 1.0

    loop = clock.loop(2.0, parallel_cost)
    rows = np.zeros(SERIAL_BELOW)
    for _ in range(change_at + 100):
        loop(rows, threads=2)
    after = clock.calls[change_at:]
    assert "serial" in after[:10]
    assert after[10:] == ["serial"] * 90


def test_each_batch_size_keeps_its_own_timings(monkeypatch, groups):
    """Envs of different sizes share a compiled loop but not its timings nor the choice
    (the faster build at 256 rows need not be the faster at 4096)."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 numba threads")
    loop = FakeClock(monkeypatch).loop(1.0, 3.0)
    loop(np.zeros(SERIAL_BELOW), threads=2)
    loop(np.zeros(4 * SERIAL_BELOW), threads=2)
    assert {k[1] for k in loop.costs} == {SERIAL_BELOW, 4 * SERIAL_BELOW}
    assert set(groups) == {(SERIAL_BELOW, 2), (4 * SERIAL_BELOW, 2)}


def _settled_under_load(monkeypatch):
    """A loop run 100 calls while the machine is loaded (the serial build faster), and
    the switch that takes the load away: (clock, load, loop, rows)."""
    clock = FakeClock(monkeypatch)
    load = {"busy": True}
    loop = clock.loop(1.0, lambda c: 3.0 if load["busy"] else 0.5)
    rows = np.zeros(SERIAL_BELOW)
    for _ in range(100):
        loop(rows, threads=2)
    assert clock.calls[-1] == "serial"  # loaded: serial faster
    return clock, load, loop, rows


@TWO
def test_the_choice_follows_a_change_of_load(monkeypatch, groups):
    clock, load, loop, rows = _settled_under_load(monkeypatch)
    load["busy"] = False  # the load went away
    for _ in range(2 * threads.EXPLORE_MAX):
        loop(rows, threads=2)
    last = clock.calls[-threads.EXPLORE_EVERY:]
    assert last.count("parallel") >= threads.EXPLORE_EVERY - threads.EXPLORE_BURST


@TWO
def test_the_loops_of_a_step_switch_builds_together_and_find_the_parallel_one(
        monkeypatch, groups):
    """Two loops over the same rows (an env's pre-check and step): a parallel call is
    fast only after a parallel call, because a serial one pulled every row into one
    core's cache (the first parallel call after it pays for moving them back).

    Timed one loop at a time, a trial of the parallel build between serial
    neighbours always pays that move, so loops that once chose the serial build (here
    while the machine was loaded) never left it. The choice is shared: both loops
    switch together, and when the load goes away they run the parallel builds.
    """
    clock = FakeClock(monkeypatch)
    load = {"busy": True}

    def parallel_cost(c):
        if load["busy"]:
            return 3.0
        after_parallel = bool(c.calls) and c.calls[-1].endswith("parallel")
        return 0.5 if after_parallel else 4.0

    check = clock.loop(1.0, parallel_cost, "check:")
    step = clock.loop(1.0, parallel_cost, "step:")
    rows = np.zeros(SERIAL_BELOW)
    for _ in range(150):
        check(rows, threads=2)
        step(rows, threads=2)
    assert clock.calls[-2:] == ["check:serial", "step:serial"]
    load["busy"] = False
    for _ in range(threads.EXPLORE_MAX):
        check(rows, threads=2)
        step(rows, threads=2)
    pairs = list(zip(clock.calls[::2], clock.calls[1::2]))
    # the two loops of a step always ran the same build
    assert all(a.split(":")[1] == b.split(":")[1] for a, b in pairs)
    last = [b for _, b in pairs[-threads.EXPLORE_EVERY:]]
    assert last.count("step:parallel") >= threads.EXPLORE_EVERY - threads.EXPLORE_BURST


@TWO
def test_a_new_env_of_the_same_size_makes_its_own_choice(monkeypatch, groups):
    """Another game's env at the same batch size joins the group of the first one's
    loops: its own timings decide, not the first env's, which chose the serial build
    under a load that has gone since."""
    clock = FakeClock(monkeypatch)
    old = clock.loop(1.0, 3.0, "old:")  # measured under load: serial faster
    rows = np.zeros(SERIAL_BELOW)
    for _ in range(100):
        old(rows, threads=2)
    assert clock.calls[-1] == "old:serial"
    new = clock.loop(1.0, 0.5, "new:")  # idle now: parallel faster for the new env
    for _ in range(threads.EXPLORE_EVERY):
        new(rows, threads=2)
    last = clock.calls[-threads.EXPLORE_EVERY // 2:]
    assert last == ["new:parallel"] * len(last)


@TWO
def test_a_loop_that_comes_back_after_a_pause_starts_the_warm_up_again(monkeypatch,
                                                                      groups):
    """Calls of one loop with a pause of more than IDLE_S seconds between them: the
    timings from before the pause are dropped and both builds are timed again (here
    the load went away during the pause)."""
    clock, load, loop, rows = _settled_under_load(monkeypatch)
    load["busy"] = False
    clock.now += 2 * threads.IDLE_S  # another env ran (or nothing did)
    clock.calls.clear()
    for _ in range(2 * threads.WARM_CALLS + 10):
        loop(rows, threads=2)
    w = threads.WARM_CALLS
    assert clock.calls == ["parallel"] * w + ["serial"] * w + ["parallel"] * 10


@TWO
def test_an_envs_thread_count_is_set_for_its_calls_and_put_back(groups):
    before = numba.get_num_threads()
    seen = []

    def probe(x):
        seen.append(numba.get_num_threads())

    loop = Batched.__new__(Batched)
    loop.parallel = loop.serial = probe
    loop.costs = {}
    numba.set_num_threads(1)
    try:
        loop(np.zeros(SERIAL_BELOW), threads=2)
        assert seen == [2] and numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)


def test_every_batched_driver_has_a_serial_build_compiled_without_parallel():
    if numba.config.DISABLE_JIT:
        pytest.skip("no compiled builds under NUMBA_DISABLE_JIT")
    loops = [v for mod in (driver, sampler) for v in vars(mod).values()
             if isinstance(v, Batched)]
    assert {lp.__name__ for lp in loops} >= {"batch_reset", "batch_step", "count_illegal",
                                             "observe_rows", "sample_rows", "play_random_rows"}
    for lp in loops:
        assert lp.parallel.targetoptions.get("parallel")
        assert not lp.serial.targetoptions.get("parallel")
        # numba caches the builds in separate files (named by qualified name)
        assert lp.serial.py_func.__qualname__ == lp.parallel.py_func.__qualname__ + "_serial"


@pytest.mark.parametrize("bad, err", [(0, ValueError), (10**6, ValueError), ("2", TypeError),
                                      (1.0, TypeError), (True, TypeError)])
def test_make_vec_refuses_a_thread_count_it_cannot_use(bad, err):
    with pytest.raises(err, match="num_threads"):
        trafficenvs.make_vec("traffic_jam", num_envs=4, num_threads=bad)


@TWO
def test_an_env_below_its_games_parallel_threshold_runs_its_loops_on_one_thread(monkeypatch):
    """Traffic Jam's step is short: below its ``spec.parallel_from`` games (1024) the
    thread pool costs more than it gives, so a 2-thread env of 512 games calls every
    loop with one thread; at 1024 games, with its 2. Jamming Traffic keeps the shared
    threshold (SERIAL_BELOW)."""
    seen = []
    real = Batched.__call__

    def spy(self, *args, threads=None):
        seen.append((self.__name__, threads))
        return real(self, *args, threads=threads)

    monkeypatch.setattr(Batched, "__call__", spy)

    def loops(game, n):
        seen.clear()
        venv = trafficenvs.make_vec(game, num_envs=n, num_threads=2, num_players=4)
        out = venv.reset(seed=0)
        venv.step(np.array([np.flatnonzero(m)[0] for m in out.action_mask]))
        return {t for _, t in seen}

    assert get_spec("traffic_jam").parallel_from == 1024
    assert loops("traffic_jam", 512) == {1}
    assert loops("traffic_jam", 1024) == {2}
    assert loops("jamming_traffic", 512) == {2}


def test_make_vec_keeps_the_thread_count_it_was_given():
    assert trafficenvs.make_vec("traffic_jam", num_envs=4, num_threads=1).num_threads == 1
    assert trafficenvs.make_vec("traffic_jam", num_envs=4).num_threads is None


_REPORT = """
import json, numpy as np, trafficenvs
v = trafficenvs.make_vec("traffic_jam", num_envs={b}, num_threads={t})
o = v.reset(seed=0)
v.step(np.array([np.flatnonzero(m)[0] for m in o.action_mask]))
print(json.dumps(trafficenvs.threading_report()))
"""


def _report(env: dict, b: int = 1024, t: int = 2) -> dict:
    # b: at least Traffic Jam's parallel_from, so that its loops start the pool
    res = subprocess.run([sys.executable, "-c", _REPORT.format(b=b, t=t)], env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    env["NUMBA_NUM_THREADS"] = "2"
    env.update(extra)
    return env


def test_the_users_threading_layer_is_kept():
    rep = _report(_clean_env(NUMBA_THREADING_LAYER="workqueue"))
    assert rep["running"] == "workqueue" and "user" in rep["why"]


def _need_pip_tbb() -> None:
    """Skip unless pip's ``tbb`` package is installed on Linux (where the package
    loads that library itself)."""
    try:
        from importlib.metadata import version

        version("tbb")
    except Exception:
        pytest.skip("the tbb package is not installed")
    if sys.platform != "linux":
        pytest.skip("the package loads pip's TBB itself only on Linux")


def test_tbb_is_chosen_when_the_tbb_package_is_installed():
    _need_pip_tbb()
    rep = _report(_clean_env())
    assert rep["layer"] == "tbb" and rep["running"] == "tbb", rep


@pytest.mark.parametrize("choice", ["tbb", "threadsafe"])
def test_a_user_who_names_tbb_gets_the_pip_tbb(choice):
    """``NUMBA_THREADING_LAYER=tbb`` (or a layer class numba fills with TBB) runs TBB
    from the pip package, which the loader's path does not hold: the package loads the
    library and keeps the user's choice."""
    _need_pip_tbb()
    rep = _report(_clean_env(NUMBA_THREADING_LAYER=choice))
    assert rep["layer"] == choice and "user" in rep["why"], rep
    assert rep["running"] == "tbb", rep


def test_the_choice_sets_no_environment_variable_other_libraries_read():
    """Nothing like OMP_WAIT_POLICY or NUMBA_THREADING_LAYER is put into os.environ
    (torch's OpenMP reads the environment)."""
    code = ("import os; before = dict(os.environ); import trafficenvs; "
            "print(sorted(set(os.environ.items()) ^ set(before.items())))")
    res = subprocess.run([sys.executable, "-c", code], env=_clean_env(), capture_output=True,
                         text=True, timeout=600, check=True)
    assert res.stdout.strip().splitlines()[-1] == "[]"


def test_threading_report_names_the_layer_and_why():
    rep = threads.threading_report()
    assert set(rep) == {"layer", "why", "running"} and rep["why"]
