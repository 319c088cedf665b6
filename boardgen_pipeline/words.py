"""Counts and numbers as a person reads them (SPEC 9 "asset checks ...
metadata carries the numbers"; docs/decisions/partition-verdicts.md
"Numbers for reading").

- :func:`count`: ``1 attempt``, ``2 attempts``, never ``1 attempts`` nor
  ``attempt(s)``; :func:`noun`: the word alone, as ``n`` wants it;
- :func:`rounded`: a figure shown in the UI's metadata rounded to
  :data:`DECIMALS` decimals (0.9013, not 0.9013342178976854), or below 1 to
  as many significant digits (a p-value of 0.00001234 stays 1.234e-05, not
  0), through lists and dicts; integers, booleans, text and None unchanged.
  The warehouse keeps every figure whole; only what is shown is rounded.
"""

from __future__ import annotations

import math

DECIMALS = 4


def noun(n: int, word: str, plural: str | None = None) -> str:
    """``word`` in the plural unless ``n`` is 1 (``plural``: an irregular
    plural, or a verb's form: ``noun(n, "differs", "differ")``; default
    ``word + "s"``)."""
    return word if n == 1 else (plural or word + "s")


def count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1 (:func:`noun`)."""
    return f"{n} {noun(n, word, plural)}"


def rounded(value, decimals: int = DECIMALS):
    """``value`` with every float rounded to ``decimals`` decimals (NaN and
    infinities kept), through lists, tuples and dicts."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):  # numpy's float64 too: a plain float comes out
        value = float(value)
        if not math.isfinite(value):
            return value
        return float(f"{value:.{decimals}g}") if abs(value) < 1 else round(value, decimals)
    if isinstance(value, dict):
        return {k: rounded(v, decimals) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, decimals) for v in value]
    if type(value).__module__ == "numpy":  # a numpy scalar: the number it holds
        return rounded(value.item(), decimals)
    return value
