"""Section 2 of docs/conformance.md: a table decimal's double and exact
fraction, and the plan a port derives from the row before its first draw."""

from __future__ import annotations

import math
from fractions import Fraction

from .readings import rd


def double(text: str) -> float:
    """The nearest double of a kit decimal (String.to_float)."""
    if rd().decimal_ignores_exponent:
        text = text.split("e")[0]
    return float(text)


def fraction(text: str) -> tuple[int, int]:
    """The exact value of a kit decimal, reduced: [num, den]."""
    mantissa, _, exponent = text.partition("e")
    whole, point, frac = mantissa.partition(".")
    if rd().fraction_from_last_part and not point:
        whole, frac = "", whole  # the misreading: the digits taken as the part after a point
    num, den = int(whole + frac or "0"), 10 ** len(frac)
    e = int(exponent or "0")
    num, den = (num * 10**e, den) if e >= 0 else (num, den * 10**-e)
    g = math.gcd(num, den)
    return num // g, den // g


def half_up(x: float, exact: Fraction) -> int:
    """floor(x + 0.5) in doubles (or, misread, in exact decimals)."""
    return math.floor(exact + Fraction(1, 2)) if rd().exact_decimals else math.floor(x + 0.5)


def mines_target(density: str, cells: int, spawn_side: int) -> int:
    m = cells - spawn_side * spawn_side
    return half_up(double(density) * float(m), Fraction(*fraction(density)) * m)


def fog_aim(row: dict) -> int:
    if not row["fog_region_count"]:
        return 0
    w, h, text = row["board_width"], row["board_height"], row["fog_target_ratio"]
    ratio = double(text)
    product = ratio * float(w * h) if rd().fog_aim_area_first else ratio * float(w) * float(h)
    return half_up(product, Fraction(*fraction(text)) * w * h)
