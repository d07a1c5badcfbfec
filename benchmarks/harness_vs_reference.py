"""Measure gpukit's benchmark harness against plain references, in one run on one device.

For FP32 matmuls of a few sizes it reports the TFLOP/s that

* ``gpukit bench``'s harness measures (``gpukit.bench.run_config``),
* a bare TensorFlow loop timed by hand (the same compiled ``tf.function``, K steps between two
  clock reads, one host pull at the end), and
* NumPy's ``matmul`` (the BLAS NumPy was built with),

and the harness's overhead per step: its per-step time for a trivial step minus a bare loop's.
The harness is honest when its figure is within a few percent of the bare loop (never above it
by more than noise) and at least NumPy's.

    .venv/bin/python -m benchmarks.harness_vs_reference                # print the table
    .venv/bin/python -m benchmarks.harness_vs_reference --write docs/accuracy/harness.md
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from datetime import UTC, datetime

import numpy as np

from gpukit.bench import device, results, workloads
from gpukit.bench import harness as bench
from gpukit.quiet import quiet_tensorflow

from ._report import publish, table_head

SIZES = (1024, 2048, 3072)
BLOCKS = 11  # timed blocks per reference; the median and the range are reported


def bare_tf_loop(n: int, target_s: float = 0.5) -> list[float]:
    """Per-step seconds of a hand-timed loop of the same compiled matmul (one value per block)."""
    tf = quiet_tensorflow()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    a = tf.random.uniform((n, n))
    b = tf.random.uniform((n, n))
    step = tf.function(lambda: tf.matmul(a, b))
    for _ in range(3):
        step().numpy()
    t0 = time.perf_counter()
    step()[0, 0].numpy()
    k = max(1, round(target_s / max(time.perf_counter() - t0, 1e-6)))
    out = []
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        for _ in range(k):
            c = step()
        c[0, 0].numpy()
        out.append((time.perf_counter() - t0) / k)
    return out


def numpy_matmul(n: int, target_s: float = 0.5) -> list[float]:
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    np.matmul(a, b)
    t0 = time.perf_counter()
    np.matmul(a, b)
    k = max(1, round(target_s / max(time.perf_counter() - t0, 1e-6)))
    out = []
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        for _ in range(k):
            np.matmul(a, b)
        out.append((time.perf_counter() - t0) / k)
    return out


def harness(n: int, info: workloads.DeviceInfo):
    config = workloads.Config("matmul", "fp32", {"shape": "square", "m": n, "n": n, "k": n})
    rec = bench.run_config(config, info, bench.Settings(min_time_s=3.0, min_samples=BLOCKS))
    if rec.status != "ok":
        raise SystemExit(f"harness failed for n={n}: {rec.error}")
    return rec


def overhead(info: workloads.DeviceInfo) -> tuple[float, float]:
    """Per-step seconds of a trivial compiled step: through the harness, and in a bare loop."""
    tf = quiet_tensorflow()
    x = tf.constant(1.0)
    step = tf.function(lambda: x + 1.0)
    timing = bench.measure(step, bench.Settings(min_time_s=2.0, min_samples=BLOCKS, min_sample_s=0.05))
    harness_s = statistics.median(timing.times_s)
    for _ in range(100):
        step()
    bare = []
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        for _ in range(timing.loops):
            y = step()
        y.numpy()
        bare.append((time.perf_counter() - t0) / timing.loops)
    return harness_s, statistics.median(bare)


def quick_run() -> tuple[float, results.Results]:
    """Wall-clock seconds of `gpukit bench --quick` as a user runs it (TensorFlow import included)."""
    import json
    import subprocess

    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gpukit", "bench", "--quick", "--no-progress", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - t0, results.Results.from_dict(json.loads(proc.stdout))


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    return "; ".join(
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} {i.get('num_threads')} threads"
        for i in threadpool_info()
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", help="write the Markdown report here (atomically)")
    args = parser.parse_args(argv)

    info_dict = device.describe_attached()
    info = workloads.DeviceInfo(info_dict["kind"], info_dict.get("compute_capability"))
    env = device.bench_environment()
    rows = []
    for n in SIZES:
        flops = 2.0 * n**3
        rec = harness(n, info)
        bare = bare_tf_loop(n)
        npy = numpy_matmul(n)
        h = flops / rec.median_s / 1e12
        b = flops / statistics.median(bare) / 1e12
        p = flops / statistics.median(npy) / 1e12
        b_lo, b_hi = flops / max(bare) / 1e12, flops / min(bare) / 1e12
        rows.append((n, h, rec.iqr_s / rec.median_s, b, b_lo, b_hi, p, (h - b) / b))
        print(f"n={n}: harness {h:.4f}  bare {b:.4f}  numpy {p:.4f} TFLOP/s", file=sys.stderr)
    h_over, bare_over = overhead(info)
    quick_s, quick_doc = quick_run()
    statuses = {}
    for r in quick_doc.records:
        statuses[r.status] = statuses.get(r.status, 0) + 1

    lines = [
        "# Benchmark harness vs plain references",
        "",
        "Written by `benchmarks/harness_vs_reference.py` "
        f"on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Every figure below is what that run printed.",
        "",
        f"- device: {info_dict['kind'].upper()} {info_dict['name']}",
        f"- TensorFlow {env['tensorflow']}, NumPy {np.__version__}, Python {platform.python_version()}",
        f"- NumPy BLAS: {blas_info()}",
        "",
        "FP32 square matmul, TFLOP/s (2n³ FLOPs per step). *harness*: `gpukit.bench.run_config` "
        "(median of its samples, IQR as a share of the median); *bare loop*: the same `tf.function` "
        f"timed by hand, K steps between clock reads, {BLOCKS} blocks (median, and the range of the blocks); "
        "*NumPy*: `np.matmul` on float32, same blocks (median). *Verdict*: the harness is honest when its "
        "figure lies within the bare loop's range (above it would mean it inflates) and is at least NumPy's.",
        "",
        *table_head(
            "| n | harness | harness IQR | bare TF loop | bare range | NumPy | harness vs bare | verdict |",
            "rrrrrrrl",
        ),
    ]
    for n, h, h_iqr, b, b_lo, b_hi, p, diff in rows:
        verdict = []
        verdict.append(
            "within bare range"
            if b_lo <= h <= b_hi
            else ("ABOVE bare range" if h > b_hi else "below bare range")
        )
        verdict.append(">= NumPy" if h >= p else "below NumPy")
        lines.append(
            f"| {n} | {h:.4f} | {h_iqr:.1%} | {b:.4f} | {b_lo:.4f}–{b_hi:.4f} | {p:.4f} | {diff:+.1%} | "
            f"{'; '.join(verdict)} |"
        )
    lines += [
        "",
        "Harness overhead per step (a trivial compiled step `x + 1`, loops calibrated as in a run):",
        "",
        f"- through the harness: {h_over * 1e6:.1f} µs per step",
        f"- bare loop: {bare_over * 1e6:.1f} µs per step",
        f"- overhead: {(h_over - bare_over) * 1e6:+.1f} µs per step"
        + (
            " (negative: the difference is below the run-to-run noise of dispatching a step here)"
            if h_over < bare_over
            else ""
        ),
        "",
        "`gpukit bench --quick` as a user runs it (wall clock, TensorFlow import included):",
        "",
        f"- {quick_s:.0f} s for {len(quick_doc.records)} configurations "
        f"({', '.join(f'{n} {s}' for s, n in statuses.items())}); measuring took {quick_doc.seconds:.0f} s of it",
        "",
    ]
    text = "\n".join(lines)
    publish(text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
