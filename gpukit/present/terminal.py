"""Progress the person at the terminal can see, drawn with ``rich``: a bar over numbered steps (the
benchmark's configurations; the report's notebooks build on :func:`bar`), a spinner for a wait of
unknown length (fetching prices); plain lines, or nothing, where the output is not a terminal (CI,
a pipe, a log file) or ``TERM=dumb``. Colour follows rich's rules: none when piped, none where
``NO_COLOR`` is set. rich is imported only when a bar is drawn."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TextIO


def is_live(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (standard error by default) is a terminal that can redraw a line."""
    stream = stream or sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a real stream
        return False
    return tty and os.environ.get("TERM", "") != "dumb"


def console(stream: TextIO):
    """A rich console writing to ``stream``: no guessing of highlights, long lines left to the terminal."""
    from rich.console import Console

    return Console(file=stream, stderr=stream is sys.stderr, highlight=False, soft_wrap=True)


def bar(console, *extra):
    """A transient progress bar on ``console``: spinner, what runs, the bar, done of all, time so far,
    then the ``extra`` columns."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        *extra,
        console=console,
        transient=True,
    )


@contextlib.contextmanager
def steps(total_label: str, stream: TextIO | None = None) -> Iterator[Callable[[int, int, str], None]]:
    """A bar over numbered steps, for ``show(i, n, line)`` after step ``i`` of ``n``: the line prints
    above the bar on a terminal, and alone (with ``[i/n]``) on a stream that is not one."""
    stream = stream or sys.stderr
    if not is_live(stream):

        def plain(i: int, n: int, line: str) -> None:
            stream.write(f"[{i}/{n}] {line}\n")
            stream.flush()

        yield plain
        return
    out = console(stream)
    shown = bar(out)
    task = shown.add_task(total_label, total=None)
    shown.start()

    def live(i: int, n: int, line: str) -> None:
        out.print(f"[{i}/{n}] {line}", markup=False)
        shown.update(task, total=n, completed=i)

    try:
        yield live
    finally:
        shown.stop()


@contextlib.contextmanager
def waiting(what: str, stream: TextIO | None = None) -> Iterator[None]:
    """A spinner with the time so far while ``what`` is done (a wait of unknown length); nothing
    where the stream is not a terminal (the command's own line says what came of it)."""
    stream = stream or sys.stderr
    if not is_live(stream):
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(), TextColumn(what), TimeElapsedColumn(), console=console(stream), transient=True
    ):
        yield
