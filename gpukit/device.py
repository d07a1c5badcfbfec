"""What is attached and what the software is: the environment recorded with every result.

TensorFlow is imported only by :func:`quiet_tensorflow` (and in a child process by
:func:`detect_devices`), so importing this module stays fast and silent.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import warnings
from importlib.metadata import PackageNotFoundError, version

#: Packages whose versions the environment record names.
PACKAGES = ("gpukit", "tensorflow", "keras", "numpy", "pandas", "matplotlib", "seaborn",
            "papermill", "nbconvert", "ipykernel")

# TensorFlow and CUDA write their start-up logs from C++; these keep them out of reports.
QUIET_ENV = {"TF_CPP_MIN_LOG_LEVEL": "3", "TF_CPP_MIN_VLOG_LEVEL": "0", "GRPC_VERBOSITY": "ERROR",
             "ABSL_MIN_LOG_LEVEL": "3", "KMP_WARNINGS": "0"}


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each package (``None`` where it is not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux, else :func:`platform.processor`)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment() -> dict:
    """Host, OS, Python and package versions; cheap, imports no TensorFlow."""
    return {
        "host": socket.gethostname(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "packages": package_versions(),
    }


@contextlib.contextmanager
def stderr_redirected(target: str | os.PathLike = os.devnull):
    """Point file descriptor 2 at ``target`` (appending) for the duration.

    C++ logging and child processes (a Jupyter kernel) write to the descriptor, not to
    Python's ``sys.stderr``, so only this keeps their noise out of a console or a report.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def quiet_tensorflow():
    """Import TensorFlow without its start-up log noise and return the module."""
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    with stderr_redirected(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import tensorflow as tf  # noqa: PLC0415 (imported lazily on purpose)
        import keras  # noqa: F401,PLC0415 -- its import logs too

        tf.get_logger().setLevel("ERROR")
        tf.config.list_physical_devices()  # CUDA initialises (and logs) here
        (tf.constant(1.0) + 1.0).numpy()  # so does the eager context's first kernel (CPU feature guard)
    return tf


_PROBE = r"""
import json, sys
from gpukit.device import quiet_tensorflow
tf = quiet_tensorflow()
gpus = []
for d in tf.config.list_physical_devices("GPU"):
    info = tf.config.experimental.get_device_details(d)
    cc = info.get("compute_capability")
    gpus.append({"name": info.get("device_name", d.name),
                 "compute_capability": ".".join(map(str, cc)) if cc else None})
build = dict(tf.sysconfig.get_build_info())
print(json.dumps({"gpus": gpus, "tensorflow": tf.__version__,
                  "cuda_build": build.get("cuda_version"), "cudnn_build": build.get("cudnn_version")}))
"""


def _nvidia_smi() -> list[dict]:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    query = "name,memory.total,driver_version,power.limit,clocks.max.sm"
    try:
        out = subprocess.run([exe, f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    rows = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 5:
            rows.append(dict(zip(("name", "memory_mib", "driver", "power_limit_w", "max_sm_clock_mhz"), parts)))
    return rows


def detect_devices(timeout_s: float = 120) -> dict:
    """What TensorFlow sees, probed in a child process so this one never loads TensorFlow.

    Returns ``{"kind": "gpu"|"cpu", "name", "gpus": [...], "nvidia_smi": [...], ...}``.
    A probe that fails (no TensorFlow, a broken driver) is reported, not raised.
    """
    env = {**os.environ, **QUIET_ENV}
    result: dict = {"gpus": [], "nvidia_smi": _nvidia_smi()}
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                              timeout=timeout_s, env=env)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and lines:
            result.update(json.loads(lines[-1]))
        else:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            result["probe_error"] = f"TensorFlow probe failed: {tail}"
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as exc:
        result["probe_error"] = f"TensorFlow probe failed: {exc}"
    if result["gpus"]:
        result["kind"] = "gpu"
        result["name"] = ", ".join(g["name"] for g in result["gpus"])
    else:
        result["kind"] = "cpu"
        result["name"] = f"{cpu_model()} ({os.cpu_count()} logical cores)"
    return result


# --------------------------------------------------------------------------- in-process (TensorFlow loaded)


def match_catalogue(name: str, memory_mib: float | None = None, catalogue=None) -> tuple[str | None, str]:
    """The catalogue row an attached GPU is, from its TensorFlow/nvidia-smi name and memory.

    Returns ``(gpu, note)``; ``gpu`` is ``None`` for a GPU the catalogue does not have (it is
    measured anyway). Where the name fits several variants, the memory size decides.
    """
    from . import specs
    from .errors import UnknownGPUError

    cat = specs.load_catalogue() if catalogue is None else catalogue
    try:
        res = specs.resolve(name, cat)
    except UnknownGPUError:
        return None, f"{name} is not in the catalogue: measured, but with no datasheet peak to compare"
    if res.defaulted and memory_mib:
        gib = memory_mib / 1024
        fits = cat[cat["gpu"].isin(res.variants)]
        fits = fits[(fits["memory_gb"] - gib).abs() <= 0.1 * fits["memory_gb"]]
        if len(fits) == 1:
            return fits["gpu"].iloc[0], f"{name} with {gib:.0f} GiB matched to {fits['gpu'].iloc[0]}"
    note = f"{name} matched to {res.gpu}" + (" (default variant; the name does not say which)" if res.defaulted else "")
    return res.gpu, note


def describe_attached() -> dict:
    """The device TensorFlow computes on here: the first GPU if any, else the CPU.

    GPU: name, compute capability, memory (nvidia-smi), driver, and the catalogue row it
    matches (its datasheet peaks). CPU: model and logical cores; no catalogue peak.
    """
    tf = quiet_tensorflow()
    gpus = tf.config.list_physical_devices("GPU")
    smi = _nvidia_smi()
    if not gpus:
        return {"kind": "cpu", "name": f"{cpu_model()} ({os.cpu_count()} logical cores)", "cpu": cpu_model(),
                "cpu_count": os.cpu_count(), "gpu_count": 0, "catalogue_gpu": None,
                "catalogue_note": "no GPU attached: TensorFlow runs on the CPU, which has no catalogue peak"}
    details = tf.config.experimental.get_device_details(gpus[0])
    cc = details.get("compute_capability")
    name = details.get("device_name", gpus[0].name)
    memory_mib = None
    if smi:
        try:
            memory_mib = float(smi[0]["memory_mib"])
        except (KeyError, ValueError):
            memory_mib = None
    gpu, note = match_catalogue(name, memory_mib)
    row = None
    if gpu:
        from . import specs

        row = specs.records(specs.select(specs.load_catalogue(), [gpu]))[0]
    return {"kind": "gpu", "name": name, "compute_capability": ".".join(map(str, cc)) if cc else None,
            "gpu_count": len(gpus), "memory_mib": memory_mib, "nvidia_smi": smi, "catalogue_gpu": gpu,
            "catalogue_note": note, "catalogue_row": row}


def bench_environment(xla: bool = False) -> dict:
    """:func:`environment` plus what decides TensorFlow's speed: build, XLA, TF32, threads, oneDNN."""
    tf = quiet_tensorflow()
    import keras

    build = dict(tf.sysconfig.get_build_info())
    env = environment()
    env.update({
        "tensorflow": tf.__version__, "keras": keras.__version__,
        "cuda_build": build.get("cuda_version"), "cudnn_build": build.get("cudnn_version"),
        "xla_jit": bool(xla), "tf32_default": tf.config.experimental.tensor_float_32_execution_enabled(),
        "keras_policy": keras.mixed_precision.global_policy().name,
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "onednn_opts": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
    })
    return env
