"""What a calibration diff is asked (docs/review.md "The calibration diff";
SPEC 7's batch sizes and master seed; seed 001 F4): one object that the
row diff, the overlays' and the strata's comparisons all read, instead of
its fields passed one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from boardgen_pipeline.review import stats
from boardgen_pipeline.scopes import DEFAULT_SAMPLES
from boardgen_pipeline.settings import DEFAULT_ADVENTURES

ALPHA = 0.05


@dataclass
class Settings:
    """What a diff is asked: boards a row, master seed, FDR level, margins that
    replace the defaults, optional stopping, resamples of the bootstrap and
    permutation tests, and the adventures the strata are drawn on."""

    samples: int = DEFAULT_SAMPLES
    master_seed: int = 0
    alpha: float = ALPHA
    margins: dict[str, float] = field(default_factory=dict)
    until_decided: bool = False
    resamples: int = stats.RESAMPLES
    adventures: int = DEFAULT_ADVENTURES  # node-map adventures the strata are drawn on (the pipeline's)
