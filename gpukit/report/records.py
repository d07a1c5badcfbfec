"""The records of a report run: the run and each notebook it executed, as the renderer fills them
in and the index, the front page and the timing section read them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class NotebookRun:
    """One executed notebook of a run (a head-to-head notebook once per pair)."""

    name: str
    parameters: dict
    title: str = ""
    status: str = "pending"  # ok | failed | interrupted
    seconds: float | None = None  # executing it (its kernel's start to its last cell's end)
    error: str | None = None
    html: str | None = None
    ipynb: str | None = None
    start_s: float | None = None  # when it started, in seconds after the run's first notebook did


@dataclass
class Run:
    """A whole report run: its id, notebooks, environment and where it was written."""

    run_id: str
    started: str
    notebooks: list[NotebookRun] = field(default_factory=list)
    environment: dict = field(default_factory=dict)
    device: dict = field(default_factory=dict)
    seconds: float | None = None
    path: str | None = None
    summary: dict = field(default_factory=dict)
    parallel: int = 1  # notebooks executed at once, at most
