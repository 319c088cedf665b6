"""Resource-face skew (SPEC 3 "Resource face skew"; seed 003 "贫矿脉")."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgen_pipeline.variants import checks as variant_checks
from boardgen_pipeline.variants.checks import check_skew
from boardgen_pipeline.variants.skew import (
    POOL_TOTAL,
    ResourceWeight,
    ResourceWeights,
    largest_remainder,
    load_resource_weights,
    skew_weights,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = load_resource_weights(ROOT / "tables" / "resource_weights.toml")


def weights(*rows) -> ResourceWeights:
    return ResourceWeights(tuple(ResourceWeight(i, i, f, w) for i, f, w in rows))


def test_golden_skew_of_the_default_table_at_30():
    # survival cut 30 %: heal 13 -> 9.1, armor 10 -> 7.0, removed 6.9 goes to
    # offense (39) as 12/39, 10/39, 9/39, 8/39 of it; largest remainder on 62.
    assert skew_weights(DEFAULT, 30).as_dict() == {
        "damage_up": 14, "burst": 12, "pierce": 11, "arcane": 9,
        "heal": 9, "armor": 7,
        "weaken": 6, "gp": 5, "action_points": 4,
    }


def test_effect_value_zero_returns_the_input_itself():
    assert skew_weights(DEFAULT, 0) is DEFAULT


def test_tie_break_goes_to_the_earlier_row():
    # offense a = b = 1, survival 10, cut 50 %: ideals a = b = 3.5, s = 5; one
    # leftover unit, equal remainders -> the earlier row (a) takes it.
    w = weights(("a", "offense", 1), ("b", "offense", 1), ("s", "survival", 10), ("x", "whitelist", 65))
    assert skew_weights(w, 50).as_dict() == {"a": 4, "b": 3, "s": 5, "x": 65}
    w2 = weights(("b", "offense", 1), ("a", "offense", 1), ("s", "survival", 10), ("x", "whitelist", 65))
    assert skew_weights(w2, 50).as_dict() == {"b": 4, "a": 3, "s": 5, "x": 65}


def test_largest_remainder_sums_exactly():
    ideals = [Fraction(10, 3)] * 3
    assert largest_remainder(ideals, 10) == [4, 3, 3]


def test_bad_effect_values_are_refused():
    for bad in (-1, 101, 1.5, True):
        with pytest.raises(ValueError):
            skew_weights(DEFAULT, bad)
    no_offense = weights(("s", "survival", 70), ("x", "whitelist", 7))
    with pytest.raises(ValueError):
        skew_weights(no_offense, 10)


def test_skew_is_monotone_in_effect_value_on_the_default_table():
    prev = DEFAULT
    for ev in range(1, 51):
        cur = skew_weights(DEFAULT, ev)
        assert cur.family_total("survival") <= prev.family_total("survival")
        assert cur.family_total("offense") >= prev.family_total("offense")
        prev = cur


@st.composite
def weight_tables(draw):
    n_off = draw(st.integers(1, 5))
    n_sur = draw(st.integers(0, 4))
    n_wl = draw(st.integers(0, 4))
    fams = ["offense"] * n_off + ["survival"] * n_sur + ["whitelist"] * n_wl
    order = draw(st.permutations(range(len(fams))))
    fams = [fams[i] for i in order]
    # split 77 into len(fams) parts, at least one offense unit
    cuts = sorted(draw(st.lists(st.integers(0, 77), min_size=len(fams) - 1, max_size=len(fams) - 1)))
    parts = [b - a for a, b in zip([0, *cuts], [*cuts, 77])]
    if sum(p for p, f in zip(parts, fams) if f == "offense") == 0:
        k = fams.index("offense")
        donor = max(range(len(parts)), key=lambda i: parts[i])
        parts[donor] -= 1
        parts[k] += 1
    return weights(*[(f"r{i}", f, p) for i, (f, p) in enumerate(zip(fams, parts))])


@settings(max_examples=200, deadline=None)
@given(w=weight_tables(), ev=st.integers(0, 100))
def test_property_skew_invariants(w, ev):
    assert check_skew(w, ev) == []
    s = skew_weights(w, ev)
    assert s.total == POOL_TOTAL
    cut = Fraction(ev, 100)
    removed = sum(r.weight * cut for r in w.rows if r.family == "survival")
    off = w.family_total("offense")
    for a, b in zip(w.rows, s.rows):
        if a.family == "whitelist":
            assert b.weight == a.weight
        elif a.family == "survival":
            assert abs(b.weight - a.weight * (1 - cut)) < 1
        else:
            assert abs(b.weight - (a.weight + removed * Fraction(a.weight, off))) < 1


def test_check_skew_can_fail(monkeypatch):
    # A skew that moves the whitelist and breaks the total is what the check
    # exists to catch.

    def broken(w, ev):
        return weights(*[(r.id, r.family, r.weight + (r.family == "whitelist")) for r in w.rows])

    monkeypatch.setattr(variant_checks, "skew_weights", broken)
    rules = {i.rule for i in check_skew(DEFAULT, 0)}
    assert {"skew_total", "skew_off_not_identical", "skew_whitelist_moved"} <= rules
