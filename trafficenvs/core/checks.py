"""Argument checks: the compiled loops trust their inputs, so every public entry checks
shapes, dtypes and ranges first.

Errors name the argument, what was expected and what was given (``TypeError`` for the
wrong kind of thing, ``ValueError`` for the wrong value). The checks read only
attributes (shape, dtype, flags) where they can: a pass over the data costs
microseconds, which is a noticeable share of a small batch's step. The adapters also
register each game's sizes by its configuration record (:func:`note_game`), so the
helpers that take a bare ``cfg`` can check row widths and seat ranges
(:func:`check_game_arrays`).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np


def next_seed(env: Any, seed: Any) -> int:
    """The seed of a ``reset(seed)`` of ``env`` (an AEC or vectorised env with an
    ``np_random`` attribute): a given seed (checked, 0..2**64-1) also seeds
    ``env.np_random``; without one the seed is drawn from it, so a seeded reset and the
    unseeded ones after it are reproducible (Gymnasium's rule); before any seeded reset
    it draws from OS entropy."""
    if seed is None:
        if env.np_random is None:
            env.np_random = np.random.default_rng()
        return int(env.np_random.integers(0, 2**63, dtype=np.uint64))
    seed = check_int(seed, "seed", 0, 2**64 - 1)
    env.np_random = np.random.default_rng(seed)
    return seed


def describe(x: Any) -> str:
    """A short account of ``x`` for error messages: ``int64 array of shape (3,)``."""
    if isinstance(x, np.ndarray):
        flags = "" if x.flags.c_contiguous else " (not C-contiguous)"
        return f"{x.dtype} array of shape {x.shape}{flags}"
    text = repr(x)
    return text if len(text) <= 60 else f"{type(x).__name__} {text[:57]}..."


def check_int(value: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an ``int`` in ``lo..hi`` (inclusive; either end may be open).

    Python and numpy integers are accepted; ``bool``, floats and strings are not
    (``TypeError``); a value out of range is a ``ValueError``.
    """
    rng = (f" in {lo}..{hi}" if lo is not None and hi is not None
           else f" >= {lo}" if lo is not None else f" <= {hi}" if hi is not None else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int{rng}, got {describe(value)}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an int{rng}, got {v}")
    return v


def as_array(x: Any, name: str) -> np.ndarray:
    """``x`` as an ndarray (no copy for one), or a ``TypeError`` naming ``name``."""
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array, got {describe(x)} ({err})") from None


def check_ints(x: Any, name: str, shape: tuple[int, ...], lo: int, hi: int) -> np.ndarray:
    """An integer array of ``shape`` with every value in ``lo..hi``, as C-contiguous int64."""
    x = as_array(x, name)
    if x.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an int array of shape {shape}, got {describe(x)}")
    if x.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {x.shape}")
    if x.size:
        low, high = x.min(), x.max()
        if low < lo or high > hi:
            bad = x.flat[int(np.argmax((x < lo) | (x > hi)))]
            raise ValueError(f"{name} must be in {lo}..{hi}, got {bad}")
    return np.ascontiguousarray(x, dtype=np.int64)


def check_bools(x: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A bool array of ``shape``, C-contiguous (a copy only if it was not)."""
    x = as_array(x, name)
    if x.dtype != np.bool_:
        raise TypeError(f"{name} must be a bool array of shape {shape}, got {describe(x)}")
    if x.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {x.shape}")
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


def check_out(out: Any, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An output buffer: an ndarray of exactly ``shape`` and ``dtype``, writeable."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a {np.dtype(dtype)} array of shape {shape}, "
                        f"got {describe(out)}")
    if out.dtype != dtype:
        raise TypeError(f"{name} must be a {np.dtype(dtype)} array of shape {shape}, "
                        f"got {describe(out)}")
    if out.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {out.shape}")
    if not out.flags.writeable:
        raise ValueError(f"{name} must be writeable, got a read-only array")
    return out


# The sizes of the game configurations the adapters were made with, by the
# configuration record (``game.cfg``): the helpers below take a bare ``cfg`` and look
# up how wide a mask or observation row of that game must be. Entries die with their
# configuration array.
_SIZES: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}


def note_game(game: Any) -> None:
    """Remember ``game``'s sizes for its configuration record (the adapters call this)."""
    cfg = game.cfg
    key = id(cfg)
    _SIZES[key] = (weakref.ref(cfg, lambda _r, k=key: _SIZES.pop(k, None)), {
        "num_players": game.num_players, "num_actions": game.num_actions,
        "obs_dim": game.obs_dim, "obs_dtype": np.dtype(game.obs_dtype),
        "record_dtype": np.dtype(game.record_dtype),
    })


def sizes_of(cfg: np.ndarray) -> dict[str, Any] | None:
    """The sizes :func:`note_game` noted for this configuration record, or None."""
    entry = _SIZES.get(id(cfg))
    if entry is None or entry[0]() is not cfg:
        return None
    return entry[1]


def check_game_arrays(fn: str, recs: Any, cfg: Any) -> dict[str, Any] | None:
    """``recs`` a 1-D array of game records and ``cfg`` a 1-element configuration record
    of the same game; the game's sizes if an env was made with this ``cfg``."""
    from trafficenvs.core.verbs import is_registered

    if not isinstance(recs, np.ndarray) or recs.ndim != 1 or not is_registered(recs.dtype):
        raise TypeError(f"{fn}: recs must be a 1-D array of game records (env.records), "
                        f"got {describe(recs)}")
    if not isinstance(cfg, np.ndarray) or cfg.shape != (1,) or cfg.dtype.names is None:
        raise TypeError(f"{fn}: cfg must be a game's 1-element configuration record "
                        f"(env.game.cfg), got {describe(cfg)}")
    if not recs.flags.writeable:
        raise ValueError(f"{fn}: recs must be writeable")
    sizes = sizes_of(cfg)
    if sizes is not None and sizes["record_dtype"] != recs.dtype:
        raise TypeError(f"{fn}: recs are records of another game than cfg's")
    return sizes
