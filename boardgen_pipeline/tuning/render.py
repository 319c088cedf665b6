"""``boardgen tune``'s outputs: the terminal's lines, a markdown table (the
``tune`` job's metadata, a pull request) and JSON (SPEC 12; the JSON field
names are a contract: ``key``, ``figure``, ``target``, ``tolerance``,
``knob``, ``old``, ``new``, ``new_interval``, ``achieved``,
``achieved_interval``, ``boards``, ``f4``, ``state``, and beside them the
held-out proof, the reachable range and the readings)."""

from __future__ import annotations

import json
import math

from boardgen_pipeline.calibration.fingerprints import partition_key
from boardgen_pipeline.tuning import search
from boardgen_pipeline.tuning.proposal import Proposal
from boardgen_pipeline.tuning.run import Tuning
from boardgen_pipeline.words import count


def _n(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _knob(x) -> str:
    return "-" if x is None else f"{x:g}"


def crossing(p: Proposal) -> str:
    """Where the target's crossing lies along the knob, as far as the search decided."""
    lo, hi = p.new_interval
    if lo is None and hi is None:
        return ""
    if lo is None or hi is None:
        return f" (target crossed {'below' if lo is None else 'above'} {_knob(hi if lo is None else lo)})"
    return f" (target crossed in [{_knob(lo)}, {_knob(hi)}])"


def line(p: Proposal) -> str:
    """One row's outcome in one line (and a second for the held-out proof)."""
    t = p.task.target
    a = p.achieved
    achieved = "-" if a is None or a.value is None else f"{a.value:.3f} [{a.low:.3f}, {a.high:.3f}]"
    head = f"row {p.key_text}: {t.figure} -> {t.value:.3f} +- {t.tolerance:g} by {t.knob}: "
    if p.state == search.UNREACHABLE:
        reach = ("no value keeps F4" if p.figure_range is None else
                 f"{t.figure} reaches {p.figure_range[0]:.3f}..{p.figure_range[1]:.3f} with {t.knob} "
                 f"{_knob(p.knob_range[0])}..{_knob(p.knob_range[1])} (F4 holding)")
        text = (f"{head}UNREACHABLE: {reach}; nearest {t.knob} {_knob(p.nearest)} gives {achieved}"
                + (f" ({p.note})" if p.note else ""))
    else:
        move = (f"{_knob(p.old)} kept" if p.state == search.UNCHANGED else f"{_knob(p.old)} -> {_knob(p.new)}")
        text = f"{head}{p.state}: {t.knob} {move}{crossing(p)}; {t.figure} {achieved} on probes"
    text += f"; {p.boards:,} boards" + (f" ({p.note})" if p.note and p.state != search.UNREACHABLE else "")
    if p.heldout is not None:
        h = p.heldout
        f4 = "holds" if not h.failing else "FAILS " + ", ".join(h.failing)
        text += (f"\n  held out (calibration batch): {h.estimate.text()}: "
                 f"{'holds' if h.holds else 'does NOT hold'} ({h.verdict.state}), F4 {f4}")
    return text


def _held_how(s: dict) -> str:
    """How the held rows hold: their values inside the corridor, or near it (outside, within the batch's
    sampling error: the batch cannot tell such a row from a hit)."""
    near = s["heldout_hold"] - s["heldout_inside"]
    if not s["heldout_hold"]:
        return ""
    if not near:
        return " (every value inside its corridor)"
    return f" ({s['heldout_inside']} inside their corridor, {near} near it, within their sampling error)"


def summary_line(tuning: Tuning) -> str:
    s = tuning.summary()
    text = (f"{count(s['rows'], 'targeted row')}: {s['reached']} reached, {s['unchanged']} unchanged, {s['unreachable']} "
            f"unreachable; held out on the calibration batch ({tuning.samples} boards): {s['heldout_hold']} of "
            f"{s['heldout_proven']} hold{_held_how(s)}; {s['boards']:,} boards ({s['boards_per_row']:,.0f} a row)")
    if tuning.errors:
        text += "; failed: " + "; ".join(f"{partition_key(k)}: {e}" for k, e in sorted(tuning.errors.items()))
    return text


def terminal(tuning: Tuning) -> str:
    return "\n".join([*(line(p) for p in tuning.proposals), summary_line(tuning)]) + "\n"


def markdown(tuning: Tuning) -> str:
    rows = ["| row | figure | target | knob | old | new | achieved (probes) | held out | boards | state |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for p in tuning.proposals:
        t, a, h = p.task.target, p.achieved, p.heldout
        achieved = "-" if a is None or a.value is None else f"{a.value:.3f} [{a.low:.3f}, {a.high:.3f}]"
        held = "-" if h is None else (f"{_n(h.estimate.value)} [{_n(h.estimate.low)}, {_n(h.estimate.high)}] "
                                      f"{'holds' if h.holds else '**does not hold**'} ({h.verdict.state})")
        new = _knob(p.new) if p.state != search.UNREACHABLE else f"nearest {_knob(p.nearest)}"
        state = (f"**unreachable**: {p.note}" if p.state == search.UNREACHABLE else
                 f"{p.state} ({p.note})" if p.note else p.state)
        rows.append(f"| {p.key_text} | {t.figure} | {t.value:.3f} ± {t.tolerance:g} | {t.knob} | {_knob(p.old)} | "
                    f"{new} | {achieved} | {held} | {p.boards:,} | {state} |")
    return "\n".join([f"**Curve tuning** ({tuning.targets_path}): {summary_line(tuning)}", "", *rows]) + "\n"


def json_text(tuning: Tuning, extra: dict | None = None) -> str:
    return json.dumps({**tuning.as_dict(), **(extra or {})}, indent=1, default=str) + "\n"
