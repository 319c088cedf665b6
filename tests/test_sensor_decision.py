"""The table-edit sensor's decision as a plain function, without Dagster
(a pure function in the library):
``steps.regen.decide`` over the fingerprints now and stored."""

from __future__ import annotations

from boardgen_pipeline.steps import regen
from boardgen_pipeline.steps.regen import OVERLAYS, ROWS, TABLE, VALIDATE, Facts

KEYS = ["1-0", "1-1", "2-0"]
NOW = {k: f"fp-{k}" for k in KEYS}
OVER = {k: f"ov-{k}" for k in KEYS}


def facts(**changes) -> Facts:
    base = dict(now=dict(NOW), stored=dict(NOW), published=set(KEYS), overlays_now=dict(OVER),
                overlays_stored=dict(OVER), draws_now="d1", draws_stored="d1", strata_now="s1", strata_stored="s1")
    base.update(changes)
    return Facts(**base)


def test_nothing_changed_asks_for_nothing():
    d = regen.decide(facts(), KEYS, None, clock=100.0)
    assert d.requests == [] and d.add == [] and d.remove == [] and d.skip_reason == "3 rows unchanged"


def test_an_edited_row_is_one_run_of_its_rows_then_the_table_and_asked_once():
    d = regen.decide(facts(now={**NOW, "1-1": "fp-new"}), KEYS, None, clock=100.0)
    assert d.requests == [regen.Request(ROWS, ("1-1",), False, "rows changed: 1-1")]
    again = regen.decide(facts(now={**NOW, "1-1": "fp-new"}), KEYS, d.cursor, clock=101.0)
    assert again.requests == []  # in flight: not asked twice
    # once its run stored the new fingerprint it leaves the cursor, and the figures follow
    later = regen.decide(facts(now={**NOW, "1-1": "fp-new"}, stored={**NOW, "1-1": "fp-new"}, strata_now="s2"),
                         KEYS, again.cursor, clock=102.0)
    assert later.requests == [regen.Request(TABLE, (), False, "reports changed")]


def test_a_request_never_stored_is_asked_again_after_its_time_to_live():
    edited = facts(now={**NOW, "1-0": "x"})
    d = regen.decide(edited, KEYS, None, clock=0.0)
    assert regen.decide(edited, KEYS, d.cursor, clock=regen.IN_FLIGHT_TTL_SECONDS - 1).requests == []
    retry = regen.decide(edited, KEYS, d.cursor, clock=regen.IN_FLIGHT_TTL_SECONDS + 1)
    assert [r.kind for r in retry.requests] == [ROWS]


def test_rows_and_overlays_that_changed_together_are_one_run_over_all_of_them():
    d = regen.decide(facts(now={**NOW, "2-0": "new"}, overlays_now={**OVER, "1-0": "ov-new"}), KEYS, None, 1.0)
    assert d.requests == [regen.Request(ROWS, ("1-0", "2-0"), False, "rows changed: 2-0")]


def test_overlays_alone_when_only_the_variation_table_changed():
    d = regen.decide(facts(overlays_now={k: v + "'" for k, v in OVER.items()}), KEYS, None, 1.0)
    assert [(r.kind, r.partitions) for r in d.requests] == [(OVERLAYS, tuple(KEYS))]


def test_a_rejected_row_has_no_overlays_to_ask_for():
    d = regen.decide(facts(published={"1-0", "2-0"}, overlays_now={**OVER, "1-1": "changed"}), KEYS, None, 1.0)
    assert d.requests == []


def test_new_and_removed_rows_change_the_partitions():
    d = regen.decide(facts(now={**NOW, "3-0": "fp"}, stored=dict(NOW)), KEYS, None, 1.0)
    assert d.add == ["3-0"] and d.requests[0].partitions == ("3-0",)
    gone = {k: v for k, v in NOW.items() if k != "2-0"}
    d = regen.decide(facts(now=gone, stored=gone, overlays_now={k: OVER[k] for k in gone}), KEYS, None, 1.0)
    assert d.remove == ["2-0"] and [r.kind for r in d.requests] == [VALIDATE]


def test_draws_are_redrawn_only_when_their_own_inputs_change():
    d = regen.decide(facts(draws_now="d2"), KEYS, None, 1.0)
    assert d.requests == [regen.Request(TABLE, (), True, "node maps changed")]
    d = regen.decide(facts(now={**NOW, "1-0": "edited"}), KEYS, None, 1.0)
    assert d.requests[0].draws is False


def test_the_figures_wait_while_rows_are_in_flight():
    # the sensor reads no strata fingerprint while a row's run is out (gather is told so): nothing asked
    d = regen.decide(facts(strata_now=None, strata_stored="s1"), KEYS, None, 1.0)
    assert d.requests == []


def test_an_invalid_table_is_one_validate_run_per_version_of_the_tables():
    d = regen.decide_invalid(None, "digest-1", "report")
    assert [r.kind for r in d.requests] == [VALIDATE]
    again = regen.decide_invalid(d.cursor, "digest-1", "report")
    assert again.requests == [] and "still invalid" in again.skip_reason
    assert [r.kind for r in regen.decide_invalid(again.cursor, "digest-2", "report").requests] == [VALIDATE]


def test_the_reason_tag_names_whole_rows_and_counts_the_rest():
    """The run's reason tag is cut at a row key, never inside one (it used to
    end at 200 characters, in the middle of a key), and says how many more."""
    keys = [f"{level}-{depth}" for level in range(1, 13) for depth in range(5)]
    text = regen.listed(keys)
    assert len(text) <= regen.REASON_CHARACTERS and text.endswith(" more")
    shown, more = text.rsplit(" and ", 1)
    assert shown.split() == keys[:len(shown.split())] and int(more.split()[0]) == len(keys) - len(shown.split())
    assert regen.listed(["1-0", "2-2"]) == "1-0 2-2"
