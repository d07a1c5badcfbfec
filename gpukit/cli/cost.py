"""``gpukit cost``: what a peak TFLOP costs to buy, to own with electricity, and to rent, from dated,
sourced prices; stale prices named on stderr."""

from __future__ import annotations

import argparse
import sys

from .. import precision
from ..prices import book as prices
from ..prices import cost
from .formatting import emit, format_table, rounded
from .options import (
    PRECISION_HELP,
    add_format_option,
    add_gpu_option,
    add_list_option,
    add_price_options,
    parse_date,
    resolve_gpus,
    say_variants,
)

#: Columns of the human-readable table (``--format csv``/``json`` carry every column).
TABLE_COLUMNS = (
    "gpu",
    "precision",
    "peak_tflops",
    "sustained_tflops",
    "price_kind",
    "price_usd",
    "price_date",
    "usd_per_tflop",
    "usd_per_sustained_tflop",
    "tco_usd_per_tflop",
    "cloud_provider",
    "cloud_usd_per_hour",
    "cloud_date",
    "cloud_usd_per_tflop_hour",
    "break_even_months",
    "note",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "cost",
        help="cost per TFLOP to buy, own and rent each GPU",
        description="Cost per peak TFLOP from dated, sourced prices: purchase, total cost of "
        "ownership with electricity, cloud $/hour, and the break-even between buying and renting.",
    )
    add_gpu_option(p)
    add_list_option(p, "--precision", f"comma-separated (default fp32,fp16): {PRECISION_HELP}, fp64, int8")
    add_price_options(p)
    p.add_argument(
        "--pue",
        type=float,
        default=1.0,
        help="power usage effectiveness (1.0 at a desk, ~1.4 in a data centre)",
    )
    p.add_argument(
        "--cloud",
        default=cost.DEFAULT_CLOUD,
        help="median (the default: the median of fresh offers, with their number and range), cheapest or a "
        "provider's name",
    )
    p.add_argument(
        "--cloud-kind",
        default="on-demand",
        choices=("on-demand", "spot", "serverless"),
        help="which cloud prices (never mixed): on-demand instances, spot, or serverless per-second rates",
    )
    p.add_argument(
        "--as-of", metavar="YYYY-MM-DD", help="price on this day: the prices that held then (default: today)"
    )
    p.add_argument("--max-age-days", type=int, default=365, help="prices older than this are marked stale")
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    precs = precision.normalize_all(",".join(args.precision)) if args.precision else ["fp32", "fp16"]
    book = prices.load_prices(args.prices, max_age_days=args.max_age_days)
    if args.as_of:
        book = book.as_of(parse_date(args.as_of, "--as-of"))
    gpus = resolve_gpus(args.gpu)
    switched = []
    if gpus and args.price_kind == "cloud":  # a cloud question prices the variant clouds rent
        picked = [cost.rented_variant(book, g, args.cloud_kind) for g in gpus]
        gpus, switched = [g for g, _ in picked], [note for _, note in picked]
    frame = cost.cost_table(
        book,
        gpus,
        precs,
        args.price_kind,
        args.electricity_usd_per_kwh,
        args.years,
        args.utilization,
        args.pue,
        args.cloud,
        cloud_kind=args.cloud_kind,
    )
    if not emit(frame, args.format):
        _print_table(args, frame)
    say_variants(gpus, args.format, switched)
    used = frame.drop_duplicates("gpu")  # the prices this table priced with, one purchase and one cloud a GPU
    stale = int(used["price_stale"].sum() + used["cloud_stale"].sum())
    if stale:
        print(
            f"gpukit: {stale} price(s) in use are older than {book.max_age_days} days and marked stale "
            "(see the note column)",
            file=sys.stderr,
        )
    return 0


def _print_table(args: argparse.Namespace, frame) -> None:
    """The cost table and what it assumed."""
    cols = list(TABLE_COLUMNS)
    rows = rounded(frame[cols].to_dict(orient="records"))
    print(format_table(rows, cols))
    print(
        f"\nTCO over {args.years:g} years at {args.utilization:.0%} use, ${args.electricity_usd_per_kwh:g}/kWh, "
        f"PUE {args.pue:g}; cloud: {args.cloud} {args.cloud_kind}; purchase price: {args.price_kind}"
        + (f"; prices as of {args.as_of}." if args.as_of else ".")
        + "\nsustained_tflops: the tensor-core peak at the share the GPU was measured to sustain in a large "
        "matrix multiply (data/matmul_rates.csv; the median share where none was measured: "
        "sustained_basis in --format csv/json)."
    )
