"""``boardgen watch`` (``review.watch``; docs/review.md "The designer's
preview"): a save shows the changed row's verdict and its diff against the
stored calibration, recomputing only what the save changed and publishing
nothing; a save that breaks the table prints the validation report and the
watch goes on. (How fast: ``benchmarks/diff.py``, never asserted here.)"""

from __future__ import annotations

import threading
import time

import pytest

from boardgen_pipeline.review import diff, watch
from boardgen_pipeline.warehouse import publish

from .review_support import calibrate, copy_tables, set_field

SAMPLES = 32
PATIENCE = 300  # seconds before a test gives up on an output that never comes (a hang, not a speed check)


class Watching:
    """``watch.run`` in a thread, its outputs collected."""

    def __init__(self, tables, root):
        self.outputs: list[str] = []
        self.done = threading.Event()
        settings = diff.Settings(samples=SAMPLES, resamples=199)
        self.thread = threading.Thread(target=watch.run, args=(tables, root, settings),
                                       kwargs={"poll": 0.05, "out": self.outputs.append, "stop": self.done.is_set})
        self.thread.start()

    def next_output(self, seen: int) -> str:
        deadline = time.monotonic() + PATIENCE
        while len(self.outputs) <= seen:
            assert self.thread.is_alive(), "the watch stopped"
            assert time.monotonic() < deadline, f"no output after {self.outputs[-1:]}"
            time.sleep(0.02)
        return self.outputs[seen]

    def stop(self):
        self.done.set()
        self.thread.join()


@pytest.fixture
def stored(tmp_path):
    tables = copy_tables(tmp_path / "tables")
    return tables, calibrate(tables, tmp_path / "warehouse", SAMPLES)


def _files(root):
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_a_save_shows_its_verdict_a_broken_save_its_report_and_the_watch_goes_on(stored, monkeypatch):
    tables, root = stored
    computed = []
    real = diff.modified_row
    monkeypatch.setattr(diff, "modified_row", lambda base, head, key, *a, **k: computed.append(key) or
                        real(base, head, key, *a, **k))
    before = _files(root)
    w = Watching(tables, root)
    try:
        assert w.next_output(0).startswith(f"watching {tables} (15 stored row reports")
        assert "no row differs" in w.next_output(1)
        table = tables / "board_gen.toml"
        set_field(table, (1, 2), "mine_density", 0.3)
        text = w.next_output(2)
        assert "save of" in text and "verdict: F4 passes on the 1 changed row" in text
        assert "(1,2) modified: mine_density 0.22->0.3" in text and "win_rate" in text
        set_field(table, (2, 0), "max_gen_attempts", 31)
        text = w.next_output(3)
        assert "(1,2) modified" in text and "(2,0) modified: max_gen_attempts 32->31" in text
        assert computed == [(1, 2), (2, 0)]  # (1,2) was compared once, on the first save
        set_field(table, (2, 0), "mine_density", "dense")
        text = w.next_output(4)
        assert "1 table violation" in text and "(2,0)" in text and "mine_density" in text
        assert "still watching" in text
        set_field(table, (2, 0), "mine_density", 0.2)
        text = w.next_output(5)
        assert "verdict:" in text and "(2,0) modified: max_gen_attempts 32->31" in text
        assert computed == [(1, 2), (2, 0)]  # back to a version it had compared
    finally:
        w.stop()
    assert _files(root) == before  # nothing published, nothing touched
    assert publish.keys_in(root, "calibration_report") == set(publish.keys_in(root, "boards"))


def test_without_a_stored_calibration_every_row_is_added(tmp_path):
    tables = copy_tables(tmp_path / "tables")
    preview = watch.Preview(tmp_path / "none", diff.Settings(samples=8, resamples=99))
    text = preview.verdict(tables)
    assert "rows: 0 modified, 15 added" in text and "verdict: F4" in text
    assert not (tmp_path / "none").exists()
