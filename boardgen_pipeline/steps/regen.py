"""The table-edit sensor's bookkeeping (SPEC 1 "regeneration after a table
edit", SPEC 9; issue 3 "Regeneration after a table edit"; issue 13 "one run
per edit").

Whether a partition is current, and why not, is ``steps.currency``'s
question; this module decides what to *request*: partitions to register
(new rows) and delete (removed rows), rows to regenerate (their fingerprint
now differs from the stored one), and, through the sensor's cursor, what is
already *in flight*: a row is requested once per fingerprint, not on every
tick while its run works, and requested again when its request grows older
than ``IN_FLIGHT_TTL_SECONDS`` without being stored (a crashed run).
Partition keys are ``"L-D"`` (``"1-0"`` for row ``(1,0)``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from boardgen_pipeline.calibration.fingerprints import row_key


@dataclass(frozen=True)
class RegenPlan:
    """``add``/``remove``: partitions to register/delete; ``regenerate``: rows
    whose stored fingerprint differs from the table's (new rows included);
    ``keep``: rows left alone. All lists sorted by row key."""

    add: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    regenerate: list[str] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.add or self.remove or self.regenerate)


def _sorted(keys) -> list[str]:
    return sorted(keys, key=row_key)


def plan(now: dict[str, str], stored: dict[str, str], registered, in_flight: dict[str, str] | None = None) -> RegenPlan:
    """Compare fingerprints now with fingerprints stored.

    ``registered``: the partition keys the orchestrator knows. ``in_flight``:
    fingerprints already requested and not yet stored (a sensor's cursor), so
    a row is requested once per version, not on every tick while it runs."""
    in_flight = in_flight or {}
    registered = set(registered)
    stale = {k for k, fp in now.items() if stored.get(k) != fp and in_flight.get(k) != fp}
    return RegenPlan(
        add=_sorted(set(now) - registered),
        remove=_sorted(registered - set(now)),
        regenerate=_sorted(stale),
        keep=_sorted(k for k in now if stored.get(k) == now[k]),
    )


IN_FLIGHT_TTL_SECONDS = 900  # a request not stored after this long (a crashed run) is made again


def load_cursor(text: str | None) -> dict:
    """A sensor cursor: ``{"in_flight": {partition: [fingerprint, requested_at]}, "invalid": digest}``."""
    if not text:
        return {"in_flight": {}}
    data = json.loads(text)
    data.setdefault("in_flight", {})
    return data


def dump_cursor(cursor: dict) -> str:
    return json.dumps(cursor, sort_keys=True, separators=(",", ":"))


def advance(cursor_text: str | None, now: dict[str, str], stored: dict[str, str], registered,
            clock: float, ttl: float = IN_FLIGHT_TTL_SECONDS) -> tuple[RegenPlan, str]:
    """One evaluation of the table-edit sensor: the plan, and the next cursor.

    A partition is requested once per fingerprint: while its request is in
    flight (younger than ``ttl`` and not yet stored) it is not requested
    again; once the warehouse stores that fingerprint it leaves the cursor."""
    cursor = load_cursor(cursor_text)
    cursor.pop("invalid", None)
    live = {k: v[0] for k, v in cursor["in_flight"].items() if clock - v[1] < ttl}
    p = plan(now, stored, registered, live)
    in_flight = {k: v for k, v in cursor["in_flight"].items()
                 if k in now and v[0] == now[k] and stored.get(k) != now[k] and clock - v[1] < ttl}
    for k in p.regenerate:
        in_flight[k] = [now[k], clock]
    cursor["in_flight"] = in_flight
    return p, dump_cursor(cursor)


def advance_stale(cursor: dict, name: str, now: dict[str, str], stored: dict[str, str], clock: float,
                  ttl: float = IN_FLIGHT_TTL_SECONDS) -> list[str]:
    """Keys of ``now`` whose stored fingerprint differs and that were not
    requested for that fingerprint within ``ttl``; records the requests in
    ``cursor[name]`` (the same once-per-version rule as the boards')."""
    entries = cursor.get(name, {})
    live = {k: v for k, v in entries.items()
            if k in now and v[0] == now[k] and stored.get(k) != now[k] and clock - v[1] < ttl}
    stale = sorted((k for k, fp in now.items() if stored.get(k) != fp and k not in live), key=str)
    for k in stale:
        live[k] = [now[k], clock]
    cursor[name] = live
    return stale
