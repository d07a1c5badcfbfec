"""Options several commands declare alike (``--gpu``, ``--format``, ``--precision``, the price options
of cost and compare, ...) and the parsing and checks of the values they take: dates, input shapes,
comma-separated lists, batch sizes. Each error is a :class:`~gpukit.errors.ParameterError`: one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import date

from .. import specs
from ..errors import ParameterError
from ..prices import cost

#: The precision vocabulary in one line, for every command's help (see gpukit.precision).
PRECISION_HELP = (
    "float32 (TensorFlow's default: TF32 on Ampere+), fp32 (TF32 off), tf32, "
    "fp16 (= mixed_float16), bf16 (= mixed_bfloat16)"
)

#: The ``--format`` choices of most commands.
FORMATS = ("table", "csv", "json")


def add_gpu_option(p: argparse.ArgumentParser, help: str = "GPUs (repeatable; default: all)") -> None:
    """``--gpu NAME``, repeatable."""
    p.add_argument("--gpu", action="append", metavar="NAME", help=help)


def add_format_option(
    p: argparse.ArgumentParser, choices: Sequence[str] = FORMATS, help: str | None = None
) -> None:
    """``--format``: a table by default, or one of the machine-readable forms in ``choices``; and
    ``--wide``: the table with every column, however wide (the default fits the terminal)."""
    p.add_argument("--format", choices=choices, default="table", help=help)
    p.add_argument(
        "--wide",
        action="store_true",
        help="every column of the table, however wide (by default it fits the terminal: COLUMNS)",
    )


def add_precision_option(p: argparse.ArgumentParser) -> None:
    """``--precision``: one precision, TensorFlow's default when left out (fit, predict)."""
    p.add_argument("--precision", default="float32", help=PRECISION_HELP)


def add_list_option(p: argparse.ArgumentParser, name: str, help: str) -> None:
    """A repeatable option of comma-separated values (``--workloads``, ``--precision``, ``--models``)."""
    p.add_argument(name, action="append", metavar="LIST", help=help)


def add_mode_option(p: argparse.ArgumentParser) -> None:
    """``--mode``: a training step or an inference step (fit, predict)."""
    p.add_argument("--mode", choices=("train", "infer"), default="train")


def add_price_options(p: argparse.ArgumentParser) -> None:
    """Options shared by the commands that price GPUs (cost, compare)."""
    p.add_argument(
        "--price-kind",
        default="any",
        choices=("msrp", "street", "used", "cloud", "any"),
        help="which purchase price (any: the cheaper of the street and used prices that hold, else msrp)",
    )
    p.add_argument(
        "--electricity-usd-per-kwh",
        type=float,
        default=cost.DEFAULTS["electricity_usd_per_kwh"],
        metavar="USD",
    )
    p.add_argument("--years", type=float, default=cost.DEFAULTS["years"], help="ownership period for the TCO")
    p.add_argument(
        "--utilization",
        type=float,
        default=cost.DEFAULTS["utilization"],
        help="share of hours the GPU works, 0 to 1",
    )
    p.add_argument(
        "--prices", action="append", metavar="FILE", help="your own purchase or cloud price CSV (repeatable)"
    )


def resolve_gpus(names, catalogue=None) -> list[specs.GPU] | None:
    """The ``--gpu`` names resolved once into records (None when no name was given: all GPUs)."""
    return specs.gpus(catalogue, names) if names else None


def say_variants(gpus, fmt: str, more: Sequence[str] = ()) -> None:
    """Where a plain name picked one variant of several, say which: after a table on stdout, on
    stderr where stdout is CSV or JSON (``more``: other such sentences, one line each)."""
    lines = [g.variant_note for g in gpus or () if g.variant_note] + [m for m in more if m]
    for line in lines:
        print(
            ("" if fmt == "table" else "gpukit: ") + line, file=sys.stdout if fmt == "table" else sys.stderr
        )


def split_list(values) -> list[str]:
    """The values of a repeatable comma-separated option, stripped, empty ones left out."""
    return [v.strip() for part in values or [] for v in part.split(",") if v.strip()]


def parse_date(text: str, option: str) -> date:
    """A YYYY-MM-DD option value, or a one-line error."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ParameterError(
            f"{option} {text!r} is not a date; write YYYY-MM-DD such as 2024-06-01"
        ) from None


def parse_shape(text: str | None) -> tuple[int, ...] | None:
    """An ``--input-shape`` such as ``224,224,3`` or ``224x224x3`` (None when not given)."""
    if not text:
        return None
    try:
        shape = tuple(int(v) for v in text.replace("x", ",").split(",") if v.strip())
    except ValueError:
        raise ParameterError(f"input shape {text!r} is not height,width,channels such as 224,224,3") from None
    return shape


def check_batch_size(batch: int | None) -> None:
    """A batch size given must be at least 1 (None: the default)."""
    if batch is not None and batch < 1:
        raise ParameterError(f"batch size {batch} must be at least 1")
