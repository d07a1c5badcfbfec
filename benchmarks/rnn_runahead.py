"""Why LSTM training at small batches can measure twice the estimate: the executor's threads.

Hypothesis under test: Keras's TensorFlow backend runs a recurrent layer as a ``tf.while_loop``
with ``parallel_iterations=32``. In the backward loop each time step computes its own gradient of
the layer's kernels (kernel-sized) and adds it to an accumulator, a serial chain of kernel-sized
additions. Whether the steps' gradients wait for the accumulation or pile up ahead of it is up to
the order TensorFlow's executor runs ready ops in, which depends on its inter-op threads: each case
is measured with one (``TF_NUM_INTEROP_THREADS=1``) and with what ``gpukit.memory.measure_env``
gives every measurement (at least two). Where the loop runs ahead, the excess of the measured peak
over the estimate (which counts one gradient) is a number of kernel-sized gradients.

The grid: ``gpukit.models.zoo.lstm`` at hidden sizes 128/256/512 (kernels grow as hidden squared, the
per-step activations linearly), batches 2/8/32, plain SGD training, each case in a fresh process
``--repeats`` times per thread setting.

``--kernels`` picks TensorFlow's CPU kernels (default: what ``measure_env`` gives a model with LSTM
layers, Eigen's); ``--busy N`` keeps N busy processes running beside the measurements, as a
loaded machine (CI, a second job) does.

Each set of runs is kept as a ``--raw`` document under ``benchmarks/runs/``; the page is written
from all of them, a section each:

    .venv/bin/python -m benchmarks.rnn_runahead --kernels onednn \
        --raw benchmarks/runs/memory-rnn-runahead-runs.json
    .venv/bin/python -m benchmarks.rnn_runahead --hidden 256 --batches 2 --optimizer adam --repeats 4 \
        --busy 2 --kernels onednn --raw benchmarks/runs/memory-rnn-runahead-busy-onednn-runs.json
    (and --kernels eigen --raw benchmarks/runs/memory-rnn-runahead-busy-eigen-runs.json)
    .venv/bin/python -m benchmarks.rnn_runahead --from-raw benchmarks/runs/memory-rnn-runahead*-runs.json \
        --write docs/accuracy/rnn-runahead.md
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from gpukit import _atomic, memory
from gpukit.bench import device
from gpukit.models import zoo

from ._report import publish, table_head

HIDDEN = (128, 256, 512)
BATCHES = (2, 8, 32)
MIB = 2**20

#: ``--kernels``: the ``TF_ENABLE_ONEDNN_OPTS`` each runs with (None: what ``measure_env`` gives).
KERNELS = {"measure": None, "onednn": "1", "eigen": "0"}


def kernel_bytes(model) -> int:
    """float32 bytes of the recurrent layers' kernels and recurrent kernels."""
    return sum(
        math.prod(w.shape) * 4
        for layer in model.layers
        if layer.__class__.__name__ == "LSTM"
        for w in layer.trainable_weights
        if len(w.shape) == 2
    )


def run(hidden_sizes, batches, repeats: int, optimizer: str, log=sys.stderr) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for hidden in hidden_sizes:
            model = zoo.lstm(hidden=hidden)
            path = str(Path(tmp) / f"lstm{hidden}.keras")
            model.save(path)
            kernels = kernel_bytes(model)
            est = memory.Estimator(path)
            for batch in batches:
                predicted = est.estimate(batch, "fp32", optimizer, "train").tensor_bytes
                row = {"hidden": hidden, "batch": batch, "kernel_bytes": kernels, "predicted": predicted}
                for key, threads in (("one", 1), ("default", None)):
                    runs, used, kernels_used = [], set(), set()
                    for _ in range(repeats):
                        m = memory.measure_in_subprocess(
                            path, batch, "fp32", optimizer, "train", inter_op_threads=threads
                        )
                        if m["status"] == "ok":
                            runs.append(m["measured_peak_bytes"])
                            used.add(m.get("inter_op_threads"))
                            kernels_used.add(m.get("onednn"))
                    row[key], row[f"{key}_threads"] = runs, sorted(used)
                    row[f"{key}_onednn"] = sorted(kernels_used, key=str)
                print(
                    f"hidden {hidden} batch {batch}: predicted {predicted / MIB:.1f} MiB, one thread "
                    f"{[round(r / MIB, 1) for r in row['one']]}, {row['default_threads']} threads "
                    f"{[round(r / MIB, 1) for r in row['default']]}",
                    file=log,
                    flush=True,
                )
                rows.append(row)
    return rows


#: More extra kernel-sized gradients than this at the peak: the loop ran ahead in that run.
RUN_AHEAD_KERNELS = 2


def _excess(r: dict, runs: list[int]) -> list[float]:
    return [(m - r["predicted"]) / r["kernel_bytes"] for m in runs]


def _cells(r: dict, runs: list[int]) -> str:
    if not runs:
        return "failed | "
    excess = _excess(r, runs)
    return f"{', '.join(f'{m / MIB:.1f}' for m in runs)} | {min(excess):+.1f} to {max(excess):+.1f}"


def _kernels(rows: list[dict]) -> str:
    """Which CPU kernels the runs recorded (``gpukit.memory.onednn_enabled``)."""
    used = {k for r in rows for key in ("one", "default") for k in r.get(f"{key}_onednn", [None])}
    said = {True: "oneDNN's", False: "Eigen's", None: "not recorded"}
    return " and ".join(said[k] for k in sorted(used, key=str))


def _many(rows: list[dict]) -> str:
    threads = sorted({t for r in rows for t in r["default_threads"] if t})
    return "/".join(map(str, threads)) or "the default number of"


def section(rows: list[dict], optimizer: str, busy: int = 0, measured_on: str | None = None) -> list[str]:
    """One set of runs: its conditions, a row per case, and how often two threads kept up."""
    many = _many(rows)
    load = f"{busy} busy-looping processes beside every measurement" if busy else "an idle machine"
    lines = [
        f"## {_kernels(rows)} kernels, {optimizer}, {load}",
        "",
        f"{optimizer} training; TensorFlow's CPU kernels: {_kernels(rows)}; {load}"
        + (" (a loaded machine)" if busy else "")
        + (f"; measured on {measured_on}" if measured_on else "")
        + ".",
        "",
        *table_head(
            f"| hidden | batch | kernels MiB | predicted MiB | one thread: measured MiB (each run) | excess, kernels "
            f"| {many} threads: measured MiB | excess, kernels |",
            "rrrrllll",
        ),
    ]
    for r in rows:
        lines.append(
            f"| {r['hidden']} | {r['batch']} | {r['kernel_bytes'] / MIB:.1f} | {r['predicted'] / MIB:.1f} | "
            f"{_cells(r, r['one'])} | {_cells(r, r['default'])} |"
        )
    largest = {
        key: max((e for r in rows for e in _excess(r, r[key])), default=float("nan"))
        for key in ("one", "default")
    }
    top = max(r["batch"] for r in rows)
    big = max((e for r in rows if r["batch"] == top for e in _excess(r, r["one"])), default=float("nan"))
    excess = [e for r in rows for e in _excess(r, r["default"])]
    ahead, runs = sum(e > RUN_AHEAD_KERNELS for e in excess), len(excess)
    lines += [
        "",
        f"Largest excess with one thread: {largest['one']:+.1f} kernels"
        + (f" (at batch {top}: {big:+.1f})" if len({r["batch"] for r in rows}) > 1 else "")
        + f"; with {many}: {largest['default']:+.1f} kernels. With {many} threads the loop kept up in "
        f"{runs - ahead} of {runs} runs ({ahead} hold more than {RUN_AHEAD_KERNELS} extra kernels).",
        "",
    ]
    return lines


def markdown(sets: list[dict]) -> str:
    """The page: what was measured and how, a section per set of runs (a ``--raw`` document each),
    and how to read them."""
    info = device.describe_attached()
    many = _many([r for s in sets for r in s["rows"]])
    lines = [
        "# Recurrent layers: the backward loop running ahead",
        "",
        f"Written by `benchmarks/rnn_runahead.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC "
        f"on {info['kind'].upper()} {info['name']}; every figure is what a run measured. "
        "`gpukit.models.zoo.lstm` (two LSTMs over 64 embedded tokens), each case in a fresh "
        "process; measured is the allocator's peak over one step "
        "(as in `docs/accuracy/memory.md`), predicted is `gpukit.memory`'s `tensor_bytes`. Each case ran with "
        f"one inter-op thread (TensorFlow's executor pool) and with {many}, as every measurement of the kit "
        "does (`gpukit.memory.measure_env`: at least two).",
        "",
        "The excess is (measured - predicted) in units of the LSTM kernels' float32 size: how many extra "
        "kernel-sized gradients were alive at the peak.",
        "",
    ]
    for s in sets:
        lines += section(s["rows"], s["optimizer"], s.get("busy", 0), s.get("measured_on"))
    lines += [
        "## Reading it",
        "",
        "With one inter-op thread the executor runs the backward loop's ready steps one after "
        "another, so the steps' kernel gradients pile up ahead of the serial accumulation, more of them the "
        "larger the kernels (Keras runs the loop with `parallel_iterations=32`, so at most 32 steps are in "
        f"flight); with {many} it mostly keeps up, and where it keeps up the peak is the one gradient a serial "
        "loop holds, which the estimate counts. Two or more is TensorFlow's default wherever there are two "
        "cores, so the kit measures with at least two (`gpukit.memory.MEASURE_INTER_OP_THREADS`) whatever the "
        "machine's core count; a process limited to one thread, or run where TensorFlow sees one core, holds "
        "the excess in the first columns. Under oneDNN's CPU kernels two threads run ahead in more runs than "
        "under Eigen's, so the kit measures models with LSTM or GRU layers with Eigen's "
        "(`gpukit.memory.MEASURE_ONEDNN_RECURRENT`; `--kernels` here picks either). On a GPU, Keras runs a "
        "default-configured LSTM or GRU as cuDNN's fused kernel, "
        "which has no per-step loop to run ahead. A loop that does run on a GPU (a non-default configuration) "
        "is dispatched asynchronously, ops in the order they become ready, which may pile up as one thread "
        "does here; that cannot be measured without a GPU.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", nargs="+", type=int, default=list(HIDDEN))
    parser.add_argument("--batches", nargs="+", type=int, default=list(BATCHES))
    parser.add_argument("--optimizer", default="sgd")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write", metavar="FILE", help="write the Markdown report here (atomically)")
    parser.add_argument("--raw", metavar="FILE", help="also write every measured run (JSON), for --from-raw")
    parser.add_argument(
        "--from-raw",
        nargs="+",
        metavar="FILE",
        help="measure nothing: write the page of these --raw files, a section each",
    )
    parser.add_argument(
        "--kernels",
        choices=sorted(KERNELS),
        default="measure",
        help="TensorFlow's CPU kernels (default: what gpukit.memory.measure_env gives an LSTM)",
    )
    parser.add_argument(
        "--busy",
        type=int,
        default=0,
        metavar="N",
        help="keep N busy-looping processes running while measuring (a loaded machine)",
    )
    args = parser.parse_args(argv)
    if args.from_raw:
        sets = [json.loads(Path(f).read_text()) for f in args.from_raw]
    else:
        if KERNELS[args.kernels] is not None:
            os.environ["TF_ENABLE_ONEDNN_OPTS"] = KERNELS[args.kernels]  # measure_env keeps a user's setting
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        try:
            rows = run(args.hidden, args.batches, args.repeats, args.optimizer)
        finally:
            for hog in hogs:
                hog.kill()
        measured_on = f"{datetime.now(UTC):%Y-%m-%d}"
        sets = [{"optimizer": args.optimizer, "busy": args.busy, "measured_on": measured_on, "rows": rows}]
        if args.raw:
            _atomic.write_text(args.raw, json.dumps(sets[0], indent=1))
    publish(markdown(sets), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
