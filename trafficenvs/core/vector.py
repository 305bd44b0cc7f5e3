"""The vectorised env: the same turn-based game, ``num_envs`` at once.

Each call steps every game by one move of the player to move in that game. Game
``i`` of ``reset(seed=s)`` is the same game as an AEC env reset with ``seed=s+i``;
when a game ends it restarts at once with seed ``s + i + k*num_envs`` (k-th restart),
and that step still returns its rewards, its last observation in
``final_observation`` (from the seat that made the final move, or a seat you
choose) and a copy of its final record in ``final_records``.

Agents that hold one seat per game step only some games (``active``): the rows
where an opponent must move, say, while the others wait for the learner.

Speed: the arrays in the returned :class:`VecStep` are the env's own buffers,
written in place by the next ``reset``/``step`` (no copy per step). Call
``.copy()`` on the result to keep one. Its ``action_mask`` is a read-only view: the
env checks each action against it (an action it holds is legal; any other is checked
by the rules), so it must stay what the env wrote. Copy it to edit it.

The records (``records``) are the games' state; change a game through
``load_state_dict``, or call :meth:`TrafficVecEnv.refresh` after writing records
yourself, so the observations and masks follow.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from trafficenvs.core import checks, driver
from trafficenvs.core.game import Game
from trafficenvs.core.guard import ThreadGuard, exclusive
from trafficenvs.core.records import as_kernel_array
from trafficenvs.core.threads import max_threads

_I64 = np.dtype(np.int64)


@dataclass
class VecStep:
    """What ``reset`` and ``step`` return; row ``i`` is game ``i``."""

    #: ``(N, obs_dim)`` ``game.obs_dtype`` (uint8), from the seat of ``current_player``
    observation: np.ndarray
    #: ``(N, num_actions)`` bool, legal actions of ``current_player`` (read-only in the
    #: results of ``reset``/``step``: ``step`` checks actions against it)
    action_mask: np.ndarray
    #: ``(N,)`` int64, the seat to move
    current_player: np.ndarray
    #: ``(N, num_players)`` float32, this step's reward per seat (absolute seat order)
    rewards: np.ndarray
    #: ``(N,)`` bool, the game ended by the rules on this step (and was restarted)
    terminated: np.ndarray
    #: ``(N,)`` bool, the game hit the move limit or a game option's cap on this step
    #: (and was restarted)
    truncated: np.ndarray
    #: ``(N, obs_dim)`` ``game.obs_dtype``, valid in rows that ended on this step
    final_observation: np.ndarray
    #: ``(N,)`` game records, valid in rows that ended on this step: the final game
    #: (for scores and state dicts; ``env.game.scores(final_records[i])``)
    final_records: np.ndarray

    def copy(self) -> VecStep:
        """A copy that the next ``step`` does not overwrite, on the same device."""
        return VecStep(**{f.name: _copy(getattr(self, f.name)) for f in fields(self)})

    def numpy(self) -> VecStep:
        """Host (numpy) copies of every field, from any device: a GPU env's tensors
        are copied to the host, a CPU env's arrays copied."""
        return VecStep(**{f.name: to_numpy(getattr(self, f.name)) for f in fields(self)})


def _copy(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.copy()
    if hasattr(x, "clone"):  # a torch tensor
        return x.clone()
    from numba import cuda  # a numba device array (only a GPU env returns one)

    out = cuda.device_array_like(x)
    out.copy_to_device(x)
    return out


def to_numpy(x: Any) -> np.ndarray:
    """``x`` (a numpy array, a torch tensor on any device, a numba device array) as a
    numpy array on the host; record arrays keep their field access (see ``records.py``)."""
    if isinstance(x, np.ndarray):
        h = x.copy()
    elif hasattr(x, "detach"):  # a torch tensor
        h = x.detach().cpu().numpy()
    elif hasattr(x, "copy_to_host"):
        h = x.copy_to_host()
    else:
        h = np.asarray(x)
    return as_kernel_array(h) if h.dtype.names is not None else h


def env_bytes(game: Game, num_envs: int) -> int:
    """Bytes of a vectorised env's arrays: two records (the games and the final ones),
    two observation rows, a mask row and the small per-game fields, per game."""
    per = (2 * np.dtype(game.record_dtype).itemsize
           + 2 * game.obs_dim * np.dtype(game.obs_dtype).itemsize
           + game.num_actions + 4 * game.num_players + 40)
    return per * num_envs


def check_fits(game: Game, num_envs: int, available: float, where: str) -> None:
    """A ``ValueError`` before allocating, when ``num_envs`` games need more than
    ``available`` bytes (``where``: the memory's name)."""
    need = env_bytes(game, num_envs)
    if need > available:
        raise ValueError(f"num_envs={num_envs} needs {need / 2**30:.1f} GiB for the env's "
                         f"arrays; {where} has {available / 2**30:.1f} GiB")


def _physical_memory() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return float("inf")


class TrafficVecEnv:
    """``num_envs`` games of one configuration, stepped by compiled batched drivers.

    ``num_threads``: how many of numba's threads this env's loops use (1 = serial; None:
    numba's current setting, all cores unless ``NUMBA_NUM_THREADS`` or
    ``numba.set_num_threads`` says otherwise). It applies to this env's calls only.
    Batches below :data:`~trafficenvs.core.threads.SERIAL_BELOW` rows, or below the
    game's own ``spec.parallel_from`` (Traffic Jam: 1024), always run serially (the
    thread pool costs more than it gives there). On a machine where
    another process (a learner) keeps a core busy, one thread per env process is often
    as fast: see docs/architecture.md.
    """

    def __init__(self, game: Game, num_envs: int, max_cycles: int | None = None,
                 num_threads: int | None = None):
        self._guard = ThreadGuard()  # one thread at a time (core/guard.py)
        num_envs = checks.check_int(num_envs, "num_envs", 1)
        if num_threads is not None:
            num_threads = checks.check_int(num_threads, "num_threads", 1, max_threads())
        #: threads of this env's batched loops (None: numba's current setting)
        self.num_threads = num_threads
        start = getattr(getattr(game, "spec", None), "parallel_from", None)
        #: the thread count the loops are called with: one below the game's
        #: ``spec.parallel_from`` games (its measured break-even), else ``num_threads``
        self.loop_threads = 1 if start is not None and num_envs < start else num_threads
        if max_cycles is None:
            max_cycles = game.default_max_cycles
        max_cycles = checks.check_int(max_cycles, "max_cycles", 1)
        check_fits(game, num_envs, _physical_memory(), "this machine's memory")
        self.num_envs = num_envs
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.observation_shape = (game.obs_dim,)
        self.max_cycles = int(max_cycles)
        self.max_moves = self.max_cycles * game.num_players
        game = game.with_horizon(self.max_moves)
        self.game = game
        checks.note_game(game)
        n = self.num_envs
        self.records = game.new_records(n)
        self._seeds = np.zeros(n, np.uint64)
        self._buf = VecStep(
            observation=np.zeros((n, game.obs_dim), game.obs_dtype),
            action_mask=np.zeros((n, game.num_actions), np.bool_),
            current_player=np.zeros(n, np.int64),
            rewards=np.zeros((n, game.num_players), np.float32),
            terminated=np.zeros(n, np.bool_),
            truncated=np.zeros(n, np.bool_),
            final_observation=np.zeros((n, game.obs_dim), game.obs_dtype),
            final_records=game.new_records(n),
        )
        #: the same buffers as one argument of the compiled step
        self._out = driver.StepBuffers(**{f: getattr(self._buf, f)
                                          for f in driver.StepBuffers._fields})
        #: what ``reset``/``step`` return: the same buffers, the mask read-only
        mask = self._buf.action_mask.view()
        mask.flags.writeable = False
        self._view = replace(self._buf, action_mask=mask)
        self._all = np.ones(n, np.bool_)
        self._mover = np.full(n, -1, np.int64)
        self._ready = False
        #: draws the seed of a ``reset()`` without one: seeded by the last
        #: ``reset(seed=s)`` (so what follows it is reproducible, Gymnasium's rule),
        #: from OS entropy before any
        self.np_random: np.random.Generator | None = None

    @exclusive
    def reset(self, seed: int | None = None) -> VecStep:
        """Start every game; game ``i`` gets seed ``seed + i``.

        Without ``seed``, the seed is drawn from ``np_random``, which the last
        ``reset(seed=s)`` seeded with ``s``: a seeded reset and the unseeded ones after
        it are reproducible (Gymnasium's rule). Before any seeded reset it draws from
        OS entropy.
        """
        seed = checks.next_seed(self, seed)
        self._seeds[:] = np.uint64(seed) + np.arange(self.num_envs, dtype=np.uint64)
        b = self._buf
        driver.batch_reset(
            self.records, self.game.cfg, self._seeds, self.num_players,
            b.observation, b.action_mask, b.current_player, threads=self.loop_threads,
        )
        b.rewards[:] = 0
        b.terminated[:] = False
        b.truncated[:] = False
        self._ready = True
        return self._view

    @property
    def last(self) -> VecStep:
        """The result of the last ``reset``/``step`` (the live buffers)."""
        return self._view

    @exclusive
    def refresh(self) -> VecStep:
        """Rewrite every game's player to move, observation and mask from its record
        (after writing ``records`` directly, as tests and tools do); returns
        :attr:`last`. ``step`` checks actions against the masks, so without this
        a mask could lag behind a record changed by hand."""
        if not self._ready:
            raise RuntimeError("call reset() before refresh()")
        b = self._buf
        driver.batch_refresh(self.records, self.game.cfg, b.observation, b.action_mask,
                             b.current_player, threads=self.loop_threads)
        return self._view

    @exclusive
    def step(
        self,
        actions: np.ndarray,
        active: np.ndarray | None = None,
        final_seat: np.ndarray | None = None,
    ) -> VecStep:
        """Play ``actions[i]`` in game ``i`` (for its player to move).

        ``active`` (bool per game, default all): only those games move; the others
        keep their state and rows, with zero rewards and no end flags, and their
        actions are ignored. ``final_seat`` (int per game, default -1 = the mover):
        whose view ``final_observation`` shows for a game that ends.
        Raises ``ValueError`` (changing nothing) if an active game's action is illegal
        or out of range, ``TypeError``/``ValueError`` for arrays of the wrong dtype or
        shape, or a ``final_seat`` that is not a seat or -1. An action is legal when
        the env's mask of that game holds it (the mask is written with the record, see
        :meth:`refresh`), or else when the rules allow it.
        """
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        # attribute checks only on the hot path (a pass over the data would cost a
        # few percent of a small batch's step); the actions' range is settled by
        # ``count_illegal``
        try:  # numpy's built-in dtypes are singletons: ``is`` is the cheap test
            fast = (actions.dtype is _I64 and actions.shape == (n,)
                    and actions.flags.c_contiguous)
        except AttributeError:
            fast = False
        if not fast:
            actions = self._actions(checks.as_array(actions, "actions"))
        active = self._all if active is None else checks.check_bools(active, "active", (n,))
        final_seat = (self._mover if final_seat is None
                      else checks.check_ints(final_seat, "final_seat", (n,), -1,
                                             self.num_players - 1))
        cfg = self.game.cfg
        b = self._buf
        if driver.count_illegal(self.records, cfg, actions, active, b.action_mask,
                                threads=self.loop_threads):
            bad = list(driver.illegal_rows(self.records, cfg, actions, active))
            out = [i for i in bad if not 0 <= actions[i] < self.num_actions]
            if out:
                raise ValueError(
                    f"actions must be in 0..{self.num_actions - 1} in active games, got "
                    f"{actions[out[0]]} in game {out[0]}"
                    f"{f' (and {len(out) - 1} more)' if len(out) > 1 else ''}"
                )
            raise ValueError(f"illegal actions in games {bad[:10]}{'...' if len(bad) > 10 else ''}")
        driver.batch_step(self.records, cfg, actions, active, final_seat, self._seeds,
                          np.uint64(n), self.max_moves, self.num_players, *self._out,
                          threads=self.loop_threads)
        return self._view

    def _actions(self, actions: np.ndarray) -> np.ndarray:
        """``actions`` as C-contiguous int64 of shape ``(num_envs,)``, or an error."""
        n = self.num_envs
        if actions.dtype.kind not in "iu":
            raise TypeError(f"actions must be an int array of shape ({n},), "
                            f"got {checks.describe(actions)}")
        if actions.shape != (n,):
            raise ValueError(f"actions must have shape ({n},) (one per game), "
                             f"got {actions.shape}")
        return np.ascontiguousarray(actions, dtype=np.int64)

    @exclusive
    def observe(self, seats: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Every game's observation from seat ``seats[i]`` (e.g. a learner's own view).

        ``out``: where to write, a writeable ``(num_envs, obs_dim)`` array of
        ``game.obs_dtype`` (a strided view is written correctly, through a copy);
        returned. By default a new array.
        """
        n = self.num_envs
        seats = checks.check_ints(seats, "seats", (n,), 0, self.num_players - 1)
        shape = (n, self.game.obs_dim)
        if out is None:
            out = np.zeros(shape, self.game.obs_dtype)
        else:
            out = checks.check_out(out, "out", shape, self.game.obs_dtype)
        if out.flags.c_contiguous:
            driver.observe_rows(self.records, self.game.cfg, seats, out,  # noqa: SLF001
                                  threads=self.loop_threads)
        else:
            tmp = np.zeros(shape, self.game.obs_dtype)
            driver.observe_rows(self.records, self.game.cfg, seats, tmp,  # noqa: SLF001
                                  threads=self.loop_threads)
            out[...] = tmp
        return out

    # -- one game at a time, for people and tests ------------------------------
    def _row(self, i: Any) -> int:
        return checks.check_int(i, "i (the game's row)", 0, self.num_envs - 1)

    def state_dict(self, i: int) -> dict[str, Any]:
        return self.game.to_dict(self.records[self._row(i)])

    @exclusive
    def load_state_dict(self, i: int, state: dict[str, Any]) -> None:
        """Replace game ``i`` by ``state``; refresh its row of the last result."""
        i = self._row(i)
        self.records[i : i + 1] = self.game.from_dict(state)
        b = self._buf
        driver.refresh_row(self.records, self.game.cfg, i, b.observation, b.action_mask,
                           b.current_player)
        self._ready = True

    def render(self, i: int = 0, mode: str = "ansi", seat: int | None = None) -> Any:
        """Game ``i`` as text (``"ansi"``) or a picture (``"rgb_array"``); ``seat``
        (default none) is whose hidden information may be shown."""
        i = self._row(i)
        if seat is not None:
            seat = checks.check_int(seat, "seat", 0, self.num_players - 1)
        if mode not in ("ansi", "rgb_array"):
            raise ValueError(f"mode must be 'ansi' or 'rgb_array', got {mode!r}")
        rec = self.records[i]
        if mode == "ansi":
            return self.game.render_ansi(rec, seat)
        return self.game.render_rgb(rec, seat)

    #: where the games live (see :meth:`to`)
    device = "cpu"

    def export_state(self) -> dict[str, Any]:
        """Everything the env is, as host arrays (copies): what :meth:`to` carries."""
        import copy

        return {"records": self.records.copy(), "seeds": self._seeds.copy(),
                "buffers": {f.name: getattr(self._buf, f.name).copy()
                            for f in fields(self._buf)},
                "ready": self._ready, "np_random": copy.deepcopy(self.np_random)}

    @exclusive
    def import_state(self, state: dict[str, Any]) -> None:
        """Take on :meth:`export_state`'s output (from this env, or a GPU env of the
        same game and size)."""
        import copy

        self.records[...] = state["records"]
        self._seeds[...] = state["seeds"]
        for f in fields(self._buf):
            getattr(self._buf, f.name)[...] = state["buffers"][f.name]
        self._ready = bool(state["ready"])
        self.np_random = copy.deepcopy(state["np_random"])

    def to(self, device: Any) -> Any:
        """This env on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:K"``): a new env with
        exact copies of every game, buffer and seed, which plays on as this one would
        (a GPU env needs the ``[gpu]`` extra); ``self`` for ``"cpu"`` (as
        ``torch.Tensor.to``)."""
        from trafficenvs.core.cuda_vector import CudaVecEnv, parse_device

        kind, index = parse_device(device)
        if kind == "cpu":
            return self
        other = CudaVecEnv(self.game, self.num_envs, max_cycles=self.max_cycles,
                           device=f"cuda:{index}")
        other.import_state(self.export_state())
        return other

    def close(self) -> None:
        pass
