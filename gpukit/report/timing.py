"""How long a run took, for its index: each notebook's run time and when it started (notebooks run
at once where they can, so the run's total is less than their sum), and the total."""

from __future__ import annotations

import html

from .records import NotebookRun, Run


def seconds_text(seconds: float | None) -> str:
    """``12.3 s``, or a dash for a time not taken (a notebook that never ran)."""
    return "–" if seconds is None else f"{seconds:.1f} s"


def notebook_time(nb: NotebookRun) -> str:
    """One notebook's run time as the index shows it beside its name."""
    return seconds_text(nb.seconds)


def total_line(run: Run) -> str:
    """The run's total and how it was reached: ``10 notebooks in 52.1 s, two at a time (83.4 s of
    notebook time)``."""
    n = len(run.notebooks)
    parts = [f"{n} notebook{'' if n == 1 else 's'} in {seconds_text(run.seconds)}"]
    if run.parallel > 1:
        summed = sum(nb.seconds or 0.0 for nb in run.notebooks)
        at_once = {2: "two"}.get(run.parallel, str(run.parallel))
        parts.append(f", up to {at_once} at a time ({summed:.1f} s of notebook time)")
    return "".join(parts) + "."


def timing_html(run: Run) -> str:
    """The run's times: the total line, then a row a notebook with when it started (seconds after
    the first one did), its run time and a bar placing it in the run."""
    span = max([run.seconds or 0.0] + [(nb.start_s or 0.0) + (nb.seconds or 0.0) for nb in run.notebooks])
    rows = []
    for nb in run.notebooks:
        start = "–" if nb.start_s is None else f"+{nb.start_s:.1f} s"
        bar = ""
        if span > 0 and nb.start_s is not None and nb.seconds is not None:
            left, width = 100 * nb.start_s / span, max(100 * nb.seconds / span, 0.5)
            bar = (
                f'<div style="position:relative;height:.8em;width:18em;background:#eef1f4">'
                f'<div style="position:absolute;left:{left:.1f}%;width:{width:.1f}%;height:100%;'
                f'background:#6b8cae"></div></div>'
            )
        rows.append(
            f"<tr><td>{html.escape(nb.name)}</td><td>{start}</td>"
            f"<td>{notebook_time(nb)}</td><td>{bar}</td></tr>"
        )
    return (
        f"<p>{html.escape(total_line(run))}</p>"
        "<table><tr><th>notebook</th><th>started</th><th>run time</th><th></th></tr>"
        f"{''.join(rows)}</table>"
    )
