"""The timing harness and the results document.

Measuring (pyperf's rules): warm-up steps first, timed and kept apart (the first one traces
and compiles); loops calibrated so that one timed sample lasts at least ``min_sample_s``;
then samples until ``min_time_s`` of measuring and ``min_samples`` samples. Before each clock
read the device is synchronised by pulling a value of the last step's result to the host, so
asynchronous dispatch never makes a step look faster than it is. Every per-step time is kept;
the summary is the median, the IQR and MAD, and the coefficient of variation, and a result
whose IQR is 10% of its median or more is flagged noisy.

Isolation: in ``subprocess`` mode each configuration runs in a child Python (TensorFlow keeps
GPU memory for the life of a process; a crash or an out-of-memory cannot poison the next
configuration); ``process`` mode runs them here, one after another (fast on a CPU, where a
TensorFlow import costs seconds). Out-of-memory is a result (``status: oom``); any other
failure is ``status: error`` with its message; a configuration the device cannot run is
``status: skipped`` with the reason.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import _atomic
from .errors import DataError, ParameterError, Problem
from .workloads import Config, DeviceInfo, Unsupported, check_selection, default_configs

#: Version of the results document. History:
#: 1 — first version: environment, device, catalogue match, one record per configuration.
SCHEMA_VERSION = 1

NOISY_SPREAD = 0.10  # IQR / median at or above which a result is flagged noisy

RECORD_KEYS = ("workload", "precision", "params", "xla", "label", "status", "error", "math_mode", "warmup_s",
               "times_s", "loops", "median_s", "iqr_s", "mad_s", "cv", "noisy", "throughput",
               "throughput_unit", "achieved_tflops", "flops_per_step", "bytes_per_step", "items_per_step",
               "peak", "peak_fraction")


#: Keys every record of a multi-device (``kind: scaling``) document has (``gpukit.distributed``).
SCALING_KEYS = ("workload", "strategy", "replicas", "per_replica_batch", "status")


@dataclass(frozen=True)
class Settings:
    """How long to measure each configuration."""

    warmup_steps: int = 2  # at least this many untimed-for-results steps (the first compiles)
    warmup_min_s: float = 0.2  # and keep warming up until this long has passed after the first
    min_sample_s: float = 0.05  # loops per sample are calibrated so one sample lasts this long
    min_time_s: float = 1.0  # measure for at least this long
    min_samples: int = 5
    max_samples: int = 200
    max_time_s: float = 60.0  # stop measuring after this long whatever the sample count

    @classmethod
    def for_run(cls, quick: bool, time_budget_s: float | None = None, n_configs: int = 1) -> Settings:
        """Quick runs measure each configuration for ~1 s; a budget spreads its seconds over them."""
        base = cls(min_time_s=1.0, min_samples=5) if quick else cls(warmup_steps=5, warmup_min_s=1.0,
                                                                     min_time_s=3.0, min_samples=10)
        if time_budget_s:
            per = max(0.3, time_budget_s / max(n_configs, 1) / 2)  # half for warm-up and building
            base = Settings(**{**base.__dict__, "min_time_s": min(base.min_time_s, per)})
        return base


@dataclass
class Timing:
    warmup_s: list[float]
    times_s: list[float]  # per-step times, one per sample (sample time / loops)
    loops: int


def summarize(times: Sequence[float]) -> dict:
    """Median, IQR, MAD, coefficient of variation and the noisy flag of per-step times."""
    if not times:
        raise ValueError("no times to summarize")
    xs = sorted(times)
    median = statistics.median(xs)
    if len(xs) >= 2:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
        mean = statistics.fmean(xs)
        cv = statistics.stdev(xs) / mean if mean > 0 else 0.0
    else:
        q1 = q3 = xs[0]
        cv = 0.0
    iqr = q3 - q1
    mad = statistics.median(abs(x - median) for x in xs)
    return {"median_s": median, "iqr_s": iqr, "mad_s": mad, "cv": cv,
            "noisy": bool(median > 0 and iqr / median >= NOISY_SPREAD)}


def sync(value) -> None:
    """Block until ``value`` (a tensor, or nested tensors) is computed: pull one element to the host."""
    while isinstance(value, (list, tuple)):
        value = value[-1]
    if isinstance(value, dict):
        value = next(iter(value.values()))
    if hasattr(value, "shape") and len(value.shape) > 0:
        value = value[(0,) * len(value.shape)]
    if hasattr(value, "numpy"):
        value.numpy()


def measure(step: Callable[[], Any], settings: Settings, synchronize: Callable[[Any], None] = sync,
            clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Time ``step`` by the rules in the module docstring."""
    warmup: list[float] = []
    first_done = None
    while True:
        t0 = clock()
        synchronize(step())
        t1 = clock()
        warmup.append(t1 - t0)
        first_done = first_done if first_done is not None else t1
        if len(warmup) >= settings.warmup_steps and t1 - first_done >= settings.warmup_min_s:
            break
        if t1 - first_done > settings.max_time_s:
            break
    # Calibrate loops from the last warm-up step (the steadiest one).
    per_step = max(warmup[-1], 1e-9)
    loops = max(1, min(10_000, math.ceil(settings.min_sample_s / per_step)))
    times: list[float] = []
    start = clock()
    while True:
        t0 = clock()
        out = None
        for _ in range(loops):
            out = step()
        synchronize(out)
        t1 = clock()
        times.append((t1 - t0) / loops)
        elapsed = t1 - start
        if len(times) >= settings.max_samples or elapsed >= settings.max_time_s:
            break
        if len(times) >= settings.min_samples and elapsed >= settings.min_time_s:
            break
    return Timing(warmup, times, loops)


# --------------------------------------------------------------------------- running configurations


def _is_oom(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}"
    return ("ResourceExhausted" in text or "OOM when allocating" in text or "out of memory" in text.lower()
            or "ALLOC_FAILED" in text)


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text}"[:500]


def _record(config: Config, status: str, **values) -> dict:
    rec = {k: None for k in RECORD_KEYS}
    rec.update({"workload": config.workload, "precision": config.precision, "params": dict(config.params),
                "xla": config.xla, "label": config.label(), "status": status, "warmup_s": [], "times_s": []})
    rec.update(values)
    return rec


def _peak_for(config: Config, math_mode: str, peak_row: dict | None) -> float | None:
    """Datasheet peak of the attached GPU for this configuration (TFLOPS, or GB/s for bandwidth)."""
    if not peak_row:
        return None
    from .precision import PEAK_COLUMN

    if config.workload == "bandwidth":
        return peak_row.get("memory_bandwidth_gbs")
    key = "tf32" if math_mode and "tf32" in math_mode.lower() else config.precision
    value = peak_row.get(PEAK_COLUMN.get(key, ""))
    return value if value and value == value else None


def run_config(config: Config, device: DeviceInfo, settings: Settings, peak_row: dict | None = None) -> dict:
    """Build and time one configuration here; never raises for a failure of the workload."""
    from . import workloads

    try:
        with workloads.precision_scope(config, device) as math_mode:
            built = workloads.build(config, math_mode)
            timing = measure(built.step, settings)
    except Unsupported as exc:
        return _record(config, "skipped", error=str(exc))
    except Exception as exc:  # noqa: BLE001 -- a failing workload is a result, not a crash
        return _record(config, "oom" if _is_oom(exc) else "error", error=_first_line(exc))
    stats = summarize(timing.times_s)
    median = stats["median_s"]
    achieved = built.flops_per_step / median / 1e12 if built.flops_per_step else None
    if built.unit == "TFLOP/s":
        throughput = achieved
    elif built.unit == "GB/s":
        throughput = built.bytes_per_step / median / 1e9
    else:
        throughput = built.items_per_step / median
    peak = _peak_for(config, built.math_mode, peak_row)
    fraction = None
    if peak:
        fraction = (throughput if built.unit == "GB/s" else achieved) / peak
    return _record(config, "ok", math_mode=built.math_mode, warmup_s=timing.warmup_s, times_s=timing.times_s,
                   loops=timing.loops, **stats, throughput=throughput, throughput_unit=built.unit,
                   achieved_tflops=achieved, flops_per_step=built.flops_per_step,
                   bytes_per_step=built.bytes_per_step, items_per_step=built.items_per_step,
                   peak=peak, peak_fraction=fraction)


_RESULT_MARK = "GPUKIT-RESULT "


def run_config_subprocess(config: Config, device: DeviceInfo, settings: Settings, peak_row: dict | None = None,
                          timeout_s: float = 1800) -> dict:
    """:func:`run_config` in a child Python; a crash or a timeout becomes ``status: error``."""
    from .device import QUIET_ENV

    payload = json.dumps({"config": config.to_dict(), "device": device.__dict__,
                          "settings": settings.__dict__, "peak_row": peak_row})
    env = {**os.environ, **QUIET_ENV}
    try:
        proc = subprocess.run([sys.executable, "-m", "gpukit.bench"], input=payload, capture_output=True,
                              text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return _record(config, "error", error=f"timed out after {timeout_s:g} s")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_RESULT_MARK):
            return json.loads(line[len(_RESULT_MARK):])
    tail = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()][-1:] or ["no output"]
    oom = "out of memory" in proc.stderr.lower() or "ResourceExhausted" in proc.stderr
    return _record(config, "oom" if oom else "error",
                   error=f"worker exited with status {proc.returncode}: {tail[0].strip()[:400]}")


def _worker_main() -> None:
    """Child side of :func:`run_config_subprocess`: a config on stdin, one result line on stdout."""
    data = json.loads(sys.stdin.read())
    device = DeviceInfo(**data["device"])
    result = run_config(Config.from_dict(data["config"]), device, Settings(**data["settings"]), data["peak_row"])
    sys.stdout.write(_RESULT_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------- a whole run


def attached_device() -> tuple[DeviceInfo, dict]:
    """What TensorFlow here runs on, and its description (name, memory, catalogue match)."""
    from .device import describe_attached

    info = describe_attached()
    return DeviceInfo(info["kind"], info.get("compute_capability")), info


def run_benchmarks(workloads: Iterable[str] | None = None, precisions: Iterable[str] | None = None,
                   quick: bool = True, xla: bool = False, isolation: str = "auto",
                   time_budget_s: float | None = None, settings: Settings | None = None,
                   configs: Sequence[Config] | None = None,
                   progress: Callable[[int, int, dict], None] | None = None) -> dict:
    """Run the benchmark set on the attached device and return the results document.

    ``isolation`` is ``subprocess``, ``process`` or ``auto`` (subprocess on a GPU, process on
    a CPU). ``configs`` replaces the default set (``workloads``/``precisions`` then ignored).
    """
    from .device import bench_environment

    if isolation not in ("auto", "process", "subprocess"):
        raise ParameterError(f"isolation {isolation!r}: use auto, process or subprocess")
    if configs is None:
        check_selection(workloads, precisions)  # fail on a typo before TensorFlow loads
    device, device_info = attached_device()
    todo = list(configs) if configs is not None else default_configs(device, quick, workloads, precisions, xla)
    settings = settings or Settings.for_run(quick, time_budget_s, len(todo))
    mode = isolation if isolation != "auto" else ("subprocess" if device.kind == "gpu" else "process")
    peak_row = device_info.get("catalogue_row")
    started = datetime.now(timezone.utc)
    records = []
    for i, config in enumerate(todo, 1):
        if mode == "subprocess":
            rec = run_config_subprocess(config, device, settings, peak_row)
        else:
            rec = run_config(config, device, settings, peak_row)
        records.append(rec)
        if progress:
            progress(i, len(todo), rec)
    return {
        "schema_version": SCHEMA_VERSION,
        "created": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": (datetime.now(timezone.utc) - started).total_seconds(),
        "quick": quick,
        "isolation": mode,
        "settings": settings.__dict__,
        "environment": bench_environment(xla=xla),
        "device": {k: v for k, v in device_info.items() if k != "catalogue_row"},
        "records": records,
    }


# --------------------------------------------------------------------------- the document


def save_results(results: dict, path: str | os.PathLike) -> Path:
    """Write the results document atomically (a temporary file, then a rename)."""
    validate_results(results, Path(path))
    return _atomic.write_text(path, json.dumps(results, indent=1, allow_nan=False))


#: Environment variable naming the folder a report run writes into (set by gpukit.report).
RUN_DIR_ENV = "GPUKIT_RUN_DIR"
RESULTS_NAME = "bench-results.json"


def save_for_report(results: dict, path: str | os.PathLike | None = None) -> Path | None:
    """Save ``results`` to ``path``; with no path, into the report run's folder when a report
    is rendering (``$GPUKIT_RUN_DIR``), else nowhere. Returns where it was written."""
    target = Path(path) if path else (Path(os.environ[RUN_DIR_ENV]) / RESULTS_NAME
                                      if os.environ.get(RUN_DIR_ENV) else None)
    if target is None:
        return None
    return save_results(results, target)


def load_for_report(path: str | os.PathLike | None = None) -> dict | None:
    """The results document at ``path``; with no path, this report run's benchmark results
    (saved by the benchmark notebook), if there are any."""
    if path:
        return load_results(path)
    folder = os.environ.get(RUN_DIR_ENV)
    if not folder or not (Path(folder) / RESULTS_NAME).exists():
        return None
    return load_results(Path(folder) / RESULTS_NAME)


def device_frame(results: dict):
    """The device and environment of a run as a two-column table."""
    import pandas as pd

    dev, env = results["device"], results["environment"]
    rows = [("device", f"{dev['kind'].upper()}: {dev['name']}"),
            ("compute capability", dev.get("compute_capability")),
            ("catalogue", dev.get("catalogue_gpu") or "—"), ("catalogue note", dev.get("catalogue_note")),
            ("TensorFlow", env.get("tensorflow")), ("Keras", env.get("keras")),
            ("CUDA / cuDNN build", f"{env.get('cuda_build')} / {env.get('cudnn_build')}"),
            ("XLA", "on" if env.get("xla_jit") else "off"),
            ("TF32 for float32 by default (Ampere+ GPUs)", env.get("tf32_default")),
            ("threads (intra / inter op; 0 = TensorFlow picks)",
             f"{env.get('intra_op_threads')} / {env.get('inter_op_threads')}"),
            ("host", env.get("host")), ("CPU", f"{env.get('cpu')} ({env.get('cpu_count')} logical cores)"),
            ("Python", env.get("python")),
            ("run", f"{results['created']}, {results['seconds']:.0f} s, isolation {results['isolation']}, "
                    f"{'quick' if results['quick'] else 'full'} set")]
    return pd.DataFrame([(k, "" if v is None else str(v)) for k, v in rows if v is not None],
                        columns=["what", "value"])


def validate_results(doc: Any, path: Path) -> dict:
    """Check a results document's version and shape; raise :class:`DataError` saying what to do."""
    def bad(message: str):
        return DataError([Problem(path, None, None, message)])

    if not isinstance(doc, dict) or "records" not in doc and "schema_version" not in doc:
        raise bad("is not a gpukit results document (no schema_version); produce one with `gpukit bench --out FILE`")
    version = doc.get("schema_version")
    if not isinstance(version, int):
        raise bad(f"schema_version {version!r} is not a whole number; the file is not a gpukit results document")
    if version > SCHEMA_VERSION:
        raise bad(f"schema_version {version} is newer than this gpukit reads ({SCHEMA_VERSION}); upgrade gpukit")
    if version < SCHEMA_VERSION:
        raise bad(f"schema_version {version} is older than this gpukit reads ({SCHEMA_VERSION}); "
                  "re-run `gpukit bench --out FILE` to measure again")
    for key in ("environment", "device", "records"):
        if key not in doc:
            raise bad(f"lacks {key!r}; the file is truncated or not written by gpukit bench")
    keys = SCALING_KEYS if doc.get("kind") == "scaling" else RECORD_KEYS
    for i, rec in enumerate(doc["records"]):
        missing = [k for k in keys if k not in rec]
        if missing:
            raise bad(f"record {i} lacks {', '.join(missing)}; the file was edited or truncated")
        if rec["status"] not in ("ok", "oom", "error", "skipped"):
            raise bad(f"record {i} has status {rec['status']!r}; expected ok, oom, error or skipped")
    return doc


def load_results(path: str | os.PathLike) -> dict:
    """Read and validate a results document written by :func:`save_results`."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError([Problem(p, None, None, "file not found")]) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError([Problem(p, None, None, f"is not valid JSON ({exc}); it may be truncated")]) from None
    return validate_results(doc, p)


def results_frame(results: dict):
    """One row per configuration, for tables and plots."""
    import pandas as pd

    rows = []
    for r in results["records"]:
        rows.append({
            "workload": r["workload"], "configuration": r["label"], "precision": r["precision"],
            "math_mode": r["math_mode"], "xla": r["xla"], "status": r["status"],
            "median_ms": r["median_s"] * 1e3 if r["median_s"] is not None else None,
            "iqr_pct": 100 * r["iqr_s"] / r["median_s"] if r["median_s"] else None,
            "samples": len(r["times_s"]), "throughput": r["throughput"], "unit": r["throughput_unit"],
            "achieved_tflops": r["achieved_tflops"],
            "arithmetic_intensity": (r["flops_per_step"] / r["bytes_per_step"]
                                     if r["flops_per_step"] and r["bytes_per_step"] else None),
            "peak_fraction": r["peak_fraction"], "noisy": r["noisy"], "note": r["error"] or "",
        })
    return pd.DataFrame(rows)


if __name__ == "__main__":
    _worker_main()
