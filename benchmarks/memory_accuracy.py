"""How right is gpukit's memory estimate? Measure a grid of Keras models on this device.

For each case it estimates ``tensor_bytes`` (``gpukit.memory``) and measures the allocator's
peak of one real step in a fresh process (``gpukit.memory.measure_in_subprocess``), each case
``--repeats`` times (the peak moves from run to run where two buffers may or may not overlap).
It writes the per-family summary and every case to a Markdown file, each section of the page a
function of ``memory_page`` (beside this script), and the per-family error bands that ``gpukit
fit`` quotes to ``data/memory_error.csv``.

The grid: keras.applications CNNs and the Keras-layer models of ``gpukit.models.zoo`` (transformer
encoder, causal decoder, ViT, LSTM, bidirectional GRU, 1-D CNN with a SimpleRNN, BERT-shaped
encoder, a plain image CNN), batch sizes 2, 8 and 32, training with sgd, momentum, adam, adamw and rmsprop, and
inference, in float32 (at batch 2 adam only); and at batch 8 the two mixed policies (adam training
and inference); and the encoder and the decoder at 512 tokens, where attention's scores outweigh
everything else (``--long`` measures only those).

    .venv/bin/python -m benchmarks.memory_accuracy --write docs/accuracy/memory.md --bands data/memory_error.csv \
        --raw benchmarks/runs/memory-accuracy-runs.json
    .venv/bin/python -m benchmarks.memory_accuracy --models keras-encoder --batches 4 --repeats 1
    .venv/bin/python -m benchmarks.memory_accuracy --long --raw benchmarks/runs/memory-accuracy-runs-long.json
    .venv/bin/python -m benchmarks.memory_accuracy --from-raw a.json b.json --write docs/accuracy/memory.md
    .venv/bin/python -m benchmarks.memory_accuracy --models keras-lstm \
        --merge-into benchmarks/runs/memory-accuracy-runs-zoo.json
    .venv/bin/python -m benchmarks.memory_accuracy --models DenseNet121 --raw /tmp/densenet.json --resume
    .venv/bin/python -m benchmarks.memory_accuracy --from-raw benchmarks/runs/memory-accuracy-runs-*.json \
        --kernels benchmarks/runs/memory-kernels-other-runs.json \
        --other-cpu benchmarks/runs/memory-cpu-other-runs.json \
        --outside benchmarks/runs/memory-outside-grid-runs.json --write docs/accuracy/memory.md \
        --bands data/memory_error.csv --model-bands data/memory_error_models.csv
    .venv/bin/python -m benchmarks.memory_accuracy --models keras-cnn \
        --raw benchmarks/runs/memory-outside-grid-runs.json

Every measurement runs oneDNN's CPU kernels (``gpukit.memory.MEASURE_ONEDNN``), a model with
LSTM or GRU layers Eigen's (``MEASURE_ONEDNN_RECURRENT``); ``--kernels`` compares a raw file of
the same cases measured with the other ones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from gpukit import _atomic, memory
from gpukit.bench import device
from gpukit.models import zoo

from . import memory_page as page
from ._report import publish

#: keras.applications families with an input size each accepts, kept small for a CPU.
CNNS = {
    "ResNet50": (96, 96, 3),
    "MobileNetV2": (96, 96, 3),
    "EfficientNetB0": (96, 96, 3),
    "DenseNet121": (96, 96, 3),
    "VGG16": (64, 64, 3),
    "InceptionV3": (96, 96, 3),
}
#: Zoo models measured like the grid's but kept out of its statistics and error bands (``--outside``
#: reports them in a section of their own). keras-cnn, a plain image classifier: its float16 training
#: on a CPU without float16 convolutions runs the convolution gradients through Eigen's kernels and
#: peaks far above the estimate (docs/accuracy/memory.md, "Outside the grid"), a path no GPU takes; in
#: the CNN band it would call every CNN's fit borderline far beyond any GPU's error.
OUTSIDE_GRID = ("keras-cnn",)
MODELS = {**CNNS, **{name: None for name in zoo.ZOO if name not in OUTSIDE_GRID}}
BATCHES = (2, 8, 32)
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw", "rmsprop")
MIXED = (("fp16", 8), ("bf16", 8))
#: Long sequences, where attention's scores outweigh everything else: the token models at this
#: length, inference at two batch sizes in float32 and bfloat16, and adam training at the smaller.
LONG_SEQ = 512
LONG_MODELS = ("keras-encoder", "keras-decoder")
LONG_CASES = (
    (8, "fp32", "none", "infer"),
    (32, "fp32", "none", "infer"),
    (8, "bf16", "none", "infer"),
    (8, "fp32", "adam", "train"),
)


def cases(models, batches, optimizers=OPTIMIZERS, mixed=MIXED):
    """(model, batch, precision, optimizer, mode) of the grid."""
    out = []
    for name in models:
        for batch in batches:
            # the smallest batch with one optimizer: the optimizers differ in fixed terms, which
            # the larger batches cover
            opts = optimizers if batch != min(batches) or len(batches) == 1 else optimizers[2:3] or optimizers
            out += [(name, batch, "fp32", opt, "train") for opt in opts]
            out.append((name, batch, "fp32", "none", "infer"))
        for precision, batch in mixed:
            out += [(name, batch, precision, "adam", "train"), (name, batch, precision, "none", "infer")]
    return out


def long_cases(models=LONG_MODELS, seq_len: int = LONG_SEQ):
    """(model, batch, precision, optimizer, mode, seq_len) at a long sequence."""
    return [(name, *case, seq_len) for name in models for case in LONG_CASES]


def _input_label(shape, seq_len) -> str:
    return "x".join(map(str, shape)) if shape else (f"{seq_len} tokens" if seq_len else "")


def run(grid, repeats: int, log=sys.stderr, done=(), on_row=None) -> list[dict]:
    """Measure every case of ``grid`` but those whose key (:func:`memory_page.cases.case_key`) is in
    ``done``; after each case, ``on_row(rows)`` gets the rows measured so far (``main`` writes them to
    ``--raw``, so a run stopped part way keeps what it measured)."""
    rows = []
    skip = set(done)
    estimators: dict[str, memory.Estimator] = {}
    for name, batch, precision, optimizer, mode, *rest in grid:
        seq_len = rest[0] if rest else None
        shape = MODELS.get(name)
        case = {
            "model": name,
            "input": _input_label(shape, seq_len),
            "seq_len": seq_len,
            "batch": batch,
            "precision": precision,
            "optimizer": optimizer,
            "mode": mode,
        }
        if page.case_key(case) in skip:
            continue
        est = estimators.get(f"{name}/{seq_len}") or memory.Estimator(name, shape, seq_len)
        estimators[f"{name}/{seq_len}"] = est
        t0 = time.perf_counter()
        opt = optimizer if mode == "train" else "sgd"
        estimated = _estimated(est, batch, precision, opt, mode)
        predicted = estimated["predicted"]
        measured, threads, onednn, native, notes = [], [], [], [], []
        for _ in range(repeats):
            got = memory.measure_in_subprocess(name, batch, precision, opt, mode, shape, seq_len=seq_len)
            if got["status"] == "ok":
                measured.append(got["measured_peak_bytes"])
                threads.append(got.get("inter_op_threads"))
                onednn.append(got.get("onednn"))
                native.append(tuple(got.get("native_16bit") or ()))
            else:
                notes.append(got.get("error", got["status"]))
        row = {
            **case,
            "runs": measured,
            **estimated,
            "measured": statistics.median(measured) if measured else None,
            "low": min(measured) if measured else None,
            "high": max(measured) if measured else None,
            "inter_op_threads": sorted(set(threads)),
            "onednn": sorted(set(onednn), key=str),
            "native_16bit": sorted(set().union(*native)) if native else None,
            "measured_on": f"{datetime.now(UTC):%Y-%m-%d}",
            "note": "; ".join(notes),
        }
        row["error"] = predicted / row["measured"] - 1 if row["measured"] else None
        rows.append(row)
        err = f"{row['error']:+.1%}" if row["error"] is not None else row["note"]
        print(
            f"{est.label} b{batch} {precision} {optimizer} {mode}: predicted {predicted / 2**20:.1f} MiB, "
            f"measured {[round(m / 2**20, 1) for m in measured]} MiB, {err} ({time.perf_counter() - t0:.0f} s)",
            file=log,
            flush=True,
        )
        if on_row is not None:
            on_row(rows)
    return rows


def _write_raw(path: str, repeats: int, rows: list[dict]) -> None:
    _atomic.write_text(path, json.dumps({"repeats": repeats, "rows": rows}, indent=1))


def merge_into(path: str, rows: list[dict]) -> list[dict]:
    """The rows of a ``--raw`` file with ``rows`` in place of the same cases (new cases added),
    written back atomically: one family measured again without measuring the whole grid."""
    old = json.loads(Path(path).read_text())
    fresh = {page.case_key(r): r for r in rows}
    merged = [fresh.pop(page.case_key(r), r) for r in old["rows"]] + list(fresh.values())
    _atomic.write_text(path, json.dumps({**old, "rows": merged}, indent=1))
    return merged


def _estimated(est, batch: int, precision: str, optimizer: str, mode: str) -> dict:
    """What a row records of its estimate: the bytes, and what a refit of the update terms needs
    (the sizes they multiply, the passes' own peak and what was resident)."""
    e = est.estimate(batch, precision, optimizer, mode)
    return {
        "predicted": e.tensor_bytes,
        "trainable_bytes": est.graph.trainable_params * 4,
        "largest_variable_bytes": est.graph.largest_variable * 4,
        "largest_embedding_bytes": est.graph.largest_embedding * 4,
        "step_peak_bytes": e.step_peak_bytes,
        "resident_bytes": e.weights_bytes + e.optimizer_bytes + e.input_bytes,
        "family": est.family,
    }  # as gpukit fit names it, from the model's layers


def reestimate(rows: list[dict]) -> list[dict]:
    """``rows`` (measured earlier, read back with ``--from-raw``) with this version's estimates."""
    estimators: dict[str, memory.Estimator] = {}
    out = []
    for r in rows:
        seq_len = r.get("seq_len")
        est = estimators.setdefault(
            f"{r['model']}/{seq_len}", memory.Estimator(r["model"], MODELS.get(r["model"]), seq_len)
        )
        opt = r["optimizer"] if r["mode"] == "train" else "sgd"
        if r.get("runs"):
            r = {**r, "measured": statistics.median(r["runs"]), "low": min(r["runs"]), "high": max(r["runs"])}
        r = {k: v for k, v in r.items() if k != "workspace"}  # what rows of earlier versions recorded
        row = {**r, **_estimated(est, r["batch"], r["precision"], opt, r["mode"])}
        row["error"] = row["predicted"] / row["measured"] - 1 if row["measured"] else None
        out.append(row)
    return out


def markdown(
    rows: list[dict],
    kernels: tuple[dict, str] | None = None,
    other_cpu: tuple[dict, str] | None = None,
    outside: tuple[list[dict], str] | None = None,
) -> str:
    """The report (``docs/accuracy/memory.md``): the grid's figures, per family and mode, the refitted
    update terms, what the estimate counts and cannot see, the comparisons given (``kernels``,
    ``other_cpu``: a ``--raw`` file and its path; ``outside``: re-estimated rows and their path) and
    every case."""
    family_bands = {(b["family"], b["mode"]): b for b in page.bands(rows, page.BAND_KEYS)}
    lines = [
        *page.summary_lines(rows),
        *page.family_lines(rows),
        *page.update_terms_lines(rows),
        *page.counted_lines(bool(kernels)),
        *page.unseen_lines(bool(other_cpu)),
        *(page.kernels_section(rows, *kernels) if kernels else []),
        *(page.other_cpu_section(rows, *other_cpu) if other_cpu else []),
        *(page.outside_section(*outside, family_bands) if outside else []),
        "",
        "## Every case",
        "",
    ] + page.case_table(rows)
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _grid_arguments(parser)
    _file_arguments(parser)
    args = parser.parse_args(argv)
    if args.model_bands and not args.outside:
        parser.error(
            "--model-bands writes the bands of the models kept out of the grid: "
            "name their runs with --outside"
        )
    for name in args.models:
        MODELS.setdefault(name, None)
    if args.from_raw:
        rows = []
        for f in args.from_raw:
            rows += json.loads(Path(f).read_text())["rows"]
        rows = reported = reestimate(rows)
    else:
        rows, reported = _measure(args, parser)
    if args.raw:
        _write_raw(args.raw, args.repeats, rows)
    if args.merge_into and not args.from_raw:
        merge_into(args.merge_into, rows)
    outside = (
        (reestimate(json.loads(Path(args.outside).read_text())["rows"]), args.outside)
        if args.outside
        else None
    )
    text = markdown(
        reported,
        (json.loads(Path(args.kernels).read_text()), args.kernels) if args.kernels else None,
        (json.loads(Path(args.other_cpu).read_text()), args.other_cpu) if args.other_cpu else None,
        outside,
    )
    publish(text, args.write)
    if args.bands or args.model_bands:
        _write_bands(args, reported, outside)
    return 0


def _grid_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that say which cases to measure, and how often."""
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--batches", nargs="+", type=int, default=list(BATCHES))
    parser.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS))
    parser.add_argument("--no-mixed", action="store_true", help="float32 only")
    parser.add_argument(
        "--precisions",
        nargs="+",
        choices=("fp32", "fp16", "bf16"),
        help="only the grid's cases in these precisions (with --merge-into: one policy measured again)",
    )
    parser.add_argument(
        "--long",
        action="store_true",
        help=f"only the long-sequence cases ({', '.join(LONG_MODELS)} at {LONG_SEQ} tokens)",
    )
    parser.add_argument("--repeats", type=int, default=3)


def _file_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that name the files read and written: the report, the bands, the raw runs."""
    parser.add_argument("--write", metavar="FILE", help="write the Markdown report here (atomically)")
    parser.add_argument(
        "--bands", metavar="FILE", help="write the error bands per family and mode (CSV) here"
    )
    parser.add_argument(
        "--raw",
        metavar="FILE",
        help="also write every measured row (JSON), for --from-raw; "
        "written after each case, so a run stopped part way keeps what it measured",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows already in --raw FILE and measure only the cases it lacks",
    )
    parser.add_argument(
        "--merge-into",
        metavar="FILE",
        help="put the measured rows into this --raw file in place of the same cases",
    )
    parser.add_argument(
        "--kernels",
        metavar="FILE",
        help="a --raw file of the same cases measured with other CPU kernels (its 'kernels' "
        "key says which): the report compares the two",
    )
    parser.add_argument(
        "--other-cpu",
        metavar="FILE",
        help="a --raw file of the same cases measured on a CPU with other 16-bit instructions "
        "(its 'cpu' key describes it): the report compares the two",
    )
    parser.add_argument(
        "--outside",
        metavar="FILE",
        help="a --raw file of models kept out of the grid (OUTSIDE_GRID): estimated again and "
        "reported in a section of their own, outside the figures and bands",
    )
    parser.add_argument(
        "--model-bands",
        metavar="FILE",
        help="with --outside: write each of its models' own error bands, per precision (CSV), "
        "which gpukit fit uses for them in place of their family's",
    )
    parser.add_argument(
        "--from-raw",
        metavar="FILE",
        nargs="+",
        help="measure nothing: read rows written by --raw (several runs are merged) and "
        "estimate them again with this version of gpukit",
    )


def _measure(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[list[dict], list[dict]]:
    """Measure the cases ``args`` name, but those a resumed ``--raw`` file already has: every row (the
    file's and the new), and the rows to report, the file's estimated again by this version."""
    if args.long:
        grid = long_cases()
    else:
        grid = cases(args.models, args.batches, args.optimizers, () if args.no_mixed else MIXED)
        if set(LONG_MODELS) <= set(args.models) and args.batches == list(BATCHES):
            grid += long_cases()
    if args.precisions:
        grid = [case for case in grid if case[2] in args.precisions]
    kept, done = _resumed(args, parser)
    new = run(
        grid,
        args.repeats,
        done=done,
        on_row=(lambda new: _write_raw(args.raw, args.repeats, kept + new)) if args.raw else None,
    )
    # the report estimates every row with this version: a resumed file's rows may be an earlier one's
    return kept + new, reestimate(kept) + new


def _resumed(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[list[dict], set]:
    """With ``--resume``, the rows already in the ``--raw`` file and their cases (none without it)."""
    kept, done = [], set()
    if args.resume:
        if not args.raw:
            parser.error("--resume continues a --raw FILE: name it")
        if Path(args.raw).exists():
            try:
                kept = json.loads(Path(args.raw).read_text())["rows"]
                done = {page.case_key(r) for r in kept}
            except (ValueError, KeyError, TypeError) as exc:
                parser.error(
                    f"--resume: {args.raw} is not a --raw file of this script ({exc!r}); "
                    "name another file or move this one away"
                )
    return kept, done


def measured_date(rows: list[dict]) -> str:
    """The day the last of ``rows`` was measured (``measured_on``), or today where none says."""
    days = [str(r["measured_on"]) for r in rows if r.get("measured_on")]
    return max(days) if days else f"{datetime.now(UTC):%Y-%m-%d}"


def _write_bands(
    args: argparse.Namespace, reported: list[dict], outside: tuple[list[dict], str] | None
) -> None:
    """Write the error bands ``--bands`` and ``--model-bands`` ask for, placed on this device and dated
    when the runs were measured (today for a run just made): written again from the same runs
    (``--from-raw``, ``make accuracy``), they are the same file."""
    info = device.describe_attached()
    when = measured_date(reported)
    where = f"{info['kind'].upper()} {info['name']}".replace(",", " ")
    if args.bands:
        _atomic.write_text(args.bands, page.bands_csv(reported, when, where))
    if args.model_bands:
        _atomic.write_text(args.model_bands, page.bands_csv(outside[0], when, where, ("model", "precision")))


if __name__ == "__main__":
    sys.exit(main())
