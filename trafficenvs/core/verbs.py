"""The kernel verbs every game provides, dispatched by record type inside numba.

A game registers seven ``@kernel`` functions for *one* record with
:func:`register_kernels` (its ``verbs.py``, through :func:`register_module`). The
batched drivers (``driver.py``) are written once and call the generic verbs below; numba
resolves each verb at compile time from the record's dtype, so a driver compiled for
Traffic Jam calls Traffic Jam's kernels directly (no function pointers, no Python in the
loop) and its compiled form is cached per game.

The contract (``rec`` is one record, ``cfg`` the game's configuration record):

``init(rec, cfg, seed)``
    Set up a new game from a uint64 seed (C1: chance only from ``rec``'s RNG).
``step(rec, cfg, action)``
    Apply one legal action of the player to move. Writes the step's rewards for
    every seat (absolute seat order) into ``rec.reward``; at the end of the game
    that includes the zero-sum result (C2).
``is_legal(rec, cfg, action) -> bool``
    Whether ``action`` is legal for the player to move (False once the game is over,
    and False for any ``action`` outside ``0..num_actions - 1``: the vectorised env's
    range check of the actions relies on it).
``legal_mask(rec, cfg, out)``
    Write the legal-action mask (bool/int8 row of ``num_actions``) of the player to move.
``observe(rec, cfg, seat, out)``
    Write ``seat``'s observation (a uint8 row, each entry within its layout bound),
    from that seat's point of view (C4).
``current_player(rec, cfg) -> int``
    The seat to move.
``is_over(rec, cfg) -> bool``
    Whether the game has ended (terminated by the rules, not truncated).
``is_truncated(rec, cfg) -> bool`` (optional; default: never)
    Whether a game option (a cap on turns or rounds) has cut the game off. The
    drivers end such a game as truncated, with no result (C2: reward 0), just as
    when the envs' ``max_cycles`` move limit is reached.
``determinize(rec, cfg, seat, key)`` (optional; default: :func:`redraw_generator`)
    Turn ``rec`` into a game ``seat`` cannot tell from it: keep everything that seat
    observes, redraw everything it cannot (OpenSpiel's ``resample_from_infostate``)
    from the uint64 ``key``. A game whose only hidden information is its future
    chance (dice) keeps the default, which rekeys the generator; a game with hidden
    cards redraws them consistently with what the seat has seen. Search agents
    (``agents/search.py``) only ever look at determinized copies.
``evaluate(rec, cfg, ret, scratch)`` (optional; default: adds nothing)
    Add to ``ret[j]`` a heuristic value of the position for every seat ``j``, in the
    scale of the final result (C2: a lone winner +1, a loser -1/(n-1)), for search
    that cuts its rollouts off before the end. ``scratch`` is a float64 row of
    :data:`EVAL_SCRATCH` entries the caller owns (no allocation per call).
``greedy(rec, cfg, mask, gs, i) -> int`` (optional; default: -1)
    The game's rule-based player's move in ``rec`` for the seat to move, whose legal
    mask is ``mask``; ``gs`` is the player's scratch (a tuple of arrays made by the
    greedy class's ``rollout_scratch(B)``) and ``i`` the row of it to use. Search
    agents play their rollouts with it (``rollout=greedy``). -1 means "no greedy
    player": the caller picks a random legal move. The game's ``strategy/greedy.py``
    defines it; its ``verbs.py`` gathers it with the others.

Every record dtype also has the common fields ``rng_key``, ``rng_ctr`` (uint64),
``moves`` (int32, maintained by the drivers) and ``reward`` (float32 per seat).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from trafficenvs.core.jit import kernel

VERBS = ("init", "step", "is_legal", "legal_mask", "observe", "current_player", "is_over")
OPTIONAL_VERBS = ("is_truncated", "determinize", "evaluate", "greedy")
#: float64 entries of the scratch row ``evaluate`` gets
EVAL_SCRATCH = 256
COMMON_FIELDS = ("rng_key", "rng_ctr", "moves", "reward")

_KERNELS: dict[np.dtype, dict[str, Callable]] = {}


def register_kernels(record_dtype: np.dtype, **kernels: Callable) -> None:
    """Register a game's kernels for records of ``record_dtype``.

    Must run before the first driver call for that game (games register at import).
    """
    missing = [v for v in VERBS if v not in kernels]
    extra = [k for k in kernels if k not in VERBS + OPTIONAL_VERBS]
    if missing or extra:
        raise ValueError(f"register_kernels: missing verbs {missing}, unknown verbs {extra}")
    absent = [f for f in COMMON_FIELDS if f not in record_dtype.names]
    if absent:
        raise ValueError(f"record dtype lacks the common fields {absent}")
    _KERNELS[np.dtype(record_dtype)] = {"is_truncated": never_truncated,
                                        "determinize": redraw_generator,
                                        "evaluate": no_estimate, "greedy": no_greedy,
                                        **kernels}


def is_registered(record_dtype: np.dtype) -> bool:
    """Whether a game's verbs are registered for records of ``record_dtype`` (the drivers
    refuse records of any other dtype before compiled code sees them)."""
    return np.dtype(record_dtype) in _KERNELS


def has_verb(record_dtype: np.dtype, verb: str) -> bool:
    """Whether the game of ``record_dtype`` has its own ``verb`` (an optional verb it
    did not register runs the default: no truncation, no estimate, ...)."""
    if verb not in VERBS + OPTIONAL_VERBS:
        raise ValueError(f"unknown verb {verb!r}; verbs: {', '.join(VERBS + OPTIONAL_VERBS)}")
    try:
        fn = _KERNELS[np.dtype(record_dtype)][verb]
    except KeyError:
        raise TypeError(f"no game kernels registered for record dtype {record_dtype}") from None
    defaults = {"is_truncated": never_truncated, "determinize": redraw_generator,
                "evaluate": no_estimate, "greedy": no_greedy}
    return fn is not defaults.get(verb)


def register_module(verbs: Any) -> None:
    """Register a game's verbs module (``<game>/verbs.py``): its ``RECORD_DTYPE`` and the
    functions named after the verbs (``init``, ``step``, ...; each optional verb it has,
    ``greedy`` and ``evaluate`` included)."""
    found = {v: getattr(verbs, v) for v in VERBS + OPTIONAL_VERBS if hasattr(verbs, v)}
    register_kernels(verbs.RECORD_DTYPE, **found)


def _kernel(rec_type, verb: str) -> Callable:
    dtype = as_dtype(rec_type)
    try:
        return _KERNELS[dtype][verb]
    except KeyError:
        raise TypeError(f"no game kernels registered for record dtype {dtype}") from None


def _python_verb(name: str) -> Callable:
    """The verb as a plain function: what runs under ``NUMBA_DISABLE_JIT=1``.

    Compiled code never calls this (the overloads below replace it); without the
    JIT it looks the game's kernel up from the record's dtype, so the very same
    kernels run as Python (for debugging, and for the benchmark's speed-up figure).
    """
    verb = name[2:]

    def call(rec, *args):
        try:
            fn = _KERNELS[np.dtype(rec.dtype)][verb]
        except KeyError:
            raise TypeError(f"no game kernels registered for record dtype {rec.dtype}") from None
        return fn(rec, *args)

    call.__name__ = name
    return call


k_init = _python_verb("k_init")
k_step = _python_verb("k_step")
k_is_legal = _python_verb("k_is_legal")
k_legal_mask = _python_verb("k_legal_mask")
k_observe = _python_verb("k_observe")
k_current_player = _python_verb("k_current_player")
k_is_over = _python_verb("k_is_over")
k_is_truncated = _python_verb("k_is_truncated")
k_determinize = _python_verb("k_determinize")
k_evaluate = _python_verb("k_evaluate")
k_greedy = _python_verb("k_greedy")


@kernel
def never_truncated(rec, cfg):
    """The default ``is_truncated``: a game with no cap of its own."""
    return False


@kernel
def redraw_generator(rec, cfg, seat, key):
    """The default ``determinize``: the same position with a new generator, so every
    future die is redrawn (nothing else is hidden in a game that keeps this)."""
    rec.rng_key = key
    rec.rng_ctr = np.uint64(0)


@kernel
def no_estimate(rec, cfg, ret, scratch):
    """The default ``evaluate``: no opinion (0, a draw) before the end."""


@kernel
def no_greedy(rec, cfg, mask, gs, i):
    """The default ``greedy``: none (the caller plays a random legal move)."""
    return -1


# The overload implementations are not cached themselves (they are compiled into
# the cached drivers); caching them would tie them to this file's timestamp only.
@overload(k_init, target="generic")
def _ov_init(rec, cfg, seed):
    fn = _kernel(rec, "init")
    return lambda rec, cfg, seed: fn(rec, cfg, seed)


@overload(k_step, target="generic")
def _ov_step(rec, cfg, action):
    fn = _kernel(rec, "step")
    return lambda rec, cfg, action: fn(rec, cfg, action)


@overload(k_is_legal, target="generic")
def _ov_is_legal(rec, cfg, action):
    fn = _kernel(rec, "is_legal")
    return lambda rec, cfg, action: fn(rec, cfg, action)


@overload(k_legal_mask, target="generic")
def _ov_legal_mask(rec, cfg, out):
    fn = _kernel(rec, "legal_mask")
    return lambda rec, cfg, out: fn(rec, cfg, out)


@overload(k_observe, target="generic")
def _ov_observe(rec, cfg, seat, out):
    fn = _kernel(rec, "observe")
    return lambda rec, cfg, seat, out: fn(rec, cfg, seat, out)


@overload(k_current_player, target="generic")
def _ov_current_player(rec, cfg):
    fn = _kernel(rec, "current_player")
    return lambda rec, cfg: fn(rec, cfg)


@overload(k_is_over, target="generic")
def _ov_is_over(rec, cfg):
    fn = _kernel(rec, "is_over")
    return lambda rec, cfg: fn(rec, cfg)


@overload(k_is_truncated, target="generic")
def _ov_is_truncated(rec, cfg):
    fn = _kernel(rec, "is_truncated")
    return lambda rec, cfg: fn(rec, cfg)


@overload(k_determinize, target="generic")
def _ov_determinize(rec, cfg, seat, key):
    fn = _kernel(rec, "determinize")
    return lambda rec, cfg, seat, key: fn(rec, cfg, seat, key)


@overload(k_evaluate, target="generic")
def _ov_evaluate(rec, cfg, ret, scratch):
    fn = _kernel(rec, "evaluate")
    return lambda rec, cfg, ret, scratch: fn(rec, cfg, ret, scratch)


@overload(k_greedy, target="generic")
def _ov_greedy(rec, cfg, mask, gs, i):
    # an empty scratch tuple asks for random rollouts: the game's player is not compiled
    if isinstance(gs, types.BaseTuple) and len(gs) == 0:
        return lambda rec, cfg, mask, gs, i: -1
    fn = _kernel(rec, "greedy")
    return lambda rec, cfg, mask, gs, i: fn(rec, cfg, mask, gs, i)
