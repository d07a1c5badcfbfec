"""What a report run tells the person waiting for it: each notebook as it starts and ends, how many
are done and left, the time so far, and an estimate of the time left from the last run's times.

:class:`RunProgress` says it in plain lines (a log, CI, a pipe, or any ``say`` callable given to
:func:`gpukit.report.render_report`); the command line draws the same events as a live bar on a
terminal (:class:`LiveRunProgress`, :func:`for_terminal`). The run calls the events; nothing here touches a file but
:func:`last_times`, which reads the previous run's ``run.json``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from ..present import terminal
from .schedule import Job


def last_times(out_root: Path) -> dict[str, float]:
    """Each notebook's seconds in the last good run under ``out_root`` (its ``latest``), by the stem
    it was saved as; empty where there is none or its record cannot be read."""
    try:
        record = json.loads((Path(out_root) / "latest" / "run.json").read_text())
    except (OSError, ValueError):
        return {}
    times = {}
    for entry in record.get("notebooks", []) if isinstance(record, dict) else []:
        seconds = entry.get("seconds") if isinstance(entry, dict) else None
        if entry.get("status") == "ok" and isinstance(seconds, int | float) and seconds >= 0:
            times[str(entry.get("name"))] = float(seconds)
    return times


def job_label(job: Job) -> str:
    """How progress names a job: the notebook, and its pair for a head-to-head one."""
    name = job.notebook.name
    if job.stem == job.notebook.stem:
        return name
    return f"{name} ({job.parameters['gpu_a']} vs {job.parameters['gpu_b']})"


def duration(seconds: float) -> str:
    """'42 s', or '3 min 05 s' from a minute on."""
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class RunProgress:
    """A run's progress as plain lines, each passed to ``say``.

    The estimate of the time left is the last run's time of every notebook not yet done (less what a
    running one has had), the ones that may share the machine divided among the notebooks run at
    once; a notebook the last run did not have counts as the median of those it did. With no last
    run there is no estimate, and the lines say only what is done and left.
    """

    def __init__(self, say: Callable[[str], None] = print, clock: Callable[[], float] = time.monotonic):
        self.say, self.clock = say, clock
        self.jobs: list[Job] = []
        self.estimates: dict[int, float] = {}
        self.running: dict[int, float] = {}
        self.done: set[int] = set()
        self.parallel = 1
        self.t0 = 0.0

    # --- the events a run calls, in this order ---------------------------------------------------
    def begin(self, run_id: str, jobs: Sequence[Job], folder: Path, parallel: int, last: dict[str, float]):
        self.jobs, self.parallel, self.t0 = list(jobs), max(1, parallel), self.clock()
        self.estimates = _estimates(self.jobs, last)
        about = self.left()
        self.say(
            f"gpukit report: run {run_id}, {len(self.jobs)} notebook(s) -> {folder}"
            + (f" (about {duration(about)}, from the last run's times)" if about is not None else "")
        )

    def started(self, job: Job) -> None:
        self.running[job.number] = self.clock()
        self.say(f"  [{job.number}/{len(self.jobs)}] {job_label(job)} ...")

    def note(self, job: Job, text: str) -> None:
        self.say(f"      note: {text}")

    def finished(self, job: Job, seconds: float, ok: bool) -> None:
        self.running.pop(job.number, None)
        if not ok:
            return
        self.done.add(job.number)
        which = f"[{job.number}/{len(self.jobs)}] " if self.parallel > 1 else ""
        self.say(f"      {which}done in {seconds:.1f} s; {self.status()}")

    def close(self) -> None:
        """The run is over, well or not (a live display stops here); before :meth:`end`."""

    def end(self, index: Path, run_id: str, seconds: float) -> None:
        self.say(f"Report: {index}  (run {run_id}, {seconds:.1f} s)")

    # --- what the lines (and a live bar) say -----------------------------------------------------
    def elapsed(self) -> float:
        return self.clock() - self.t0

    def left(self) -> float | None:
        """Seconds the run has left, estimated from the last run's times; ``None`` without them, or
        once every notebook is done."""
        if not self.estimates or len(self.done) == len(self.jobs):
            return None
        now = self.clock()
        alone = shared = 0.0
        for job in self.jobs:
            if job.number in self.done:
                continue
            rest = self.estimates[job.number] - (now - self.running.get(job.number, now))
            if job.alone:
                alone += max(rest, 0.0)
            else:
                shared += max(rest, 0.0)
        return alone + shared / self.parallel

    def status(self) -> str:
        """'3 of 12 done, 7 s so far, about 40 s left' (the estimate where there is one)."""
        left = self.left()
        return f"{len(self.done)} of {len(self.jobs)} done, {duration(self.elapsed())} so far" + (
            f", about {duration(left)} left" if left is not None else ""
        )


def _estimates(jobs: Sequence[Job], last: dict[str, float]) -> dict[int, float]:
    """Each job's expected seconds: its time in the last run, else the median of the times known."""
    known = [last[job.stem] for job in jobs if job.stem in last]
    if not known:
        return {}
    median = statistics.median(known)
    return {job.number: last.get(job.stem, median) for job in jobs}


class LiveRunProgress(RunProgress):
    """A report run drawn as a bar under its lines: the notebooks running, done of all, the time so
    far and the estimate of the time left; the lines themselves print above the bar, as in a log."""

    def __init__(self, stream: TextIO | None = None):
        self.console = terminal.console(stream or sys.stdout)
        super().__init__(say=lambda line: self.console.print(line, markup=False))
        self.bar = None
        self.task = None

    def begin(self, run_id, jobs, folder, parallel, last) -> None:
        from rich.progress import ProgressColumn
        from rich.text import Text

        run = self

        class TimeLeft(ProgressColumn):
            def render(self, task) -> Text:
                left = run.left()
                return Text(
                    "" if left is None else f"about {duration(left)} left", style="progress.remaining"
                )

        super().begin(run_id, jobs, folder, parallel, last)
        self.bar = terminal.bar(self.console, TimeLeft())
        self.task = self.bar.add_task("starting", total=len(self.jobs))
        self.bar.start()

    def started(self, job) -> None:
        super().started(job)
        self._describe()

    def finished(self, job, seconds: float, ok: bool) -> None:
        super().finished(job, seconds, ok)
        if self.bar is not None:
            self.bar.update(self.task, completed=len(self.done))
        self._describe()

    def _describe(self) -> None:
        if self.bar is None:
            return
        names = [job_label(j) for j in self.jobs if j.number in self.running]
        self.bar.update(self.task, description=", ".join(names) or "finishing")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def for_terminal() -> RunProgress:
    """The report's progress: a live bar where standard output is a terminal, plain lines otherwise."""
    return LiveRunProgress() if terminal.is_live(sys.stdout) else RunProgress(print)
