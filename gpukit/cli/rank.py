"""``gpukit rank``: the buyer's question. Every catalogue GPU for one job (a model trained or run,
or an LLM served), ranked by work per dollar at one kind of price, with its fit and the measured
error of its prediction; the bottom line first."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from .. import _atomic, rank
from ..errors import ParameterError
from ..llm import ENGINES
from ..llm.models import DEFAULT_MODEL
from ..prices import cost
from .formatting import emit, format_table, rounded
from .options import PRECISION_HELP, add_format_option

#: The table's columns for a purchase price and for a cloud rate, the ones that answer first (a
#: table fitted to the terminal keeps them: rank, GPU, throughput, price, work per dollar, error);
#: ``--format csv``/``json`` carry every column of :data:`gpukit.rank.COLUMNS`.
BUYING_COLUMNS = (
    "rank",
    "gpu",
    "throughput",
    "price_usd",
    "throughput_per_1k_usd",
    "error_pct",
    "fits",
    "batch_size",
    "largest_batch",
    "price_date",
    "usd_per_million_items",
    "within_error_of",
    "note",
)
RENTING_COLUMNS = (
    "rank",
    "gpu",
    "throughput",
    "cloud_usd_per_hour",
    "usd_per_million_items",
    "error_pct",
    "fits",
    "batch_size",
    "largest_batch",
    "cloud_provider",
    "price_date",
    "within_error_of",
    "note",
)
#: Options that only a model's job takes, and only an LLM's (checked against what was asked).
WORKLOAD_ONLY = ("seq_len", "precision", "mode", "batch")
LLM_ONLY = ("weights", "engine", "context")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "rank",
        help="which GPU for this job and this budget: every GPU ranked by work per dollar",
        description="Rank every catalogue GPU for one job by work per dollar: the predicted "
        "throughput at the largest batch that fits (or --batch), divided by one kind of price "
        "(never mixed), with each GPU's fit, the price's date and source, and the prediction's "
        "measured error. GPUs without a price of that kind, or that the job does not fit, are "
        "listed after the ranked ones.",
    )
    job = p.add_mutually_exclusive_group(required=True)
    job.add_argument(
        "--workload",
        help="a model to train or run: resnet50 or another keras.applications name, or a built-in "
        "transformer (bert-base, bert-large, gpt2-small, gpt2-medium, llama-7b)",
    )
    job.add_argument(
        "--llm",
        metavar="MODEL",
        nargs="?",
        const=DEFAULT_MODEL,
        help=f"an LLM to serve (gpukit llm --list, or its config.json; alone: {DEFAULT_MODEL})",
    )
    p.add_argument("--seq-len", type=int, metavar="N", help="tokens per sequence of a transformer workload")
    p.add_argument("--precision", help=f"default fp16: {PRECISION_HELP}")
    p.add_argument("--mode", choices=("train", "infer"), help="train (default) or infer")
    p.add_argument(
        "--batch",
        type=int,
        help="batch per GPU (default: the largest that fits, capped where throughput stops growing)",
    )
    p.add_argument("--optimizer", default="adam", help="the optimizer whose state must fit (training)")
    p.add_argument("--weights", help="with --llm: the weights format served (default q4_k_m)")
    p.add_argument("--engine", choices=tuple(ENGINES), help="with --llm: the serving engine")
    p.add_argument("--context", type=int, help="with --llm: tokens of context (default 4096)")
    p.add_argument("--gpus", type=int, default=1, metavar="N", help="N GPUs of each kind (priced N times)")
    p.add_argument(
        "--budget",
        type=float,
        metavar="USD",
        help="leave out what costs more: the purchase price of all --gpus, or with --price-kind cloud "
        "their rate per hour",
    )
    p.add_argument(
        "--price-kind",
        default="street",
        choices=rank.PRICE_KINDS,
        help="the one kind of price to divide by: street (default), used, msrp, any (each card's cheaper "
        "of its street and used prices, the kind named in each row) or cloud (an hourly rate)",
    )
    p.add_argument("--cloud-kind", default="on-demand", choices=rank.CLOUD_KINDS)
    p.add_argument(
        "--cloud",
        default=cost.DEFAULT_CLOUD,
        help="with --price-kind cloud: median (the default: of fresh offers), cheapest or a provider",
    )
    p.add_argument("--prices", action="append", metavar="FILE", help="your own price file(s)")
    p.add_argument("--plot", metavar="FILE", help="also draw throughput against price to FILE (.png, .svg)")
    add_format_option(p)
    p.set_defaults(func=run)


def _refuse_foreign_options(args: argparse.Namespace) -> None:
    """An option that does not apply to the job asked is an error that says why."""
    foreign, what = (LLM_ONLY, "--llm") if args.workload else (WORKLOAD_ONLY, "--workload")
    given = [name for name in foreign if getattr(args, name) is not None]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise ParameterError(f"{flags} applies only with {what}; leave it out or rank {what} instead")


def ranking(args: argparse.Namespace):
    """The ranking the arguments ask for."""
    _refuse_foreign_options(args)
    price = rank.Price(args.price_kind, args.cloud_kind, args.cloud, args.budget)
    if args.llm:
        job = rank.LLMJob(args.llm, args.weights or "q4_k_m", args.engine, args.context or 4096, args.gpus)
        return rank.rank_llm(job, price, args.prices)
    job = rank.Job(
        args.workload,
        args.precision or "fp16",
        args.mode or "train",
        args.seq_len,
        args.batch,
        args.gpus,
        args.optimizer,
    )
    return rank.rank(job, price, args.prices)


def _save_plot(frame, path: str) -> None:
    """Draw the ranking's figure into ``path`` (its suffix picks the format), atomically."""
    from ..plots import rank_figure  # matplotlib only when a figure is asked for: every command starts faster

    fig = rank_figure(frame)
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=Path(path).suffix.lstrip(".") or "png", dpi=120)
    except ValueError as exc:
        raise ParameterError(f"--plot {path}: {exc}; end the name in .png, .svg or .pdf") from None
    _atomic.write_bytes(path, buffer.getvalue())
    print(f"gpukit: figure written to {path}", file=sys.stderr)


def _unit_headers(unit: str) -> dict[str, str]:
    """The table's headers that carry the job's unit (tokens/s, images/s, sequences/s)."""
    items = unit.split("/")[0]
    return {
        "throughput": f"throughput ({unit})",
        "throughput_per_1k_usd": f"{unit} per $1,000",
        "usd_per_million_items": f"USD per million {items}",
    }


def run(args: argparse.Namespace) -> int:
    frame = ranking(args)
    if args.plot:
        _save_plot(frame, args.plot)
    if emit(frame, args.format):
        return 0
    print(rank.headline(frame))
    print(rank.basis(frame))
    print()
    columns = list(RENTING_COLUMNS if frame.attrs["price"].renting else BUYING_COLUMNS)
    if frame.attrs["price"].kind == "any":  # each row says which kind of price it took
        columns.insert(columns.index("price_usd"), "price_kind")
    if "usd_per_million_tokens_served" in frame:  # an LLM: serving at batch beside one sequence at a time
        at = columns.index("usd_per_million_items") + 1
        columns[at:at] = ["served_batch", "usd_per_million_tokens_served"]
    unit = frame.attrs["unit"]
    named = _unit_headers(unit)
    rows = rounded(frame[list(columns)].rename(columns=named).to_dict(orient="records"))
    print(format_table(rows, [named.get(c, c) for c in columns]))
    if frame.attrs.get("serving"):
        print("\n" + frame.attrs["serving"])
    print(
        "\nthroughput: predicted, of all --gpus together; error (%): the "
        "model's median error on published same-source speedups of its kind. Price sources: "
        "--format csv or json."
    )
    return 0
