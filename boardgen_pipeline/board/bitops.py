"""Bit operations on one machine word for the row kernels (the bit
rows in ``closure_rows`` and ``fog_rows``; only documented routes
into the compiler).

``trailing_zeros`` is LLVM's ``cttz`` reached through numba's public
extension API (``numba.extending.intrinsic``, "Implementing intrinsics")
and llvmlite's documented ``IRBuilder.cttz``. The kernels used numba's
``numba.cpython.unsafe.numbers.trailing_zeros`` before, which is
undocumented and has moved between releases; this is the same instruction
(``tzcnt`` on x86-64) without depending on where numba keeps it. The
typing error it raises is numba's top-level ``numba.TypingError`` (in
``numba.__all__``), not ``numba.core.errors``: nothing here reaches into
numba's internals.

``popcount`` stays a plain loop: llvmlite documents no ``ctpop`` builder
method, and the rows it counts hold few bits.
"""

from __future__ import annotations

from llvmlite import ir
from numba import TypingError, njit, types, uint64
from numba.extending import intrinsic

_ONE = uint64(1)


@intrinsic
def trailing_zeros(typingctx, value):
    """The number of zero bits below the lowest set bit of an integer (its
    width for 0, so that no input is undefined)."""
    if not isinstance(value, types.Integer):
        raise TypingError(f"trailing_zeros takes an integer, got {value}")

    def codegen(context, builder, signature, args):
        # flag 0: the result is defined for 0 as well
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return value(value), codegen


@njit(cache=True, error_model="numpy")
def popcount(v):
    """The number of set bits of ``v`` (one loop turn a set bit)."""
    n = 0
    while v:
        v &= v - _ONE
        n += 1
    return n
