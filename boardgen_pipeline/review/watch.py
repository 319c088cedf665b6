"""``boardgen watch``: the designer's preview of a table edit (SPEC 1
"regeneration after a table edit"; seed 001 F4; seed 001 P2 "C3 全行审计";
docs/review.md "The designer's preview").

It looks at the tables folder every ``poll`` seconds (the files' size and
modification time: a stat a file, no new dependency, the same on every file
system, network mounts and editors that replace a file by renaming
included). On every save it loads and validates the tables, recomputes in
this process only the rows whose version it has not compared yet (a row
changed by an earlier save and left alone since is not recomputed), and
prints each changed row's F4 verdict and its paired diff against the
warehouse's stored calibration. Nothing is published: the warehouse is
read, never written. A save that breaks the table prints the validation
report, as ``boardgen validate`` does, and the watch goes on.

A save is taken once the folder's stat signature holds still for one poll
(an editor that writes a file in several steps is read once, complete).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from boardgen_pipeline.calibration.fingerprints import table_files
from boardgen_pipeline.errors import SourceError, TableError
from boardgen_pipeline.review import diff, pairing, render, sources
from boardgen_pipeline.words import count


def signature(folder: Path) -> dict[str, tuple[int, int]]:
    """Each table file's ``(mtime_ns, size)``: what a save changes."""
    out = {}
    for path in table_files(folder):
        try:
            st = path.stat()
        except OSError:
            continue  # removed between the listing and the stat: the next look sees it gone
        out[path.relative_to(folder).as_posix()] = (st.st_mtime_ns, st.st_size)
    return out


class Preview:
    """What the watch keeps between saves: the stored calibration's reports
    and boards, read once, and every row it has compared."""

    def __init__(self, root: Path, settings: diff.Settings):
        self.root = Path(root)
        self.settings = settings
        self.reports = sources.stored_reports(self.root) if self.root.is_dir() else {}
        self.store = pairing.StoredBoards(self.root if self.root.is_dir() else None)
        self.memo: dict = {}

    def base(self, head: sources.Source) -> sources.Source:
        if not self.reports:
            return sources.Source(sources.WAREHOUSE, "warehouse", f"no stored calibration in {self.root}", {},
                                  head.header)
        return sources.from_warehouse(self.root, "BASE", head.table, self.reports)

    def verdict(self, tables_dir: Path) -> str:
        """The text one save prints: the validation report of a table that
        does not validate, else the verdict and the diff."""
        try:
            head = sources.from_folder(Path(tables_dir), "HEAD")
            result = diff.compare(self.base(head), head, self.settings, self.root, store=self.store, memo=self.memo)
        except (TableError, SourceError) as exc:
            text = exc.report() if isinstance(exc, TableError) else str(exc)
            return f"{text}\nthe table does not validate: nothing compared; still watching"
        changed = [r for r in result.rows if r.state in (diff.MODIFIED, diff.ADDED)]
        failing = [r for r in changed if (r.head_verdicts or {}).get("green") is False]
        verdict = (f"F4 FAILS on {', '.join(render.key_text(r.key) for r in failing)}" if failing else
                   f"F4 passes on the {count(len(changed), 'changed row')}" if changed else
                   "the tables calibrate as stored: no row differs")
        return f"verdict: {verdict}\n{render.terminal(result)}"


def run(tables_dir: Path, root: Path, settings: diff.Settings, poll: float = 0.1,
        out: Callable[[str], None] | None = None, stop: Callable[[], bool] = lambda: False) -> None:
    """Watch ``tables_dir`` until ``stop()`` (or Ctrl-C), printing through ``out``."""
    out = out or (lambda text: print(text, flush=True))
    tables_dir = Path(tables_dir)
    preview = Preview(root, settings)
    _warm_up()
    seen = signature(tables_dir)
    stored = f"{count(len(preview.reports), 'stored row report')} in {preview.root}" if preview.reports else \
        f"no stored calibration in {preview.root}: every row compares as added"
    out(f"watching {tables_dir} ({stored}); save a table to see its verdict, Ctrl-C to stop")
    out(preview.verdict(tables_dir))
    while not stop():
        time.sleep(poll)
        now = signature(tables_dir)
        if now == seen:
            continue
        time.sleep(poll)  # a save in several writes: read it once it holds still
        settled = signature(tables_dir)
        if settled != now:
            continue
        seen = settled
        started = time.perf_counter()
        text = preview.verdict(tables_dir)
        out(f"--- {time.strftime('%H:%M:%S')} save of {tables_dir} ({time.perf_counter() - started:.2f} s)\n{text}")


def _warm_up() -> None:
    """Compile (or load) the kernels and import the statistics before the first
    save, so that its verdict costs only its rows."""
    import numpy as np

    from boardgen_pipeline.board.generator import warm_up
    from boardgen_pipeline.review import stats

    warm_up()
    stats.paired_bootstrap(4, lambda idx, axis=-1: np.stack([idx.mean(axis=-1)]), 0.95, 0, 99)
    stats.sign_flip_p(4, lambda x, y: np.stack([y.mean(axis=-1) - x.mean(axis=-1)]), 0, 99)
    stats.marginal_homogeneity(np.array([0, 1]), np.array([1, 0]), 3)
    stats.benjamini_hochberg([0.5], 0.05)
    stats.sign_flip_mean_p(np.array([1.0, -1.0]), 0, 99)
    sys.stdout.flush()
