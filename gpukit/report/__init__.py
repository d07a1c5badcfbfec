"""Render the report: run the notebooks with papermill, export HTML, write an index.

Layout of one run, rendered into a hidden ``.<run>.partial`` folder and renamed into place
only when every notebook succeeded::

    <out>/<run>/01_specs.ipynb      executed notebook (papermill records its parameters)
    <out>/<run>/01_specs.html       the same as HTML, code hidden behind a toggle
    <out>/<run>/index.html          every notebook with its parameters, run time, environment
    <out>/<run>/run.json            the same facts, machine-readable
    <out>/<run>/kernel.log          what the Jupyter kernels logged (kept out of the console)
    <out>/<run>/bench-results.json  what notebooks measured (the benchmark's results document)

Notebooks run in the caller's working folder, so relative paths in parameters mean what they
mean on the command line; ``$GPUKIT_RUN_DIR`` tells them the run folder.
    <out>/latest -> <run>           switched atomically after a successful run

A failing notebook (a cell that raises, or runs longer than the per-cell timeout) leaves
``<out>/<run>.failed/`` for inspection and ``latest`` untouched; Ctrl-C (or SIGTERM) leaves
``<out>/<run>.interrupted/``. Notebooks are executed by an :class:`Engine` (papermill by default),
two at a time where there are two cores, each in its own kernel; a notebook that measures the
machine (the benchmark) runs alone, and the ones after it once it is done.

Modules: :mod:`.parameters` finds the notebooks and plans their parameters and jobs,
:mod:`.engine` executes one notebook, :mod:`.schedule` decides which run at once and runs them,
:mod:`.html` writes the pages, :mod:`.run` runs the whole report into its folder, and
:mod:`.kernel` registers the Jupyter kernel.
"""

from .engine import DEFAULT_CELL_TIMEOUT_S, Engine, PapermillEngine
from .front import SECTIONS
from .html import index_html, notebook_html
from .kernel import KERNEL_NAME, ensure_kernel, install_kernel
from .parameters import (
    DEFAULT_PAIRS,
    PAIR_PARAMETERS,
    declared_parameters,
    discover_notebooks,
    load_params_file,
    parse_cli_value,
    plan_jobs,
    plan_parameters,
)
from .records import NotebookRun, Run

# Internals the report-engine tests check, importable here as they were from the one module.
from .run import _running_cell as _running_cell
from .run import _switch_latest as _switch_latest
from .run import render_report, run_summary

__all__ = [
    "DEFAULT_CELL_TIMEOUT_S",
    "Engine",
    "PapermillEngine",
    "SECTIONS",
    "index_html",
    "notebook_html",
    "KERNEL_NAME",
    "ensure_kernel",
    "install_kernel",
    "DEFAULT_PAIRS",
    "PAIR_PARAMETERS",
    "declared_parameters",
    "discover_notebooks",
    "load_params_file",
    "parse_cli_value",
    "plan_jobs",
    "plan_parameters",
    "NotebookRun",
    "Run",
    "render_report",
    "run_summary",
]
