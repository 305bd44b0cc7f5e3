"""One manifest per game: the :class:`GameSpec`, and the table of known games.

A game package declares itself once, in its ``spec.py``::

    SPEC = GameSpec(
        name="traffic_jam", version=0, title="Traffic Jam",
        game="trafficenvs.traffic_jam.game:TrafficJamGame",
        verbs="trafficenvs.traffic_jam.verbs",
        greedy="trafficenvs.traffic_jam.strategy.greedy:TrafficJamGreedy",
        bench_options={"num_players": 4},
    )

and everything that used to list the games by hand reads the specs instead: the
registry (``make``, ``list_envs``, PettingZoo's registry), the package import (which
registers each game's verbs), the agents' table of rule-based players and the
benchmark's default configurations.

The games of this package are found by looking for ``trafficenvs/<pkg>/spec.py``;
a game that lives elsewhere (a user's, or the template game of the tests) joins
with ``trafficenvs.register_game``. Names in a spec are ``"module:attribute"`` strings, and
:meth:`GameSpec.load` imports the game and registers its verbs. (Reading a spec does
import its game's package, whose ``__init__`` imports the game's modules: compiling
is lazy, so that costs imports, not compilation.)

Every game has the same shape (the template game of the tests too): ``spec.py`` (this
manifest), ``game.py`` (options and names), ``state.py`` (state dicts and invariants),
``render.py``, ``verbs.py`` (the verbs gathered: the module ``verbs`` names, imported by
:meth:`GameSpec.load` only), ``rules/`` (the rules as numba kernels over one record,
``rules/layout.py`` first) and ``strategy/`` (the rule-based player and what the
searches use).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trafficenvs.core.game import Game


def _resolve(target: str) -> Any:
    mod, _, attr = target.partition(":")
    module = importlib.import_module(mod)
    return getattr(module, attr) if attr else module


@dataclass(frozen=True)
class SearchPreset:
    """The setting a bare search name (``flatmc``, ``mcts``, ``gumbel``) stands for in
    one game, and what it measured against the game's rule-based player (2 players,
    seats rotated, ``python -m benchmarks.search``): the strong settings of a search
    depend on the game (how many legal moves, how long a turn is), and a user who
    types the bare name should get the strong one, not a default that loses."""

    spec: str
    #: win share against greedy, its number of games, and milliseconds per decision
    vs_greedy: float | None = None
    games: int = 0
    ms_per_decision: float | None = None


@dataclass(frozen=True)
class GameSpec:
    """What the rest of the package needs to know about one game.

    ``game``, ``verbs`` and ``greedy`` are import paths (``"module:Class"``,
    ``"module"``); ``bench_options`` is the configuration the benchmark measures and
    ``doc_options`` the one whose layouts the rules page ``rules_page`` shows (both
    passed to the game class as keyword options).
    """

    name: str
    version: int
    title: str
    game: str
    #: the game's verbs module (``<game>.verbs``): every verb it defines is registered
    verbs: str
    greedy: str | None = None
    summary: str = ""
    bench_options: dict[str, Any] = field(default_factory=dict)
    doc_options: dict[str, Any] = field(default_factory=dict)
    #: the rules page, relative to the repository root (None for games outside it)
    rules_page: str | None = None
    #: the vectorised env runs its loops on one thread below this many games, whatever
    #: its ``num_threads`` (None: ``core.threads.SERIAL_BELOW``, the package-wide
    #: threshold). For a game whose step is short, the thread pool costs more than it
    #: gives over a wider range of batch sizes than the shared threshold covers; the
    #: spec says where its own break-even lies, as measured.
    parallel_from: int | None = None
    #: per search name, the setting the bare name means in this game (and its figures)
    search_presets: dict[str, SearchPreset] = field(default_factory=dict)

    @property
    def env_id(self) -> str:
        """The current id, ``f"{name}-v{version}"``."""
        return f"{self.name}-v{self.version}"

    def load(self) -> type[Game]:
        """Import the game (registering its verbs, once) and return its ``Game`` class."""
        cls = _LOADED.get(self.name)
        if cls is not None:
            return cls
        from trafficenvs.core.verbs import register_module
        from trafficenvs.numba_cache import package_cache

        with package_cache():
            register_module(_resolve(self.verbs))
            cls = _resolve(self.game)
        _LOADED[self.name] = cls
        return cls

    def greedy_class(self) -> Callable[..., Any] | None:
        """The rule-based player's class (imported on first use), or None."""
        if self.greedy is None:
            return None
        from trafficenvs.numba_cache import package_cache

        with package_cache():  # its numba code caches with the package's
            return _resolve(self.greedy)


_SPECS: dict[str, GameSpec] = {}
#: the Game class of every spec loaded so far (``make_game`` loads on every call)
_LOADED: dict[str, type] = {}
_PKG = Path(__file__).resolve().parent.parent


def _discover() -> None:
    """Read ``spec.py`` of every game package of trafficenvs (once)."""
    if _SPECS:
        return
    from trafficenvs.numba_cache import package_cache

    for info in sorted(pkgutil.iter_modules([str(_PKG)]), key=lambda m: m.name):
        if info.ispkg and (_PKG / info.name / "spec.py").exists():
            with package_cache():  # the game package's __init__ may import its kernels
                spec = getattr(importlib.import_module(f"trafficenvs.{info.name}.spec"), "SPEC",
                               None)
            if spec is None:  # core/spec.py is this module, not a game's
                continue
            if spec.name != info.name:
                raise RuntimeError(f"trafficenvs/{info.name}/spec.py names {spec.name!r}")
            _SPECS.setdefault(spec.name, spec)


def add_spec(spec: GameSpec) -> GameSpec:
    """Add the spec of a game that lives outside this package (idempotent for the same
    spec); ``trafficenvs.register_game`` also loads it and registers it with PettingZoo."""
    if not isinstance(spec, GameSpec):
        raise TypeError(f"a game is registered by its GameSpec, got {spec!r}")
    _discover()
    old = _SPECS.get(spec.name)
    if old is not None and old != spec:
        raise ValueError(f"a different game is already registered as {spec.name!r}")
    _SPECS[spec.name] = spec
    return spec


def specs() -> list[GameSpec]:
    """Every known game's spec: the package's games (by name), then registered ones."""
    _discover()
    return list(_SPECS.values())


def get_spec(name: str) -> GameSpec:
    """The spec of game ``name`` (ValueError naming the known games otherwise)."""
    _discover()
    try:
        return _SPECS[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; known: {sorted(_SPECS)}") from None
