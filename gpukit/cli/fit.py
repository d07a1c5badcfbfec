"""``gpukit fit``: will this model, at these batch sizes, fit on those GPUs? The estimate per model,
batch and GPU, and with ``--measure`` the peak one real step took on the attached device.

TensorFlow loads only for what needs it (building a Keras model, ``--measure``), inside the calls of
gpukit.memory and gpukit.bench.device, never when this module is imported."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from .. import memory, precision, specs
from ..bench import device
from ..errors import ParameterError
from ..models import zoo
from ..models.registry import check_optimizer
from ..units import MIB
from .formatting import emit
from .options import (
    add_format_option,
    add_gpu_option,
    add_mode_option,
    add_precision_option,
    check_batch_size,
    parse_shape,
    resolve_gpus,
    say_variants,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fit",
        help="will this model at this batch size fit on that GPU?",
        description="Estimate the memory one training or inference step needs (weights, gradients, "
        "optimizer state, activations, workspace) and check it against each GPU's memory.",
    )
    p.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="NAME",
        help="a keras.applications name (ResNet50, MobileNetV2...), a .keras file, a built-in "
        "transformer (bert-base, bert-large, gpt2-small, gpt2-medium, llama-7b) or a Keras-layer model "
        f"({', '.join(zoo.ZOO)}) (repeatable)",
    )
    p.add_argument(
        "--batch",
        type=int,
        nargs="+",
        action="extend",
        required=True,
        metavar="B",
        help="batch sizes (--batch 8 64, or repeated: --batch 8 --batch 64)",
    )
    add_precision_option(p)
    p.add_argument(
        "--optimizer", default="adam", help="sgd, momentum, adam, adamw, rmsprop, ... (train only)"
    )
    add_mode_option(p)
    p.add_argument(
        "--seq-len",
        type=int,
        metavar="N",
        help="sequence length of a built-in transformer or of a Keras-layer token model "
        "(keras-encoder, keras-decoder, keras-bert, keras-lstm, ...); image models have none",
    )
    p.add_argument("--input-shape", metavar="H,W,C", help="input shape of a keras.applications model")
    add_gpu_option(p, "GPUs to check (repeatable; default: all)")
    p.add_argument(
        "--runtime-reserve-mib",
        type=float,
        default=1024.0,
        metavar="MIB",
        help="CUDA context and workspaces a GPU process holds besides tensors (default 1024)",
    )
    p.add_argument(
        "--measure",
        action="store_true",
        help="also run one real step per batch on the attached device and show the measured peak",
    )
    p.add_argument(
        "--repeats",
        type=int,
        metavar="N",
        help="with --measure: measure each batch N times, each in a fresh process, and show the median "
        "and the lowest and highest run (the peak moves from run to run; default 1)",
    )
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for b in args.batch:
        check_batch_size(b)
    p = precision.trainable(args.precision)
    check_optimizer(args.optimizer)
    if args.repeats is not None and not args.measure:
        raise ParameterError("--repeats sets how many times --measure measures each batch; add --measure")
    if args.repeats is not None and args.repeats < 1:
        raise ParameterError(f"--repeats {args.repeats} must be at least 1")
    if args.seq_len is not None and args.seq_len < 1:
        raise ParameterError(f"sequence length {args.seq_len} must be at least 1")
    cat = specs.load_catalogue()
    named = resolve_gpus(args.gpu, cat)
    gpus = specs.select(cat, named)
    reserve = int(args.runtime_reserve_mib * MIB)
    shape = parse_shape(args.input_shape)
    estimators = [memory.Estimator(name, shape, args.seq_len) for name in args.model]
    if args.seq_len:
        _check_seq_len(estimators)
    frames = []
    for name, est in zip(args.model, estimators):
        frame = memory.fit_table(est, args.batch, gpus, p, args.optimizer, args.mode, reserve)
        if args.measure:
            frame = memory.with_measurements(frame, est, shape, args.repeats or 1)
            frame["measured_largest_batch"] = _bisect_on_gpu(name, p, args, shape)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    if not emit(frame, args.format):
        print(memory.format_fit(frame))
    say_variants(named, args.format)
    return 0


def _check_seq_len(estimators) -> None:
    """``--seq-len`` must apply to a model asked for: an error where it applies to none, a line on
    stderr for each model it leaves as it is."""
    without = [est.name for est in estimators if est.transformer is None and not est.spec.sizes]
    why = "--seq-len applies to the built-in transformers and the Keras-layer token models"
    if len(without) == len(estimators):
        raise ParameterError(f"{', '.join(without)}: no sequence length to set; {why}")
    for name in without:
        print(f"gpukit: {name} has no sequence length to set; {why}", file=sys.stderr)


def _bisect_on_gpu(name: str, p: str, args: argparse.Namespace, shape):
    """On a GPU, the real largest batch by bisection on out-of-memory; on a CPU, nothing to bisect."""
    if not device.physical_gpus():
        print(
            "gpukit: no GPU attached: the real largest batch is found by bisection on a GPU only",
            file=sys.stderr,
        )
        return None
    found = memory.bisect_largest_batch(name, p, args.optimizer, args.mode, shape, seq_len=args.seq_len)
    return found["largest_batch"]
