"""``gpukit compare``: two GPUs head to head (specs, throughput, memory fit, cost) with the verdicts
computed from those numbers; a table, CSV, JSON or Markdown."""

from __future__ import annotations

import argparse
import sys

from .. import compare
from ..bench import fleet
from . import formatting
from .formatting import format_table, rounded
from .options import (
    PRECISION_HELP,
    add_format_option,
    add_list_option,
    add_price_options,
    check_batch_size,
    split_list,
)

#: Columns of the human-readable table of numbers under the verdicts.
TABLE_COLUMNS = ("section", "item", "a", "b", "a_over_b", "note")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="head-to-head: two GPUs, with verdicts computed from the numbers",
        description="Compare two GPUs: spec ratios, throughput per workload and precision "
        "(measured where a results file has it, predicted otherwise), memory fit, cost, and "
        "verdicts generated from those numbers with their reasons and conditions.",
    )
    p.add_argument("a", help="first GPU, e.g. A40")
    p.add_argument("b", help="second GPU, e.g. V100")
    add_list_option(
        p,
        "--workloads",
        "comma-separated (default resnet50,bert-base-squad: the CNN and the transformer "
        "graded against publications)",
    )
    add_list_option(p, "--precision", f"comma-separated (default float32,fp16): {PRECISION_HELP}")
    p.add_argument(
        "--batch", type=int, help="batch size of the throughput comparison (default: the workload's)"
    )
    p.add_argument(
        "--seq-len",
        type=int,
        metavar="N",
        help="tokens per sequence of the transformer workloads (default: 512, or 384 for a -squad one)",
    )
    add_list_option(
        p,
        "--models",
        "models for the memory fit (default: the models the workloads train)",
    )
    add_list_option(
        p,
        "--llm",
        "LLMs to serve on a server of each GPU, e.g. deepseek-r1 (see gpukit llm --list): output tokens/s "
        "and the cost of a million, renting",
    )
    p.add_argument("--weights", help="the LLMs' weights format (default: each checkpoint's own, e.g. fp8)")
    p.add_argument("--engine", help="the engine that serves the LLMs (default: the weights' usual one)")
    p.add_argument(
        "--gpus",
        type=int,
        metavar="N",
        help="GPUs of each kind that serve an LLM (default: as many as it needs)",
    )
    add_price_options(p)
    p.add_argument(
        "--results",
        metavar="FILE|DIR",
        help="a gpukit bench results file, or a folder of them (one per machine); measured rows win",
    )
    add_format_option(p, choices=("table", "csv", "json", "md"))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_batch_size(args.batch)
    results = fleet.load_results(args.results) if args.results else None
    kwargs = {}
    if args.workloads:
        kwargs["workloads"] = split_list(args.workloads)
    if args.precision:
        kwargs["precisions"] = split_list(args.precision)
    if args.models:
        kwargs["models"] = split_list(args.models)
    if args.llm:
        kwargs["llms"] = split_list(args.llm)
    result = compare.compare(
        args.a,
        args.b,
        batch_size=args.batch,
        price_files=args.prices,
        price_kind=args.price_kind,
        electricity_usd_per_kwh=args.electricity_usd_per_kwh,
        years=args.years,
        utilization=args.utilization,
        results=results,
        seq_len=args.seq_len,
        llm_weights=args.weights,
        llm_engine=args.engine,
        llm_gpus=args.gpus,
        **kwargs,
    )
    if args.format == "csv":
        sys.stdout.write(result.long().to_csv(index=False))
    elif args.format == "json":
        print(result.to_json())
    elif args.format == "md":
        print(result.markdown())
    else:
        _print_table(result)
    return 0


def _clauses(text: str) -> list[str]:
    """``text``'s clauses: split at "; " outside parentheses."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text.startswith("; ", i):
            out.append(text[start:i])
            start = i + 2
    return [*out, text[start:]]


def _print_table(result) -> None:
    """The bottom line first (what, each card, who wins and by how much, how far to trust it),
    then the verdicts with their reasons and conditions, then the numbers they came from."""
    print(f"{result.a} vs {result.b}")
    for note in result.variant_notes:
        print(f"({note})")
    print()
    line = compare.bottom_line(result)[list(compare.bottom_line_columns)].rename(
        columns={"a": result.a, "b": result.b}
    )
    if formatting.table_width() is not None:  # fitted to the terminal: each clause of the basis said once
        clauses = [_clauses(str(text)) for text in line["error"]]
        keys = {c: i for i, c in enumerate(dict.fromkeys(c for row in clauses for c in row), 1)}
        cells = [" ".join(f"[{keys[c]}]" for c in row) for row in clauses]
        print(format_table(line.assign(error=cells).to_dict(orient="records"), list(line.columns)))
        print("\nHow far to trust each row (its error column's keys):")
        for clause, key in keys.items():
            print(f"[{key}] {clause}")
    else:
        print(format_table(line.to_dict(orient="records"), list(line.columns)))
    print("\nVerdicts:")
    for v in result.verdicts:
        print(f"* {v['topic']}: {v['verdict']}\n    {v['reason']} {v['condition']}")
    frame = result.long()
    rows = rounded(frame[frame["section"] != "verdict"].to_dict(orient="records"))
    print()
    print(format_table(rows, list(TABLE_COLUMNS)))
    print(f"\na = {result.a}, b = {result.b}; efficiency factors: {result.efficiency_source}")
