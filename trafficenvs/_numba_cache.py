"""Where numba keeps the compiled kernels of this package, and why there.

Numba invalidates a cached function only when *its own* source file changes, not
when a kernel it calls (in another file) does. Our batched drivers live in
``core/driver.py`` and call every game's kernels, so a plain ``cache=True`` would
happily load a driver compiled against yesterday's rules. We therefore point the
cache of this package's functions at a directory named after a hash of the whole
package source: any edit gives a fresh directory, an unchanged install reuses it.

The setting applies only while this package's modules are being decorated
(``with package_cache(): import ...``); other libraries' caches are untouched.
A user who sets ``NUMBA_CACHE_DIR`` keeps full control.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_PKG = Path(__file__).resolve().parent


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


def cache_dir() -> Path:
    """The directory this package's numba cache uses in this process."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "trafficenvs" / f"numba-{source_hash()}"


@contextmanager
def package_cache() -> Iterator[None]:
    """Decorate numba functions inside this block to cache them under ``cache_dir()``."""
    from numba.core import config

    old = config.CACHE_DIR
    config.CACHE_DIR = str(cache_dir())
    try:
        yield
    finally:
        config.CACHE_DIR = old
