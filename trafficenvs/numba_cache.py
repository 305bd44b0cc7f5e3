"""Where numba keeps the compiled kernels of this package, and why there.

Numba invalidates a cached function only when *its own* source file changes, not
when a kernel it calls (in another file) does. Our batched drivers live in
``core/driver.py`` and call every game's kernels, so a plain ``cache=True`` would
happily load a driver compiled against yesterday's rules. We therefore point the
cache of this package's functions at a directory named after a hash of the whole
package source: any edit gives a fresh directory, an unchanged install reuses it.
That directory lives in this user's cache folder as ``platformdirs`` names it
(``user_cache_dir("trafficenvs")``: ``$XDG_CACHE_HOME/trafficenvs`` or
``~/.cache/trafficenvs`` on Linux, ``~/Library/Caches/trafficenvs`` on macOS, under
``%LOCALAPPDATA%`` on Windows). It is used only while it is private to this user
(owned by them, closed to others): compiled code is loaded from it.

The setting applies only while this package's modules are being decorated
(``with package_cache(): import ...``); other libraries' caches are untouched.
A user who sets ``NUMBA_CACHE_DIR`` keeps full control.

The cache never stops the package from importing or a game from running:

- a cache directory that cannot be created or written (a read-only or missing home,
  ``NUMBA_CACHE_DIR`` on a read-only disk) falls back to a private directory under
  the system's temporary directory, and when that fails too, to no cache at all
  (every process compiles);
- a damaged cache entry (a truncated pickle, garbage in an index or data file) is
  discarded and the function compiled afresh (and cached again where it can be);
- a cache that cannot be written (disk full) leaves the function compiled, uncached.

Each of these says so with one :class:`CacheWarning` per process (the first problem
met; later ones are silent, numba's own ``NUMBA_DEBUG_CACHE`` shows them).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

_PKG = Path(__file__).resolve().parent

#: the directory this process uses (resolved once: ``cache_dir()``), "" for no cache
_RESOLVED: str | None = None
_WARNED = False


class CacheWarning(RuntimeWarning):
    """The package's numba cache is not where it should be, or an entry was damaged."""


def _warn_once(message: str) -> None:
    global _WARNED
    if not _WARNED:
        _WARNED = True
        warnings.warn(message, CacheWarning, stacklevel=3)


def source_hash() -> str:
    """Hash of the package's numba code: every Python file that mentions numba.

    Files without numba (renders, adapters, benchmarks, agents) cannot change what
    is compiled, so editing them keeps the cache.
    """
    h = hashlib.sha256()
    for path in sorted(_PKG.rglob("*.py")):
        data = path.read_bytes()
        if b"numba" in data:
            h.update(str(path.relative_to(_PKG)).encode())
            h.update(data)
    return h.hexdigest()[:16]


def user_cache_base() -> Path | None:
    """This user's cache folder for the package, as platformdirs names it for this
    platform (``user_cache_dir("trafficenvs")``), or None for a user without a home
    directory.

    platformdirs knows each platform's convention (XDG on Linux, ``Library/Caches`` on
    macOS, ``LOCALAPPDATA`` on Windows) so the cache goes where the system's tools look
    for (and clean) caches. Without a home, platformdirs cannot expand ``~``: it raises
    (older releases answer a relative ``~/...`` path); either way there is no per-user
    folder to trust, and the caller falls back to the per-user temporary one.
    """
    try:
        base = Path(user_cache_dir("trafficenvs"))
    except RuntimeError:  # no home directory
        return None
    return base if base.is_absolute() else None


def preferred_cache_dir() -> Path:
    """Where the cache should be: ``NUMBA_CACHE_DIR`` (the user's choice), else
    ``numba-<source hash>`` in :func:`user_cache_base`, else (no home directory) in the
    per-user temporary folder, never shared: its owner is checked before use."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    base = user_cache_base()
    if base is None:
        return _temp_base() / f"numba-{source_hash()}"
    return base / f"numba-{source_hash()}"


def _private(path: Path) -> bool:
    """Whether ``path`` is a directory (a link is followed, and its target judged) owned
    by this user and closed to others; one this user owns is closed (mode 0700) on the
    way. Compiled code is loaded from the cache: a folder someone else owns or can
    write could plant it."""
    try:
        st = path.stat()
        if not stat.S_ISDIR(st.st_mode):
            return False
        if hasattr(os, "getuid"):
            if st.st_uid != os.getuid():
                return False
            if st.st_mode & 0o077:
                os.chmod(path, 0o700)
        return True
    except OSError:
        return False


def _writable(path: Path) -> bool:
    """Create ``path`` if needed (closed to others) and check a file can be written in it."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _temp_base() -> Path:
    """This user's folder under the temporary directory (its owner checked by callers)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"trafficenvs-numba-{uid}"


def _private_temp_dir() -> Path | None:
    """A per-user directory under the temporary directory, owned by this user and
    closed to others (a shared ``/tmp`` must not let anyone plant compiled code)."""
    base = _temp_base()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        st = base.lstat()
        if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != uid) \
                or st.st_mode & 0o077:
            return None
    except OSError:
        return None
    path = base / f"numba-{source_hash()}"
    return path if _writable(path) else None


def cache_dir() -> Path | None:
    """The directory this package's numba cache uses in this process (None: no cache).

    The preferred directory (:func:`preferred_cache_dir`) if it can be written, else a
    private temporary one, else none; the fallback is decided once and warned once.
    """
    global _RESOLVED
    if _RESOLVED is None:
        want = preferred_cache_dir()
        mine = bool(os.environ.get("NUMBA_CACHE_DIR"))  # the user's choice: theirs to secure
        if _writable(want) and (mine or (_private(want.parent) and _private(want))):
            _RESOLVED = str(want)
        else:
            tmp = _private_temp_dir()
            _RESOLVED = "" if tmp is None else str(tmp)
            where = f"caching in {tmp}" if tmp is not None else \
                "running uncached (every process compiles)"
            _warn_once(f"trafficenvs: cannot write numba's cache directory {want} (or "
                       f"it is not private to this user); {where}")
    return Path(_RESOLVED) if _RESOLVED else None


def _discard_index(cache: Any) -> None:
    """Remove a function's cache index (its data files are overwritten by the next save)."""
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    if index:
        with contextlib.suppress(OSError):
            os.unlink(index)


def _guard(cache: Any, name: str) -> None:
    """Make one function's numba cache survive damaged entries and failed writes."""
    load, save = cache.load_overload, cache.save_overload

    def load_overload(sig: Any, target_context: Any) -> Any:
        try:
            return load(sig, target_context)
        except Exception as exc:  # a damaged entry: unpickling or rebuilding it failed
            _discard_index(cache)
            _warn_once(f"trafficenvs: discarded a damaged numba cache entry of {name!r} "
                       f"({type(exc).__name__}: {exc}); compiling it again")
            return None

    def save_overload(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        except Exception as exc:
            _discard_index(cache)  # a damaged index also breaks saving: start it afresh
            try:
                save(sig, data)
            except Exception:
                _warn_once(f"trafficenvs: cannot save {name!r} in numba's cache "
                           f"({type(exc).__name__}: {exc}); it stays compiled, uncached")

    cache.load_overload = load_overload
    cache.save_overload = save_overload


@contextmanager
def package_cache() -> Iterator[None]:
    """Decorate numba functions inside this block to cache them under ``cache_dir()``.

    Inside the block a function that cannot be cached at all (numba finds no
    writable place: ``cannot cache function ...: no locator available``) runs
    uncached, and every cached one is guarded against damaged entries (see the
    module's docstring).
    """
    from numba.core import config
    from numba.core.dispatcher import Dispatcher

    where = cache_dir()
    old_dir = config.CACHE_DIR
    old_enable = Dispatcher.enable_caching
    if getattr(old_enable, "_trafficenvs", False):  # nested: the outer block guards
        yield
        return

    def enable_caching(self: Any) -> None:
        name = getattr(self.py_func, "__qualname__", "?")
        if where is None:
            return  # no cache: the dispatcher keeps its NullCache
        try:
            old_enable(self)
        except RuntimeError as exc:  # no locator available
            _warn_once(f"trafficenvs: numba cannot cache {name!r} ({exc}); running it "
                       "uncached")
            return
        _guard(self._cache, name)

    enable_caching._trafficenvs = True  # type: ignore[attr-defined]
    config.CACHE_DIR = "" if where is None else str(where)
    Dispatcher.enable_caching = enable_caching
    try:
        yield
    finally:
        Dispatcher.enable_caching = old_enable
        config.CACHE_DIR = old_dir
