"""``gpukit predict``: each catalogue GPU's step time and throughput on a workload, from the roofline
performance model, on one GPU or several training data-parallel; with the model's graded error."""

from __future__ import annotations

import argparse

from .. import perfmodel
from ..bench import fleet
from ..errors import ParameterError
from .formatting import emit, format_table, rounded
from .options import (
    add_format_option,
    add_gpu_option,
    add_mode_option,
    add_precision_option,
    check_batch_size,
    resolve_gpus,
    say_variants,
)

#: Columns of the human-readable table (``--format csv``/``json`` carry every column).
TABLE_COLUMNS = (
    "gpu",
    "step_time_s",
    "throughput",
    "throughput_unit",
    "bound",
    "math",
    "tensor_share",
    "bandwidth_share",
    "l2_cache_mib",
    "measured_throughput",
    "graded",
    "error_band",
    "note",
)

#: The shares of a datasheet figure each GPU was measured to sustain: column, what, where published.
MEASURED_SHARES = (
    ("tensor_share", "tensor peak each GPU sustains in a large matrix multiply", "data/matmul_rates.csv"),
    (
        "bandwidth_share",
        "memory bandwidth each GPU streams in a published streaming kernel (copy, triad, load, store)",
        "data/bandwidth_rates.csv",
    ),
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "predict",
        help="predict each catalogue GPU's speed on a workload",
        description="Predict step time and throughput of a workload on catalogue GPUs with the "
        "roofline performance model (per op: compute or memory bound). Predictions are graded "
        "against published measurements in the report; speedups are what they are for.",
    )
    p.add_argument(
        "--workload",
        default="resnet50",
        help="resnet50, transformer, matmul, conv, bandwidth, a built-in transformer (bert-base, "
        "bert-large, gpt2-small, gpt2-medium, llama-7b; with --seq-len), one fine-tuned on SQuAD "
        "(bert-base-squad, bert-large-squad) or a keras.applications name",
    )
    add_precision_option(p)
    p.add_argument("--batch", type=int, help="batch size (default: the workload's)")
    add_mode_option(p)
    p.add_argument(
        "--seq-len",
        type=int,
        metavar="N",
        help="tokens per sequence of a built-in transformer workload (default: 512 or its maximum; "
        "384 for a -squad workload)",
    )
    p.add_argument(
        "--gpus",
        type=int,
        default=1,
        metavar="N",
        help="N GPUs of each kind training data-parallel over their real link (batch per GPU)",
    )
    p.add_argument(
        "--link",
        choices=("nvlink", "pcie", "host"),
        help="with --gpus: the link (default: NVLink on SXM boards, none between GeForce cards, "
        "PCIe peer-to-peer otherwise; nvlink on PCIe cards means a bridge, two cards only)",
    )
    add_gpu_option(p)
    p.add_argument(
        "--results",
        metavar="FILE|DIR",
        help="a gpukit bench results file, or a folder of them: calibrates the model when one was "
        "measured on a catalogued GPU",
    )
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_batch_size(args.batch)
    if args.gpus < 1:
        raise ParameterError(f"--gpus {args.gpus}: give at least 1")
    if args.gpus > 1 and args.mode != "train":
        raise ParameterError("--gpus predicts data-parallel training; leave out --mode infer")
    results = fleet.load_results(args.results) if args.results else None
    extra = {"seq_len": args.seq_len} if args.seq_len is not None else {}
    named = resolve_gpus(args.gpu)
    frame = perfmodel.predict_table(
        args.workload,
        args.precision,
        args.batch,
        args.mode,
        named,
        results=results,
        count=args.gpus,
        link=args.link,
        **extra,
    )
    frame = perfmodel.with_error_bands(frame, str(frame.iloc[0]["workload"]), args.gpus)
    if emit(frame, args.format):
        say_variants(named, args.format)
        return 0
    cols = list(TABLE_COLUMNS)
    if args.gpus > 1:
        cols[3:3] = ["scaling_efficiency", "link"]
    rows = rounded(frame[cols].to_dict(orient="records"))
    first = frame.iloc[0]
    many = f" per GPU, {args.gpus} GPUs data-parallel" if args.gpus > 1 else ""
    print(
        f"{first['workload']} {first['mode']}, {first['precision']}, batch {first['batch_size']}{many}; "
        f"efficiency: {first['efficiency_source']}"
    )
    print(perfmodel.grading_statement(str(first["workload"]), args.gpus, frame))
    print(format_table(rows, cols))
    _print_footnotes(frame)
    say_variants(named, args.format)
    return 0


def _print_footnotes(frame) -> None:
    """Where the shares and the L2 sizes come from, naming the GPUs without a figure of their own."""
    for column, what, path in MEASURED_SHARES:
        unmeasured = frame.loc[frame[f"{column}_measured"] == False, "gpu"].tolist()  # noqa: E712 -- NaN rows
        print(
            f"{column}: the share of its datasheet {what}, as published runs measured it ({path})"
            + (
                f"; no run measured {', '.join(unmeasured)}: the median share of those measured"
                if unmeasured
                else ""
            )
            + "."
        )
    unsized = frame.loc[frame["l2_cache_mib"].isna() & frame["throughput"].notna(), "gpu"].tolist()
    print(
        "l2_cache_mib: the L2 each GPU's driver reports (data/gpus.csv, with its source); a kernel reads from it "
        "what the kernel before it wrote where that fits"
        + (
            f"; none in the catalogue for {', '.join(unsized)}: the cache term leaves them out"
            if unsized
            else ""
        )
        + "."
    )
