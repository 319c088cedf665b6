"""Which old calibration runs an instance may forget (so the Dagster home
stops growing; SPEC 1 "results kept": the warehouse keeps every figure,
``calibration_history`` included, so a run's record is bookkeeping, not data).

The policy, as a plain function of the runs: keep every run of the last
``keep_days`` days, or, when ``keep_runs`` is set, the newest ``keep_runs``
runs; never a run that is not finished, and never a run that holds the
latest materialization or check result of some asset or partition (the UI
shows that run as the asset's state: deleting it would make a partition read
as never materialized). Settings come from ``BOARDGEN_KEEP_DAYS`` (default
30) and ``BOARDGEN_KEEP_RUNS`` (``--keep-runs``), checked by ``cli_args``.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_KEEP_DAYS = 30
DAY_SECONDS = 86400.0


@dataclass(frozen=True)
class RunInfo:
    """What the policy needs of a run: its id, when it was created (epoch
    seconds), whether it has finished, whether it holds some latest state."""

    run_id: str
    created: float
    finished: bool
    holds_latest: bool


@dataclass(frozen=True)
class Policy:
    keep_days: float = DEFAULT_KEEP_DAYS
    keep_runs: int | None = None

    def describe(self) -> str:
        return f"the newest {self.keep_runs} runs" if self.keep_runs is not None else \
            f"the runs of the last {self.keep_days:g} days"


def to_delete(runs: list[RunInfo], now: float, policy: Policy) -> list[str]:
    """The run ids the policy lets go, oldest first."""
    ordered = sorted(runs, key=lambda r: (r.created, r.run_id), reverse=True)  # newest first
    if policy.keep_runs is not None:
        kept = {r.run_id for r in ordered[:policy.keep_runs]}
    else:
        cutoff = now - policy.keep_days * DAY_SECONDS
        kept = {r.run_id for r in ordered if r.created >= cutoff}
    gone = [r for r in ordered if r.run_id not in kept and r.finished and not r.holds_latest]
    return [r.run_id for r in sorted(gone, key=lambda r: (r.created, r.run_id))]


def policy_from(keep_days: int | None = None, keep_runs: int | None = None, environ=None) -> Policy:
    """The policy of the options given, else of ``$BOARDGEN_KEEP_RUNS`` and
    ``$BOARDGEN_KEEP_DAYS`` (checked by ``cli_args`` before any work), else
    the default."""
    import os

    environ = os.environ if environ is None else environ
    if keep_runs is None and environ.get("BOARDGEN_KEEP_RUNS"):
        keep_runs = int(environ["BOARDGEN_KEEP_RUNS"])
    if keep_days is None and environ.get("BOARDGEN_KEEP_DAYS"):
        keep_days = int(environ["BOARDGEN_KEEP_DAYS"])
    if keep_runs is not None:
        return Policy(keep_runs=keep_runs)
    return Policy(keep_days=keep_days if keep_days is not None else DEFAULT_KEEP_DAYS)
