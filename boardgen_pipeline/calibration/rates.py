"""Rates measured on a batch and their confidence intervals (SPEC 7 report C;
the advisor's pass rate; a perfect player's win rate and
mean survival). One interval for all of them: Wilson's score interval, which
stays inside [0, 1] and is honest at rates near 0 or 1, where a normal
interval is not."""

from __future__ import annotations

import math

Z95 = 1.96


def wilson(rate: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's interval of a rate measured on ``n`` trials (``(0, 1)`` with none)."""
    if n <= 0:
        return (0.0, 1.0)
    p = min(1.0, max(0.0, rate))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
