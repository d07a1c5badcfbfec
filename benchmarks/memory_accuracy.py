"""How right is gpukit's memory estimate? Measure a grid of Keras models on this device.

For each case it estimates ``tensor_bytes`` (``gpukit.memory``) and measures the allocator's
peak of one real step in a fresh process (``gpukit.memory.measure_in_subprocess``), each case
``--repeats`` times (the peak moves from run to run where two buffers may or may not overlap).
It writes the per-family summary and every case to a Markdown file, and the per-family error
bands that ``gpukit fit`` quotes to ``data/memory_error.csv``.

The grid: keras.applications CNNs and the Keras-layer models of ``gpukit.zoo`` (transformer
encoder, causal decoder, ViT, LSTM, bidirectional GRU, 1-D CNN with a SimpleRNN, BERT-shaped
encoder, a plain image CNN), batch sizes 2, 8 and 32, training with sgd, momentum, adam, adamw and rmsprop, and
inference, in float32 (at batch 2 adam only); and at batch 8 the two mixed policies (adam training
and inference); and the encoder and the decoder at 512 tokens, where attention's scores outweigh
everything else (``--long`` measures only those).

    .venv/bin/python benchmarks/memory_accuracy.py --write docs/memory-accuracy.md --bands data/memory_error.csv \
        --raw docs/memory-accuracy-runs.json
    .venv/bin/python benchmarks/memory_accuracy.py --models keras-encoder --batches 4 --repeats 1
    .venv/bin/python benchmarks/memory_accuracy.py --long --raw docs/memory-accuracy-runs-long.json
    .venv/bin/python benchmarks/memory_accuracy.py --from-raw a.json b.json --write docs/memory-accuracy.md
    .venv/bin/python benchmarks/memory_accuracy.py --models keras-lstm --merge-into docs/memory-accuracy-runs-zoo.json
    .venv/bin/python benchmarks/memory_accuracy.py --models DenseNet121 --raw /tmp/densenet.json --resume
    .venv/bin/python benchmarks/memory_accuracy.py --from-raw docs/memory-accuracy-runs-*.json \
        --kernels docs/memory-kernels-other-runs.json --other-cpu docs/memory-cpu-other-runs.json \
        --outside docs/memory-outside-grid-runs.json --write docs/memory-accuracy.md --bands data/memory_error.csv \
        --model-bands data/memory_error_models.csv
    .venv/bin/python benchmarks/memory_accuracy.py --models keras-cnn --raw docs/memory-outside-grid-runs.json

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

from _report import publish

from gpukit import _atomic, device, memory, zoo

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
#: peaks far above the estimate (docs/memory-accuracy.md, "Outside the grid"), a path no GPU takes; in
#: the CNN band it would call every CNN's fit borderline far beyond any GPU's error.
OUTSIDE_GRID = ("keras-cnn",)
MODELS = {**CNNS, **{name: None for name in zoo.ZOO if name not in OUTSIDE_GRID}}
BATCHES = (2, 8, 32)
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw", "rmsprop")
MIXED = (("fp16", 8), ("bf16", 8))
TOLERANCE = 0.15
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
    """Measure every case of ``grid`` but those whose key (:func:`_case`) is in ``done``; after each
    case, ``on_row(rows)`` gets the rows measured so far (``main`` writes them to ``--raw``, so a
    run stopped part way keeps what it measured)."""
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
        if _case(case) in skip:
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


def _case(row: dict) -> tuple:
    return (
        row["model"],
        row["input"],
        row.get("seq_len"),
        row["batch"],
        row["precision"],
        row["optimizer"],
        row["mode"],
    )


def merge_into(path: str, rows: list[dict]) -> list[dict]:
    """The rows of a ``--raw`` file with ``rows`` in place of the same cases (new cases added),
    written back atomically: one family measured again without measuring the whole grid."""
    old = json.loads(Path(path).read_text())
    fresh = {_case(r): r for r in rows}
    merged = [fresh.pop(_case(r), r) for r in old["rows"]] + list(fresh.values())
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


def fit_update_terms(rows: list[dict], bounded: bool = True) -> dict[str, tuple[float, ...]]:
    """The update terms (gpukit.memory.UPDATE_WORKSPACE_FIT) per optimizer, fitted on the float32
    training cases by gpukit.memory.fit_update_terms, each within gpukit.memory.update_term_bounds
    (``bounded=False``: the three beside the backward pass only not below zero, for comparison)."""
    out = {}
    train = [r for r in rows if r["mode"] == "train" and r["precision"] == "fp32" and r["measured"]]
    for opt in sorted({r["optimizer"] for r in train}):
        rs = [r for r in train if r["optimizer"] == opt]
        if len(rs) < 2:
            continue
        low, high = memory.update_term_bounds(opt)
        if not bounded:
            high = (float("inf"),) * 3 + high[3:]
        out[opt] = memory.fit_update_terms(
            [(r["trainable_bytes"], r["largest_variable_bytes"], r["largest_embedding_bytes"]) for r in rs],
            [r["measured"] for r in rs],
            [r["step_peak_bytes"] for r in rs],
            [r["resident_bytes"] for r in rs],
            low,
            high,
        )
    return out


def _refit_error(r: dict, terms: dict) -> float:
    pred = r["predicted"]
    if r["mode"] == "train" and r["optimizer"] in terms:
        pred = float(
            memory.with_update(
                r["resident_bytes"],
                r["step_peak_bytes"],
                r["trainable_bytes"],
                r["largest_variable_bytes"],
                r["largest_embedding_bytes"],
                terms[r["optimizer"]],
            )
        )
    return pred / r["measured"] - 1


def leave_one_family_out(rows: list[dict], bounded: bool = True) -> dict[str, float]:
    """Worst |error| on each family when the update terms are fitted without it."""
    worst = {}
    for fam in sorted({r["family"] for r in rows}):
        terms = fit_update_terms([r for r in rows if r["family"] != fam], bounded)
        errs = [abs(_refit_error(r, terms)) for r in rows if r["family"] == fam and r["measured"]]
        worst[fam] = max(errs) if errs else float("nan")
    return worst


def bands(rows: list[dict], keys: tuple[str, ...] = ("family",)) -> list[dict]:
    """Per family (or per the row ``keys`` given): cases, median |error|, and the band of errors
    (estimate / measured - 1) over every repeat, the band ``gpukit fit`` uses to call a fit borderline."""
    out = []
    for group in sorted({tuple(r[k] for k in keys) for r in rows}):
        rs = [r for r in rows if tuple(r[k] for k in keys) == group and r["measured"]]
        if not rs:
            continue
        errs = [r["predicted"] / m - 1 for r in rs for m in (r["low"], r["high"])]
        out.append(
            {
                **dict(zip(keys, group)),
                "cases": len(rs),
                "median_abs_error": statistics.median(abs(r["error"]) for r in rs),
                "worst_abs_error": max(abs(r["error"]) for r in rs),
                "worst_vs_highest": min(r["predicted"] / r["high"] - 1 for r in rs),
                "error_low": min(errs),
                "error_high": max(errs),
            }
        )
    return out


#: What ``data/memory_error.csv`` groups the grid's cases by: a training fit is judged by the
#: family's training cases, an inference fit by its inference cases (gpukit.memory.error_band).
BAND_KEYS = ("family", "mode")


def bands_csv(rows: list[dict], when: str, device_name: str, keys: tuple[str, ...] = BAND_KEYS) -> str:
    """:func:`bands` as ``data/memory_error.csv`` (by family and mode) or, with
    ``keys=("model", "precision")``, ``data/memory_error_models.csv`` (the models kept out of the
    grid, each by itself)."""
    lines = [
        ",".join(keys)
        + ",cases,median_abs_error,worst_abs_error,error_low,error_high,measured_on,date,source"
    ]
    for b in bands(rows, keys):
        lines.append(
            ",".join(str(b[k]) for k in keys) + f",{b['cases']},{b['median_abs_error']:.4f},"
            f"{b['worst_abs_error']:.4f},{b['error_low']:.4f},{b['error_high']:.4f},{device_name},{when},"
            "benchmarks/memory_accuracy.py"
        )
    return "\n".join(lines) + "\n"


#: The accuracy the estimate aims at over the whole grid.
TARGETS = {"median": 0.05, "worst": 0.15, "leave_one_family_out": 0.20}


def _per_family(rows: list[dict], labels) -> str:
    """What the runs recorded, per family (``labels(row)``: a row's labels, None for runs from before
    it was recorded), said once where every family recorded the same."""
    per: dict[str, set] = {}
    for r in rows:
        per.setdefault(r["family"], set()).update(labels(r))
    said = {}
    for fam, used in sorted(per.items()):
        known = "/".join(sorted(used - {None}))
        said[fam] = " and ".join(part for part in (known, "not recorded" if None in used else "") if part)
    if len(set(said.values())) == 1:
        return f"{next(iter(said.values()))} in every family"
    return "; ".join(f"{fam}: {text}" for fam, text in said.items())


def _recorded(key: str, say=str):
    """``labels`` for :func:`_per_family`: what every run of a row recorded under ``key``."""
    return lambda r: [say(v) for v in r[key]] if r.get(key) else [None]


def _native_label(row: dict) -> list:
    native = _native(row)
    return [None] if native is None else ["+".join(native) or "none"]


def _conditions_lines(rows: list[dict]) -> list[str]:
    """How the measuring processes ran, per family: TensorFlow's inter-op threads, its CPU kernels and
    the CPU's 16-bit instructions."""
    return [
        "- TensorFlow's inter-op threads in the measuring process (`gpukit.memory.measure_env`: at least "
        f"{memory.MEASURE_INTER_OP_THREADS}; with one, a recurrent layer's backward loop runs ahead, "
        f"`docs/memory-rnn-runahead.md`): {_per_family(rows, _recorded('inter_op_threads'))}",
        "- its CPU kernels (`gpukit.memory.MEASURE_ONEDNN`: oneDNN's, as TensorFlow's Eigen kernels, its default "
        "on CPUs without AVX-512 VNNI/BF16, AVX-VNNI or AMX, hold convolution-gradient buffers a GPU does not; "
        "Eigen's for models with LSTM or GRU layers, `MEASURE_ONEDNN_RECURRENT`, as under oneDNN's an LSTM's "
        "backward loop runs ahead in some runs): "
        + _per_family(rows, _recorded("onednn", lambda v: "oneDNN" if v else "Eigen")),
        "- the 16-bit formats the CPU of each 16-bit run had dot-product instructions for "
        "(`gpukit.device.cpu_native_16bit`; without them a 16-bit matrix multiply works through float32 copies): "
        + "; ".join(
            f"{p} cases: {_per_family([r for r in rows if r['precision'] == p], _native_label)}"
            for p in ("bf16", "fp16")
            if any(r["precision"] == p for r in rows)
        ),
    ]


def _paired(rows: list[dict], others: list[dict], differ) -> list[tuple[dict, dict]]:
    """(grid row, other row) for each case of ``others`` the grid measured too, where ``differ(grid, other)``."""
    mine = {_case(r): r for r in rows if r["measured"]}
    return [
        (mine[_case(o)], o)
        for o in others
        if o.get("measured") and _case(o) in mine and differ(mine[_case(o)], o)
    ]


#: How far apart two kernels' peaks must be for the comparison to list the case.
KERNEL_GAP = 0.10


def _onednn(row: dict) -> bool:
    """Whether a row's runs ran oneDNN's CPU kernels (its ``onednn``: every run's answer)."""
    return any(row.get("onednn") or ())


def kernels_section(rows: list[dict], other: dict, path: str) -> list[str]:
    """The grid's cases measured again under the other CPU kernels (``other``: a ``--raw`` file
    whose rows say by ``onednn`` how they ran and whose ``kernels`` describes each way), against
    the grid's runs: Eigen's peak over oneDNN's, how much they move, and where."""
    pairs = _paired(
        rows,
        other["rows"],
        lambda r, o: _onednn(o) != _onednn(r) and (o["precision"] == "fp32" or _native(o) == _native(r)),
    )  # on one CPU's 16 bits
    if not pairs:
        return []
    # each pair as (oneDNN's row, Eigen's row, the grid's row)
    oriented = [(r, o, r) if _onednn(r) else (o, r, r) for r, o in pairs]
    ratio = [e["measured"] / d["measured"] for d, e, _ in oriented]
    moved = sorted(
        (p for p, x in zip(oriented, ratio) if abs(x - 1) > KERNEL_GAP),
        key=lambda p: -p[1]["measured"] / p[0]["measured"],
    )
    errs = [abs(r["predicted"] / o["measured"] - 1) for r, o in pairs]
    eigen_grid = sorted({r["model"] for r, _ in pairs if not _onednn(r)})
    names = {"eigen": "Eigen's", "onednn": "oneDNN's"}
    described = (
        "; ".join(f"{names.get(name, name)}: {text}" for name, text in other["kernels"].items())
        if isinstance(other["kernels"], dict)
        else other["kernels"]
    )
    lines = [
        "",
        "## The CPU kernels: Eigen's against oneDNN's",
        "",
        f"{len(pairs)} of the cases above were measured with TensorFlow's other CPU kernels too: Eigen's where "
        f"the grid ran oneDNN's, oneDNN's where it ran Eigen's ({', '.join(eigen_grid) or 'none'}); "
        f"{described}; the runs: `{path}`. Eigen's peak over oneDNN's: median {statistics.median(ratio):.2f}x, "
        f"from {min(ratio):.2f}x to {max(ratio):.2f}x; {sum(x > 1 + KERNEL_GAP for x in ratio)} higher by more than "
        f"{KERNEL_GAP:.0%}, {sum(x < 1 - KERNEL_GAP for x in ratio)} lower. Against the other kernels' runs the "
        f"estimate's median |error| would be {statistics.median(errs):.1%}, {sum(e <= TOLERANCE for e in errs)} of "
        f"{len(errs)} within ±{TOLERANCE:.0%}, the worst {max(errs):.1%}. The cases that move by more than "
        f"{KERNEL_GAP:.0%} (the grid's kernels marked *):",
        "",
        "| model | batch | precision | optimizer | mode | predicted MiB | oneDNN MiB (range) | Eigen MiB (range) "
        "| Eigen / oneDNN |",
        "|---|---:|---|---|---|---:|---:|---:|---:|",
    ]

    def cell(row, grid):
        mark = "*" if row is grid else ""
        return f"{row['measured'] / 2**20:.1f}{mark} ({row['low'] / 2**20:.1f}–{row['high'] / 2**20:.1f})"

    for d, e, r in moved:
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['precision']} | {r['optimizer']} | {r['mode']} | "
            f"{r['predicted'] / 2**20:.1f} | {cell(d, r)} | {cell(e, r)} | "
            f"{e['measured'] / d['measured']:.2f} |"
        )
    return lines


def _native(row: dict) -> tuple[str, ...] | None:
    """The 16-bit formats the CPU of a row's runs had instructions for (None: not recorded)."""
    native = row.get("native_16bit")
    return None if native is None else tuple(native)


def other_cpu_section(rows: list[dict], other: dict, path: str) -> list[str]:
    """The grid's 16-bit cases measured on a CPU with other 16-bit instructions (``other``: a ``--raw``
    file whose rows say by ``native_16bit`` what their CPU had and whose ``cpu`` describes it): both
    measurements and the estimate's error against each."""
    pairs = _paired(rows, other["rows"], lambda r, o: _native(o) != _native(r))
    if not pairs:
        return []
    ratio = [r["measured"] / o["measured"] for r, o in pairs]
    errs_here = [abs(r["error"]) for r, _ in pairs]
    errs_there = [abs(r["predicted"] / o["measured"] - 1) for r, o in pairs]

    def says(row):
        native = _native(row)
        return "not recorded" if native is None else ("+".join(native) or "none")

    lines = [
        "",
        "## 16-bit formats on a CPU without their instructions",
        "",
        f"{len(pairs)} of the cases above were measured on a CPU with other 16-bit instructions too "
        f"({other['cpu']}; the runs: `{path}`). A CPU without instructions for a 16-bit format multiplies its "
        "matrices through float32 copies of both operands and the result (`gpukit.device.NATIVE_16BIT_FLAGS`); "
        "a GPU's tensor cores do not. The grid's rows are the runs on the CPU with the instructions. Their peak "
        f"over the other CPU's: median {statistics.median(ratio):.2f}x, from {min(ratio):.2f}x to {max(ratio):.2f}x. "
        f"The estimate's median |error| is {statistics.median(errs_here):.1%} against the grid's runs "
        f"(worst {max(errs_here):.1%}) and would be {statistics.median(errs_there):.1%} against the other CPU's "
        f"(worst {max(errs_there):.1%}).",
        "",
        "| model | input | batch | precision | optimizer | mode | predicted MiB | grid MiB (range) | CPU's 16-bit "
        "| other CPU MiB (range) | its 16-bit | grid / other | error | error against the other |",
        "|---|---|---:|---|---|---|---:|---:|---|---:|---|---:|---:|---:|",
    ]

    def cell(row):
        return f"{row['measured'] / 2**20:.1f} ({row['low'] / 2**20:.1f}–{row['high'] / 2**20:.1f})"

    for r, o in pairs:
        lines.append(
            f"| {r['model']} | {r['input']} | {r['batch']} | {r['precision']} | {r['optimizer']} | "
            f"{r['mode']} | {r['predicted'] / 2**20:.1f} | {cell(r)} | {says(r)} | {cell(o)} | {says(o)} | "
            f"{r['measured'] / o['measured']:.2f} | {r['error']:+.1%} | "
            f"{r['predicted'] / o['measured'] - 1:+.1%} |"
        )
    return lines


def outside_section(rows: list[dict], path: str, family_bands: dict[tuple, dict] | None = None) -> list[str]:
    """Cases measured as the grid's are, of models kept out of its statistics and bands, and how many
    of them the band `gpukit fit` quotes for their family in their mode (``family_bands``: :func:`bands`
    by :data:`BAND_KEYS`) misses."""
    ok = [r for r in rows if r["error"] is not None]
    if not ok:
        return []
    errs = sorted(abs(r["error"]) for r in ok)
    models = ", ".join(sorted({r["model"] for r in ok}))
    bands_of = family_bands or {}
    missed = []
    for fam in sorted({r["family"] for r in ok}):
        mine = [r for r in ok if r["family"] == fam and (fam, r["mode"]) in bands_of]
        if not mine:
            continue
        out = [
            r
            for r in mine
            if not bands_of[fam, r["mode"]]["error_low"]
            <= r["predicted"] / r["high"] - 1
            <= r["predicted"] / r["low"] - 1
            <= bands_of[fam, r["mode"]]["error_high"]
        ]
        quoted = ", ".join(
            f"{memory.MODE_WORDS[m]} {b['error_low']:+.1%} to {b['error_high']:+.1%}"
            for m, b in ((m, bands_of[fam, m]) for m in memory.MODES if (fam, m) in bands_of)
            if any(r["mode"] == m for r in mine)
        )
        missed.append(
            f"{len(out)} of the {len(mine)} {fam} cases have runs outside the band `gpukit fit` quotes "
            f"for that family in their mode ({quoted})"
        )
    lines = [
        "",
        "## Outside the grid",
        "",
        f"Measured as the grid's cases are, and left out of its figures and of the families' error bands "
        f"(`OUTSIDE_GRID` in the script says why; the runs: `{path}`): {models}. `gpukit fit` quotes and uses "
        "each one's own band in each precision (`--model-bands`, `data/memory_error_models.csv`) in place of "
        f"its family's. "
        f"{len(ok)} cases: median |error| {statistics.median(errs):.1%}, "
        f"{sum(e <= TOLERANCE for e in errs)} within ±{TOLERANCE:.0%}, worst {errs[-1]:.1%}"
        + ("; " + "; ".join(missed) if missed else "")
        + ".",
        "",
    ]
    return lines + _case_table(ok)


def markdown(
    rows: list[dict],
    kernels: tuple[dict, str] | None = None,
    other_cpu: tuple[dict, str] | None = None,
    outside: tuple[list[dict], str] | None = None,
) -> str:
    """The report (``docs/memory-accuracy.md``): the grid's figures, per family and mode, the refitted
    update terms, what the estimate counts and cannot see, the comparisons given (``kernels``,
    ``other_cpu``: a ``--raw`` file and its path; ``outside``: re-estimated rows and their path) and
    every case."""
    lines = [
        *_summary_lines(rows),
        *_family_lines(rows),
        *_update_terms_lines(rows),
        *_counted_lines(bool(kernels)),
        *_unseen_lines(bool(other_cpu)),
        *(kernels_section(rows, *kernels) if kernels else []),
        *(other_cpu_section(rows, *other_cpu) if other_cpu else []),
        *(
            outside_section(*outside, {(b["family"], b["mode"]): b for b in bands(rows, BAND_KEYS)})
            if outside
            else []
        ),
        "",
        "## Every case",
        "",
    ] + _case_table(rows)
    return "\n".join(lines) + "\n"


def _summary_lines(rows: list[dict]) -> list[str]:
    """The report's head: where and how the grid was measured, its figures and the targets."""
    info = device.describe_attached()
    env = device.bench_environment()
    ok = [r for r in rows if r["error"] is not None]
    errs = [abs(r["error"]) for r in ok]
    within = sum(e <= TOLERANCE for e in errs)
    worst = max(ok, key=lambda r: abs(r["error"])) if ok else None
    return [
        "# Memory-fit accuracy",
        "",
        f"Written by `benchmarks/memory_accuracy.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
        "every measured figure is what a run of it measured (the runs: `docs/memory-accuracy-runs-*.json`, "
        "which `--from-raw` estimates again after a change to the estimate).",
        "",
        f"- device: {info['kind'].upper()} {info['name']}; TensorFlow {env['tensorflow']}, Keras {env['keras']}",
        "- predicted: `gpukit.memory` `tensor_bytes`; measured: the BFC allocator's peak "
        "(`tf.config.experimental.get_memory_info`) over one step after one warm-up step, each case in a fresh "
        f"process, {'–'.join(map(str, sorted({len(r.get('runs') or [0]) for r in rows})))} times; "
        "the error is against the median run; the range is the lowest and highest run, "
        "and the band of errors over every run is what `gpukit fit` calls borderline",
        *_conditions_lines(rows),
        f"- {len(ok)} cases: median |error| {statistics.median(errs):.1%}, {within} within ±{TOLERANCE:.0%}, "
        f"worst when a family is left out of the fit {max(leave_one_family_out(rows).values()):.1%}"
        + (
            f"; worst: {worst['model']} batch {worst['batch']} {worst['precision']} {worst['optimizer']} "
            f"{worst['mode']} at {worst['error']:+.1%}"
            if worst
            else ""
        ),
        "- targets: "
        + "; ".join(
            f"{label} {value:.1%} (≤ {TARGETS[key]:.0%}: {'met' if value <= TARGETS[key] else 'not met'})"
            for key, label, value in (
                ("median", "median |error|", statistics.median(errs)),
                ("worst", "worst |error|", max(errs)),
                (
                    "leave_one_family_out",
                    "worst left out of the fit",
                    max(leave_one_family_out(rows).values()),
                ),
            )
        ),
        "",
    ]


def _family_lines(rows: list[dict]) -> list[str]:
    """The figures per family, and the bands per family and mode that ``gpukit fit`` quotes."""
    lines = [
        "## Per family",
        "",
        "| family | cases | median abs. error | worst abs. error | most under the highest run |"
        " error band over all runs | worst when fitted without it |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    lofo = leave_one_family_out(rows)
    for b in bands(rows):
        lines.append(
            f"| {b['family']} | {b['cases']} | {b['median_abs_error']:.1%} | {b['worst_abs_error']:.1%} | "
            f"{b['worst_vs_highest']:+.1%} | {b['error_low']:+.1%} to {b['error_high']:+.1%} | "
            f"{lofo.get(b['family'], float('nan')):.1%} |"
        )
    lines += [
        "",
        "Per family and mode: the bands `gpukit fit` quotes and calls borderline by (`data/memory_error.csv`), "
        "a training fit by the family's training cases, an inference fit by its inference cases.",
        "",
        "| family | mode | cases | median abs. error | worst abs. error | error band over all runs |",
        "|---|---|---:|---:|---:|---|",
    ]
    for b in bands(rows, BAND_KEYS):
        lines.append(
            f"| {b['family']} | {b['mode']} | {b['cases']} | {b['median_abs_error']:.1%} | "
            f"{b['worst_abs_error']:.1%} | {b['error_low']:+.1%} to {b['error_high']:+.1%} |"
        )
    return lines


def _update_terms_lines(rows: list[dict]) -> list[str]:
    """The fitted update terms: what they are, and what refitting them on these rows gives."""
    return [
        "",
        "The update terms (`gpukit.memory.UPDATE_WORKSPACE_FIT`: beside the backward pass a share of the "
        "trainable weights, multiples of the largest dense-gradient variable and of the largest embedding table; "
        "after it, when the activations are gone, a multiple of the largest embedding table, whose update runs "
        "last) are the only fitted figures, each held between zero and what an update can hold "
        "(`gpukit.memory.update_term_bounds`: every gradient once plus the temporaries Keras's update step makes, "
        "one for plain SGD and three for the others, counted in its source). With the three beside the backward "
        "pass held only above zero, a fit without a family misses it by up to "
        + ", ".join(f"{v:.0%} ({k})" for k, v in leave_one_family_out(rows, bounded=False).items())
        + "; the bounds matter where one family has the large variables (the CNNs' fully connected kernels). "
        "Refitted on this run's float32 training cases they come out as "
        + ", ".join(
            f"{k} ({', '.join(f'{v:.2f}' for v in terms)})" for k, terms in fit_update_terms(rows).items()
        )
        + "; the last column refits them without the family and predicts it.",
        "",
    ]


def _counted_lines(kernels: bool) -> list[str]:
    """What the estimate counts, and what moves a measurement on a CPU (``kernels``: the report compares
    the CPU kernels in a section of its own)."""
    return [
        "## What the estimate counts, and what it cannot see here",
        "",
        "- Every layer's kept tensors were read off TensorFlow's own gradient graph and are tested against it "
        "(`tests/test_memory_layers.py`): attention keeps Q, K, V, the probabilities (and their dropout and "
        "mask), the heads' output; exact GELU three tensors; normalisations float32 copies; recurrent layers "
        "every time step's gates and state; `TimeDistributed` over a static time axis a slice per step, and "
        "its backward pass a full-size gradient per step. The built-in transformer shapes are walked as their "
        "Keras-layer equivalents (`keras-bert` here is BERT's shape at small sizes).",
        "- An optimizer's update makes temporaries that read no gradient (momentum's `m * momentum`, RMSprop's "
        "`rho * velocity`): TensorFlow runs them as the step starts, and each waits for its variable's gradient, so "
        "the forward pass and the backward pass hold one variable-sized temporary for every weight not yet updated "
        "(`gpukit.memory.PENDING_UPDATE_TEMPORARIES`; TensorFlow's profiler shows them at the peak, as many bytes as "
        "the trainable weights: `docs/memory-peaks.md`, made by `benchmarks/memory_peaks.py`, lists what a few "
        "cases hold at their peaks). The fitted update terms count the rest.",
        "- Run-to-run spread is seen where the loss may write the logits' gradient into the logits' buffer "
        "(only when nothing else still holds them: a logits-sized difference, large for token-level heads; "
        "seen at batch 8, not at 2 or 32). The estimate takes the common case; the rest is the family's band, "
        "which `gpukit fit` reports and calls borderline.",
        "- The number of TensorFlow's inter-op threads moves one thing a lot: with a single thread a recurrent "
        "layer's backward loop runs its time steps ahead of the weight-gradient accumulation, each holding a "
        "kernel-sized gradient (up to 32, Keras's `parallel_iterations`), and an LSTM peaks at two to seven "
        "times what it does with two or more, at every batch, more the larger its kernels; "
        "`benchmarks/rnn_runahead.py` measures both (`docs/memory-rnn-runahead.md`). Every measurement runs "
        "at least two (TensorFlow's default on two or "
        "more cores), and the estimate counts the one gradient a loop then holds. With oneDNN's kernels some "
        "two-thread runs still run ahead (keras-lstm at batch 32 with RMSprop: one run of 112 MiB against 67-68, "
        "in the comparison below), so models with LSTM or GRU layers are measured with Eigen's kernels "
        "(`gpukit.memory.MEASURE_ONEDNN_RECURRENT`), under which two threads keep up; a GPU runs those layers "
        "as one cuDNN kernel, which accumulates nothing per step. The forward loop's 16-bit "
        "casts move the other way: the estimate counts them running ahead by Keras's `parallel_iterations`, "
        "which one thread lets them do and two, for the bidirectional GRU's two loops, in some runs only (the "
        "range of its 16-bit inference below).",
        "- TensorFlow's CPU kernels matter for convolutions: its Eigen kernels (its default on CPUs without "
        "AVX-512 VNNI/BF16, AVX-VNNI or AMX) hold buffers of their own in a convolution's gradients, which "
        "oneDNN's do not and a GPU's cuDNN replaces with workspaces of its own (GPU-only, below). Every "
        "measurement but the LSTM's and GRU's runs oneDNN's (`gpukit.memory.MEASURE_ONEDNN`), so that "
        "machines with different CPUs measure the same thing"
        + ("; the section after this list compares the two." if kernels else "."),
        "- The allocator rounds too: TensorFlow's BFC allocator (the one GPUs use) does not split a free chunk "
        "smaller than twice a request, so a tensor can hold up to twice its bytes. Small models show it most: "
        "an LSTM's weights alone are held in more than their size, because the orthogonal initialiser's "
        "temporaries leave free chunks that the kernels then fill whole. `docs/memory-peaks.md` gives, at each "
        "profiled peak, the live tensors' own bytes and the chunks the allocator holds them in.",
        "- Inference holds what a step has in flight, not what a backward pass keeps: TensorFlow's einsum "
        "kernel transposes its operands into copies of its own beside the projections' outputs, Keras's own "
        "attention path (with dropout) transposes its scores into a second tensor, and scaling and softmax "
        "write over the scores (`forward_input_or_allocate_output`). Found by measuring each model cut after "
        "each of its layers; the encoder and the decoder at 512 tokens (the rows below), where the scores "
        "outweigh everything else, check it.",
    ]


def _unseen_lines(other_cpu: bool) -> list[str]:
    """What a CPU measures that a GPU does not hold, and what it cannot measure (``other_cpu``: the report
    compares 16-bit runs on another CPU in a section of its own)."""
    return [
        "- Under a 16-bit policy every layer casts its kernel, and a cast reads only its variable: TensorFlow "
        "runs it as soon as the step starts, and it lives until its layer has run (in training, until its "
        "layer's backward pass). A static time axis (`TimeDistributed`) casts once per step; a recurrent loop "
        "casts every step, and in inference its casts run ahead by up to Keras's `parallel_iterations` (32) "
        "steps, every loop of the model at once (a loop starts its first steps before its input sequence is "
        "ready); in training each step's cast is kept for the backward pass (TensorFlow's loop pushes it).",
        "- A CPU without instructions for a 16-bit format multiplies its matrices through float32 copies of both "
        "operands and the result (TensorFlow's `MatMul` and `BatchMatMul` kernels; its `Einsum` does not): "
        "inference of the encoder, whose attention and projections outweigh its float32 parts, then peaks above "
        "its float32 run. A GPU's tensor cores multiply 16-bit matrices as they are, and so does this CPU for "
        "bfloat16 where it has AVX-512 BF16 or AMX (`gpukit.device.NATIVE_16BIT_FLAGS`) and runs oneDNN's kernels "
        "(Eigen's, which the models with LSTM or GRU layers run, go through the copies all the same), so the "
        "grid's bfloat16 cases are measured on such a CPU: the line above says which each family's runs had"
        + (
            "; '16-bit formats on a CPU without their instructions' below compares them with runs on a CPU "
            "without."
            if other_cpu
            else "."
        )
        + " The CPU the float16 cases ran on has no float16 dot products (AVX-512 FP16 or AMX-FP16; the line "
        "above says what each run's CPU had): they hold the copies, which the estimate, counting what a GPU "
        "holds, does not count, so they stay in the families' bands (the encoder's float16 inference). "
        "Nor has oneDNN float16 convolutions here: their gradients run Eigen's kernels, with buffers of their own "
        "(MobileNetV2's float16 training holds two at its peak, `docs/memory-peaks.md`).",
        "- float16 training is measured on a step that updates the weights: the dynamic loss scale skips the "
        "first steps' updates, and a skipped step holds no optimizer state.",
        "- A training step is measured with the optimizer's slots made inside the first, unmeasured step "
        "(`gpukit.memory.measure_peak`, `build_first=False`), as every case here was. Keras's `fit()` makes them "
        "before its first step; measured that way on 2026-12-01 (two runs each), keras-encoder at batch 8 with "
        "AdamW peaked the same, and keras-lstm at batch 2 with Adam, keras-bert at batch 8 in bfloat16 with "
        "Adam, MobileNetV2 at batch 8 in float16 with Adam and keras-decoder at batch 2 with RMSprop 0 to 5% "
        "lower: the allocator's chunks lie differently. The errors here lean, if anything, to over-estimating "
        "such a run.",
        "- Not measurable without a GPU: cuDNN's fused LSTM/GRU kernel (used on a GPU for default "
        "configurations; it keeps a reserve space instead of per-step tensors) and GPU-only workspaces. "
        "Keras on TensorFlow runs attention unfused on a GPU too, so the attention terms carry over; the "
        "runtime reserve (CUDA context, cuDNN/cuBLAS workspaces) is added separately on a GPU.",
    ]


def _case_table(rows: list[dict]) -> list[str]:
    """A Markdown table of cases: the estimate, the median run, the range of runs and the error."""
    lines = [
        "| model | input | batch | precision | optimizer | mode | predicted MiB | measured MiB | range MiB "
        "| error |",
        "|---|---|---:|---|---|---|---:|---:|---|---:|",
    ]
    for r in rows:
        measured = f"{r['measured'] / 2**20:.1f}" if r["measured"] else r["note"][:60]
        spread = (
            f"{r['low'] / 2**20:.1f}–{r['high'] / 2**20:.1f}"
            if r["measured"] and r["low"] != r["high"]
            else ""
        )
        err = f"{r['error']:+.1%}" if r["error"] is not None else "—"
        lines.append(
            f"| {r['model']} | {r['input']} | {r['batch']} | {r['precision']} | {r['optimizer']} | "
            f"{r['mode']} | {r['predicted'] / 2**20:.1f} | {measured} | {spread} | {err} |"
        )
    return lines


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
                done = {_case(r) for r in kept}
            except (ValueError, KeyError, TypeError) as exc:
                parser.error(
                    f"--resume: {args.raw} is not a --raw file of this script ({exc!r}); "
                    "name another file or move this one away"
                )
    return kept, done


def _write_bands(
    args: argparse.Namespace, reported: list[dict], outside: tuple[list[dict], str] | None
) -> None:
    """Write the error bands ``--bands`` and ``--model-bands`` ask for, dated and placed on this device."""
    info = device.describe_attached()
    when = f"{datetime.now(UTC):%Y-%m-%d}"
    where = f"{info['kind'].upper()} {info['name']}".replace(",", " ")
    if args.bands:
        _atomic.write_text(args.bands, bands_csv(reported, when, where))
    if args.model_bands:
        _atomic.write_text(args.model_bands, bands_csv(outside[0], when, where, ("model", "precision")))


if __name__ == "__main__":
    sys.exit(main())
