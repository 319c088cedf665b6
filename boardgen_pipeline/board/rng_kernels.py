"""The ``board_gen`` stream inside the compiled kernels (SPEC 2.1; seed 000
"生成重试与成本闸": every draw of an attempt comes from the row's own stream).

SplitMix64 and rejection sampling exactly as ``rng.Stream`` (the readable
reference; ``tests/test_rng.py`` holds them equal), on a one-element uint64
state array and a one-element draw counter, so ``kernels`` and ``fog_rows``
draw from the same stream.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

_GAMMA = uint64(0x9E3779B97F4A7C15)


_M1 = uint64(0xBF58476D1CE4E5B9)


_M2 = uint64(0x94D049BB133111EB)


_S30 = uint64(30)


_S27 = uint64(27)


_S31 = uint64(31)


@njit(cache=True, inline="always", error_model="numpy")
def _next(st):
    """SplitMix64 step on a one-element uint64 array; returns the output."""
    s = st[0] + _GAMMA
    st[0] = s
    z = s
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, error_model="numpy")
def below(st, draws, n):
    """Uniform in [0, n) by rejection (rng.Stream.below)."""
    nn = uint64(n)
    threshold = (uint64(0) - nn) % nn  # 2**64 mod n
    while True:
        x = _next(st)
        draws[0] += 1
        if x >= threshold:
            return np.int64(x % nn)
