"""Every compiled function of the package is a kernel (``core/jit.py``): cached and
without NRT, unless it is one of the few that allocate (and no kernel calls them) or a
parallel driver (numba's parallel loops need NRT).

Why a test: numba compiles a function that sets no options of its own with its first
caller's, so one plain ``@njit`` among the kernels would be built with or without NRT
depending on which caller compiled it first."""

from __future__ import annotations

import importlib
import pkgutil

import numba
import pytest
from numba.core.caching import NullCache

import trafficenvs
from trafficenvs.core.jit import NO_NRT, kernel

#: the compiled functions that allocate, so they keep NRT (and no kernel calls them)
ALLOCATING = {
    "trafficenvs.core.driver.illegal_rows",  # a list of the illegal rows, for an error
    "trafficenvs.jakarta_traffic.strategy.greedy._drive_targets",  # a test helper
}


def _dispatchers():
    for info in pkgutil.walk_packages(trafficenvs.__path__, "trafficenvs."):
        if info.name.startswith(("trafficenvs.rllib", "trafficenvs.bench")):
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, numba.core.registry.CPUDispatcher) and \
                    obj.py_func.__module__ == info.name:
                yield f"{info.name}.{name}", obj


def test_the_installed_numba_compiles_kernels_without_nrt():
    """The fallback (kernels with NRT) is for a numba that drops its ``_nrt`` option;
    the numba this project installs has it, so a lost speed-up fails here."""
    assert NO_NRT == {"_nrt": False}


def test_every_compiled_function_is_a_kernel_or_a_known_exception():
    plain = []
    for name, d in _dispatchers():
        opts = d.targetoptions
        if opts.get("parallel") or name in ALLOCATING:
            continue
        cached = not isinstance(d._cache, NullCache)  # noqa: SLF001 (numba keeps it there)
        if opts.get("_nrt", True) or not cached:
            plain.append(name)
    assert plain == [], f"compiled with NRT or uncached (use @kernel): {plain}"


def test_a_kernel_that_allocates_fails_to_compile_instead_of_running():
    import numpy as np

    @kernel
    def allocates(n):
        return np.zeros(n)

    with pytest.raises(numba.core.errors.TypingError):
        allocates(3)
