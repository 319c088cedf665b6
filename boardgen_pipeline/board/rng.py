"""Random streams: one master seed, one stream per scope (SPEC 6; seed 000
"生成管线与随机流纪律", seed 001 rule 3 and AC-5).

Every random draw of the product comes from a :class:`Stream`. A stream is
named by ``(master_seed, label, scope)``; :func:`derive_at` is the pure
function from that name to the stream, and :class:`SeedSpace` hands out scopes
from a counter (``open_stream``) and logs the labels, as the game's RNG
service does at run time.

The generator is SplitMix64 (Steele, Lea & Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014; the `SplittableRandom` of the
JDK). It is written here in integer arithmetic only, so its output depends on
no library version, OS or float unit: the golden vectors in
``tests/test_rng.py`` pin it. The stream's initial state is the first eight
bytes (little endian) of SHA-256 over the stream's name, so scopes of
different labels and master seeds never share state.

Bounded draws use rejection sampling (``below``), never a bare modulo, so
every value in ``[0, n)`` is exactly equally likely.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

# The batch of SPEC 7 / seed 001 F4: row (L, D) takes scopes sigma(L, D) + i, i < N; the layout and why
# rows never share a scope are in boardgen_pipeline/scopes.py, where the table loader reads them too.
from boardgen_pipeline.scopes import DEFAULT_SAMPLES, DEPTH_SPACING, LEVEL_SPACING, MAX_DEPTH, SIGMA_BASE, sigma  # noqa: F401

MASK64 = (1 << 64) - 1


GOLDEN_GAMMA = 0x9E3779B97F4A7C15


LABELS = ("board_gen", "variant_place", "node_map", "advisor_probe")  # the last: calibration.advisor's probes


def splitmix64(state: int) -> tuple[int, int]:
    """One SplitMix64 step: ``(new_state, output)``."""
    state = (state + GOLDEN_GAMMA) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def stream_name(label: str, scope: int | None, master_seed: int = 0) -> bytes:
    """The bytes a stream's state hashes: ``boardgen-stream-v1 NUL master
    NUL label NUL scope`` (``scope`` None: the prefix every scope shares)."""
    return f"boardgen-stream-v1\x00{master_seed}\x00{label}\x00{'' if scope is None else scope}".encode()


def initial_state(label: str, scope: int, master_seed: int = 0) -> int:
    """The 64-bit starting state of stream ``(master_seed, label, scope)``."""
    if scope < 0 or master_seed < 0:
        raise ValueError("scope and master seed are non-negative integers")
    return int.from_bytes(hashlib.sha256(stream_name(label, scope, master_seed)).digest()[:8], "little")


def initial_states(label: str, scopes, master_seed: int = 0) -> np.ndarray:
    """:func:`initial_state` of every scope of ``scopes``, in order, as
    ``uint64``: the same hash, with the name's common prefix hashed once and
    copied for each scope (a batch's streams cost half as much)."""
    scopes = [int(s) for s in scopes]
    if master_seed < 0 or (scopes and min(scopes) < 0):
        raise ValueError("scope and master seed are non-negative integers")
    prefix = hashlib.sha256(stream_name(label, None, master_seed))
    firsts = bytearray()
    for scope in scopes:
        h = prefix.copy()
        h.update(b"%d" % scope)
        firsts += h.digest()[:8]
    return np.frombuffer(bytes(firsts), dtype="<u8").astype(np.uint64)


@dataclass
class Stream:
    """A SplitMix64 stream. ``draws`` counts 64-bit outputs taken so far."""

    label: str
    scope: int
    master_seed: int
    state: int
    draws: int = 0

    def next_u64(self) -> int:
        self.state, out = splitmix64(self.state)
        self.draws += 1
        return out

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)`` by rejection: the ``2**64 mod n``
        lowest outputs are redrawn so that every residue is equally likely."""
        if n <= 0:
            raise ValueError("below(n) needs n >= 1")
        threshold = (1 << 64) % n
        while True:
            x = self.next_u64()
            if x >= threshold:
                return x % n

    def choice_index(self, n: int) -> int:
        """Index of a uniform choice among ``n`` items (alias of ``below``)."""
        return self.below(n)


def derive_at(label: str, scope: int, master_seed: int = 0) -> Stream:
    """The stream of ``scope`` under ``master_seed``: a pure function."""
    return Stream(label, scope, master_seed, initial_state(label, scope, master_seed))


@dataclass
class SeedSpace:
    """The master seed and its scope counter (the RNG service of the game).

    ``open_stream(label)`` takes the next scope, logs ``(scope, label)`` and
    returns ``derive_at(label, scope)``: the k-th opened stream equals the
    stream derived at scope k (seed 001 AC-5)."""

    master_seed: int = 0
    counter: int = 0
    log: list[tuple[int, str]] = field(default_factory=list)

    def open_stream(self, label: str) -> Stream:
        scope = self.counter
        self.counter += 1
        self.log.append((scope, label))
        return derive_at(label, scope, self.master_seed)

    def derive_at(self, label: str, scope: int) -> Stream:
        return derive_at(label, scope, self.master_seed)

