"""How the batched loops use threads: a serial build for small batches, and a
threading layer that does not collapse when the machine is busy.

Why (measured on a 2-core machine with one other process busy on a core, Traffic Jam,
4 players, random play with observations): numba's default layer there is GNU OpenMP,
whose threads spin at the end of each parallel region waiting for every peer; when
one peer is descheduled the whole batch waits for it. Two threads then ran 10-1000x
slower than one (batch 1: 42 vs 55k steps/s; batch 64: 2.7k vs 1.3M). Intel TBB
(the ``tbb`` package) hands rows out by work stealing and sleeps idle workers, so a
descheduled worker's share is taken by the others; it held 0.9-1.4x of one thread
under the same load, and it is the layer numba calls both thread- and fork-safe. The
``workqueue`` layer also holds under load, but aborts the process when two Python
threads launch parallel loops at once.

What the package does, once, before numba starts its thread pool:

- the threading layer: TBB when the ``tbb`` package can be loaded (a pip-installed
  TBB sits in ``<prefix>/lib``, which the loader does not search: it is loaded here by
  its full path); otherwise numba's own choice. Nothing is changed when the user has
  chosen (``NUMBA_THREADING_LAYER`` in the environment, or ``numba.config.
  THREADING_LAYER`` set before import), or when numba's pool is already running. No
  environment variable is set, so other libraries in the process (torch's OpenMP)
  see exactly what the user gave them. :func:`threading_report` says what happened.
- every batched loop (:class:`Batched`) has two compiled builds of one source: the
  parallel one (``prange`` over rows) and a serial one (the same loop as a plain
  ``range``). Batches of fewer than :data:`SERIAL_BELOW` rows, and callers that ask
  for one thread, run the serial build: launching the pool costs more than it gives
  there, and a serial loop never waits for a descheduled peer. Larger batches run
  whichever build has been the faster lately, chosen once for all the loops of the same
  batch size and thread count (a :class:`Group`: the loops of one step touch the same
  rows, so a loop tried in parallel between serial neighbours pays for moving its rows
  between the cores' caches, and choosing per loop settled into mixes that ran at
  0.79x (Jamming Traffic) and 0.87x (Jakarta Traffic) of all-parallel). Both builds are
  timed as they run; the slower one is tried again for a few calls, at first after
  :data:`EXPLORE_EVERY` calls, then at doubling intervals while the trials confirm the
  choice: even TBB waits for a descheduled worker's rows, and with one core busy
  Traffic Jam's short steps ran at 0.71x of one thread on two without this choice. A
  loop that joins a group, or comes back to it after :data:`IDLE_S` seconds, starts
  the group's choice again, so another env of the same size does not inherit it.
- a caller may ask for a thread count per call (``threads=k``; the vectorised env
  passes its ``num_threads``): it is set for that call and put back after, so one
  env's choice never changes another's or the user's own numba code.

Rows are independent, so results are identical whichever build runs and on any
thread count (tested).
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
import types
from importlib import metadata
from typing import Any

import numba

from trafficenvs.core.jit import kernel

#: batches with fewer rows run the serial build (measured: see docs/architecture.md)
SERIAL_BELOW = 256

_REPORT: dict[str, str] = {"layer": "not chosen yet", "why": "the package did not run yet"}


def _pool_started() -> bool:
    from numba.np.ufunc import parallel

    return bool(getattr(parallel, "_is_initialized", False))


def _load_tbb() -> str | None:
    """Load the pip ``tbb`` package's ``libtbb`` by its full path (so numba's own
    ``CDLL("libtbb.so.12")`` finds it loaded); the reason it cannot, or None."""
    if sys.platform != "linux":
        return None  # numba finds TBB on its own where it is installed system-wide
    try:
        files = metadata.files("tbb") or []
    except metadata.PackageNotFoundError:
        return "the tbb package is not installed"
    libs = [f for f in files if f.name.startswith("libtbb.so.12")]
    if not libs:
        return "the tbb package has no libtbb.so.12"
    try:
        ctypes.CDLL(str(libs[0].locate()), mode=ctypes.RTLD_GLOBAL)
    except OSError as err:
        return f"libtbb could not be loaded ({err})"
    return None


#: the user's layer choices under which numba may load TBB (numba's names)
_MAY_USE_TBB = ("tbb", "safe", "threadsafe", "forksafe")


def _tbb_for_user(choice: str) -> None:
    """Make a pip-installed TBB loadable for a user who named a layer that may use it:
    numba looks for ``libtbb.so.12`` on the loader's path only, where pip's copy is
    not, so ``NUMBA_THREADING_LAYER=tbb`` failed with "No threading layer could be
    loaded" though the package was installed. Their choice stays as it is; only the
    library is loaded (by its full path), and only before numba's pool starts."""
    if choice.strip().lower() not in _MAY_USE_TBB or _pool_started():
        return
    problem = _load_tbb()
    if problem is not None:
        _REPORT["why"] += f" (a pip TBB could not be loaded for it: {problem})"


def configure_threading_layer() -> dict[str, str]:
    """Choose numba's threading layer for this process (see the module docstring);
    returns :func:`threading_report`. Called by ``import trafficenvs``."""
    from numba.core import config

    if os.environ.get("NUMBA_THREADING_LAYER"):
        _REPORT.update(layer=os.environ["NUMBA_THREADING_LAYER"],
                       why="NUMBA_THREADING_LAYER set by the user")
        _tbb_for_user(os.environ["NUMBA_THREADING_LAYER"])
    elif str(config.THREADING_LAYER).lower() != "default":
        _REPORT.update(layer=str(config.THREADING_LAYER),
                       why="numba.config.THREADING_LAYER set by the user")
        _tbb_for_user(str(config.THREADING_LAYER))
    elif _pool_started():
        _REPORT.update(layer=numba.threading_layer(),
                       why="numba's thread pool was already running")
    else:
        problem = _load_tbb()
        if problem is None:
            try:
                from numba.np.ufunc.parallel import _check_tbb_version_compatible

                _check_tbb_version_compatible()
                from numba.np.ufunc import tbbpool  # noqa: F401
            except ImportError as err:
                problem = str(err)
        if problem is None:
            config.THREADING_LAYER = "tbb"
            _REPORT.update(layer="tbb", why="chosen by trafficenvs: holds under load")
        else:
            _REPORT.update(layer="numba's default",
                           why=f"TBB unavailable ({problem}); install the tbb package "
                               "or pass num_threads=1 on a busy machine")
    return dict(_REPORT)


def threading_report() -> dict[str, str]:
    """Which threading layer the package chose and why (``layer``, ``why``), plus the
    layer numba actually runs once its pool has started (``running``)."""
    rep = dict(_REPORT)
    rep["running"] = numba.threading_layer() if _pool_started() else "not started"
    return rep


_getter: Any = None  # numba's C getter of the thread count, once its pool runs


def _current_threads() -> int:
    """``numba.get_num_threads()`` in 0.1 instead of 1.6 microseconds: once the pool
    runs, numba's own C getter (what ``get_num_threads`` calls after its checks), kept
    here after the first call that finds it."""
    global _getter
    if _getter is not None:
        n = int(_getter())
        if n > 0:
            return n
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):
        getter = getattr(parallel, "_get_num_threads", None)
        if getter is not None:
            n = int(getter())
            if n > 0:
                _getter = getter
                return n
    return numba.get_num_threads()


def max_threads() -> int:
    """The most threads a batched loop may use: numba's pool size."""
    return int(numba.config.NUMBA_NUM_THREADS)


def serial_twin(dispatcher: Any) -> Any:
    """The serial build of a ``parallel=True`` dispatcher: the same Python source
    compiled without ``parallel`` (``prange`` is then ``range``). Its qualified name
    gets a ``_serial`` suffix, so numba caches the two builds in separate files. The
    serial build is compiled as a kernel (``core.jit``: no NRT); the parallel one
    cannot be (numba's parallel loops allocate their schedule)."""
    if not isinstance(dispatcher, numba.core.registry.CPUDispatcher):
        return dispatcher  # NUMBA_DISABLE_JIT: both builds are the Python function
    f = dispatcher.py_func
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__ + "_serial",
                           f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + "_serial"
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return kernel(g)


#: the first this many calls of a group (:class:`Group`) run the parallel build, the
#: next as many the serial one; then the faster runs (about 4 steps of an env each: a
#: step calls 2 or 3 loops)
WARM_CALLS = 12
#: every this many calls of a group, the build that is not the faster runs
#: :data:`EXPLORE_BURST` calls in a row, so the choice follows the machine's load
EXPLORE_EVERY = 192
EXPLORE_BURST = 12
#: a trial that confirms the choice doubles the wait before the next one, up to this
#: many calls (a trial of the slower build under load can cost 3-4x a call)
EXPLORE_MAX = 3072
#: weight of the newest timing in a build's running cost per row
ALPHA = 0.25
#: a timing above this many times the build's running cost counts as that many times:
#: one call of Jamming Traffic's step at batch 4096 on an idle machine took 10x the
#: others (a worker thread woken late) and moved the choice to the serial build for up
#: to 1000 calls of a 4500-call second (measured: 5.2-5.8 instead of 6.0 M steps/s in
#: such seconds). A lasting change of load still moves the cost, by up to
#: ``ALPHA * (SPIKE - 1)`` (a quarter) a call.
SPIKE = 2.0
#: a loop not called for this many seconds has been idle (another env of the same
#: size ran, or none did): its next call starts its group's warm-up again
IDLE_S = 0.25

_clock = time.perf_counter


class Group:
    """The build choice shared by every batched loop called with the same number of
    rows and threads (an env's pre-check, step and the caller's sampler, for one).

    Why one choice for all of them, not one per loop: the loops of a step touch the
    same rows, and a parallel loop leaves half of them in the other core's cache. A
    loop timed alone, in parallel between serial neighbours, pays for moving those
    rows back and forth each call and looks slower than it is; with one choice per
    loop the env settled into such mixes, measured on an idle 2-core machine at batch
    4096 at 0.79x (Jamming Traffic) and 0.87x (Jakarta Traffic) of always running the
    parallel builds. Here all loops of the group switch together, each keeps its own
    running cost of each build, and the faster build is the one whose costs, weighted
    by each loop's calls, add up to less.

    A loop that joins the group (its first call) or comes back to it after
    :data:`IDLE_S` seconds without a call starts the warm-up again (:meth:`restart`),
    and only the loops timed since then count: the loops of another env of the same
    size (another game, say) that ran before keep costs measured at another time,
    perhaps under another load. Without this, a benchmark's Jamming Traffic env at
    batch 4096 inherited the serial choice the Jakarta Traffic env had made under load
    just before, and ran its whole measurement at the speed of one thread.
    """

    __slots__ = ("calls", "parallel", "trial_left", "judging", "next_trial", "gap", "before",
                 "loops")

    def __init__(self) -> None:
        self.loops: list[LoopCost] = []  # per loop of the group (and kind of first argument)
        self.restart()

    def restart(self) -> None:
        """Start again from the warm-up, forgetting every loop's timings (not the loops)."""
        self.calls = 0  # calls of the group's loops since the warm-up began
        self.parallel = True  # the build the group's loops run now
        self.trial_left = 0  # calls left in the trial of the other build
        self.judging = False  # a trial ended: the next call compares and schedules
        self.next_trial = 0  # call at which the next trial starts (0: not set)
        self.gap = EXPLORE_EVERY  # calls between trials
        self.before = True  # the choice before the trial in progress
        for c in self.loops:
            c.forget()

    def faster_is_parallel(self) -> bool:
        """Whether the parallel builds have cost less, per row and weighted by each
        loop's calls, over the loops timed in both (the current build if none is)."""
        ser = par = 0.0
        timed = False
        for c in self.loops:
            if c.n[0] and c.n[1]:
                ser += c.calls * c.cost[0]
                par += c.calls * c.cost[1]
                timed = True
        return par <= ser if timed else self.parallel

    def pick(self) -> bool:
        """The build of the group's next call (True: parallel, kept in ``parallel``),
        advancing the warm-up and the trials."""
        self.parallel = par = self._next()
        return par

    def _next(self) -> bool:
        self.calls += 1
        k = self.calls
        if k <= WARM_CALLS:
            return True
        if k <= 2 * WARM_CALLS:
            return False
        if self.trial_left > 0:  # inside a trial of the other build
            self.trial_left -= 1
            return self.parallel
        faster = self.faster_is_parallel()
        if self.judging:  # the trial just ended: schedule the next
            self.judging = False
            same = faster == self.before
            self.gap = min(2 * self.gap, EXPLORE_MAX) if same else EXPLORE_EVERY
            self.next_trial = k + self.gap
        elif self.next_trial == 0:
            self.next_trial = k + self.gap
        elif k >= self.next_trial:  # a trial: the other build, EXPLORE_BURST calls
            self.before = faster
            self.trial_left = EXPLORE_BURST - 1
            self.judging = True
            return not faster
        return faster


class LoopCost:
    """One loop's running cost per row of each build within a :class:`Group`."""

    __slots__ = ("cost", "n", "last", "calls", "ended")

    def __init__(self) -> None:
        self.ended = -1.0  # clock at the end of its last call (-1.0: never called)
        self.forget()

    def forget(self) -> None:
        """Drop the timings (the group starts its warm-up again)."""
        self.cost = [0.0, 0.0]  # seconds per row: serial, parallel (not timed yet)
        self.n = [0, 0]  # timings folded in, per build
        self.last = -1  # the build of this loop's last call (1 parallel, 0 serial)
        self.calls = 0  # calls since the timings were dropped

    def add(self, par: bool, seconds_per_row: float) -> None:
        """Fold in one call's timing, unless it is this loop's first call after a
        switch of build (it may compile, and it pays for moving the rows between the
        cores' caches, which a steady run of that build does not)."""
        i = 1 if par else 0
        self.calls += 1
        if self.last == i:
            c = self.cost[i]
            if self.n[i] == 0:
                self.cost[i] = seconds_per_row
            else:
                self.cost[i] = c + ALPHA * (min(seconds_per_row, SPIKE * c) - c)
            self.n[i] += 1
        self.last = i


#: (rows, threads) -> the group of loops called with them
GROUPS: dict[tuple[int, int], Group] = {}


class Batched:
    """A batched compiled loop (``prange`` over the rows of its first argument) with
    its serial build; calling it picks the build.

    ``loop(*args, threads=k)``: ``k`` threads for this call (1 = serial), ``None`` for
    numba's current setting. Arguments go to the compiled loop unchanged.

    Batches below :data:`SERIAL_BELOW` rows, and one thread, run the serial build.
    Above, the build is chosen per :class:`Group` (every loop called with the same
    rows and threads): the first :data:`WARM_CALLS` calls run the parallel builds, the
    next as many the serial ones, and from then on the builds whose running costs per
    row (timed as they run, per loop and kind of first argument) add up to less; after
    :data:`EXPLORE_EVERY` calls the other builds run :data:`EXPLORE_BURST` calls in a
    row, so the choice follows the load; a trial that confirms the choice doubles the
    wait before the next (up to :data:`EXPLORE_MAX` calls), one that changes it starts
    again from :data:`EXPLORE_EVERY`. On an idle machine the parallel build wins at
    large batches (Traffic Jam at batch 4096: 1.5-1.8x one thread); when another
    process keeps a core busy, a parallel region waits for a descheduled worker's rows
    and the serial build can be the faster (Traffic Jam, one core busy: 2 threads 0.71x
    of one without this choice). Both builds compute the same result, so the choice
    never changes a game.
    """

    def __init__(self, dispatcher: Any):
        self.parallel = dispatcher
        self.serial = serial_twin(dispatcher)
        self.__wrapped__ = dispatcher
        self.__name__ = getattr(dispatcher, "__name__", "batched")
        self.__doc__ = getattr(dispatcher, "__doc__", None)
        #: (dtype of the first argument, rows, threads) -> this loop's costs there
        self.costs: dict[tuple[Any, int, int], LoopCost] = {}

    def __call__(self, *args: Any, threads: int | None = None) -> Any:
        rows = len(args[0])
        if threads == 1 or rows < SERIAL_BELOW:
            return self.serial(*args)
        if threads is None:
            now = t = _current_threads()
            if t <= 1:
                return self.serial(*args)
        else:  # the serial build never needs numba's current count
            now, t = 0, threads
        group = GROUPS.get((rows, t))
        if group is None:
            group = GROUPS[(rows, t)] = Group()
        key = (getattr(args[0], "dtype", None), rows, t)
        lc = self.costs.get(key)
        t0 = _clock()
        if lc is None:  # a loop joins the group
            lc = self.costs[key] = LoopCost()
            group.loops.append(lc)
            back = True
        else:  # or comes back after a pause
            back = t0 - lc.ended > IDLE_S
        if back and group.calls >= WARM_CALLS:  # (else the warm-up has just begun)
            group.restart()
        par = group.pick()
        if not par:
            out = self.serial(*args)
        else:
            if not now:
                now = _current_threads()
            if t == now:
                out = self.parallel(*args)
            else:
                numba.set_num_threads(t)
                try:
                    out = self.parallel(*args)
                finally:
                    numba.set_num_threads(now)
        t1 = _clock()
        lc.add(par, (t1 - t0) / rows)
        lc.ended = t1
        return out

    def __repr__(self) -> str:
        return f"<batched loop {self.__name__} (parallel and serial builds)>"


def batched(dispatcher: Any) -> Batched:
    """Decorator: ``@batched`` over ``@njit(cache=True, parallel=True)``."""
    return Batched(dispatcher)
