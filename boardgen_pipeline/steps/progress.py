"""The progress bar of a calibration (SPEC 8 ``calibrate`` "with a progress
bar"; the nightly's progress too, from the library): rows done of the
total, boards per second, time left. The caller says how many rows are done
(``boardgen calibrate`` as each row is published; the nightly from the runs'
counts, which the engine keeps); the bar only draws."""

from __future__ import annotations

import time


class RowsProgress:
    """A ``rich`` progress bar over ``total`` rows of ``samples`` boards each."""

    def __init__(self, console, total: int, samples: int, where: str = ""):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (TextColumn("{task.description}"), BarColumn(bar_width=24), MofNCompleteColumn(),
                   TextColumn("rows  {task.fields[rate]:>7} boards/s  {task.fields[where]}"), TimeRemainingColumn())
        self._bar = Progress(*columns, console=console, transient=False)
        self._total, self._samples = total, samples
        self._task = self._bar.add_task("calibrating", total=total, rate="-", where=where)
        self._t0 = time.perf_counter()
        self.done = 0

    def __enter__(self) -> RowsProgress:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._bar.refresh()
        self._bar.__exit__(*exc)

    def update(self, done: int, description: str | None = None, where: str | None = None) -> None:
        """``done`` rows finished so far (never more than the total)."""
        self.done = max(self.done, min(done, self._total))
        rate = self.done * self._samples / max(1e-9, time.perf_counter() - self._t0)
        fields = {"rate": f"{rate:,.0f}" if self.done else "-"}
        if where is not None:
            fields["where"] = where
        if description is not None:
            fields["description"] = description
        self._bar.update(self._task, completed=self.done, **fields)
        self._bar.refresh()

    def note(self, text: str) -> None:
        self._bar.console.print(text)
