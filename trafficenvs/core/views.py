"""No-copy views of the kernels' arrays under another shape or dtype, for hot loops.

numba's ``reshape`` and ``view`` check shapes, strides and sizes at run time and
build the new array through general code: about 8 ns each, more than the loops that
use them here (measured on the observation and the mask). These intrinsics build the
same array structure directly, for the cases the kernels need, all C-contiguous:

- :func:`flat` a 2-D array as 1-D (``q[r, i]`` is ``flat(q)[QLEN * r + i]``);
- :func:`as_bytes` a bool or int8 array as uint8 (the mask written a byte at a time);
- :func:`as_words` a uint8 array as its whole uint64 words (``len // 8`` of them, a
  shorter tail left to the caller; 8 flags tested at once).

The views share the data (and its owner) of the array given; nothing is copied.
Under ``NUMBA_DISABLE_JIT=1`` they are the same numpy views.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic


def _view(context, builder, src_type, src_value, dst_type, n, itemsize):
    """An array of ``dst_type`` over the data of ``src_value``, ``n`` items."""
    src = context.make_array(src_type)(context, builder, src_value)
    dst = context.make_array(dst_type)(context, builder)
    size = context.get_constant(types.intp, itemsize)
    context.populate_array(dst, data=builder.bitcast(src.data, dst.data.type),
                           shape=cgutils.pack_array(builder, [n]),
                           strides=cgutils.pack_array(builder, [size]),
                           itemsize=size, meminfo=src.meminfo, parent=src.parent)
    return impl_ret_borrowed(context, builder, dst_type, dst._getvalue())


@intrinsic
def flat(typingctx, arr):
    """A C-contiguous 2-D array as the 1-D array of the same items."""
    if not isinstance(arr, types.Array) or arr.ndim != 2 or arr.layout != "C":
        return None
    sig = types.Array(arr.dtype, 1, "C")(arr)

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        rows, cols = cgutils.unpack_tuple(builder, src.shape)
        return _view(context, builder, signature.args[0], args[0], signature.return_type,
                     builder.mul(rows, cols), context.get_abi_sizeof(
                         context.get_data_type(arr.dtype)))

    return sig, codegen


@intrinsic
def as_bytes(typingctx, arr):
    """A C-contiguous 1-D array of one-byte items (bool, int8, uint8) as uint8."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.layout != "C" or \
            arr.dtype not in (types.boolean, types.int8, types.uint8):
        return None
    sig = types.Array(types.uint8, 1, "C")(arr)

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        [n] = cgutils.unpack_tuple(builder, src.shape)
        return _view(context, builder, signature.args[0], args[0], signature.return_type,
                     n, 1)

    return sig, codegen


@intrinsic
def as_words(typingctx, arr):
    """A C-contiguous 1-D uint8 array as its ``len // 8`` whole uint64 words."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.layout != "C" or \
            arr.dtype != types.uint8:
        return None
    sig = types.Array(types.uint64, 1, "C", aligned=False)(arr)

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        [n] = cgutils.unpack_tuple(builder, src.shape)
        words = builder.lshr(n, context.get_constant(types.intp, 3))
        return _view(context, builder, signature.args[0], args[0], signature.return_type,
                     words, 8)

    return sig, codegen


if numba.config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: the same views in plain numpy

    def flat(arr):  # noqa: F811
        return arr.reshape(-1)

    def as_bytes(arr):  # noqa: F811
        return arr.view(np.uint8)

    def as_words(arr):  # noqa: F811
        return arr[: len(arr) // 8 * 8].view(np.uint64)
