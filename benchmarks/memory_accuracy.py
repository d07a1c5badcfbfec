"""How right is gpukit's memory estimate? Measure a grid of Keras models on this device.

For each case it estimates ``tensor_bytes`` (``gpukit.memory``) and measures the allocator's
peak of one real step in a fresh process (``gpukit.memory.measure_in_subprocess``), and writes
the table (model, batch, optimizer, mode, predicted, measured, error) to a Markdown file.

    .venv/bin/python benchmarks/memory_accuracy.py --write docs/memory-accuracy.md
    .venv/bin/python benchmarks/memory_accuracy.py --models ResNet50 --batches 4
"""
from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone

from gpukit import _atomic, device, memory

#: Families of keras.applications with an input size each accepts, kept small for a CPU.
MODELS = {"ResNet50": (96, 96, 3), "MobileNetV2": (96, 96, 3), "EfficientNetB0": (96, 96, 3),
          "DenseNet121": (96, 96, 3), "VGG16": (64, 64, 3), "InceptionV3": (96, 96, 3)}
BATCHES = (2, 8, 32)
CASES = (("sgd", "train"), ("momentum", "train"), ("adam", "train"), ("none", "infer"))
TOLERANCE = 0.15


def run(models, batches, cases, log=sys.stderr) -> list[dict]:
    rows = []
    for name in models:
        shape = MODELS.get(name)
        est = memory.Estimator(name, shape)
        trainable = est.graph.trainable_params * 4
        largest = est.graph.largest_variable * 4
        for batch in batches:
            for optimizer, mode in cases:
                t0 = time.perf_counter()
                predicted = est.estimate(batch, "fp32", optimizer if mode == "train" else "sgd", mode).tensor_bytes
                got = memory.measure_in_subprocess(name, batch, "fp32", optimizer if mode == "train" else "sgd",
                                                   mode, shape)
                row = {"model": name, "input": "x".join(map(str, shape)) if shape else "", "batch": batch,
                       "optimizer": optimizer, "mode": mode, "predicted": predicted, "status": got["status"],
                       "trainable_bytes": trainable, "largest_variable_bytes": largest,
                       "workspace": memory.update_workspace(optimizer, trainable, largest) if mode == "train" else 0}
                if got["status"] == "ok":
                    row["measured"] = got["measured_peak_bytes"]
                    row["error"] = predicted / row["measured"] - 1
                else:
                    row["measured"], row["error"] = None, None
                    row["note"] = got.get("error", "")
                rows.append(row)
                err = f"{row['error']:+.1%}" if row["error"] is not None else got.get("error")
                print(f"{name} b{batch} {optimizer} {mode}: predicted {predicted / 2**20:.1f} MiB, "
                      f"measured {(row['measured'] or 0) / 2**20:.1f} MiB, {err} ({time.perf_counter() - t0:.0f} s)",
                      file=log, flush=True)
    return rows


def fit_update_terms(rows: list[dict]) -> dict[str, tuple[float, float]]:
    """Least-squares (relative error) fit of gpukit.memory.UPDATE_WORKSPACE_FIT per optimizer."""
    import numpy as np

    out = {}
    for opt in sorted({r["optimizer"] for r in rows if r["mode"] == "train"}):
        rs = [r for r in rows if r["mode"] == "train" and r["optimizer"] == opt and r["measured"]]
        if len(rs) < 2:
            continue
        a = np.array([[r["trainable_bytes"], r["largest_variable_bytes"]] for r in rs], float)
        y = np.array([r["measured"] for r in rs], float)
        base = np.array([r["predicted"] - r["workspace"] for r in rs], float)
        sol, *_ = np.linalg.lstsq(a / y[:, None], (y - base) / y, rcond=None)
        out[opt] = tuple(float(v) for v in np.maximum(sol, 0.0))
    return out


def leave_one_family_out(rows: list[dict]) -> dict[str, float]:
    """Worst |error| on each family when the update terms are fitted without it."""
    worst = {}
    for family in sorted({r["model"] for r in rows}):
        terms = fit_update_terms([r for r in rows if r["model"] != family])
        errs = []
        for r in rows:
            if r["model"] != family or r["measured"] is None:
                continue
            pred = r["predicted"]
            if r["mode"] == "train" and r["optimizer"] in terms:
                share, largest = terms[r["optimizer"]]
                pred = pred - r["workspace"] + share * r["trainable_bytes"] + largest * r["largest_variable_bytes"]
            errs.append(abs(pred / r["measured"] - 1))
        worst[family] = max(errs) if errs else float("nan")
    return worst


def markdown(rows: list[dict]) -> str:
    info = device.describe_attached()
    env = device.bench_environment()
    ok = [r for r in rows if r["error"] is not None]
    within = sum(abs(r["error"]) <= TOLERANCE for r in ok)
    worst = max(ok, key=lambda r: abs(r["error"])) if ok else None
    lines = [
        "# Memory-fit accuracy",
        "",
        f"Written by `benchmarks/memory_accuracy.py` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; "
        "every figure is what that run measured.",
        "",
        f"- device: {info['kind'].upper()} {info['name']}; TensorFlow {env['tensorflow']}, Keras {env['keras']}",
        "- predicted: `gpukit.memory` `tensor_bytes` (float32); measured: the allocator's peak "
        "(`tf.config.experimental.get_memory_info`) over one step after one warm-up step, each case in a fresh process",
        f"- {within} of {len(ok)} cases within ±{TOLERANCE:.0%}"
        + (f"; worst: {worst['model']} batch {worst['batch']} {worst['optimizer']} {worst['mode']} "
           f"at {worst['error']:+.1%}" if worst else ""),
        "",
        "The update terms (`gpukit.memory.UPDATE_WORKSPACE_FIT`: share of the trainable weights, multiples of "
        "the largest variable) are fitted to this grid. Refitted on this run's measurements they come out as "
        + ", ".join(f"{k} ({a:.2f}, {b:.2f})" for k, (a, b) in fit_update_terms(rows).items())
        + ". Fitted without one family and then predicting it, the worst error per family is: "
        + ", ".join(f"{k} {v:.0%}" for k, v in leave_one_family_out(rows).items()) + ".",
        "",
        "| model | input | batch | optimizer | mode | predicted MiB | measured MiB | error |",
        "|---|---|---:|---|---|---:|---:|---:|",
    ]
    for r in rows:
        measured = f"{r['measured'] / 2**20:.1f}" if r["measured"] else r["status"]
        err = f"{r['error']:+.1%}" if r["error"] is not None else "—"
        lines.append(f"| {r['model']} | {r['input']} | {r['batch']} | {r['optimizer']} | {r['mode']} | "
                     f"{r['predicted'] / 2**20:.1f} | {measured} | {err} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--batches", nargs="+", type=int, default=list(BATCHES))
    parser.add_argument("--write", metavar="FILE", help="write the Markdown table here (atomically)")
    args = parser.parse_args(argv)
    rows = run(args.models, args.batches, CASES)
    text = markdown(rows)
    print(text)
    if args.write:
        _atomic.write_text(args.write, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
