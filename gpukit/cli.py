"""The ``gpukit`` command: thin subcommands over the library.

A :class:`~gpukit.errors.GpukitError` becomes one line on stderr and exit status 2;
anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence

from . import __version__, specs
from .errors import GpukitError, ParameterError

#: Columns of the human-readable table (``--format csv``/``json`` carry every column).
TABLE_COLUMNS = ("gpu", "architecture", "memory_gb", "memory_bandwidth_gbs", "fp32_tflops",
                 "tf32_tensor_tflops", "fp16_tensor_tflops", "int8_tensor_tops", "tdp_w", "nvlink_gbs")


def _fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else f"{value:g}"
    return str(value)


def format_table(rows: list[dict], columns: Sequence[str]) -> str:
    """A plain fixed-width table; empty cells where the GPU lacks a mode."""
    cells = [[_fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(columns)]
    numeric = [all(_is_number(row[i]) for row in cells) for i in range(len(columns))]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(columns), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def _is_number(text: str) -> bool:
    if text == "":
        return True
    try:
        float(text)
        return True
    except ValueError:
        return False


def format_card(row: dict) -> str:
    """One GPU, one field per line (the table view for a single GPU)."""
    width = max(len(k) for k in row)
    return "\n".join(f"{k.ljust(width)}  {_fmt(v)}" for k, v in row.items())


def cmd_specs(args: argparse.Namespace) -> int:
    cat = specs.load_catalogue(args.catalogue)
    if args.gpu:
        for name in args.gpu:
            res = specs.resolve(name, cat)
            if res.defaulted:
                print(f"gpukit: {res.describe()}", file=sys.stderr)
    rows = specs.records(specs.select(cat, args.gpu))
    if args.format == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(specs.COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _fmt(v) for k, v in r.items()} for r in rows)
        sys.stdout.write(buf.getvalue())
    elif args.format == "json":
        print(json.dumps(rows, indent=2))
    elif len(rows) == 1:
        print(format_card(rows[0]))
    else:
        print(format_table(rows, TABLE_COLUMNS))
        print(f"\n{len(rows)} GPU(s); dense tensor figures, FP16 with FP32 accumulate. "
              "All columns and sources: --format csv or json.")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import render_report

    cli_params: dict[str, str] = {}
    for name, value in args.parameter or []:
        if name in cli_params:
            raise ParameterError(f"parameter {name} is given twice with -p; give it once")
        cli_params[name] = value
    render_report(out_dir=args.out, cli_parameters=cli_params, params_file=args.params_file,
                  notebooks_dir=args.notebooks, only=args.only, kernel_name=args.kernel)
    return 0


def cmd_kernel(args: argparse.Namespace) -> int:
    from .report import install_kernel

    where = install_kernel(args.name, user=args.user)
    print(f"gpukit: Jupyter kernel {args.name!r} registered in {where}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpukit",
        description="Choose GPUs for deep learning with numbers you can trust.",
        epilog="Run 'gpukit COMMAND --help' for the options of each command.")
    parser.add_argument("--version", action="version", version=f"gpukit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("specs", help="print the GPU catalogue or the named GPUs",
                       description="Print the sourced GPU catalogue (data/gpus.csv), or the named GPUs. "
                       "Names are forgiving: 'v100 sxm2 32gb', 'NVIDIA A100-PCIE-40GB', 'rtx 4090'.")
    p.add_argument("--gpu", action="append", metavar="NAME",
                   help="a GPU to show (repeatable); a bare family name picks its default variant")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="table (default: key columns), csv or json (every column, with sources)")
    p.add_argument("--catalogue", metavar="FILE", help="a catalogue CSV of the same shape instead of data/gpus.csv "
                   "(validated; errors name line, column and fix)")
    p.set_defaults(func=cmd_specs)

    p = sub.add_parser("report", help="render the report (papermill + HTML) into outputs/",
                       description="Execute the report notebooks with papermill and write executed .ipynb, "
                       "HTML and an index.html into a new run folder; OUT/latest points at the newest good run.")
    p.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="set a notebook parameter (repeatable); VALUE is YAML: 3, 0.5, true, '[A40, V100]'")
    p.add_argument("--params-file", metavar="FILE",
                   help="YAML/JSON mapping of parameters; a notebook name as key scopes a mapping to it")
    p.add_argument("--out", metavar="DIR", help="output folder (default: outputs/ in the checkout)")
    p.add_argument("--only", action="append", metavar="NOTEBOOK",
                   help="render only this notebook (repeatable): 01_specs, 01 or specs")
    p.add_argument("--notebooks", metavar="DIR", help="folder of NN_name.ipynb notebooks (default: notebooks/)")
    p.add_argument("--kernel", default="gpukit", help="Jupyter kernel to run them with (default: gpukit)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("kernel", help="register the gpukit Jupyter kernel (make setup does this)",
                       description="Register this environment's Python as a Jupyter kernel for the notebooks "
                       "and reports, with TensorFlow's C++ logging turned down.")
    p.add_argument("--name", default="gpukit", help="kernel name (default: gpukit)")
    p.add_argument("--user", action="store_true", help="register for this user instead of inside the environment")
    p.set_defaults(func=cmd_kernel)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except GpukitError as exc:
        print(f"gpukit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpukit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
