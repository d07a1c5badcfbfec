"""``gpukit report``: render the report notebooks, with the parameters the command line sets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import ParameterError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="render the report (papermill + HTML) into outputs/",
        description="Execute the report notebooks with papermill and write executed .ipynb, "
        "HTML and an index.html into a new run folder; OUT/latest points at the newest good run.",
    )
    p.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        help="set a notebook parameter (repeatable); VALUE is YAML: 3, 0.5, true, '[A40, V100]'",
    )
    p.add_argument(
        "--params-file",
        metavar="FILE",
        help="YAML/JSON mapping of parameters; a notebook name as key scopes a mapping to it",
    )
    p.add_argument("--out", metavar="DIR", help="output folder (default: outputs/ in the checkout)")
    p.add_argument(
        "--results",
        metavar="DIR",
        help="merge every gpukit bench results file in DIR (one per machine) into the benchmark, "
        "performance-model and head-to-head pages; corrupt files are named and skipped, none changed",
    )
    p.add_argument(
        "--pair",
        action="append",
        nargs=2,
        metavar=("GPU_A", "GPU_B"),
        help="render the head-to-head notebook for this pair too (repeatable); "
        "the default report has A40 vs V100 and RTX A4000 vs RTX A5000",
    )
    p.add_argument(
        "--only",
        action="append",
        metavar="NOTEBOOK",
        help="render only this notebook (repeatable): 01_specs, 01 or specs",
    )
    p.add_argument(
        "--notebooks", metavar="DIR", help="folder of NN_name.ipynb notebooks (default: notebooks/)"
    )
    p.add_argument("--kernel", default="gpukit", help="Jupyter kernel to run them with (default: gpukit)")
    p.add_argument(
        "--cell-timeout",
        type=float,
        metavar="SECONDS",
        help="fail the run when one cell runs longer than this (default: 600; 0: no limit)",
    )
    p.set_defaults(func=run, fitted=False)  # its lines are a log; on a terminal, a live bar


def _notebook_parameters(args: argparse.Namespace) -> dict[str, str]:
    """The ``-p`` parameters as the command line wrote them, with ``--results`` as ``results_dir``."""
    params: dict[str, str] = {}
    for name, value in args.parameter or []:
        if name in params:
            raise ParameterError(f"parameter {name} is given twice with -p; give it once")
        params[name] = value
    if args.results:
        folder = Path(args.results)
        if not folder.is_dir():
            raise ParameterError(
                f"--results {args.results}: not a folder; give a folder of `gpukit bench --out` files"
            )
        if "results_dir" in params:
            raise ParameterError("give the results folder once: --results DIR or -p results_dir DIR")
        params["results_dir"] = str(folder.resolve())
    return params


def run(args: argparse.Namespace) -> int:
    # imported here, not above: nbformat and its schema validators would slow every command's start
    from .. import report

    params = _notebook_parameters(args)
    timeout = {} if args.cell_timeout is None else {"cell_timeout_s": args.cell_timeout}
    try:
        report.render_report(
            out_dir=args.out,
            cli_parameters=params,
            params_file=args.params_file,
            notebooks_dir=args.notebooks,
            only=args.only,
            kernel_name=args.kernel,
            pairs=args.pair,
            progress=report.progress.for_terminal(),
            **timeout,
        )
    except KeyboardInterrupt as exc:  # the message says where the partial output was kept
        detail = str(exc)
        print(f"gpukit: interrupted{'; ' + detail if detail else ''}", file=sys.stderr)
        return 130
    return 0
