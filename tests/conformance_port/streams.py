"""Section 1 of docs/conformance.md: a stream's name and state, SplitMix64,
bounded draws by rejection."""

from __future__ import annotations

import hashlib

from .gdint import i64, lsr, udec, ult, umod

GAMMA = -7046029254386353131
M1 = -4658895280553007687
M2 = -7723592293110705685


def name_bytes(label: str, scope: int, master_seed: int) -> bytes:
    return b"boardgen-stream-v1\x00" + str(master_seed).encode() + b"\x00" + label.encode() + b"\x00" \
        + str(scope).encode()


class Stream:
    def __init__(self, label: str, scope: int, master_seed: int):
        self.state = i64(int.from_bytes(hashlib.sha256(name_bytes(label, scope, master_seed)).digest()[:8], "little"))
        self.draws = 0
        self.values: list[int] = []  # every below() value, in order

    def next(self) -> int:
        self.state = i64(self.state + GAMMA)
        z = self.state
        z = i64((z ^ lsr(z, 30)) * M1)
        z = i64((z ^ lsr(z, 27)) * M2)
        self.draws += 1
        return z ^ lsr(z, 31)

    def below(self, n: int) -> int:
        t = umod(i64(-n), n)
        while True:
            x = self.next()
            if not ult(x, t):
                value = umod(x, n)
                self.values.append(value)
                return value


def u64(x: int, signed_print: bool = False) -> str:
    return str(x) if signed_print else udec(x)
