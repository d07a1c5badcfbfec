"""What TensorFlow's allocator holds at a step's peak: a few cases of the memory grid, each measured in
a fresh process under TensorFlow's profiler (``gpukit.memory.measure_in_subprocess(profile_top=...)``),
the tensors alive at the peak sorted by the phase of the op that made them (forward, backward, the
optimizer's update) and listed largest first, beside the estimate and the terms the memory model
gives them. It is how the estimate's terms are checked against what a real step holds.

    .venv/bin/python -m benchmarks.memory_peaks --write docs/accuracy/memory-peaks.md
    .venv/bin/python -m benchmarks.memory_peaks --case VGG16:8:fp32:momentum:train:64x64x3 --top 12
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from gpukit import memory
from gpukit.bench import device
from gpukit.errors import GpukitError

from ._report import publish, table_head

#: model:batch:precision:optimizer:mode[:input] — each shows one thing the estimate counts or cannot see.
CASES = (
    ("VGG16:8:fp32:momentum:train:64x64x3", "momentum's m * momentum waits for every gradient"),
    ("VGG16:8:fp32:rmsprop:train:64x64x3", "RMSprop's rho * velocity waits too"),
    ("keras-encoder:8:fp32:momentum:train", "momentum on a transformer encoder"),
    ("keras-encoder:8:fp32:adam:train", "Adam has no update temporary that waits"),
    ("keras-encoder:2:fp32:adam:train", "a small batch: the peak early in the backward pass"),
    ("keras-textcnn:8:bf16:adam:train", "the embedding's update after the backward pass"),
    ("MobileNetV2:8:fp16:adam:train:96x96x3", "float16 convolution gradients on a CPU"),
    ("MobileNetV2:8:bf16:adam:train:96x96x3", "the same in bfloat16"),
    ("keras-encoder:8:fp16:none:infer", "float16 inference on a CPU"),
    ("keras-encoder:8:bf16:none:infer", "bfloat16 inference"),
    ("keras-cnn:32:fp32:adam:train", "a plain CNN: its tensors in the allocator's chunks"),
    ("keras-cnn:8:fp16:adam:train", "its float16 convolution gradients through Eigen's work buffers"),
)


def parse_case(text: str) -> dict:
    """``model:batch:precision:optimizer:mode[:HxWxC]`` as keyword arguments, with a one-line error."""
    parts = text.split(":")
    if len(parts) not in (5, 6) or not parts[1].isdigit():
        raise SystemExit(
            f"memory_peaks.py: case {text!r}: write model:batch:precision:optimizer:mode[:HxWxC], "
            "such as VGG16:8:fp32:momentum:train:64x64x3"
        )
    shape = tuple(int(v) for v in parts[5].split("x")) if len(parts) == 6 else None
    return {
        "model": parts[0],
        "batch": int(parts[1]),
        "precision": parts[2],
        "optimizer": parts[3],
        "mode": parts[4],
        "input_shape": shape,
    }


def measure(case: dict, top: int) -> dict:
    opt = case["optimizer"] if case["mode"] == "train" else "sgd"
    est = memory.Estimator(case["model"], case["input_shape"])
    estimate = est.estimate(case["batch"], case["precision"], opt, case["mode"])
    got = memory.measure_in_subprocess(
        case["model"],
        case["batch"],
        case["precision"],
        opt,
        case["mode"],
        case["input_shape"],
        profile_top=top,
    )
    trainable = est.graph.trainable_params * 4
    return {
        **case,
        "estimate": estimate,
        "got": got,
        "trainable_bytes": trainable,
        "pending_bytes": memory.pending_update_bytes(opt, trainable) if case["mode"] == "train" else 0,
    }


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f}"


def markdown(rows: list[dict], notes: dict[str, str]) -> str:
    info = device.describe_attached()
    env = device.bench_environment()
    lines = [
        "# What the allocator holds at the peak",
        "",
        f"Written by `benchmarks/memory_peaks.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on "
        f"{info['kind'].upper()} {info['name']} (TensorFlow {env['tensorflow']}, Keras {env['keras']}; 16-bit "
        f"dot products: {', '.join(device.cpu_native_16bit()) or 'none'}). Each case is one step measured as "
        "`docs/accuracy/memory.md` measures it (a fresh process, `gpukit.memory.measure_env`), under "
        "TensorFlow's profiler: the allocator's events give the tensors alive when its use peaked, each by the op "
        "that made it, and the chunks it held them in (the BFC allocator does not split a free chunk "
        "smaller than twice a request; the measured peak counts chunks). Where its count at that moment "
        "falls short of the measured peak, the profiler's events missed the peak itself. The phases are "
        "what the step allocated (what was resident before it, the weights and "
        "the optimizer's slots, is not among them): the optimizer's update (its name scope), the backward pass "
        "(`gradient_tape`), and the rest. 'waiting' is what the estimate counts of update temporaries that wait "
        "for their gradient (`gpukit.memory.PENDING_UPDATE_TEMPORARIES`, bytes of the trainable weights).",
        "",
    ]
    for r in rows:
        got, est = r["got"], r["estimate"]
        label = (
            f"{r['model']} batch {r['batch']} {r['precision']} {r['mode']}"
            + (f" {r['optimizer']}" if r["mode"] == "train" else "")
            + (f" at {'x'.join(map(str, r['input_shape']))}" if r["input_shape"] else "")
        )
        note = notes.get(r["key"], "")
        lines += [f"## {label}", ""] + ([note, ""] if note else [])
        if got.get("status") != "ok":
            lines += [f"Not measured: {got.get('error') or got.get('status')}", ""]
            continue
        prof = got["peak_profile"]
        phases = ", ".join(f"{k} {_mib(v)}" for k, v in prof["phases"].items())
        lines += [
            f"- estimate {_mib(est.tensor_bytes)} MiB; measured peak {_mib(got['measured_peak_bytes'])} MiB "
            f"({est.tensor_bytes / got['measured_peak_bytes'] - 1:+.1%}), {_mib(got['resident_before_bytes'])} "
            f"resident before the step",
            f"- at the peak (reached by `{prof['at_op']}`), MiB by phase: {phases}; held in "
            f"{_mib(prof.get('chunk_bytes', 0))} MiB of the allocator's chunks, its count of bytes in use then "
            f"{_mib(prof['peak_bytes'])} MiB",
            f"- trainable weights {_mib(r['trainable_bytes'])} MiB; waiting update temporaries the estimate "
            f"counts {_mib(r['pending_bytes'])} MiB",
            "",
            *table_head("| MiB | op | shape |", "rll"),
            *[f"| {_mib(t['bytes'])} | `{t['op']}` | {t['shape']} |" for t in prof["largest"]],
            "",
        ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--case",
        action="append",
        metavar="MODEL:BATCH:PRECISION:OPTIMIZER:MODE[:HxWxC]",
        help="measure this case (repeatable) instead of the default ones",
    )
    parser.add_argument("--top", type=int, default=8, help="how many of the largest tensors to list")
    parser.add_argument("--write", metavar="FILE", help="write the Markdown report here (atomically)")
    args = parser.parse_args(argv)
    chosen = [(c, "") for c in args.case] if args.case else list(CASES)
    rows = []
    for text, _ in chosen:
        case = parse_case(text)
        try:
            row = measure(case, args.top)
        except GpukitError as exc:
            raise SystemExit(f"memory_peaks.py: case {text!r}: {exc}") from None
        row["key"] = text
        rows.append(row)
        got = row["got"]
        print(
            f"{text}: {got.get('status')} {_mib(got.get('measured_peak_bytes') or 0)} MiB",
            file=sys.stderr,
            flush=True,
        )
    publish(markdown(rows, dict(chosen)), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
