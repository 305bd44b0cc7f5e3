"""The Python-side description of one game configuration.

A :class:`Game` holds what is fixed for an env's lifetime (player count, deck or
map, options): the configuration record passed to every kernel, the sizes of the
observation and action spaces, and the conversions a person needs (action names,
state dicts, renders). The kernels themselves are registered from the game's
:class:`~trafficenvs.core.spec.GameSpec` (``spec.load()``), and the game's name and
version come from that spec: it is the one place a game is declared.
"""

from __future__ import annotations

import abc
import copy
from typing import Any, ClassVar

import numpy as np

from trafficenvs.core.layout import Layout
from trafficenvs.core.records import as_kernel_array
from trafficenvs.core.spec import GameSpec
from trafficenvs.core.statedict import StateReader, read_rng


class Game(abc.ABC):
    """One configuration of one game. Subclasses set ``spec`` and the class attributes.

    Subclasses also build, at construction, ``obs_layout`` and ``action_layout``
    (:class:`~trafficenvs.core.layout.Layout`): the named fields of an observation
    row and the named ranges of the action space for this configuration.
    """

    #: the game's manifest; ``name`` and ``version`` are read from it
    spec: ClassVar[GameSpec]
    #: short name, e.g. ``"traffic_jam"``; the env id is ``f"{name}-v{version}"``
    name: ClassVar[str]
    version: ClassVar[int]
    record_dtype: ClassVar[np.dtype]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    #: truncation default (moves per player) when ``max_cycles`` is not given
    default_max_cycles: ClassVar[int] = 10_000
    #: observation entries are small integers with exact bounds (``obs_high``); one
    #: byte each keeps a step's output small (see docs/architecture.md, observations)
    obs_dtype: ClassVar[np.dtype] = np.dtype(np.uint8)

    num_players: int
    num_actions: int
    obs_dim: int
    obs_layout: Layout
    action_layout: Layout

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("spec")
        if spec is not None:
            cls.name = spec.name
            cls.version = spec.version

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

    # -- state dicts: the parts every game shares --------------------------------
    def state_reader(self, state: Any, keys: set[str], optional: set[str]) -> StateReader:
        """The typed reader of a state dict of exactly ``keys`` (``optional`` may be left
        out), of this game and of this env's player count (``StateDictError``, a
        ValueError, otherwise)."""
        return StateReader(state, game=self.name, num_players=self.num_players, keys=keys,
                           optional=optional)

    @staticmethod
    def rng_to_dict(rec: np.void) -> dict[str, int]:
        """The record's generator as ``{"key": int, "counter": int}`` (C1)."""
        return {"key": int(rec["rng_key"]), "counter": int(rec["rng_ctr"])}

    @staticmethod
    def load_rng(rec: np.void, state: dict[str, Any]) -> None:
        """Set the record's generator from ``state["rng"]`` (default: key 0, counter 0)."""
        key, counter = read_rng(state)
        rec["rng_key"] = np.uint64(key)
        rec["rng_ctr"] = np.uint64(counter)

    def with_horizon(self, max_moves: int) -> Game:
        """This configuration for an env that cuts games off after ``max_moves`` moves.

        The observation shows how much of that limit is left (``horizon_left``, see
        ``core/clock.py``), so the limit is part of the configuration record the kernels
        read (``cfg.horizon``). Returns ``self`` when the limit is already set or the
        game's record has no ``horizon`` field; otherwise a shallow copy with its own
        configuration record (the game object passed in is not changed).
        """
        cfg = self.cfg
        if "horizon" not in cfg.dtype.names or int(cfg[0]["horizon"]) == int(max_moves):
            return self
        other = copy.copy(self)
        new = cfg.copy()
        new[0]["horizon"] = int(max_moves)
        other.cfg = new
        return other

    # -- spaces ----------------------------------------------------------------
    @property
    def obs_low(self) -> np.ndarray:
        """The lower bound of every observation entry: 0."""
        return np.zeros(self.obs_dim, self.obs_dtype)

    @property
    def obs_high(self) -> np.ndarray:
        """The exact upper bound of every observation entry, from the layout."""
        return self.obs_layout.high().astype(self.obs_dtype)

    def observation_box(self) -> Any:
        """The observation row's ``gymnasium.spaces.Box`` (exact bounds, ``obs_dtype``)."""
        from gymnasium import spaces

        return spaces.Box(self.obs_low, self.obs_high, (self.obs_dim,), dtype=self.obs_dtype)

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
