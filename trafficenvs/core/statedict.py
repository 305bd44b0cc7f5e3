"""Reading a state dict: typed field readers with one error style for every game.

A state dict is the plain JSON-able form of one game (``env.state_dict()``), and
people write them by hand for tests and analysis. A loader must therefore refuse
bad input with a message that says *which key* (``pending[1].car``), *what was
expected* and *what was given*, and must never coerce silently (``1.5`` is not a
town, ``False`` is not a list). Every game's ``from_dict`` reads through these
functions, so the rules of reading are written once:

- integers are ``int`` (not ``bool``, not ``float``), and range-checked;
- booleans are ``bool``;
- lists and dicts are checked for length and keys before their items are read.

Errors are :class:`StateDictError` (a ``ValueError``); a value of the wrong type
raises :class:`StateDictTypeError`, which is both a ``ValueError`` (what loaders
have always raised) and a ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

_MISSING: Any = object()


class StateDictError(ValueError):
    """A state dict that does not describe a position of this game and configuration."""


class StateDictTypeError(StateDictError, TypeError):
    """A state dict value of the wrong type (also a ``ValueError``)."""


def fail(path: str, expected: str, got: Any = _MISSING) -> StateDictError:
    """The error for ``path``: ``state dict: <path> must be <expected>, got <got>``."""
    tail = "" if got is _MISSING else f", got {got!r}"
    return StateDictError(f"state dict: {path} must be {expected}{tail}")


def _type_error(path: str, expected: str, got: Any) -> StateDictTypeError:
    return StateDictTypeError(f"state dict: {path} must be {expected}, got {got!r}")


def read_int(value: Any, path: str, lo: int | None = None, hi: int | None = None,
             what: str = "") -> int:
    """An ``int`` in ``lo..hi`` (inclusive; either end may be open)."""
    rng = (f" in {lo}..{hi}" if lo is not None and hi is not None
           else f" >= {lo}" if lo is not None else f" <= {hi}" if hi is not None else "")
    expected = f"{what or 'an int'}{rng}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error(path, expected, value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise fail(path, expected, value)
    return value


def read_bool(value: Any, path: str) -> bool:
    """A ``bool`` (``0``/``1`` and strings are refused)."""
    if not isinstance(value, bool):
        raise _type_error(path, "True or False", value)
    return value


def read_choice(value: Any, path: str, options: Sequence[Any]) -> Any:
    """One of ``options`` (compared by equality, so names or numbers)."""
    if isinstance(value, (list, dict)) or value not in options:
        raise fail(path, f"one of {list(options)}", value)
    return value


def read_list(value: Any, path: str, length: int | None = None,
              max_length: int | None = None) -> list[Any]:
    """A ``list`` (of exactly ``length`` items, or at most ``max_length``)."""
    if not isinstance(value, list):
        raise _type_error(path, "a list", value)
    if length is not None and len(value) != length:
        raise fail(path, f"a list of {length} items", len(value))
    if max_length is not None and len(value) > max_length:
        raise fail(path, f"a list of at most {max_length} items", len(value))
    return value


def read_int_list(value: Any, path: str, lo: int | None = None, hi: int | None = None,
                  length: int | None = None, distinct: bool = False) -> list[int]:
    """A list of ints in ``lo..hi``; ``distinct`` refuses repeats."""
    items = read_list(value, path, length)
    out = [read_int(v, f"{path}[{i}]", lo, hi) for i, v in enumerate(items)]
    if distinct and len(set(out)) != len(out):
        raise fail(path, "distinct values", out)
    return out


def read_dict(value: Any, path: str, keys: Collection[str],
              optional: Collection[str] = ()) -> dict[str, Any]:
    """A ``dict`` with exactly ``keys`` (those in ``optional`` may be left out)."""
    if not isinstance(value, dict):
        raise _type_error(path, f"a dict with the keys {sorted(keys)}", value)
    unknown = sorted(set(value) - set(keys))
    missing = sorted(set(keys) - set(optional) - set(value))
    if unknown or missing:
        raise StateDictError(
            f"state dict: {path}: unknown keys {unknown}, missing {missing} "
            f"(expected the keys {sorted(keys)})"
        )
    return value


class StateReader:
    """The top level of a state dict: header checks, then typed reads by key.

    ``StateReader(state, game="traffic_jam", num_players=4, keys=..., optional=...)``
    checks that ``state`` is a dict of exactly ``keys`` (``optional`` may be left
    out) and of this game and player count; then ``r.int("round", 0, 2)``,
    ``r.list("hands", n)`` and so on read one key each, with ``default`` for
    optional keys.
    """

    def __init__(self, state: Any, *, game: str, num_players: int, keys: Collection[str],
                 optional: Collection[str] = ()):
        if not isinstance(state, dict):
            raise _type_error("(top level)", "a dict", type(state).__name__)
        unknown = sorted(set(state) - set(keys))
        missing = sorted(set(keys) - set(optional) - set(state))
        if unknown or missing:
            raise StateDictError(f"state dict: unknown keys {unknown}, missing {missing}")
        self.state = state
        if not isinstance(state["game"], str):
            raise _type_error("game", "a str", state["game"])
        if state["game"] != game:
            raise StateDictError(f"state dict: game: state is of game {state['game']!r}, "
                                 f"not {game!r}")
        read_int(state["num_players"], "num_players")  # 2.0 or True is not a count
        if state["num_players"] != num_players:
            raise StateDictError(f"state dict: num_players: state has {state['num_players']} "
                                 f"players, this env {num_players}")

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        """The value of ``key`` as given (``default`` if it is absent)."""
        if key in self.state:
            return self.state[key]
        if default is _MISSING:
            raise fail(key, "given")
        return default

    def int(self, key: str, lo: int | None = None, hi: int | None = None,
            default: Any = _MISSING) -> int:
        if key not in self.state and default is not _MISSING:
            return default
        return read_int(self.raw(key), key, lo, hi)

    def bool(self, key: str, default: Any = _MISSING) -> bool:
        if key not in self.state and default is not _MISSING:
            return default
        return read_bool(self.raw(key), key)

    def choice(self, key: str, options: Sequence[Any], default: Any = _MISSING) -> Any:
        if key not in self.state and default is not _MISSING:
            return default
        return read_choice(self.raw(key), key, options)

    def list(self, key: str, length: int | None = None, default: Any = _MISSING,
             max_length: int | None = None) -> list[Any]:
        if key not in self.state and default is not _MISSING:
            return default
        return read_list(self.raw(key), key, length, max_length)

    def int_list(self, key: str, lo: int | None = None, hi: int | None = None,
                 length: int | None = None, distinct: bool = False,
                 default: Any = _MISSING) -> list[int]:
        if key not in self.state and default is not _MISSING:
            return default
        return read_int_list(self.raw(key), key, lo, hi, length, distinct)

    def dict(self, key: str, keys: Collection[str], optional: Collection[str] = (),
             default: Any = _MISSING) -> dict[str, Any] | None:
        """A nested dict (``None`` is returned as is when ``default`` is None)."""
        if key not in self.state and default is not _MISSING:
            return default
        value = self.raw(key)
        if value is None and default is None:
            return None
        return read_dict(value, key, keys, optional)

    def rng(self) -> tuple[int, int]:
        """``state["rng"]`` as ``(key, counter)`` (:func:`read_rng`)."""
        return read_rng(self.state)


def read_rng(state: dict[str, Any]) -> tuple[int, int]:
    """``state["rng"]`` as ``(key, counter)``, both uint64 (default ``(0, 0)``, C1)."""
    d = read_dict(state.get("rng", {"key": 0, "counter": 0}), "rng", ("key", "counter"))
    top = 2**64 - 1
    return read_int(d["key"], "rng.key", 0, top), read_int(d["counter"], "rng.counter", 0, top)
