"""The Python-side description of one game configuration.

A :class:`Game` holds what is fixed for an env's lifetime (player count, deck or
map, options): the configuration record passed to every kernel, the sizes of the
observation and action spaces, and the conversions a person needs (action names,
state dicts, renders). The kernels themselves are registered with
:func:`trafficenvs.core.verbs.register_kernels` by the game's module.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numba
import numpy as np

from trafficenvs.core import driver


class _FieldRecord:
    """One record with attribute access to its fields (``rec.hand``), as numba gives.

    Used only under ``NUMBA_DISABLE_JIT=1``; unlike ``np.record`` it never confuses a
    field with a numpy method (a field called ``round`` stays a field).
    """

    __slots__ = ("_v",)

    def __init__(self, v: np.void):
        object.__setattr__(self, "_v", v)

    def __getattr__(self, name: str):
        if name == "dtype":
            return self._v.dtype
        try:
            return self._v[name]
        except (KeyError, ValueError):
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value) -> None:
        self._v[name] = value

    def __getitem__(self, name: str):
        return self._v[name]

    def __setitem__(self, name: str, value) -> None:
        self._v[name] = value


class _FieldArray(np.ndarray):
    """A structured array whose scalar items are :class:`_FieldRecord` views."""

    def __getitem__(self, key):
        item = np.ndarray.__getitem__(self.view(np.ndarray), key)
        if isinstance(item, np.void):
            return _FieldRecord(item)
        return item.view(_FieldArray) if isinstance(item, np.ndarray) else item

    def __setitem__(self, key, value) -> None:
        if isinstance(value, _FieldRecord):
            value = value._v  # noqa: SLF001  (copy a whole record: numba's ``out[i] = rec``)
        np.ndarray.__setitem__(self.view(np.ndarray), key, value)


def as_kernel_array(arr: np.ndarray) -> np.ndarray:
    """A structured array as kernels take it: itself, or (without JIT) field-attribute rows."""
    return arr.view(_FieldArray) if numba.config.DISABLE_JIT else arr


class Game(abc.ABC):
    """One configuration of one game. Subclasses set the class attributes."""

    #: short name, e.g. ``"traffic_jam"``; the env id is ``f"{name}-v{version}"``
    name: ClassVar[str]
    version: ClassVar[int] = 0
    record_dtype: ClassVar[np.dtype]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    #: truncation default (moves per player) when ``max_cycles`` is not given
    default_max_cycles: ClassVar[int] = 10_000

    num_players: int
    num_actions: int
    obs_dim: int

    @property
    def cfg(self) -> np.ndarray:
        """The configuration record, as a 1-element array (kernels read ``cfg[0]``)."""
        return self._cfg

    @cfg.setter
    def cfg(self, value: np.ndarray) -> None:
        self._cfg = as_kernel_array(value)

    @classmethod
    def env_id(cls) -> str:
        return f"{cls.name}-v{cls.version}"

    def check_num_players(self, num_players: int) -> int:
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
            raise TypeError(f"num_players must be an int, got {num_players!r}")
        if not self.min_players <= num_players <= self.max_players:
            raise ValueError(
                f"{self.name} is played by {self.min_players} to {self.max_players} players, "
                f"got num_players={num_players}"
            )
        return int(num_players)

    # -- records ---------------------------------------------------------------
    def new_records(self, n: int) -> np.ndarray:
        """``n`` zeroed records (set-up happens in ``init``).

        Under ``NUMBA_DISABLE_JIT=1`` rows give attribute access to fields
        (``rec.hand``), so the kernels run unchanged as plain Python.
        """
        return as_kernel_array(np.zeros(n, self.record_dtype))

    def new_game(self, seed: int) -> np.ndarray:
        """A 1-element record array holding a freshly set-up game."""
        recs = self.new_records(1)
        driver.single_reset(recs, self.cfg, np.uint64(seed), self.num_players)
        return recs

    # -- state dicts: the parts every game shares --------------------------------
    def check_state_header(self, state: Any, keys: set[str], optional: set[str]) -> None:
        """A state dict is a dict of exactly ``keys`` (``optional`` may be left out),
        of this game and of this env's player count; ValueError/TypeError otherwise."""
        if not isinstance(state, dict):
            raise TypeError("a state is a dict")
        unknown = set(state) - keys
        missing = keys - optional - set(state)
        if unknown or missing:
            raise ValueError(
                f"state dict: unknown keys {sorted(unknown)}, missing {sorted(missing)}"
            )
        if state["game"] != self.name:
            raise ValueError(f"state is of game {state['game']!r}, not {self.name!r}")
        if state["num_players"] != self.num_players:
            raise ValueError(
                f"state has {state['num_players']} players, this env {self.num_players}"
            )

    @staticmethod
    def rng_to_dict(rec: np.void) -> dict[str, int]:
        """The record's generator as ``{"key": int, "counter": int}`` (C1)."""
        return {"key": int(rec["rng_key"]), "counter": int(rec["rng_ctr"])}

    @staticmethod
    def load_rng(rec: np.void, state: dict[str, Any]) -> None:
        """Set the record's generator from ``state["rng"]`` (default: key 0, counter 0)."""
        rng = state.get("rng", {"key": 0, "counter": 0})
        if not isinstance(rng, dict) or set(rng) != {"key", "counter"}:
            raise ValueError("rng must be {'key': int, 'counter': int}")
        rec["rng_key"] = np.uint64(rng["key"])
        rec["rng_ctr"] = np.uint64(rng["counter"])

    # -- spaces ----------------------------------------------------------------
    @property
    def obs_low(self) -> float:
        return 0.0

    @property
    @abc.abstractmethod
    def obs_high(self) -> float:
        """An upper bound of every observation entry (for the Box space)."""

    # -- for people ------------------------------------------------------------
    @abc.abstractmethod
    def action_name(self, rec: np.void, action: int) -> str:
        """A readable name of ``action`` in the position ``rec`` (for CLIs and logs)."""

    @abc.abstractmethod
    def to_dict(self, rec: np.void) -> dict[str, Any]:
        """The whole game as a plain JSON-able dict (documented on the rules page)."""

    @abc.abstractmethod
    def from_dict(self, state: dict[str, Any]) -> np.ndarray:
        """A 1-element record array from :meth:`to_dict`'s format; errors on bad input."""

    @abc.abstractmethod
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        """The table as text; ``seat`` is whose hidden information may be shown."""

    @abc.abstractmethod
    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        """The table as an ``(H, W, 3)`` uint8 picture."""

    @abc.abstractmethod
    def check_invariants(self, rec: np.void) -> None:
        """Raise AssertionError if ``rec`` breaks a rule-level invariant."""

    def scores(self, rec: np.void) -> np.ndarray:
        """Each seat's score as the rules count it (for tables and agents)."""
        return np.zeros(self.num_players)
