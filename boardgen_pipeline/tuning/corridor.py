"""The corridor: every targeted row's figure within tolerance of its target
(SPEC 12: the target curve "is both the tuner's input and a corridor the
nightly checks"; docs/decisions/tuning.md "The corridor").

One rule, wherever a row is judged (the nightly's check, ``tune``'s
held-out proof, ``diff`` and ``watch``): a row's figure, measured on its
boards with its 95% interval (``figures``), is

- **inside** when its value lies within ``target +- tolerance``;
- **out** when its whole interval lies outside that band: the boards show
  the figure left the corridor, beyond their sampling error;
- **near** otherwise: the value is outside, its interval is not, so the
  boards cannot tell it from a figure on the band's edge.

Only *out* breaks the corridor: a row tuned to the middle of its corridor
reads *near* on some nights by chance (256 boards measure a win rate to
about +-0.05), and a check that went red on those nights would teach its
readers to ignore it. How far a row is out is the distance from its value
to the band.
"""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.calibration.fingerprints import partition_key
from boardgen_pipeline.check_names import CHECK_CORRIDOR
from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.tables.curve_targets import CurveTargets, RowTarget
from boardgen_pipeline.tuning.figures import Estimate

INSIDE, NEAR, OUT = "inside", "near", "out"
DESCRIPTION = ("Every row the target curve (tables/curve_targets.toml) aims at keeps its figure within tolerance of "
               "its target: a row is out when its figure's 95% interval on its calibration batch lies wholly "
               "outside target +- tolerance (severity from the targets file's header, warning by default).")
NAMED_ROWS = 8


@dataclass(frozen=True)
class Verdict:
    """One row against its corridor."""

    target: RowTarget
    estimate: Estimate
    state: str

    @property
    def by(self) -> float:
        """How far the value lies outside the band (0 inside it)."""
        v = self.estimate.value
        return max(0.0, self.target.low - v, v - self.target.high)

    @property
    def signed(self) -> float:
        """The value's distance beyond the band: > 0 above it, < 0 below it."""
        return self.by if self.estimate.value > self.target.high else -self.by

    @property
    def key_text(self) -> str:
        return partition_key(self.target.key)

    def text(self) -> str:
        t = self.target
        where = {INSIDE: "inside its corridor", NEAR: "near its corridor (outside, within its sampling error)",
                 OUT: f"OUT of its corridor by {self.by:.3f} ({'above' if self.signed > 0 else 'below'})"}[self.state]
        return (f"row {self.key_text}: {t.figure} {self.estimate.text()} against {t.value:.3f} +- {t.tolerance:g} "
                f"({t.label}): {where}")

    def as_dict(self) -> dict:
        t = self.target
        return {"key": self.key_text, "figure": t.figure, "target": t.value, "tolerance": t.tolerance,
                "value": self.estimate.value, "interval": [self.estimate.low, self.estimate.high],
                "boards": self.estimate.n, "state": self.state, "out_by": self.by, "target_entry": t.target}


def judge(target: RowTarget, estimate: Estimate) -> Verdict:
    """The row's place against its corridor (module docstring)."""
    v = estimate.value
    if v is None:
        return Verdict(target, estimate, OUT)
    if target.low <= v <= target.high:
        return Verdict(target, estimate, INSIDE)
    if estimate.high < target.low or estimate.low > target.high:
        return Verdict(target, estimate, OUT)
    return Verdict(target, estimate, NEAR)


def left(before: Verdict | None, after: Verdict) -> bool:
    """The row left its corridor: out now, and not before (or new)."""
    return after.state == OUT and (before is None or before.state != OUT)


def _table(verdicts: list[Verdict]) -> str:
    lines = ["| row | figure | value | 95% interval | target | state | out by |", "|---|---|---|---|---|---|---|"]
    for v in verdicts:
        e, t = v.estimate, v.target
        value = "-" if e.value is None else f"{e.value:.3f}"
        lines.append(f"| {v.key_text} | {t.figure} | {value} | [{e.low:.3f}, {e.high:.3f}] | {t.value:.3f} +- "
                     f"{t.tolerance:g} | {'**OUT**' if v.state == OUT else v.state} | "
                     f"{'' if v.state == INSIDE else f'{v.by:.3f}'} |")
    return "\n".join(lines)


def outcome(targets: CurveTargets | None, verdicts: list[Verdict], uncalibrated: list[str] = ()) -> CheckOutcome:
    """The table-wide corridor check: red (at the targets file's severity)
    when a row is out; the rows out named first with how far, every row's
    verdict in a table. ``uncalibrated``: targeted rows without a current
    batch, named but not judged (the F4 check fails them already)."""
    if targets is None:
        return CheckOutcome(CHECK_CORRIDOR, "corridor", True, "warning", False,
                            "no target curve: the tables folder has no curve_targets.toml", {"rows": 0})
    out = sorted((v for v in verdicts if v.state == OUT), key=lambda v: -v.by)
    near = [v for v in verdicts if v.state == NEAR]
    metadata = {"targets_file": targets.path, "rows": len(verdicts), "rows_out": [v.key_text for v in out],
                "rows_near": [v.key_text for v in near], "uncalibrated": list(uncalibrated),
                "verdicts": [v.as_dict() for v in verdicts]}
    if out:
        named = "; ".join(f"{v.key_text} {v.target.figure} {v.estimate.value:.3f} out by {v.by:.3f} "
                          f"({'above' if v.signed > 0 else 'below'} {v.target.value:.3f} +- {v.target.tolerance:g})"
                          for v in out[:NAMED_ROWS])
        more = f"; {len(out) - NAMED_ROWS} more (metadata `rows_out`)" if len(out) > NAMED_ROWS else ""
        head = f"{len(out)} of {len(verdicts)} targeted rows left their corridor: {named}{more}"
    else:
        head = (f"all {len(verdicts)} targeted rows within their corridor ({len(near)} near its edge, within their "
                "sampling error)")
    if uncalibrated:
        head += f"; not judged (no current calibration): {', '.join(uncalibrated)}"
    return CheckOutcome(CHECK_CORRIDOR, "corridor", not out, targets.severity, False, head, metadata,
                        {"corridor": _table(verdicts)} if verdicts else {})
