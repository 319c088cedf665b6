"""Counts and numbers as a person reads them (``boardgen_pipeline.words``):
``1 attempt``, ``2 lanes``, never ``1 attempts`` nor ``lane(s)``; figures
shown rounded to four decimals, everything else as it is."""

from __future__ import annotations

import math

import numpy as np

from boardgen_pipeline.words import count, noun, rounded


def test_count_says_one_thing_and_many_things():
    assert count(1, "attempt") == "1 attempt"
    assert count(0, "attempt") == "0 attempts" and count(32, "attempt") == "32 attempts"
    assert count(2, "old run") == "2 old runs" and count(1, "old run") == "1 old run"
    assert count(3, "copy", "copies") == "3 copies" and count(1, "copy", "copies") == "1 copy"



def test_noun_is_the_word_alone_as_its_count_wants_it():
    assert noun(1, "worker") == "worker" and noun(2, "worker") == "workers" and noun(0, "worker") == "workers"
    assert noun(1, "differs", "differ") == "differs" and noun(3, "differs", "differ") == "differ"


def test_rounded_rounds_figures_and_nothing_else():
    assert rounded(0.9013342178976854) == 0.9013 and rounded(12.3456789) == 12.3457
    assert rounded(0.000012345678) == 1.235e-05 and rounded(0.0) == 0.0  # a small p-value keeps its digits
    assert rounded({"p10": 0.87654321, "rows": [0.123456, 3, None], "green": True, "row": "(1,2)"}) == \
        {"p10": 0.8765, "rows": [0.1235, 3, None], "green": True, "row": "(1,2)"}
    assert rounded(np.float64(0.55555555)) == 0.5556 and type(rounded(np.float64(0.5))) is float
    assert rounded(7) == 7 and rounded(True) is True
    assert math.isnan(rounded(float("nan"))) and rounded(float("inf")) == float("inf")
