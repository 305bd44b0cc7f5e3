"""Finding games by id: ``make``, ``make_vec``, ``list_envs``, PettingZoo registration.

The games are not listed here: each declares itself in its ``spec.py``
(:class:`~trafficenvs.core.spec.GameSpec`) and this module reads the specs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pettingzoo import AECEnv, ParallelEnv

from trafficenvs.core.aec import TrafficAECEnv, wrap
from trafficenvs.core.game import Game
from trafficenvs.core.spec import GameSpec, add_spec, get_spec, specs
from trafficenvs.core.vector import TrafficVecEnv

if TYPE_CHECKING:
    from trafficenvs.core.cuda_vector import CudaVecEnv


def list_envs() -> list[str]:
    """The current ids of every game, e.g. ``["traffic_jam-v1", ...]``."""
    return [spec.env_id for spec in specs()]


def game_name(env_id: str) -> str:
    """Normalise ``"trafficenvs/traffic_jam-v1"``, ``"traffic_jam_v1"`` or ``"traffic_jam"``
    to the game's name (ValueError naming the known ids otherwise)."""
    if not isinstance(env_id, str):
        raise TypeError(f"an env id is a str such as {list_envs()[0]!r}, got {env_id!r}")
    name = env_id.split("/", 1)[1] if env_id.startswith("trafficenvs/") else env_id
    for spec in specs():
        if name in (spec.name, spec.env_id, f"{spec.name}_v{spec.version}"):
            return spec.name
    for spec in specs():
        for sep in ("-v", "_v"):
            head, _, ver = name.rpartition(sep)
            if head == spec.name and ver.isdigit() and int(ver) != spec.version:
                raise ValueError(
                    f"{env_id!r} is not available: {spec.title} is at version {spec.version}; "
                    f"use {spec.env_id!r} (the version changes when the observations change, "
                    f"and the observations of v{spec.version} replaced the older ones)"
                )
    import difflib

    names = [s.name for s in specs()] + list_envs()
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"unknown env {env_id!r}{hint}; known: {list_envs()}")


def game_class(env_id: str) -> type[Game]:
    """The :class:`Game` class of ``env_id`` (importing the game on first use)."""
    return get_spec(game_name(env_id)).load()


def make_game(env_id: str, **options: Any) -> Game:
    """The :class:`Game` configuration for ``env_id``; unknown options are errors."""
    cls = game_class(env_id)
    params = inspect.signature(cls.__init__).parameters
    unknown = sorted(set(options) - set(params) - {"self"})
    if unknown:
        valid = sorted(set(params) - {"self"})
        raise TypeError(f"{cls.name}: unknown options {unknown}; valid options are {valid}")
    return cls(**options)


def as_game(game: Game | str, num_players: int | None = None, **options: Any) -> Game:
    """``game`` itself if it is a :class:`Game`, else the game of env id ``game`` made with
    ``num_players`` (if given) and ``options``.

    Why: the agents, the arena and the trainers take either; a caller that already holds
    the game (with its options, deck or map) passes it once instead of having each of
    them rebuild it from a name. A Game carries its options, so options given with one
    are an error rather than a silent choice between the two (``num_players`` may be
    given if it is the game's own).
    """
    if isinstance(game, Game):
        if num_players is not None and num_players != game.num_players:
            raise ValueError(f"num_players={num_players}, but the game is for "
                             f"{game.num_players} players")
        if options:
            raise TypeError(f"options {sorted(options)} given with a Game: a Game carries its "
                            f"own options (make it with them, or pass its env id)")
        return game
    if not isinstance(game, str):
        raise TypeError(f"game must be a Game or an env id (a str), got {type(game).__name__}")
    if num_players is not None:
        options["num_players"] = num_players
    return make_game(game, **options)


def make(
    env_id: str,
    *,
    render_mode: str | None = None,
    max_cycles: int | None = None,
    wrapped: bool = True,
    render_seat: int | None = None,
    **options: Any,
) -> AECEnv:
    """A PettingZoo AEC env of ``env_id`` with the game ``options`` (e.g. ``num_players``).

    ``wrapped=True`` applies PettingZoo's usual wrappers (illegal move = -1 and the
    game ends); ``wrapped=False`` gives the raw env, which raises on illegal moves.
    """
    env = TrafficAECEnv(
        make_game(env_id, **options), render_mode=render_mode, max_cycles=max_cycles,
        render_seat=render_seat,
    )
    return wrap(env) if wrapped else env


def make_vec(env_id: str | Game, *, num_envs: int, max_cycles: int | None = None,
             num_threads: int | None = None, device: str = "cpu",
             **options: Any) -> TrafficVecEnv | CudaVecEnv:
    """A vectorised env: ``num_envs`` games of ``env_id`` stepped together (``env_id`` may
    also be a :class:`Game`, made with its options: see :func:`as_game`).

    ``device``: ``"cpu"`` (numba's threads; ``num_threads`` of them, 1 = serial, None =
    numba's current setting; see :class:`~trafficenvs.core.vector.TrafficVecEnv`), or
    ``"cuda"``/``"cuda:K"``: the same rules compiled for a GPU, one thread per game,
    every buffer in GPU memory and torch CUDA tensors out (needs the ``[gpu]`` extra;
    see :class:`~trafficenvs.core.cuda_vector.CudaVecEnv` and docs/gpu.md).
    """
    from trafficenvs.core.cuda_vector import parse_device

    kind, index = parse_device(device)
    game = as_game(env_id, **options)
    if kind == "cpu":
        return TrafficVecEnv(game, num_envs=num_envs, max_cycles=max_cycles,
                             num_threads=num_threads)
    if num_threads is not None:
        raise ValueError("num_threads is for device='cpu'; a GPU env runs one CUDA "
                         "thread per game")
    from trafficenvs.core.cuda_vector import CudaVecEnv

    return CudaVecEnv(game, num_envs=num_envs, max_cycles=max_cycles, device=f"cuda:{index}")


def entry_points(name: str) -> tuple[Callable[..., AECEnv], Callable[..., AECEnv],
                                     Callable[..., TrafficVecEnv]]:
    """A game package's ``env()``, ``raw_env()`` and ``vec_env()``, PettingZoo style:
    ``env()`` has the usual wrappers (like ``connect_four_v3.env()``), ``raw_env()``
    is unwrapped (raises ``ValueError`` on illegal moves), ``vec_env(num_envs)`` steps
    ``num_envs`` games together."""

    def env(**kwargs: Any) -> AECEnv:
        return make(name, **kwargs)

    def raw_env(**kwargs: Any) -> AECEnv:
        return make(name, wrapped=False, **kwargs)

    def vec_env(num_envs: int, **kwargs: Any) -> TrafficVecEnv:
        return make_vec(name, num_envs=num_envs, **kwargs)

    return env, raw_env, vec_env


def _entry_point(name: str):
    def env(**kwargs: Any) -> AECEnv:
        return make(name, **kwargs)

    env.__name__ = f"{name}_env"
    return env


def register_pettingzoo() -> None:
    """Register every game in PettingZoo's registry as ``trafficenvs/<game>-v<version>``."""
    import pettingzoo

    for spec in specs():
        env_id = f"trafficenvs/{spec.env_id}"
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=_entry_point(spec.name))


def register_game(spec: GameSpec) -> GameSpec:
    """Add a game that lives outside this package: its spec joins the table (``make``,
    ``list_envs``, the agents, the benchmark), its kernels are registered and its ids
    enter PettingZoo's registry. Games inside ``trafficenvs/`` need no call."""
    add_spec(spec)
    spec.load()
    register_pettingzoo()
    return spec


def make_parallel(
    env_id: str,
    *,
    render_mode: str | None = None,
    max_cycles: int | None = None,
    render_seat: int | None = None,
    illegal_reward: float | None = -1.0,
    **options: Any,
) -> ParallelEnv:
    """A PettingZoo ``ParallelEnv`` of ``env_id``, for a game whose turns are simultaneous
    choices of every player (Traffic Jam: one ``step`` per stage, every agent's action at
    once; ``docs/rules/traffic_jam.md``, Parallel API). The game ``options`` and
    ``render_mode``, ``max_cycles`` (steps, i.e. moves per player), ``render_seat`` are
    those of :func:`make`. ``illegal_reward`` (default -1) ends the game on an illegal
    action with that reward for each offender, 0 for the others, as :func:`make`'s
    wrapped env does; ``None`` raises ``ValueError`` instead (like ``wrapped=False``).

    A turn-based game has no parallel env (its players do not choose at once: use
    :func:`make`); asking for one is a ``ValueError`` naming the games that have one.
    """
    import importlib

    from trafficenvs.numba_cache import package_cache

    game = make_game(env_id, **options)
    target = getattr(game, "parallel_env_class", None)
    if target is None:
        have = [s.env_id for s in specs()
                if getattr(s.load(), "parallel_env_class", None) is not None]
        raise ValueError(f"{game.name} is turn-based (its players never choose at once), so "
                         f"it has no parallel env; use trafficenvs.make({env_id!r}). Games "
                         f"with one: {have}")
    module, _, name = target.partition(":")
    with package_cache():  # the parallel env's compiled verbs cache with the package's
        cls = getattr(importlib.import_module(module), name)
    return cls(game, render_mode=render_mode, max_cycles=max_cycles, render_seat=render_seat,
               illegal_reward=illegal_reward)


def register_pettingzoo_parallel() -> None:
    """Register every game that has a parallel env (:func:`make_parallel`) in PettingZoo's
    parallel registry as ``trafficenvs/<game>-v<version>``:
    ``pettingzoo.make("parallel", "trafficenvs/traffic_jam-v1")``."""
    import pettingzoo

    for spec in specs():
        env_id = f"trafficenvs/{spec.env_id}"
        if getattr(spec.load(), "parallel_env_class", None) is None:
            continue
        if env_id not in pettingzoo.parallel_registry:
            def entry(name: str = spec.name, **kwargs: Any) -> ParallelEnv:
                return make_parallel(name, **kwargs)

            entry.__name__ = f"{spec.name}_parallel_env"
            pettingzoo.register("parallel", env_id, entry_point=entry)
