"""``gpukit specs``: the sourced GPU catalogue, or the named GPUs, as a table, one GPU's card, CSV or JSON."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys

from .. import specs
from .formatting import format_card, format_table, format_value
from .options import add_format_option, add_gpu_option

#: Columns of the human-readable table (``--format csv``/``json`` carry every column).
TABLE_COLUMNS = (
    "gpu",
    "architecture",
    "memory_gb",
    "memory_bandwidth_gbs",
    "fp32_tflops",
    "tf32_tensor_tflops",
    "fp16_tensor_tflops",
    "int8_tensor_tops",
    "tdp_w",
    "nvlink_gbs",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "specs",
        help="print the GPU catalogue or the named GPUs",
        description="Print the sourced GPU catalogue (data/gpus.csv), or the named GPUs. "
        "Names are forgiving: 'v100 sxm2 32gb', 'NVIDIA A100-PCIE-40GB', 'rtx 4090'.",
    )
    add_gpu_option(p, "a GPU to show (repeatable); a bare family name picks its default variant")
    add_format_option(p, help="table (default: key columns), csv or json (every column, with sources)")
    p.add_argument(
        "--catalogue",
        metavar="FILE",
        help="a catalogue CSV of the same shape instead of data/gpus.csv "
        "(validated; errors name line, column and fix)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
        writer.writerows({k: format_value(v) for k, v in r.items()} for r in rows)
        sys.stdout.write(buf.getvalue())
    elif args.format == "json":
        print(json.dumps(rows, indent=2))
    elif len(rows) == 1:
        print(format_card(rows[0]))
    else:
        print(format_table(rows, TABLE_COLUMNS))
        print(
            f"\n{len(rows)} GPU(s); dense tensor figures, FP16 with FP32 accumulate. "
            "All columns and sources: --format csv or json."
        )
    return 0
