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


def _progress_printer(stream=None):
    """A progress bar on a terminal; one line per configuration otherwise (logs, CI)."""
    stream = stream or sys.stderr
    tty = stream.isatty()

    def show(i: int, n: int, rec: dict) -> None:
        value = rec.get("throughput")
        result = (f"{value:,.3g} {rec['throughput_unit']}" if value is not None
                  else f"{rec['status']}: {rec.get('error') or ''}")
        bar = "#" * round(20 * i / n)
        line = f"[{bar:<20}] {i}/{n} {rec['label']} {rec['precision']}: {result}"
        if tty:
            stream.write("\r\033[K" + line[:200] + ("\n" if i == n else ""))
        else:
            stream.write(line + "\n")
        stream.flush()

    return show


def cmd_bench(args: argparse.Namespace) -> int:
    from . import bench, precision

    workloads = [w for part in args.workloads or [] for w in part.split(",") if w.strip()] or None
    precisions = precision.normalize_all(",".join(args.precision)) if args.precision else None
    results = bench.run_benchmarks(workloads=workloads, precisions=precisions, quick=args.quick, xla=args.xla,
                                   isolation=args.isolation, time_budget_s=args.time_budget,
                                   progress=None if args.no_progress else _progress_printer())
    if args.out:
        bench.save_results(results, args.out)
        print(f"gpukit: results written to {args.out}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(results, indent=1))
        return 0
    frame = bench.results_frame(results)
    if args.format == "csv":
        sys.stdout.write(frame.to_csv(index=False))
        return 0
    dev = results["device"]
    print(f"device: {dev['kind'].upper()} {dev['name']}; {dev.get('catalogue_note') or ''}")
    cols = ["configuration", "precision", "math_mode", "status", "median_ms", "iqr_pct", "throughput", "unit",
            "achieved_tflops", "peak_fraction", "note"]
    rows = frame[cols].to_dict(orient="records")
    for r in rows:
        for k in ("median_ms", "iqr_pct", "throughput", "achieved_tflops", "peak_fraction"):
            if isinstance(r[k], float) and r[k] == r[k]:
                r[k] = float(f"{r[k]:.3g}")
        if frame.loc[rows.index(r), "noisy"]:
            r["note"] = ("noisy; " + r["note"]).rstrip("; ")
    print(format_table(rows, cols))
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

    p = sub.add_parser("bench", help="time TensorFlow workloads on the attached device (GPU, else CPU)",
                       description="Run short TensorFlow workloads on the attached device with warm-up, "
                       "calibrated repeats and device synchronisation; print median, spread and throughput.")
    p.add_argument("--quick", action="store_true", help="the short set (about a minute on a 2-core CPU)")
    p.add_argument("--workloads", action="append", metavar="LIST",
                   help="comma-separated subset of matmul,bandwidth,conv,resnet50,transformer")
    p.add_argument("--precision", action="append", metavar="LIST",
                   help="comma-separated precisions: fp32,tf32,fp16,bf16 (or float32,mixed_float16,mixed_bfloat16)")
    p.add_argument("--xla", action="store_true", help="compile the steps with XLA (jit_compile=True)")
    p.add_argument("--isolation", choices=("auto", "process", "subprocess"), default="auto",
                   help="run each configuration in a child process (default on a GPU) or here (default on a CPU)")
    p.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help="spread about this many seconds of measuring over the configurations")
    p.add_argument("--out", metavar="FILE", help="also write the versioned results document (JSON) here")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_bench)

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
