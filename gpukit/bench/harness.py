"""The timing harness: warm-up apart, calibrated loops, statistics, and running configurations.

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

import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import ParameterError
from ..precision import MATH_PEAK_COLUMN, Unsupported
from . import runner
from .results import Device, Record, Results
from .workloads import Config, DeviceInfo, check_selection, default_configs

NOISY_SPREAD = 0.10  # IQR / median at or above which a result is flagged noisy

#: How long a run measures each configuration: ``full`` (:meth:`Settings.for_run`), ``brief`` (the
#: compiling step, one more warm-up step and three timed samples: :data:`BRIEF`), or ``auto``:
#: brief where no GPU is attached (a CPU's figures place it, they do not grade a GPU), full on a GPU.
MEASURING = ("auto", "brief", "full")


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
    measuring: str = "full"  # full or brief (:data:`BRIEF`): what the results say of the run

    @classmethod
    def for_run(
        cls, quick: bool, time_budget_s: float | None = None, n_configs: int = 1, brief: bool = False
    ) -> Settings:
        """Quick runs measure each configuration for ~1 s, brief ones (:data:`BRIEF`) for a few
        samples; a budget spreads its seconds over them."""
        base = (
            cls(min_time_s=1.0, min_samples=5)
            if quick
            else cls(warmup_steps=5, warmup_min_s=1.0, min_time_s=3.0, min_samples=10)
        )
        if brief:
            base = BRIEF
        if time_budget_s:
            per = max(0.3, time_budget_s / max(n_configs, 1) / 2)  # half for warm-up and building
            base = Settings(**{**base.__dict__, "min_time_s": min(base.min_time_s, per)})
        return base


#: Brief measuring: the compiling step and one more untimed, then three timed samples over at least
#: a quarter of a second. Enough to place a CPU among the catalogue's GPUs in seconds, not a minute.
BRIEF = Settings(warmup_steps=2, warmup_min_s=0.0, min_time_s=0.25, min_samples=3, measuring="brief")


def measuring_note(run: Results) -> str:
    """What the page says of how long its run measured each configuration."""
    s = run.settings or {}
    if s.get("measuring") == "brief":
        return (
            "Measured briefly, as where no GPU is attached: each configuration ran its compiling step "
            f"and one more untimed, then {s.get('min_samples')} or more timed samples over at least "
            f'{s.get("min_time_s"):g} s. Set measuring = "full" (gpukit report -p measuring full) to '
            "measure each for the full length."
        )
    if not s:
        return "How long each configuration was measured is not recorded in these results."
    return (
        f"Measured at full length: each configuration warmed up for at least {s.get('warmup_steps')} "
        f"steps and {s.get('warmup_min_s'):g} s, then ran {s.get('min_samples')} or more timed samples "
        f"over at least {s.get('min_time_s'):g} s."
    )


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
    return {
        "median_s": median,
        "iqr_s": iqr,
        "mad_s": mad,
        "cv": cv,
        "noisy": bool(median > 0 and iqr / median >= NOISY_SPREAD),
    }


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


def measure(
    step: Callable[[], Any],
    settings: Settings,
    synchronize: Callable[[Any], None] = sync,
    clock: Callable[[], float] = time.perf_counter,
    agree: Callable[[float], float] | None = None,
) -> Timing:
    """Time ``step`` by the rules in the module docstring.

    ``agree`` is for steps that run in lockstep with other processes (a multi-worker strategy's
    collective all-reduce): it takes this process's value and returns the largest over all of
    them. Each process then warms up as many steps, runs as many loops per sample and as many
    samples as the others; decided alone, from each process's own clock, one process can stop
    while another waits in a collective for it, and that one fails. It is called the same number
    of times in every process, between timed samples, never inside one.
    """
    agree = agree or (lambda value: value)
    warmup: list[float] = []
    first_done = None
    while True:
        t0 = clock()
        synchronize(step())
        t1 = clock()
        warmup.append(t1 - t0)
        first_done = first_done if first_done is not None else t1
        done = (
            len(warmup) >= settings.warmup_steps and t1 - first_done >= settings.warmup_min_s
        ) or t1 - first_done > settings.max_time_s
        if agree(float(done)):  # any process done warming up: all are
            break
    # Calibrate loops from the last warm-up step (the steadiest one); the slowest process's.
    per_step = max(agree(warmup[-1]), 1e-9)
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
        stop = (
            len(times) >= settings.max_samples
            or elapsed >= settings.max_time_s
            or (len(times) >= settings.min_samples and elapsed >= settings.min_time_s)
        )
        if agree(float(stop)):
            break
    return Timing(warmup, times, loops)


# --------------------------------------------------------------------------- running configurations


def _record(config: Config, status: str, **values) -> Record:
    return Record(
        workload=config.workload,
        precision=config.precision,
        params=dict(config.params),
        status=status,
        xla=config.xla,
        label=config.label(),
        **values,
    )


def _peak_for(config: Config, math: str, peak_row: dict | None) -> float | None:
    """Datasheet peak of the attached GPU for this configuration (TFLOPS at the math that ran, or
    GB/s for bandwidth)."""
    if not peak_row:
        return None
    if config.workload == "bandwidth":
        return peak_row.get("memory_bandwidth_gbs")
    value = peak_row.get(MATH_PEAK_COLUMN.get(math, ""))
    return value if value and value == value else None


def run_config(
    config: Config, device: DeviceInfo, settings: Settings, peak_row: dict | None = None
) -> Record:
    """Build and time one configuration here; never raises for a failure of the workload."""
    from . import workloads

    try:
        with workloads.precision_scope(config, device) as math_mode:
            built = workloads.build(config, math_mode)
            timing = measure(built.step, settings)
    except Unsupported as exc:
        return _record(config, "skipped", error=str(exc))
    except Exception as exc:  # noqa: BLE001 -- a failing workload is a result, not a crash
        status, message = runner.classify(exc)
        return _record(config, status, error=message)
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
    return _record(
        config,
        "ok",
        math_mode=built.math_mode,
        warmup_s=timing.warmup_s,
        times_s=timing.times_s,
        loops=timing.loops,
        **stats,
        throughput=throughput,
        throughput_unit=built.unit,
        achieved_tflops=achieved,
        flops_per_step=built.flops_per_step,
        bytes_per_step=built.bytes_per_step,
        items_per_step=built.items_per_step,
        peak=peak,
        peak_fraction=fraction,
    )


def run_config_subprocess(
    config: Config,
    device: DeviceInfo,
    settings: Settings,
    peak_row: dict | None = None,
    timeout_s: float = 1800,
) -> Record:
    """:func:`run_config` in a fresh Python (:func:`gpukit.bench.runner.run`); a crash, an abort on
    out-of-memory or a timeout becomes the record's status."""
    payload = {
        "config": config.to_dict(),
        "device": asdict(device),
        "settings": asdict(settings),
        "peak_row": peak_row,
    }
    child = runner.run("gpukit.bench:config_child", payload, timeout_s)
    if child.ok:
        return Record.from_dict(child.value)
    return _record(config, child.status, error=child.error)


def config_child(payload: dict) -> dict:
    """Child side of :func:`run_config_subprocess`."""
    rec = run_config(
        Config.from_dict(payload["config"]),
        DeviceInfo(**payload["device"]),
        Settings(**payload["settings"]),
        payload["peak_row"],
    )
    return asdict(rec)


# --------------------------------------------------------------------------- a whole run


def attached_device() -> tuple[DeviceInfo, dict]:
    """What TensorFlow here runs on, and its description (name, memory, catalogue match)."""
    from .device import describe_attached

    info = describe_attached()
    return DeviceInfo(info["kind"], info.get("compute_capability")), info


def run_benchmarks(
    workloads: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
    quick: bool = True,
    xla: bool = False,
    isolation: str = "auto",
    time_budget_s: float | None = None,
    settings: Settings | None = None,
    configs: Sequence[Config] | None = None,
    progress: Callable[[int, int, Record], None] | None = None,
    measuring: str = "full",
) -> Results:
    """Run the benchmark set on the attached device and return the results document.

    ``isolation`` is ``subprocess``, ``process`` or ``auto`` (subprocess on a GPU, process on
    a CPU). ``configs`` replaces the default set (``workloads``/``precisions`` then ignored).
    ``measuring`` is one of :data:`MEASURING` (``settings``, where given, decide instead).
    """
    from .device import bench_environment

    if isolation not in ("auto", "process", "subprocess"):
        raise ParameterError(f"isolation {isolation!r}: use auto, process or subprocess")
    if measuring not in MEASURING:
        raise ParameterError(f"measuring {measuring!r}: use {', '.join(MEASURING)}")
    if configs is None:
        check_selection(workloads, precisions)  # fail on a typo before TensorFlow loads
    device, device_info = attached_device()
    todo = (
        list(configs) if configs is not None else default_configs(device, quick, workloads, precisions, xla)
    )
    brief = measuring == "brief" or (measuring == "auto" and device.kind != "gpu")
    settings = settings or Settings.for_run(quick, time_budget_s, len(todo), brief)
    mode = isolation if isolation != "auto" else ("subprocess" if device.kind == "gpu" else "process")
    peak_row = device_info.get("catalogue_row")
    started = datetime.now(UTC)
    records = []
    for i, config in enumerate(todo, 1):
        if mode == "subprocess":
            rec = run_config_subprocess(config, device, settings, peak_row)
        else:
            rec = run_config(config, device, settings, peak_row)
        records.append(rec)
        if progress:
            progress(i, len(todo), rec)
    return Results(
        "bench",
        started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        bench_environment(xla=xla),
        Device.from_dict(device_info),
        tuple(records),
        (datetime.now(UTC) - started).total_seconds(),
        quick,
        mode,
        asdict(settings),
    )


def plan(
    workloads: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
    quick: bool = True,
    xla: bool = False,
):
    """What :func:`run_benchmarks` would run on the attached device, without running it: one row per
    configuration with the math it runs at (:func:`gpukit.precision.device_math`), or why it is
    skipped, and the datasheet peak of a catalogued GPU at that math."""
    import pandas as pd

    from ..precision import device_math

    check_selection(workloads, precisions)
    device, info = attached_device()
    rows = []
    for config in default_configs(device, quick, workloads, precisions, xla):
        try:
            math, note = device_math(config.precision, device.kind, device.compute_capability), ""
        except Unsupported as exc:
            math, note = None, f"skipped: {exc}"
        rows.append(
            {
                "configuration": config.label(),
                "precision": config.precision,
                "math": math,
                "peak": _peak_for(config, math, info.get("catalogue_row")) if math else None,
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=["configuration", "precision", "math", "peak", "note"])
