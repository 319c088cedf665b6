"""Exact non-negative integers of a fixed width for the compiled kernels
(the perfect player's mine probabilities must never mistake a
near-tie for a tie; numba has no big integers).

A number is a row of ``L`` limbs of 32 bits, least significant first, each
held in a ``uint64`` so that a limb times a factor below 2**32 plus a limb
plus a carry still fits one machine word: ``(2**32 - 1)**2 + 2 * (2**32 - 1)
= 2**64 - 1``. Only what the probability combination needs is here: add
a multiple of a small factor, subtract one, divide by a small divisor,
compare, test for zero. Every operation reports what does not fit (a carry
out of the top limb, a borrow below zero, a remainder where the division
must be exact) instead of wrapping, so a width too small is an error, never
a wrong count.

Width: any count of mine layouts on a board of ``cells`` cells is below
``2**cells``; the combination multiplies such counts by factors below
``2**32`` at most once before dividing again, so ``limbs_for(cells)`` limbs
(``cells / 32`` rounded up, plus two) always suffice.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

LIMB_BITS = 32
_MASK = uint64(0xFFFFFFFF)
_SHIFT = uint64(32)
_ZERO = uint64(0)
_ONE = uint64(1)


def limbs_for(cells: int) -> int:
    """Limbs of a number that holds any count of layouts of ``cells`` cells
    times a factor below ``2**32``."""
    return cells // LIMB_BITS + 3


def to_int(row) -> int:
    """The Python integer of a limb row."""
    return int.from_bytes(np.ascontiguousarray(row, np.uint64).astype("<u4").tobytes(), "little")


def from_int(value: int, width: int) -> np.ndarray:
    """The limb row of a Python integer (ValueError when it does not fit)."""
    if value < 0 or value.bit_length() > LIMB_BITS * width:
        raise ValueError(f"{value} does not fit {width} limbs")
    return np.frombuffer(value.to_bytes(4 * width, "little"), "<u4").astype(np.uint64)


@njit(cache=True, error_model="numpy")
def set_small(a, v):
    """``a = v`` for ``0 <= v < 2**32``."""
    a[:] = 0
    a[0] = uint64(v)


@njit(cache=True, error_model="numpy")
def add_mul(acc, a, s):
    """``acc += a * s`` for ``0 <= s < 2**32``; False when it overflows."""
    s = uint64(s)
    if s == _ZERO:
        return True
    carry = _ZERO
    for i in range(acc.shape[0]):
        t = acc[i] + a[i] * s + carry
        acc[i] = t & _MASK
        carry = t >> _SHIFT
    return carry == _ZERO


@njit(cache=True, error_model="numpy")
def sub_mul(acc, a, s):
    """``acc -= a * s`` for ``0 <= s < 2**32``; False when it goes below zero."""
    s = uint64(s)
    if s == _ZERO:
        return True
    carry = _ZERO
    borrow = _ZERO
    for i in range(acc.shape[0]):
        t = a[i] * s + carry
        lo = t & _MASK
        carry = t >> _SHIFT
        d = lo + borrow
        if acc[i] >= d:
            acc[i] -= d
            borrow = _ZERO
        else:
            acc[i] = acc[i] + (_MASK + _ONE) - d
            borrow = _ONE
    return carry == _ZERO and borrow == _ZERO


@njit(cache=True, error_model="numpy")
def div_small(a, d):
    """``a //= d`` for ``0 < d < 2**32``; returns the remainder."""
    d = uint64(d)
    rem = _ZERO
    for i in range(a.shape[0] - 1, -1, -1):
        cur = (rem << _SHIFT) | a[i]
        a[i] = cur // d
        rem = cur - a[i] * d
    return rem


@njit(cache=True, error_model="numpy")
def compare(a, b):
    """-1, 0 or 1 as ``a`` is below, equal to or above ``b``."""
    for i in range(a.shape[0] - 1, -1, -1):
        if a[i] != b[i]:
            return -1 if a[i] < b[i] else 1
    return 0


@njit(cache=True, error_model="numpy")
def is_zero(a):
    for i in range(a.shape[0]):
        if a[i] != _ZERO:
            return False
    return True
