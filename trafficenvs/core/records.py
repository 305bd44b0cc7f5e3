"""Record arrays as the kernels take them, compiled or not.

Compiled kernels read a record's fields as attributes (``rec.hand``). Under
``NUMBA_DISABLE_JIT=1`` the same kernels run as Python, so a record array must give
attribute access too: :func:`as_kernel_array` wraps it then (and is a no-op when the
JIT is on). Kept apart from ``game.py`` and ``driver.py`` so that both can use it
without importing each other.
"""

from __future__ import annotations

import numba
import numpy as np


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
