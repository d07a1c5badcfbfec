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

        tf.get_logger().setLevel("ERROR")
        tf.config.list_physical_devices()  # CUDA initialises (and logs) here
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
