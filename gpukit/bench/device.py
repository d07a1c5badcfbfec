"""What is attached and what the software is: the environment recorded with every result.

TensorFlow is imported only by :func:`quiet_tensorflow` (and in a child process by
:func:`detect_devices`), so importing this module stays fast and silent. What TensorFlow and
nvidia-smi say of the attached GPU comes through three seams, :func:`physical_gpus`,
:func:`gpu_details` and :func:`nvidia_smi`, which the tests replace to fake a GPU.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

from ..quiet import QUIET_ENV, quiet_tensorflow

#: Packages whose versions the environment record names.
PACKAGES = (
    "gpukit",
    "tensorflow",
    "keras",
    "numpy",
    "pandas",
    "matplotlib",
    "seaborn",
    "papermill",
    "nbconvert",
    "ipykernel",
)


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each package (``None`` where it is not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _cpuinfo(*fields: str) -> str | None:
    """The value of the first line of /proc/cpuinfo (Linux) naming one of ``fields``; None where none does."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith(fields):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux, else :func:`platform.processor`)."""
    return _cpuinfo("model name") or platform.processor() or platform.machine()


#: CPU flags (Linux ``/proc/cpuinfo``) that give the CPU dot-product instructions for a 16-bit format.
#: With them TensorFlow's oneDNN kernels multiply bfloat16 matrices as they are; without them its
#: CPU matrix multiplies in a 16-bit format work through float32 copies of both operands and the
#: result (measured with ``TF_ENABLE_ONEDNN_OPTS=1``: a 4096x256 by 256x2048
#: bfloat16 ``MatMul`` peaks 16 MiB above its inputs on a CPU with ``avx512_bf16``, 54 MiB with
#: oneDNN off; float16, whose flags this CPU lacks, 54 MiB either way).
NATIVE_16BIT_FLAGS = {"bf16": ("avx512_bf16", "amx_bf16"), "fp16": ("avx512_fp16", "amx_fp16")}


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (from /proc/cpuinfo on Linux; empty where it cannot tell)."""
    return frozenset((_cpuinfo("flags", "features") or "").split())


def cpu_native_16bit(flags: frozenset[str] | None = None) -> list[str]:
    """The 16-bit formats (``bf16``, ``fp16``) the CPU has dot-product instructions for
    (:data:`NATIVE_16BIT_FLAGS`); a memory measurement in a format missing here holds float32
    copies a GPU does not."""
    have = cpu_flags() if flags is None else flags
    return [fmt for fmt, names in NATIVE_16BIT_FLAGS.items() if have.intersection(names)]


def environment() -> dict:
    """Host, OS, Python and package versions; cheap, imports no TensorFlow."""
    return {
        "host": socket.gethostname(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_native_16bit": cpu_native_16bit(),
        "packages": package_versions(),
    }


def physical_gpus() -> list:
    """The GPUs TensorFlow sees in this process (an empty list on a CPU-only machine)."""
    return quiet_tensorflow().config.list_physical_devices("GPU")


def gpu_details(gpu) -> dict:
    """TensorFlow's details of one of :func:`physical_gpus` (``tf.config.experimental.get_device_details``):
    ``device_name`` (the CUDA name, e.g. ``NVIDIA A100-SXM4-80GB``) and ``compute_capability`` as a
    tuple such as ``(8, 0)``. Tests replace this seam (and :func:`physical_gpus`) to fake a GPU."""
    return dict(quiet_tensorflow().config.experimental.get_device_details(gpu))


def compute_capability_text(cc) -> str | None:
    """``"8.0"`` from TensorFlow's ``(8, 0)`` (a string is kept as it is); ``None`` when unknown."""
    if cc is None or cc == () or cc == "":
        return None
    if isinstance(cc, str):
        return cc.strip() or None
    return ".".join(str(part) for part in cc)


_PROBE = r"""
import json, sys
from gpukit.bench.device import quiet_tensorflow
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


#: What :func:`nvidia_smi` asks for (``--query-gpu``), and the keys it returns each field under.
SMI_QUERY = ("name", "memory.total", "driver_version", "power.limit", "clocks.max.sm")
SMI_KEYS = ("name", "memory_mib", "driver", "power_limit_w", "max_sm_clock_mhz")


def _smi_value(text: str) -> str | None:
    """One field as nvidia-smi printed it, stripped; ``None`` for its "no value" forms: ``[N/A]``,
    ``N/A``, ``[Not Supported]``, ``[Unknown Error]``, ``[Requested functionality has been deprecated]``."""
    value = " ".join(text.split())
    if not value or value.casefold() in ("n/a", "na") or (value.startswith("[") and value.endswith("]")):
        return None
    return value


def _smi_number(text: str) -> float | None:
    """A numeric field (``81920``, ``400.00``; a unit left by a missing ``nounits`` is dropped), or ``None``."""
    value = _smi_value(text)
    if value is None:
        return None
    try:
        return float(value.split()[0])
    except ValueError:
        return None


def _whole(value: float | None) -> int | float | None:
    """A whole number as an int (MiB, MHz), anything else unchanged."""
    return int(value) if value is not None and value.is_integer() else value


def parse_nvidia_smi(text: str) -> list[dict]:
    """Rows of ``nvidia-smi --query-gpu=<SMI_QUERY> --format=csv,noheader,nounits`` output, one per GPU:
    ``name``, ``memory_mib`` (int), ``driver``, ``power_limit_w`` (float) and ``max_sm_clock_mhz`` (int),
    ``None`` where nvidia-smi has no value. Extra spaces, CRLF line ends, blank lines, a header line and
    lines that are not GPU rows (warnings) are tolerated; a comma inside a name cannot split it."""
    rows = []
    for line in text.splitlines():
        parts = line.rsplit(",", len(SMI_KEYS) - 1)  # only the name can contain a comma
        if len(parts) != len(SMI_KEYS):
            continue
        name, memory, driver, power, clock = parts
        name = _smi_value(name)
        if name is None or name.casefold() == "name":  # a header line (csv without noheader)
            continue
        rows.append(
            {
                "name": name,
                "memory_mib": _whole(_smi_number(memory)),
                "driver": _smi_value(driver),
                "power_limit_w": _smi_number(power),
                "max_sm_clock_mhz": _whole(_smi_number(clock)),
            }
        )
    return rows


def nvidia_smi() -> list[dict]:
    """The GPUs nvidia-smi lists (:func:`parse_nvidia_smi`); ``[]`` without nvidia-smi or when it fails."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run(
            [exe, f"--query-gpu={','.join(SMI_QUERY)}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_nvidia_smi(out or "")


def detect_devices(timeout_s: float = 120) -> dict:
    """What TensorFlow sees, probed in a child process so this one never loads TensorFlow.

    Returns ``{"kind": "gpu"|"cpu", "name", "gpus": [...], "nvidia_smi": [...], ...}``.
    A probe that fails (no TensorFlow, a broken driver) is reported, not raised.
    """
    env = {**os.environ, **QUIET_ENV}
    result: dict = {"gpus": [], "nvidia_smi": nvidia_smi()}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=timeout_s, env=env
        )
        lines = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and lines:
            result.update(json.loads(lines[-1]))
        else:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            result["probe_error"] = f"TensorFlow probe failed: {tail}"
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as exc:
        result["probe_error"] = f"TensorFlow probe failed: {exc}"
    return _named(result)


def _named(result: dict) -> dict:
    """``result`` with its ``kind`` and ``name``: its GPUs', else this CPU's."""
    if result["gpus"]:
        result["kind"] = "gpu"
        result["name"] = ", ".join(g["name"] for g in result["gpus"])
    else:
        result["kind"] = "cpu"
        result["name"] = f"{cpu_model()} ({os.cpu_count()} logical cores)"
    return result


def cpu_only(tensorflow: str, cuda_build: str | None = None, cudnn_build: str | None = None) -> dict:
    """What :func:`detect_devices` returns where TensorFlow sees no GPU, from what a process that
    loaded TensorFlow here found (the benchmark's environment): the probe would load it again (5 s)
    only to say so."""
    found = {"gpus": [], "nvidia_smi": nvidia_smi(), "tensorflow": tensorflow}
    return _named({**found, "cuda_build": cuda_build, "cudnn_build": cudnn_build})


# --------------------------------------------------------------------------- in-process (TensorFlow loaded)


def match_catalogue(name: str, memory_mib: float | None = None, catalogue=None) -> tuple[str | None, str]:
    """The catalogue row an attached GPU is, from its TensorFlow/nvidia-smi name and memory.

    Returns ``(gpu, note)``; ``gpu`` is ``None`` for a GPU the catalogue does not have (it is
    measured anyway). Where the name fits several variants, the memory size decides.
    """
    from .. import specs
    from ..errors import UnknownGPUError

    cat = specs.load_catalogue() if catalogue is None else catalogue
    if str(name).strip().upper() == "METAL":
        return None, (
            "TensorFlow (tensorflow-metal) names an Apple GPU only METAL, not its chip: measured, but matched "
            "to no catalogue row"
        )
    try:
        res = specs.resolve(name, cat)
    except UnknownGPUError:
        by_target = _match_target(name, memory_mib, cat)
        if by_target:
            return by_target
        return None, f"{name} is not in the catalogue: measured, but with no datasheet peak to compare"
    if res.defaulted and memory_mib:
        gib = memory_mib / 1024
        fits = cat[cat["gpu"].isin(res.matches)]  # the variants the name allows
        fits = fits[(fits["memory_gb"] - gib).abs() <= 0.1 * fits["memory_gb"]]
        if len(fits) == 1:
            return fits["gpu"].iloc[0], f"{name} with {gib:.0f} GiB matched to {fits['gpu'].iloc[0]}"
    note = f"{name} matched to {res.gpu}" + (
        " (default variant; the name does not say which)" if res.defaulted else ""
    )
    return res.gpu, note


def _match_target(name: str, memory_mib: float | None, cat) -> tuple[str, str] | None:
    """The catalogue row of a GPU a ROCm build names by its compiler target (``gfx942``): the one row
    of that target, or the one whose memory the device's is (an MI300X's 192 GB, an MI325X's 256)."""
    target = str(name).strip().lower()
    if "arch_target" not in cat.columns or not target.startswith("gfx"):
        return None
    rows = cat[cat["arch_target"].fillna("").str.lower() == target.split(":")[0]]
    if memory_mib and len(rows) > 1:
        gib = memory_mib / 1024
        rows = rows[(rows["memory_gb"] - gib).abs() <= 0.1 * rows["memory_gb"]]
    if len(rows) != 1:
        return None
    return rows["gpu"].iloc[0], f"{name} (ROCm's target name) matched to {rows['gpu'].iloc[0]}"


def smi_row_for(name: str, smi: list[dict]) -> dict | None:
    """The nvidia-smi row of the GPU TensorFlow calls ``name``: the first row of that name, else the
    first row (nvidia-smi lists by PCI bus, CUDA by speed, so on a mixed machine they can differ)."""
    for row in smi:
        if row.get("name") == name:
            return row
    return smi[0] if smi else None


def describe_attached() -> dict:
    """The device TensorFlow computes on here: the first GPU if any, else the CPU.

    GPU: name, compute capability, memory (nvidia-smi), driver, and the catalogue row it
    matches (its datasheet peaks). CPU: model and logical cores; no catalogue peak. TensorFlow
    is reached only through :func:`physical_gpus` and :func:`gpu_details`, nvidia-smi through
    :func:`nvidia_smi`, so tests can fake all three.
    """
    gpus = physical_gpus()
    smi = nvidia_smi()
    if not gpus:
        return {
            "kind": "cpu",
            "name": f"{cpu_model()} ({os.cpu_count()} logical cores)",
            "cpu": cpu_model(),
            "cpu_count": os.cpu_count(),
            "gpu_count": 0,
            "catalogue_gpu": None,
            "catalogue_note": "no GPU attached: TensorFlow runs on the CPU, which has no catalogue peak",
        }
    details = gpu_details(gpus[0]) or {}
    name = details.get("device_name") or getattr(gpus[0], "name", str(gpus[0]))
    row = smi_row_for(name, smi)
    memory_mib = None
    if row and row.get("memory_mib") is not None:
        try:
            memory_mib = float(row["memory_mib"])
        except (TypeError, ValueError):
            memory_mib = None
    gpu, note = match_catalogue(name, memory_mib)
    catalogue_row = None
    if gpu:
        from .. import specs

        catalogue_row = specs.records(specs.select(specs.load_catalogue(), [gpu]))[0]
    cc = compute_capability_text(details.get("compute_capability"))
    return {
        "kind": "gpu",
        "name": name,
        "compute_capability": cc,
        "gpu_count": len(gpus),
        "memory_mib": memory_mib,
        "nvidia_smi": smi,
        "catalogue_gpu": gpu,
        "catalogue_note": note,
        "catalogue_row": catalogue_row,
    }


def bench_environment(xla: bool = False) -> dict:
    """:func:`environment` plus what decides TensorFlow's speed: build, XLA, TF32, threads, oneDNN."""
    tf = quiet_tensorflow()
    import keras

    build = dict(tf.sysconfig.get_build_info())
    env = environment()
    env.update(
        {
            "tensorflow": tf.__version__,
            "keras": keras.__version__,
            "cuda_build": build.get("cuda_version"),
            "cudnn_build": build.get("cudnn_version"),
            "xla_jit": bool(xla),
            "tf32_default": tf.config.experimental.tensor_float_32_execution_enabled(),
            "keras_policy": keras.mixed_precision.global_policy().name,
            "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
            "onednn_opts": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        }
    )
    return env
