"""The table-edit sensor's bookkeeping (SPEC 1 "regeneration after a table
edit", SPEC 9; one run
per edit).

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


# --- the table-edit sensor's decision, as a plain function (assets/ only wires it) ----------------

ROWS, OVERLAYS, TABLE, VALIDATE = "rows", "overlays", "table", "validate"


@dataclass(frozen=True)
class Facts:
    """What the sensor compares, read from the tables and the warehouse
    (:func:`gather`): each fingerprint now and stored."""

    now: dict[str, str]  # partition -> batch fingerprint the table gives now
    stored: dict[str, str]  # partition -> batch fingerprint the warehouse holds
    published: set[str]  # partitions whose boards are published
    overlays_now: dict[str, str]
    overlays_stored: dict[str, str]
    draws_now: str
    draws_stored: str | None
    strata_now: str | None = None  # computed only when no row is being regenerated (it reads every report)
    strata_stored: str | None = None


@dataclass(frozen=True)
class Request:
    """One run to ask for: ``kind`` (``rows``: the rows' chain over the range
    covering ``partitions``, then the table-wide checks and the figures;
    ``overlays``: every stale overlay, then the same; ``table``: the checks
    and figures alone; ``validate``: the table assets alone), whether the
    node-map draws are redrawn, and why (a run tag)."""

    kind: str
    partitions: tuple[str, ...] = ()
    draws: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Decision:
    requests: list[Request]
    add: list[str]
    remove: list[str]
    cursor: str
    skip_reason: str = ""
    log: str = ""


def gather(root, catalog, samples: int, master_seed: int, adventures: int, in_flight: bool) -> Facts:
    """The sensor's facts from the warehouse (``steps.currency``); the strata's
    fingerprint only when no row is in flight (``in_flight``)."""
    from boardgen_pipeline.calibration import fingerprints
    from boardgen_pipeline.steps import currency
    from boardgen_pipeline.warehouse import publish

    now = fingerprints.fingerprints_now(catalog.board_gen, samples, master_seed)
    overlays_now = fingerprints.overlay_fingerprints_now(catalog, samples, master_seed)
    strata_now = strata_stored = None
    if not in_flight:
        strata_now = currency.strata_fingerprint_now(root, catalog, samples, master_seed, adventures)
        strata_stored = currency.strata_fingerprint_stored(root)
    return Facts(now=now, stored=currency.fingerprints_stored(root, now),
                 published={fingerprints.partition_key(k) for k in publish.keys_in(root, "boards")},
                 overlays_now=overlays_now, overlays_stored=currency.overlay_fingerprints_stored(root, overlays_now),
                 draws_now=currency.draws_fingerprint_now(catalog, adventures),
                 draws_stored=currency.draws_fingerprint_stored(root), strata_now=strata_now,
                 strata_stored=strata_stored)


def rows_in_flight(cursor_text: str | None, clock: float, ttl: float = IN_FLIGHT_TTL_SECONDS) -> bool:
    """Whether the cursor holds a row request still waiting for its data."""
    cursor = load_cursor(cursor_text)
    return any(clock - v[1] < ttl for v in cursor["in_flight"].values())


REASON_CHARACTERS = 200  # a run's reason tag: what the Runs page shows of it whole


def listed(keys: list[str], limit: int = REASON_CHARACTERS) -> str:
    """Partition keys for a run's reason tag, cut at a key, never inside one:
    ``1-0 1-1 ... and 40 more`` (the tag used to end in the middle of a key)."""
    out = []
    for i, key in enumerate(keys):
        rest = len(keys) - i - 1
        tail = f" and {rest} more" if rest else ""
        if len(" ".join([*out, key]) + tail) > limit and out:
            return " ".join(out) + f" and {len(keys) - i} more"
        out.append(key)
    return " ".join(out)


def decide(facts: Facts, registered: list[str], cursor_text: str | None, clock: float) -> Decision:
    """One evaluation of the table-edit sensor: which runs to ask for, which
    partitions to add and remove, the next cursor (docstring of
    ``boardgen_dagster.automation``). One run per edit: the range covering every row
    whose boards changed (and the rows whose overlays alone did), with the
    table-wide checks and the figures; else the overlays alone; else the
    figures or the draws alone."""
    was_in_flight = set(load_cursor(cursor_text)["in_flight"])
    plan_, cursor_text = advance(cursor_text, facts.now, facts.stored, registered, clock)
    cursor = load_cursor(cursor_text)
    # Overlays of rows whose published boards stay: stale when the variation table (or the row's Boss
    # flag) changed. A rejected batch has no overlays to place; a row whose run was in flight until now
    # may still be writing them: next tick.
    boards_current = [k for k in plan_.keep if k in facts.published and k not in was_in_flight]
    overlays_now = {k: fp for k, fp in facts.overlays_now.items() if k in boards_current}
    overlays = advance_stale(cursor, "overlays_in_flight", overlays_now, facts.overlays_stored, clock)
    # The draws read the pools and the table's row keys, not the rows' parameters: a row edit redraws no map.
    draws = advance_stale(cursor, "draws_in_flight", {"draws": facts.draws_now}, {"draws": facts.draws_stored}, clock)
    strata = []
    if not plan_.regenerate and not cursor["in_flight"] and facts.strata_now is not None:
        strata = advance_stale(cursor, "strata_in_flight", {"strata": facts.strata_now},
                               {"strata": facts.strata_stored}, clock)
    cursor_text = dump_cursor(cursor)
    if plan_.empty and not overlays and not draws and not strata:
        return Decision([], [], [], cursor_text, skip_reason=f"{len(plan_.keep)} rows unchanged")
    requests = []
    if plan_.regenerate:
        rows = tuple(sorted({*plan_.regenerate, *overlays}, key=row_key))
        requests.append(Request(ROWS, rows, bool(draws), "rows changed: " + listed(plan_.regenerate)))
    elif overlays:
        requests.append(Request(OVERLAYS, tuple(overlays), bool(draws), "overlays changed: " + listed(overlays)))
    elif draws or strata:
        requests.append(Request(TABLE, (), bool(draws), "node maps changed" if draws else "reports changed"))
    if plan_.remove and not requests:  # prune the removed rows' files and views
        requests.append(Request(VALIDATE, reason="rows removed: " + listed(plan_.remove)))
    log = (f"regenerate {plan_.regenerate}; overlays {overlays}; draws {bool(draws)}; strata {bool(strata)}; "
           f"add {plan_.add}; remove {plan_.remove}; keep {len(plan_.keep)}")
    return Decision(requests, plan_.add, plan_.remove, cursor_text, log=log)


def decide_invalid(cursor_text: str | None, digest: str, report: str) -> Decision:
    """The sensor on a table that does not validate: one validate run per
    version of the tables (its failure is what the UI shows), then nothing."""
    cursor = load_cursor(cursor_text)
    if cursor.get("invalid") == digest:
        return Decision([], [], [], cursor_text or dump_cursor(cursor),
                        skip_reason=f"board_gen table still invalid (run already requested):\n{report}")
    cursor["invalid"] = digest
    return Decision([Request(VALIDATE, reason="table invalid")], [], [], dump_cursor(cursor))
