"""One canonical encoding of plain data as text, for everything that is
hashed or stored as JSON (SPEC 6 "bit-identical output"; one
canonical encoding): sorted keys, no spaces, tuples and sets as lists,
numpy scalars as the Python numbers they hold, dataclasses as their fields,
a ``Fraction`` as its exact ``"numerator/denominator"``. A new numpy repr or
a field order cannot change what it writes; for ASCII data it is the very
text ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` writes, so
the digests that were taken that way (row fingerprints, history versions)
keep their values."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from fractions import Fraction


def _plain(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy: a scalar's is a Python number, an array's lists
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, Fraction):  # exact: a table's percentages are fractions, not floats
        return f"{value.numerator}/{value.denominator}"
    raise TypeError(f"no canonical form for {type(value).__name__}")


def canonical_json(value) -> str:
    """``value`` as canonical JSON text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)


def digest(value, length: int = 16) -> str:
    """The first ``length`` hex digits of the sha256 of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def files_digest(root, paths) -> tuple[str, dict[str, str]]:
    """A set of files by content: 16 hex digits of each (keyed by its path
    below ``root``, ``/``-separated) and of them all, names included (a
    renamed file changes it)."""
    total = hashlib.sha256()
    files = {}
    for path in paths:
        rel = path.relative_to(root).as_posix()
        files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        total.update(f"{rel}\0{files[rel]}\n".encode())
    return total.hexdigest()[:16], files
