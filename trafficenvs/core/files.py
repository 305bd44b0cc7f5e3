"""Reading the option files users give (decks, tile sets, maps): only regular files of
bounded size, and every failure as the package's own error naming the file.

A path given as ``deck=`` may be anything: a FIFO (reading it blocks forever), a
device (``/dev/zero`` reads until memory runs out), a folder, a file of another
encoding or a JSON nesting deep enough to exhaust Python's recursion. Each is refused
here before or while reading, with a ``ValueError`` (``FileNotFoundError`` for a path
that is not there) that names the file.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

#: the largest option file read (the shipped ones are a few kilobytes)
MAX_FILE_BYTES = 1 << 20


def read_text(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of ``path``, a regular file of at most ``limit`` bytes."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {path}") from None
    except (OSError, ValueError) as err:  # a name the system refuses (a NUL in it)
        raise ValueError(f"{what} {path}: cannot read it ({err})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what} {path}: not a regular file")
    if st.st_size > limit:
        raise ValueError(f"{what} {path}: {st.st_size} bytes, more than the {limit} read")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as err:
        raise ValueError(f"{what} {path}: cannot read it ({err.strerror or err})") from None
    if len(data) > limit:
        raise ValueError(f"{what} {path}: more than the {limit} bytes read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{what} {path}: not UTF-8 text ({err.reason} at byte "
                         f"{err.start})") from None


def read_json(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> Any:
    """The JSON value in ``path`` (see :func:`read_text`)."""
    text = read_text(path, what, limit)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} {path}: not valid JSON ({err})") from None
    except RecursionError:
        raise ValueError(f"{what} {path}: JSON nested too deeply") from None


class OptionTypeError(TypeError, ValueError):
    """A game option of the wrong type (a ``TypeError``, and a ``ValueError`` as every
    bad option value is)."""


def option_name(value: Any, where: str, max_len: int = 64) -> str:
    """A name from a user's file or dict: a string of printable text (no lone
    surrogates, which no terminal or file can print), at most ``max_len`` characters."""
    if not isinstance(value, str):
        raise OptionTypeError(f"{where}: a name must be a string, got {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{where}: the name {value!r} is not printable text") from None
    if not value.isprintable() or len(value) > max_len:
        raise ValueError(f"{where}: a name is printable text of at most {max_len} "
                         f"characters, got {value!r}")
    return value


def option_bool(value: Any, name: str) -> bool:
    """A game option that is ``True`` or ``False`` (numpy's bool too; 0, 1 and strings
    are refused: ``shaping="no"`` must not mean True)."""
    import numpy as np

    if not isinstance(value, (bool, np.bool_)):
        raise OptionTypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def option_int(value: Any, name: str, lo: int, hi: int) -> int:
    """A game option that is an int in ``lo..hi`` (numpy integers are ints; bools,
    floats and strings are not)."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise OptionTypeError(f"{name} must be an int in {lo}..{hi}, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be an int in {lo}..{hi}, got {value!r}")
    return int(value)


__all__ = ["MAX_FILE_BYTES", "OptionTypeError", "option_bool", "option_int", "option_name",
           "read_json", "read_text"]
