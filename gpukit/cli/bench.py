"""``gpukit bench``: time TensorFlow workloads on the attached device, or their scaling over several
devices under ``tf.distribute``; a table, CSV or the versioned results document as JSON.

TensorFlow loads only when the workloads run (gpukit.bench and gpukit.bench.distributed import it in their
calls, or in child processes), so ``--help``, ``--dry-run`` and bad names answer without it."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from .. import precision
from ..bench import distributed
from ..bench import harness as bench
from ..errors import ParameterError
from ..present import terminal
from .formatting import format_table, rounded
from .options import PRECISION_HELP, add_format_option, add_list_option

#: Columns of the timing table (``--format csv``/``json`` carry every column).
TIMING_COLUMNS = (
    "configuration",
    "precision",
    "math_mode",
    "status",
    "median_ms",
    "iqr_pct",
    "throughput",
    "unit",
    "achieved_tflops",
    "peak_fraction",
    "note",
)

#: Columns of the timing table shown to three significant figures.
ROUNDED_COLUMNS = ("median_ms", "iqr_pct", "throughput", "achieved_tflops", "peak_fraction")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="time TensorFlow workloads on the attached device (GPU, else CPU)",
        description="Run short TensorFlow workloads on the attached device with warm-up, "
        "calibrated repeats and device synchronisation; print median, spread and throughput.",
    )
    p.add_argument("--quick", action="store_true", help="the short set (about a minute on a 2-core CPU)")
    add_list_option(
        p, "--workloads", "comma-separated subset of matmul,bandwidth,conv,resnet50,transformer,decoder"
    )
    add_list_option(p, "--precision", f"comma-separated precisions: {PRECISION_HELP}")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="list the configurations this device would run and the math each runs at, without running",
    )
    p.add_argument("--xla", action="store_true", help="compile the steps with XLA (jit_compile=True)")
    p.add_argument(
        "--isolation",
        choices=("auto", "process", "subprocess"),
        default="auto",
        help="run each configuration in a child process (default on a GPU) or here (default on a CPU)",
    )
    p.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="spread about this many seconds of measuring over the configurations",
    )
    p.add_argument("--out", metavar="FILE", help="also write the versioned results document (JSON) here")
    p.add_argument(
        "--devices",
        type=int,
        metavar="N",
        help="train resnet50 and transformer under tf.distribute on N devices (N GPUs; without GPUs "
        "the CPU split into N logical devices) and report scaling against one device",
    )
    p.add_argument(
        "--strategy",
        choices=("mirrored", "multiworker"),
        default="mirrored",
        help="MirroredStrategy on this machine, or MultiWorkerMirroredStrategy across the workers "
        "in TF_CONFIG (worker 0 writes --out)",
    )
    add_format_option(p, choices=("table", "json", "csv"))
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)


def _workloads(args: argparse.Namespace) -> list[str] | None:
    """The ``--workloads`` named, None for the default set."""
    return [w for part in args.workloads or [] for w in part.split(",") if w.strip()] or None


def _result_line(rec) -> str:
    """A configuration's line as it finishes: what ran and what it delivered (or why not)."""
    value = rec.throughput
    result = (
        f"{value:,.3g} {rec.throughput_unit}" if value is not None else f"{rec.status}: {rec.error or ''}"
    )
    return f"{rec.label} {rec.precision}: {result}"


def run(args: argparse.Namespace) -> int:
    if args.devices is not None or args.strategy != "mirrored":
        return _run_scaling(args)

    workloads = _workloads(args)
    precisions = precision.normalize_all(",".join(args.precision)) if args.precision else None
    if args.dry_run:
        _print_plan(bench.plan(workloads, precisions, quick=args.quick, xla=args.xla), args.format)
        return 0
    steps = contextlib.nullcontext(None) if args.no_progress else terminal.steps("benchmarking")
    with steps as show:
        results = bench.run_benchmarks(
            workloads=workloads,
            precisions=precisions,
            quick=args.quick,
            xla=args.xla,
            isolation=args.isolation,
            time_budget_s=args.time_budget,
            progress=show and (lambda i, n, rec: show(i, n, _result_line(rec))),
        )
    if args.out:
        results.save(args.out)
        print(f"gpukit: results written to {args.out}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(results.to_dict(), indent=1))
        return 0
    frame = results.frame()
    if args.format == "csv":
        sys.stdout.write(frame.to_csv(index=False))
        return 0
    _print_timings(results, frame)
    return 0


def _print_plan(plan, fmt: str) -> None:
    """``--dry-run``: the configurations this device would run, and the math each runs at."""
    if fmt == "json":
        print(json.dumps(plan.to_dict(orient="records"), indent=1))
    elif fmt == "csv":
        sys.stdout.write(plan.to_csv(index=False))
    else:
        print(format_table(plan.to_dict(orient="records"), list(plan.columns)))


def _print_timings(results, frame) -> None:
    """The device line and the timing table, a noisy configuration said so in its note."""
    dev = results.device
    print(f"device: {dev.kind.upper()} {dev.name}; {dev.catalogue_note or ''}")
    cols = list(TIMING_COLUMNS)
    rows = frame[cols].to_dict(orient="records")
    for r in rows:
        for k in ROUNDED_COLUMNS:
            if isinstance(r[k], float) and r[k] == r[k]:
                r[k] = float(f"{r[k]:.3g}")
        if frame.loc[rows.index(r), "noisy"]:
            r["note"] = ("noisy; " + r["note"]).rstrip("; ")
    print(format_table(rows, cols))


def _run_scaling(args: argparse.Namespace) -> int:
    """``gpukit bench --devices N [--strategy mirrored|multiworker]``."""
    workloads = _workloads(args)
    precs = (
        [precision.trainable(p) for p in precision.normalize_all(",".join(args.precision))]
        if args.precision
        else ["fp32"]
    )
    if len(precs) != 1:
        raise ParameterError("--devices runs one precision at a time, such as fp32, fp16 or bf16")
    devices = args.devices if args.devices is not None else 1
    distributed.check(devices, args.strategy, workloads)  # fail before TensorFlow loads
    with terminal.waiting(f"measuring {args.strategy} scaling on {devices} device(s)"):
        doc = distributed.run_scaling(devices, args.strategy, workloads, precs[0], args.quick)
    task = (
        (json.loads(os.environ.get("TF_CONFIG") or "{}").get("task") or {})
        if args.strategy == "multiworker"
        else {}
    )
    chief = int(task.get("index", 0)) == 0
    if args.out and chief:
        doc.save(args.out)
        print(f"gpukit: results written to {args.out}", file=sys.stderr)
    elif args.out:
        print(
            f"gpukit: worker {task.get('index')} is not the chief; worker 0 writes the results",
            file=sys.stderr,
        )
    frame = doc.frame()
    if args.format == "json":
        print(json.dumps(doc.to_dict(), indent=1))
    elif args.format == "csv":
        sys.stdout.write(frame.to_csv(index=False))
    else:
        rows = rounded(frame.to_dict(orient="records"))
        print(format_table(rows, list(frame.columns)))
    return 0
