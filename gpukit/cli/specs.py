"""``gpukit specs``: the sourced GPU catalogue, or the named GPUs, as a table, one GPU's card, CSV or JSON."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys

from .. import specs
from ..present import labels
from .formatting import format_card, format_table, format_value
from .options import add_format_option, add_gpu_option

#: What the table sorts each segment by unless told.
DEFAULT_SORT = "fp16_tensor_tflops"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "specs",
        help="print the GPU catalogue or the named GPUs",
        description="Print the sourced GPU catalogue (data/gpus.csv), or the named GPUs. "
        "Names are forgiving: 'v100 sxm2 32gb', 'NVIDIA A100-PCIE-40GB', 'rtx 4090'.",
    )
    add_gpu_option(p, "a GPU to show (repeatable); a bare family name picks its default variant")
    p.add_argument(
        "--segment",
        action="append",
        choices=specs.SEGMENTS,
        help="only this segment (repeatable): consumer, workstation or datacenter",
    )
    p.add_argument(
        "--sort",
        metavar="COLUMN",
        help="the figure to sort each segment by, largest first (the table's default: fp16_tensor_tflops; "
        "any numeric column or a derived one such as fp16_tensor_tflops_per_w); csv and json keep the "
        "catalogue's order unless --sort or --segment is given",
    )
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
    chosen = specs.select(cat, args.gpu)
    sort = args.sort or DEFAULT_SORT
    if args.segment or args.sort or (args.format == "table" and not args.gpu):
        chosen = specs.by_segment(chosen, args.segment, sort)
    rows = specs.records(chosen)
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
        print(_grouped_table(rows, sort))
        print(
            f"\n{len(rows)} GPU(s); dense tensor figures, FP16 with FP32 accumulate; empty: the GPU has no such "
            "mode. All columns and sources: --format csv or json; one GPU's card: --gpu NAME."
        )
    return 0


def _grouped_table(rows: list[dict], sort: str) -> str:
    """One table, a heading line before each segment's rows, sorted within it by ``sort``."""
    columns = specs.summary_columns(sort)
    lines = format_table(rows, columns).split("\n")
    if any(line.startswith("(not shown") for line in lines) or len(lines) > len(rows) + 3:
        return _tables_by_segment(rows, columns, sort)  # fitted to the terminal: rows of several lines
    head, body = lines[: len(lines) - len(rows)], lines[len(lines) - len(rows) :]
    out, segment = list(head), None
    for row, text in zip(rows, body):
        if row["segment"] != segment:
            segment = row["segment"]
            count = sum(r["segment"] == segment for r in rows)
            out.append(f"{SEGMENT_TITLES[segment]} ({count}, by {labels.label(sort)})")
        out.append(text)
    return "\n".join(out)


def _tables_by_segment(rows: list[dict], columns, sort: str) -> str:
    """A heading and a table of its own for each segment (a table whose rows wrap over lines)."""
    out = []
    for segment in dict.fromkeys(r["segment"] for r in rows):
        part = [r for r in rows if r["segment"] == segment]
        out += [
            f"{SEGMENT_TITLES[segment]} ({len(part)}, by {labels.label(sort)})",
            format_table(part, columns),
            "",
        ]
    return "\n".join(out).rstrip()


#: What each segment's heading says.
SEGMENT_TITLES = {
    "consumer": "consumer: GeForce, TITAN and Radeon cards",
    "workstation": "workstation: RTX PRO and Radeon PRO cards, Apple's Max and Ultra machines",
    "datacenter": "datacenter: rented more than bought",
}
