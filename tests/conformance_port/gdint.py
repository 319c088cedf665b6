"""GDScript's ``int`` in Python: a signed 64-bit integer that wraps, an
arithmetic ``>>``, and the recipes of docs/conformance.md "GDScript traps"
built from them (the logical shift, the unsigned comparison, remainder and
printing)."""

from __future__ import annotations

MIN = -(2**63)


def i64(x: int) -> int:
    """Wrap to a signed 64-bit integer (GDScript's int arithmetic)."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def lsr(x: int, s: int) -> int:
    """Logical right shift by 1 <= s <= 63, from the arithmetic one."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def ult(a: int, b: int) -> bool:
    return (a ^ MIN) < (b ^ MIN)


def umod(x: int, n: int) -> int:
    """x (an unsigned value held signed) mod n, 0 < n <= 2^63 - 1."""
    r = lsr(x, 1) % n
    r2 = r - (n - r) if r >= n - r else r + r
    out = r2 + (x & 1)
    return out - n if out >= n else out


def udec(x: int) -> str:
    """The unsigned decimal of x: q = (x >>> 1) / 5, r = x - 10 q."""
    if x >= 0:
        return str(x)
    q = lsr(x, 1) // 5  # both non-negative: GDScript's / truncates to the same
    return str(q) + str(i64(x - 10 * q))


def to_int(text: str) -> int:
    """String.to_int() of a decimal string the kit gives (<= 2^63 - 1)."""
    value = int(text)
    assert 0 <= value <= 2**63 - 1, text
    return value
