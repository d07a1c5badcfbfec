"""When each notebook of a run executes: up to two at once, each in its own kernel, on an engine that
can; a notebook that says it measures the machine (``"gpukit": {"runs_alone": true}`` in its
metadata) first and alone, since the others would disturb what it measures and some read it. The
others follow in the run's order. (First, not in its place: two at a time after it, the run's
other notebooks fill both slots to the end, where before it one slot would wait on the other.)

Jobs start in the run's order and are settled in the main thread as they finish. A failure starts
no more jobs; those still running finish and the failure is returned. An interrupt (Ctrl-C, a
failing job's KeyboardInterrupt) stops the jobs still running through the engine and is raised
again once they have returned.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .engine import Engine

#: Notebook metadata (under ``gpukit``) that makes a notebook run alone.
RUNS_ALONE = "runs_alone"
#: Seconds a stopped notebook is given to return before it is stopped by force, then given up on.
STOP_GRACE_S = 5.0


def runs_alone(notebook: Path) -> bool:
    """Whether ``notebook``'s metadata asks for it to run alone (it measures the machine)."""
    try:
        meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return False
    return bool(meta.get("gpukit", {}).get(RUNS_ALONE, False))


def default_parallel() -> int:
    """Notebooks at once by default: two where there are two cores or more, else one."""
    return min(2, os.cpu_count() or 1)


@dataclass
class Job:
    """One rendering of a run: its place (1-based), notebook, output stem, parameters and title."""

    number: int
    notebook: Path
    stem: str
    parameters: dict
    title: str
    alone: bool = False


@dataclass
class Outcome:
    """How a job went: the seconds it executed, and what it raised (``None``: it succeeded)."""

    seconds: float
    error: BaseException | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Hooks:
    """What the run does as jobs start, finish and are interrupted (all called in the main thread).

    ``finished`` returns whether the job succeeded. ``spare`` is called once, when a slot is free
    and no job is left to start (one at a time: before the first job), for work the run does in
    the background; ``before_alone`` before a job that runs alone starts (such work must be done
    by then)."""

    started: Callable[[Job], None]
    finished: Callable[[Job, Outcome], bool]
    interrupted: Callable[[Job, float], None]
    spare: Callable[[], None] = lambda: None
    before_alone: Callable[[], None] = lambda: None


def run_jobs(
    jobs: list[Job], work: Callable[[Job], Outcome], hooks: Hooks, engine: Engine, parallel: int
) -> Job | None:
    """Execute ``jobs`` with ``work`` (see the module docstring); the first job that failed, or ``None``.

    One at a time, in this thread, unless the engine is :attr:`~Engine.concurrent` and ``parallel``
    is over 1. A KeyboardInterrupt is raised again after :attr:`Hooks.interrupted` was called for
    every job that had started and not finished."""
    jobs = sorted(jobs, key=lambda job: not job.alone)  # stable: the others keep their order
    if parallel > 1 and engine.concurrent:
        return _Concurrent(work, hooks, engine, parallel).run(jobs)
    failed = None
    hooks.spare()
    for job in jobs:
        if failed:
            break
        if job.alone:
            hooks.before_alone()
        hooks.started(job)
        t0 = time.perf_counter()
        try:
            outcome = work(job)
        except KeyboardInterrupt:
            hooks.interrupted(job, time.perf_counter() - t0)
            raise
        if isinstance(outcome.error, KeyboardInterrupt):
            hooks.interrupted(job, outcome.seconds)
            raise outcome.error
        if not hooks.finished(job, outcome):
            failed = job
    return failed


class _Concurrent:
    """Jobs in threads of their own, up to ``parallel`` at once; settled in the calling thread."""

    def __init__(self, work: Callable[[Job], Outcome], hooks: Hooks, engine: Engine, parallel: int):
        self.work, self.hooks, self.engine, self.parallel = work, hooks, engine, parallel
        self.done: queue.Queue[tuple[Job, Outcome]] = queue.Queue()
        self.running: dict[int, tuple[Job, float]] = {}

    def run(self, jobs: list[Job]) -> Job | None:
        pending = list(jobs)
        failed: Job | None = None
        spare = True
        try:
            while self.running or (pending and not failed):
                while pending and not failed and self._may_start(pending[0]):
                    self._start(pending.pop(0))
                if spare and (not pending or failed) and self._slot_spare():
                    spare = False
                    self.hooks.spare()
                job, outcome = self._next()
                del self.running[job.number]
                if isinstance(outcome.error, KeyboardInterrupt):
                    self.hooks.interrupted(job, outcome.seconds)
                    raise outcome.error
                if not self.hooks.finished(job, outcome) and not failed:
                    failed = job
        except KeyboardInterrupt:
            self._stop_running()
            raise
        return failed

    def _may_start(self, job: Job) -> bool:
        if not self.running:
            return True
        if len(self.running) >= self.parallel or job.alone:
            return False
        return not any(other.alone for other, _ in self.running.values())

    def _slot_spare(self) -> bool:
        """Whether background work may run now: a slot is free and no job runs alone."""
        alone = any(job.alone for job, _ in self.running.values())
        return len(self.running) < self.parallel and not alone

    def _start(self, job: Job) -> None:
        if job.alone:
            self.hooks.before_alone()
        self.hooks.started(job)
        self.running[job.number] = (job, time.perf_counter())
        threading.Thread(target=self._thread, args=(job,), name=f"gpukit-{job.stem}", daemon=True).start()

    def _thread(self, job: Job) -> None:
        t0 = time.perf_counter()
        try:
            outcome = self.work(job)
        except BaseException as exc:  # noqa: BLE001 -- handed to the main thread, which decides
            outcome = Outcome(time.perf_counter() - t0, exc)
        self.done.put((job, outcome))

    def _next(self, timeout: float | None = None) -> tuple[Job, Outcome]:
        """The next finished job; waits in short steps so that Ctrl-C is seen at once."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if step <= 0:
                raise TimeoutError
            try:
                return self.done.get(timeout=step)
            except queue.Empty:
                continue

    def _stop_running(self) -> None:
        """Stop the jobs still running, gently and then by force, and mark each interrupted."""
        for force in (False, True):
            if not self.running:
                return
            self.engine.interrupt(force=force)
            deadline = time.monotonic() + STOP_GRACE_S
            while self.running and time.monotonic() < deadline:
                try:
                    job, outcome = self._next(deadline - time.monotonic())
                except (TimeoutError, KeyboardInterrupt):  # a second Ctrl-C: on to the forced stop
                    break
                del self.running[job.number]
                self.hooks.interrupted(job, outcome.seconds)
        for job, t0 in list(self.running.values()):  # never returned: left to its daemon thread
            self.hooks.interrupted(job, time.perf_counter() - t0)
        self.running.clear()
