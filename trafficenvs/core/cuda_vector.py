"""The vectorised env on a GPU: ``make_vec(id, num_envs=N, device="cuda")``.

The same games as :class:`~trafficenvs.core.vector.TrafficVecEnv`, played by the same
compiled rules (``core/cuda_drivers.py``: one CUDA thread per game), with every
buffer in GPU memory: the records, the configuration, the observations, masks,
players to move, rewards, end flags, final observations and final records. Nothing
goes through the host on a step but one 8-byte count (how many actions were
refused), so a learner on the GPU reads the env's tensors where they are.

Interop. ``reset``/``step`` return a :class:`~trafficenvs.core.vector.VecStep` whose
fields are ``torch`` CUDA tensors sharing the env's memory (no copy; written in place
by the next call, as on the CPU), except ``final_records``, which stays a numba device
array of records (torch has no record dtype). Without torch, or under numba-cuda's
simulator, every field is a numba device array. ``step`` takes actions (and
``active``, ``final_seat``) as any CUDA array: a torch CUDA tensor, a CuPy array or a
numba device array (``__cuda_array_interface__``), anything with DLPack on the GPU,
or a host array (copied to the GPU; convenient, not fast).

Legality. The CPU env trusts its own read-only mask; a GPU tensor cannot be made
read-only, so this env asks the rules (the game's ``is_legal``) for every active
row's action. An illegal action raises ``ValueError`` naming the rows, and nothing
changes. Auto-reset, seeds, ``active`` and ``final_seat`` behave as on the CPU, and a
game on the GPU is the same game as on the CPU from the same seed, move for move.
"""

from __future__ import annotations

import copy
from dataclasses import fields
from typing import Any

import numpy as np

from trafficenvs.core import checks, cuda_drivers
from trafficenvs.core.game import Game
from trafficenvs.core.guard import ThreadGuard, exclusive
from trafficenvs.core.records import as_kernel_array
from trafficenvs.core.vector import VecStep, check_fits

_FIELDS = tuple(f.name for f in fields(VecStep))


def parse_device(device: Any) -> tuple[str, int]:
    """``"cpu"``, ``"cuda"`` or ``"cuda:K"`` (or a ``torch.device``) as ``(kind, index)``."""
    text = str(device)
    if text == "cpu":
        return "cpu", 0
    if text == "cuda":
        return "cuda", 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return "cuda", int(text[5:])
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:K', got {device!r}")


def _torch() -> Any:
    """torch, if it is installed and sees a GPU (else None: numba arrays are returned)."""
    try:
        import torch
    except ImportError:
        return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001
        return None


class CudaVecEnv:
    """``num_envs`` games of one configuration on GPU ``device`` (see the module).

    ``output``: ``"torch"`` (tensors out; needs torch with CUDA), ``"numba"`` (numba
    device arrays out) or ``"auto"`` (torch where it can, else numba).
    """

    def __init__(self, game: Game, num_envs: int, max_cycles: int | None = None,
                 device: Any = "cuda", output: str = "auto"):
        self._guard = ThreadGuard()  # one thread at a time (core/guard.py)
        cu = cuda_drivers.bind_cuda()
        kind, index = parse_device(device)
        if kind != "cuda":
            raise ValueError(f"CudaVecEnv runs on a GPU; device {device!r} is not one")
        if not cu.is_available():
            raise RuntimeError("no CUDA GPU is visible to numba-cuda (cuda.is_available() "
                               "is False); use device='cpu', or NUMBA_ENABLE_CUDASIM=1 to "
                               "simulate one")
        if index >= len(cu.gpus):
            raise ValueError(f"device {device!r}: there are {len(cu.gpus)} GPUs")
        if output not in ("auto", "torch", "numba"):
            raise ValueError(f"output must be 'auto', 'torch' or 'numba', got {output!r}")
        torch = None if cuda_drivers.simulated() else _torch()
        if output == "torch" and torch is None:
            raise RuntimeError("output='torch' needs torch with CUDA (and a real GPU)")
        self._torch = torch if output != "numba" else None
        self.output = "torch" if self._torch is not None else "numba"
        num_envs = checks.check_int(num_envs, "num_envs", 1)
        if max_cycles is None:
            max_cycles = game.default_max_cycles
        max_cycles = checks.check_int(max_cycles, "max_cycles", 1)
        self._cuda = cu
        self.device = f"cuda:{index}"
        self.device_index = index
        self._gpu = cu.gpus[index]
        self.num_envs = num_envs
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.observation_shape = (game.obs_dim,)
        self.max_cycles = int(max_cycles)
        self.max_moves = self.max_cycles * game.num_players
        game = game.with_horizon(self.max_moves)
        self.game = game
        checks.note_game(game)
        n = num_envs
        z = np.zeros
        with self._gpu:
            free = float(cu.current_context().get_memory_info()[0])
            check_fits(game, n, free, f"{self.device}'s free memory")
            dev = self._to_device
            self._cfg = dev(game.cfg)
            #: the games' records, in GPU memory (a numba device array); after writing
            #: them, call :meth:`refresh`
            self.records = dev(game.new_records(n))
            self._seeds = dev(z(n, np.uint64))
            self._dbuf = VecStep(
                observation=dev(z((n, game.obs_dim), game.obs_dtype)),
                action_mask=dev(z((n, game.num_actions), np.bool_)),
                current_player=dev(z(n, np.int64)),
                rewards=dev(z((n, game.num_players), np.float32)),
                terminated=dev(z(n, np.bool_)),
                truncated=dev(z(n, np.bool_)),
                final_observation=dev(z((n, game.obs_dim), game.obs_dtype)),
                final_records=dev(game.new_records(n)),
            )
            self._all = dev(np.ones(n, np.bool_))
            self._mover = dev(np.full(n, -1, np.int64))
            self._acts = dev(z(n, np.int64))
            self._bad = dev(z(n, np.int8))
            self._count = dev(z(1, np.int64))
            self._zero = z(1, np.int64)
            self._host_count = z(1, np.int64)
        #: what ``reset``/``step`` return: the env's buffers, as torch tensors sharing
        #: their memory (or the numba arrays themselves)
        self._view = VecStep(**{
            f: (getattr(self._dbuf, f) if f == "final_records" or self._torch is None
                else self._torch.as_tensor(getattr(self._dbuf, f), device=self.device))
            for f in _FIELDS})
        self._streams: dict[int, Any] = {}
        self._ready = False
        #: as :attr:`TrafficVecEnv.np_random <trafficenvs.core.vector.TrafficVecEnv>`
        self.np_random: np.random.Generator | None = None

    # -- plumbing -----------------------------------------------------------------
    def _to_device(self, host: np.ndarray) -> Any:
        """A device copy of ``host`` (record arrays keep field access for the simulator)."""
        if host.dtype.names is not None:
            host = as_kernel_array(host)
        return self._cuda.to_device(host)

    def _stream(self) -> Any:
        """torch's current stream on this device (so the env's kernels are ordered with
        the learner's work), or numba's default stream."""
        if self._torch is None:
            return self._cuda.default_stream()
        handle = self._torch.cuda.current_stream(self.device_index).cuda_stream
        s = self._streams.get(handle)
        if s is None:
            s = (self._cuda.default_stream() if handle == 0
                 else self._cuda.external_stream(handle))
            self._streams[handle] = s
        return s

    def _launch(self, name: str, n: int, *args: Any) -> None:
        cuda_drivers.launch(name, n, *args, stream=self._stream())

    def _input(self, x: Any, name: str, kinds: str, what: str) -> Any:
        """``x`` as a device array of shape ``(num_envs,)`` whose dtype kind is in
        ``kinds``: a CUDA array is used in place, a host array is copied over."""
        n = self.num_envs
        arr = self.as_device_array(x, name)
        if arr.dtype.kind not in kinds:
            raise TypeError(f"{name} must be {what} of shape ({n},), got {arr.dtype} "
                            f"of shape {tuple(arr.shape)}")
        if tuple(arr.shape) != (n,):
            raise ValueError(f"{name} must have shape ({n},) (one per game), "
                             f"got {tuple(arr.shape)}")
        return arr

    def as_device_array(self, x: Any, name: str = "array") -> Any:
        """``x`` as a numba device array on this env's GPU, without a copy for a CUDA
        array (``__cuda_array_interface__``, or DLPack through torch); a host array
        (numpy, list, CPU tensor) is copied to the GPU."""
        cu = self._cuda
        if type(x).__name__ == "FakeCUDAArray":  # the simulator's device arrays
            return x
        dev = getattr(x, "device", None)
        if getattr(dev, "type", None) == "cuda" and dev.index not in (None, self.device_index):
            raise ValueError(f"{name} is on {dev}, the env on {self.device}")
        if hasattr(x, "__cuda_array_interface__"):
            # no wait on the array's stream (a host sync a step): the env launches on
            # torch's current stream, where a learner's tensors are made
            return cu.as_cuda_array(x, sync=False)
        if hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] in (2, 13):
            import torch  # DLPack's CUDA and CUDA-managed memory: torch reads both

            t = torch.from_dlpack(x)
            if t.device.index != self.device_index:
                raise ValueError(f"{name} is on {t.device}, the env on {self.device}")
            return cu.as_cuda_array(t, sync=False)
        host = checks.as_array(x, name)
        if host.dtype == object:
            raise TypeError(f"{name} must be an array, got {checks.describe(x)}")
        with self._gpu:
            return cu.to_device(np.ascontiguousarray(host))

    # -- the env ------------------------------------------------------------------
    @exclusive
    def reset(self, seed: int | None = None) -> VecStep:
        """Start every game; game ``i`` gets seed ``seed + i`` (as on the CPU)."""
        seed = checks.next_seed(self, seed)
        n = self.num_envs
        b = self._dbuf
        with self._gpu:
            self._launch("seed_rows", n, self._seeds, np.uint64(seed))
            self._launch("reset", n, self.records, self._cfg, self._seeds, self.num_players,
                         b.observation, b.action_mask, b.current_player, b.rewards,
                         b.terminated, b.truncated)
        self._ready = True
        return self._view

    @property
    def last(self) -> VecStep:
        """The result of the last ``reset``/``step`` (the live buffers)."""
        return self._view

    @exclusive
    def refresh(self) -> VecStep:
        """Rewrite every game's player to move, observation and mask from its record
        (after writing :attr:`records` directly); returns :attr:`last`."""
        if not self._ready:
            raise RuntimeError("call reset() before refresh()")
        self._refresh_rows(0, self.num_envs)
        return self._view

    def _refresh_rows(self, first: int, count: int) -> None:
        b = self._dbuf
        with self._gpu:
            self._launch("refresh", count, self.records, self._cfg, np.int64(first),
                         b.observation, b.action_mask, b.current_player)

    @exclusive
    def step(self, actions: Any, active: Any = None, final_seat: Any = None) -> VecStep:
        """Play ``actions[i]`` in game ``i``; as :meth:`TrafficVecEnv.step
        <trafficenvs.core.vector.TrafficVecEnv.step>`, with CUDA arrays in and out.

        Raises ``ValueError`` (changing nothing) if an active game's action is illegal
        or out of range, or a ``final_seat`` is not a seat or -1; ``TypeError`` or
        ``ValueError`` for arrays of the wrong dtype, shape or device. Waits for the
        GPU once (the count of refused rows), as the CPU env checks before it steps.
        """
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        with self._gpu:
            acts = self._input(actions, "actions", "iu", "an int array")
            act = self._all if active is None else self._input(active, "active", "b",
                                                               "a bool array")
            seat = (self._mover if final_seat is None
                    else self._input(final_seat, "final_seat", "iu", "an int array"))
            b = self._dbuf
            stream = self._stream()
            self._count.copy_to_device(self._zero, stream=stream)
            self._launch("check", n, self.records, self._cfg, acts, act, seat,
                         self.num_players, self._no_mask(), self._acts, self._bad, self._count)
            self._count.copy_to_host(self._host_count, stream=stream)
            stream.synchronize()
            if self._host_count[0]:
                self._refuse(act)
            self._launch("step", n, self.records, self._cfg, self._acts, act, seat,
                         self._seeds, np.uint64(n), self.max_moves, self.num_players,
                         b.observation, b.action_mask, b.current_player, b.rewards,
                         b.terminated, b.truncated, b.final_observation, b.final_records)
        return self._view

    def _no_mask(self) -> Any:
        """A mask of no columns: the check then asks the rules for every action."""
        m = getattr(self, "_empty_mask", None)
        if m is None:
            m = self._empty_mask = self._cuda.to_device(np.zeros((self.num_envs, 0), np.bool_))
        return m

    def _refuse(self, active: Any) -> None:
        """Raise the error of a refused step (the rows flagged by the check kernel)."""
        bad = self._bad.copy_to_host()
        acts = self._acts.copy_to_host()
        seats = np.flatnonzero(bad == 2)
        if seats.size:
            raise ValueError(f"final_seat must be in -1..{self.num_players - 1}, "
                             f"got a bad seat in game {int(seats[0])}")
        rows = [int(i) for i in np.flatnonzero(bad == 1)]
        out = [i for i in rows if not 0 <= acts[i] < self.num_actions]
        if out:
            raise ValueError(
                f"actions must be in 0..{self.num_actions - 1} in active games, got "
                f"{acts[out[0]]} in game {out[0]}"
                f"{f' (and {len(out) - 1} more)' if len(out) > 1 else ''}")
        raise ValueError(f"illegal actions in games {rows[:10]}{'...' if len(rows) > 10 else ''}")

    @exclusive
    def observe(self, seats: Any, out: Any = None) -> Any:
        """Every game's observation from seat ``seats[i]``, written on the GPU into
        ``out`` (a ``(num_envs, obs_dim)`` CUDA array of the observation dtype) or a new
        array (a torch tensor when the env outputs torch); returned."""
        n = self.num_envs
        with self._gpu:
            s = self._input(seats, "seats", "iu", "an int array")
            host = s.copy_to_host()
            if host.size and (host.min() < 0 or host.max() >= self.num_players):
                bad = host[(host < 0) | (host >= self.num_players)][0]
                raise ValueError(f"seats must be in 0..{self.num_players - 1}, got {bad}")
            shape = (n, self.game.obs_dim)
            dtype = np.dtype(self.game.obs_dtype)
            if out is None:
                target = self._cuda.to_device(np.zeros(shape, dtype))
                result = (target if self._torch is None
                          else self._torch.as_tensor(target, device=self.device))
            else:
                target = self.as_device_array(out, "out")
                if tuple(target.shape) != shape or target.dtype != dtype:
                    raise ValueError(f"out must be a {dtype} array of shape {shape}, got "
                                     f"{target.dtype} of shape {tuple(target.shape)}")
                result = out
            self._launch("observe", n, self.records, self._cfg, s, target)
        return result

    @exclusive
    def sample_actions(self, states: Any, out: Any = None) -> Any:
        """A uniform random legal action per game, drawn on the GPU from ``states``
        (:func:`~trafficenvs.core.driver.rng_states` with ``device=``: one generator
        per game, advanced in place); rows with no legal action get -1."""
        if out is None:
            out = self._cuda.to_device(np.zeros(self.num_envs, np.int64))
            if self._torch is not None:
                out = self._torch.as_tensor(out, device=self.device)
        return sample_legal_device(self._dbuf.action_mask, states, out)

    # -- one game at a time, and moving between devices -----------------------------
    def _row(self, i: Any) -> int:
        return checks.check_int(i, "i (the game's row)", 0, self.num_envs - 1)

    def state_dict(self, i: int) -> dict[str, Any]:
        """Game ``i``'s state (copied from the GPU), as on the CPU env."""
        return self.game.to_dict(self._record(self._row(i)))

    @exclusive
    def load_state_dict(self, i: int, state: dict[str, Any]) -> None:
        """Replace game ``i`` by ``state``; refresh its row of the last result."""
        i = self._row(i)
        rec = self.game.from_dict(state)
        with self._gpu:
            if cuda_drivers.simulated():  # the simulator's slices lose their device type
                host = self.records.copy_to_host()
                host[i] = np.asarray(rec)[0]
                _upload(self.records, host)
            else:
                self.records[i:i + 1].copy_to_device(np.asarray(rec))
        self._refresh_rows(i, 1)
        self._ready = True

    def _record(self, i: int) -> Any:
        """A host copy of game ``i``'s record (as kernels and ``to_dict`` take it)."""
        with self._gpu:
            if cuda_drivers.simulated():
                return as_kernel_array(self.records.copy_to_host())[i]
            return as_kernel_array(self.records[i:i + 1].copy_to_host())[0]

    def host_records(self) -> np.ndarray:
        """A host copy of :attr:`records` (for scores, renders, analysis)."""
        with self._gpu:
            return as_kernel_array(self.records.copy_to_host())

    def render(self, i: int = 0, mode: str = "ansi", seat: int | None = None) -> Any:
        """Game ``i`` as text or a picture, from a host copy of its record."""
        i = self._row(i)
        if seat is not None:
            seat = checks.check_int(seat, "seat", 0, self.num_players - 1)
        if mode not in ("ansi", "rgb_array"):
            raise ValueError(f"mode must be 'ansi' or 'rgb_array', got {mode!r}")
        rec = self._record(i)
        return (self.game.render_ansi(rec, seat) if mode == "ansi"
                else self.game.render_rgb(rec, seat))

    def export_state(self) -> dict[str, Any]:
        """Everything the env is, as host arrays (for :meth:`to` and its CPU twin)."""
        with self._gpu:
            self._stream().synchronize()
            buf = {f: self._host(getattr(self._dbuf, f)) for f in _FIELDS}
            return {"records": as_kernel_array(self.records.copy_to_host()),
                    "seeds": self._seeds.copy_to_host(), "buffers": buf,
                    "ready": self._ready, "np_random": copy.deepcopy(self.np_random)}

    @staticmethod
    def _host(x: Any) -> np.ndarray:
        h = x.copy_to_host()
        return as_kernel_array(h) if h.dtype.names is not None else h

    @exclusive
    def import_state(self, state: dict[str, Any]) -> None:
        """Take on :meth:`export_state`'s output (from this or another device)."""
        with self._gpu:
            _upload(self.records, state["records"])
            _upload(self._seeds, state["seeds"])
            for f in _FIELDS:
                _upload(getattr(self._dbuf, f), state["buffers"][f])
        self._ready = state["ready"]
        self.np_random = copy.deepcopy(state["np_random"])

    def to(self, device: Any) -> Any:
        """This env on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:K"``): a new env holding
        exact copies of every game, buffer and seed, which plays on as this one would;
        ``self`` when it is already there (as ``torch.Tensor.to``)."""
        kind, index = parse_device(device)
        if kind == "cuda" and index == self.device_index:
            return self
        state = self.export_state()
        if kind == "cpu":
            from trafficenvs.core.vector import TrafficVecEnv

            other = TrafficVecEnv(self.game, self.num_envs, max_cycles=self.max_cycles)
        else:
            other = CudaVecEnv(self.game, self.num_envs, max_cycles=self.max_cycles,
                               device=f"cuda:{index}", output=self.output)
        other.import_state(state)
        return other

    def close(self) -> None:
        pass


def _upload(dev: Any, host: np.ndarray) -> None:
    """Copy ``host`` into the device array ``dev`` (same shape and dtype)."""
    host = np.ascontiguousarray(np.asarray(host))
    if type(dev).__name__ == "FakeCUDAArray" and host.dtype.names is not None:
        # the simulator cannot copy into its record arrays (their rows are not plain
        # numpy rows): write the array it holds
        dev._ary[...] = host  # noqa: SLF001
    else:
        dev.copy_to_device(host)


def sample_legal_device(mask: Any, states: Any, out: Any) -> Any:
    """:func:`~trafficenvs.core.driver.sample_legal` on GPU buffers: ``mask`` a bool
    ``(B, A)`` CUDA array (C-contiguous), ``states`` ``B`` generator records on the GPU,
    ``out`` a ``(B,)`` int64 CUDA array; written on the GPU (no sync) and returned."""
    cu = cuda_drivers.bind_cuda()
    m = _device_view(cu, mask, "sample_legal: mask")
    s = _device_view(cu, states, "sample_legal: states")
    o = _device_view(cu, out, "sample_legal: out")
    if m.dtype != np.bool_ or len(m.shape) != 2:
        raise TypeError(f"sample_legal: mask must be a bool array of shape (B, num_actions), "
                        f"got {m.dtype} of shape {tuple(m.shape)}")
    b = m.shape[0]
    if not _c_contiguous(m):
        raise ValueError("sample_legal: mask must be C-contiguous (rows are read 8 bytes "
                         "at a time)")
    if tuple(s.shape) != (b,) or s.dtype.names is None or not all(
            f in s.dtype.names and s.dtype[f] == np.uint64 for f in ("rng_key", "rng_ctr")):
        raise ValueError(f"sample_legal: states must be {b} generator records on the GPU "
                         f"(rng_states({b}, seed, device=...)), got {s.dtype} of shape "
                         f"{tuple(s.shape)}")
    if o.dtype != np.int64 or tuple(o.shape) != (b,):
        raise TypeError(f"sample_legal: out must be an int64 array of shape ({b},), "
                        f"got {o.dtype} of shape {tuple(o.shape)}")
    cuda_drivers.launch("sample", b, m, s, o, stream=_torch_stream(cu, mask))
    return out


def _device_view(cu: Any, x: Any, name: str) -> Any:
    if type(x).__name__ == "FakeCUDAArray":
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return cu.as_cuda_array(x, sync=False)  # (see CudaVecEnv.as_device_array)
    raise TypeError(f"{name} must be a CUDA array (a torch CUDA tensor, CuPy or numba "
                    f"device array), got {checks.describe(x)}")


def _c_contiguous(x: Any) -> bool:
    flags = getattr(x, "flags", None)
    if flags is not None:
        try:
            return bool(flags["C_CONTIGUOUS"])
        except (KeyError, TypeError):
            return bool(getattr(flags, "c_contiguous", True))
    return True


def _torch_stream(cu: Any, x: Any) -> Any:
    """torch's current stream for a torch tensor ``x``'s device, else numba's default."""
    dev = getattr(x, "device", None)
    if getattr(dev, "type", None) != "cuda":
        return cu.default_stream()
    import torch

    handle = torch.cuda.current_stream(dev).cuda_stream
    return cu.default_stream() if handle == 0 else cu.external_stream(handle)


def to_gpu(host: np.ndarray, device: Any = "cuda") -> Any:
    """A numba device array copy of ``host`` on GPU ``device`` (``"cuda"``, ``"cuda:K"``)."""
    cu = cuda_drivers.bind_cuda()
    kind, index = parse_device(device)
    if kind != "cuda":
        raise ValueError(f"device must be 'cuda' or 'cuda:K', got {device!r}")
    with cu.gpus[index]:
        return cu.to_device(as_kernel_array(host) if host.dtype.names else host)


__all__ = ["CudaVecEnv", "parse_device", "to_gpu", "sample_legal_device"]
