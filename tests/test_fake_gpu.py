"""The GPU-only branches, run on a fake GPU: recorded nvidia-smi outputs (tests/fakes/, cited in its
README), fake TensorFlow device views through gpukit.bench.device's seams (physical_gpus, gpu_details,
nvidia_smi), fake and real child processes, and TensorFlow's out-of-memory messages as recorded.

Nothing here imports TensorFlow except the tests marked ``tensorflow``.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
from dataclasses import asdict
from pathlib import Path

import pytest

from gpukit import memory, specs
from gpukit.bench import device, runner, workloads
from gpukit.bench import harness as bench
from gpukit.bench.results import Record, Results
from gpukit.bench.workloads import Config, DeviceInfo
from gpukit.errors import GpukitError
from gpukit.precision import MATH_PEAK_COLUMN, Unsupported, device_math
from gpukit.quiet import quiet_tensorflow

FAKES = Path(__file__).resolve().parent / "fakes"
SMI_DIR = FAKES / "nvidia-smi"
SMI_ARGS = [
    "--query-gpu=name,memory.total,driver_version,power.limit,clocks.max.sm",
    "--format=csv,noheader,nounits",
]
FAST = bench.Settings(
    warmup_steps=1, warmup_min_s=0.0, min_sample_s=0.0005, min_time_s=0.005, min_samples=3, max_samples=10
)


def recorded(name: str) -> str:
    """The recorded nvidia-smi output ``tests/fakes/nvidia-smi/<name>.txt``."""
    return (SMI_DIR / f"{name}.txt").read_text(encoding="utf-8")


def catalogue_row(gpu: str) -> dict:
    """The catalogue row gpukit attaches to a matched GPU (what describe_attached returns)."""
    return specs.records(specs.select(specs.load_catalogue(), [gpu]))[0]


def peak(gpu: str, column: str) -> float:
    """A datasheet figure from the catalogue (never typed by hand here)."""
    return float(specs.lookup(gpu)[column])


# --------------------------------------------------------------------------- stderr texts a GPU child dies with
# Each is quoted from a public record of a real run (URL beside it), not composed here.

#: BFC allocator warning, tensorflow/tensorflow#52123 (https://github.com/tensorflow/tensorflow/issues/52123).
#: (A warning: a child that later dies with it in its stderr is taken as out of memory.)
BFC_RAN_OUT = (
    "2021-09-24 16:22:56.271936: W tensorflow/core/common_runtime/bfc_allocator.cc:243] Allocator "
    "(GPU_0_bfc) ran out of memory trying to allocate 2.60GiB with freed_by_count=0. The caller indicates "
    "that this is not a failure, but may mean that there could be performance gains if more memory were "
    "available."
)
#: CUDA driver, tensorflow/tensorflow#30912 (https://github.com/tensorflow/tensorflow/issues/30912).
CUDA_OOM = (
    "2019-07-21 23:23:06.228049: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate "
    "32.00M (33554432 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"
)
#: XLA's allocator: the status built in xla/stream_executor/integrations/tf_allocator_adapter.cc
#: (https://github.com/openxla/xla/blob/main/xla/stream_executor/integrations/tf_allocator_adapter.cc:
#: ResourceExhaustedError("Out of memory while trying to allocate ", size, " bytes.")), as a
#: RESOURCE_EXHAUSTED status prints it, with the "BufferAssignment OOM Debugging." line XLA adds.
XLA_OOM = (
    "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8000000000 bytes.\n"
    "BufferAssignment OOM Debugging."
)
#: cuBLAS handle, lambdal/TensorFlow2-tutorial#9 (https://github.com/lambdal/TensorFlow2-tutorial/pull/9).
CUBLAS_ALLOC_FAILED = (
    "2020-11-24 17:10:41.561920: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to "
    "create cublas handle: CUBLAS_STATUS_ALLOC_FAILED"
)
#: A failed GPU copy, tensorflow/tensorflow#30912 (and #7025: "when really the problem is out of GPU memory").
DST_TENSOR = (
    "tensorflow.python.framework.errors_impl.InternalError: 2 root error(s) found.\n"
    "  (0) Internal: Dst tensor is not initialized."
)
#: ResourceExhaustedError as Keras printed it, keras-team/keras#9643 (https://github.com/keras-team/keras/issues/9643).
TENSOR_OOM = (
    "ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type float on "
    "/job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc"
)

#: Failures that are not out of memory and must stay errors.
#: CUDA_ERROR_ILLEGAL_ADDRESS abort, tensorflow/tensorflow#25866.
ILLEGAL_ADDRESS = (
    "2019-02-21 16:43:26.973428: E tensorflow/stream_executor/cuda/cuda_driver.cc:1011] could not "
    "synchronize on CUDA context: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was "
    "encountered ::\n2019-02-21 16:43:26.984939: F tensorflow/core/common_runtime/gpu/"
    "gpu_event_mgr.cc:274] Unexpected Event status: 1"
)
#: cuDNN missing, tensorflow/text#1167 (https://github.com/tensorflow/text/issues/1167).
DNN_NOT_FOUND = (
    "2023-06-19 17:03:27.841329: W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at "
    "conv_ops.cc:1068 : UNIMPLEMENTED: DNN library is not found."
)
#: cuBLAS not initialised, tensorflow/tensorflow#9489 (https://github.com/tensorflow/tensorflow/issues/9489).
CUBLAS_NOT_INITIALIZED = (
    "2017-12-30 21:18:15.134786: E tensorflow/stream_executor/cuda/cuda_blas.cc:366] failed to "
    "create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED"
)
#: cuDNN start-up failure, tensorflow/tensorflow#33666 (https://github.com/tensorflow/tensorflow/issues/33666).
CONV_ALGORITHM = (
    "tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is "
    "probably because cuDNN failed to initialize, so try looking to see if a warning log message was "
    "printed above."
)


# --------------------------------------------------------------------------- the fake device layer


class FakePhysicalDevice:
    """What ``tf.config.list_physical_devices("GPU")`` returns items of (only ``name`` is read)."""

    def __init__(self, index: int):
        self.name = f"/physical_device:GPU:{index}"
        self.device_type = "GPU"


def fake_nvidia_smi_process(
    monkeypatch, stdout: str = "", returncode: int = 0, raises=None, found: bool = True
):
    """Make ``device.nvidia_smi`` run a fake nvidia-smi printing ``stdout``; returns the argv list it saw."""
    seen: list[list[str]] = []
    real_run = subprocess.run

    def run(args, *a, **kw):
        if not (args and str(args[0]).endswith("nvidia-smi")):
            return real_run(args, *a, **kw)
        seen.append(list(args))
        if raises is not None:
            raise raises
        if kw.get("check") and returncode:
            raise subprocess.CalledProcessError(returncode, args, stdout, "")
        return subprocess.CompletedProcess(args, returncode, stdout, "")

    monkeypatch.setattr(device.shutil, "which", lambda exe: "/usr/bin/nvidia-smi" if found else None)
    monkeypatch.setattr(device.subprocess, "run", run)
    return seen


def fake_gpu(
    monkeypatch, smi_file: str | None, device_name: str | None = None, cc=(8, 0), count: int | None = None
):
    """A machine with a GPU: TensorFlow sees ``count`` GPUs (default: one per nvidia-smi line) called
    ``device_name`` (default: nvidia-smi's first name) of compute capability ``cc``; nvidia-smi prints the
    recorded file (``None``: no nvidia-smi)."""
    text = recorded(smi_file) if smi_file else ""
    rows = device.parse_nvidia_smi(text)
    name = device_name or rows[0]["name"]
    gpus = [FakePhysicalDevice(i) for i in range(count or max(len(rows), 1))]
    asked = []

    def gpu_details(gpu):
        asked.append(gpu.name)
        return {"device_name": name, "compute_capability": cc}

    monkeypatch.setattr(device, "physical_gpus", lambda: gpus)
    monkeypatch.setattr(device, "gpu_details", gpu_details)
    if smi_file:
        fake_nvidia_smi_process(monkeypatch, text)
    else:
        fake_nvidia_smi_process(monkeypatch, found=False)
    return asked


@pytest.fixture
def no_tensorflow_environment(monkeypatch):
    """bench_environment loads TensorFlow; on the fake GPU the document gets a stand-in."""
    monkeypatch.setattr(device, "bench_environment", lambda xla=False: {"tensorflow": "fake", "xla_jit": xla})


# --------------------------------------------------------------------------- nvidia-smi on recorded outputs

#: What each recorded file must parse to (name, MiB, driver, W, MHz); None where nvidia-smi printed [N/A].
RECORDED_ROWS = {
    "a100-sxm4-80gb": [("NVIDIA A100-SXM4-80GB", 81920, "535.104.05", 400.0, 1410)],
    "a100-sxm4-40gb": [("NVIDIA A100-SXM4-40GB", 40960, "510.47.03", 400.0, 1410)],
    "tesla-v100-sxm2-32gb": [("Tesla V100-SXM2-32GB", 32768, "525.105.17", 300.0, 1530)],
    "h100-80gb-hbm3": [("NVIDIA H100 80GB HBM3", 81559, "590.48.01", 700.0, 1980)],
    "h100-80gb-hbm3-x2": [("NVIDIA H100 80GB HBM3", 81559, "550.90.07", 700.0, 1980)] * 2,
    "h200": [("NVIDIA H200", 143771, "590.48.01", 700.0, 1980)],
    "l40s": [("NVIDIA L40S", 46068, "595.80", 350.0, 2520)],
    "geforce-rtx-4090": [("NVIDIA GeForce RTX 4090", 24564, "535.86.05", 450.0, 3120)],
    "geforce-rtx-4080-super": [("NVIDIA GeForce RTX 4080 SUPER", 16376, "595.71.05", 320.0, 3165)],
    "rtx-a5000": [("NVIDIA RTX A5000", 24564, "570.211.01", 230.0, 1695)],
    "rtx-6000-ada-generation": [("NVIDIA RTX 6000 Ada Generation", 49140, "570.211.01", 300.0, None)],
}


def test_every_recorded_output_has_an_expectation():
    assert sorted(p.stem for p in SMI_DIR.glob("*.txt")) == sorted(RECORDED_ROWS)


@pytest.mark.parametrize("name", sorted(RECORDED_ROWS))
def test_nvidia_smi_parses_each_recorded_output(monkeypatch, name):
    seen = fake_nvidia_smi_process(monkeypatch, recorded(name))
    rows = device.nvidia_smi()
    assert seen == [["/usr/bin/nvidia-smi", *SMI_ARGS]]
    assert [tuple(r[k] for k in device.SMI_KEYS) for r in rows] == RECORDED_ROWS[name]
    assert all(isinstance(r["memory_mib"], int) for r in rows)


L40S = "NVIDIA L40S, 46068, 595.80, 350.00, 2520"  # the recorded line; the variants below are derived from it


@pytest.mark.parametrize(
    "text, expected",
    [
        # nvidia-smi prints [N/A] for a value it cannot give (the 4080 SUPER capture does for module.power.limit)
        ("NVIDIA L40S, 46068, 595.80, [N/A], 2520\n", ("NVIDIA L40S", 46068, "595.80", None, 2520)),
        (
            "NVIDIA L40S, 46068, 595.80, [Not Supported], [N/A]\n",
            ("NVIDIA L40S", 46068, "595.80", None, None),
        ),
        ("NVIDIA L40S, 46068, 595.80, N/A, 2520\n", ("NVIDIA L40S", 46068, "595.80", None, 2520)),
        (
            "  NVIDIA L40S ,   46068 ,595.80,  350.00 ,2520   \n",
            ("NVIDIA L40S", 46068, "595.80", 350.0, 2520),
        ),
        (L40S + "\r\n\r\n", ("NVIDIA L40S", 46068, "595.80", 350.0, 2520)),
        (
            "NVIDIA L40S, 46068 MiB, 595.80, 350.00 W, 2520 MHz\n",
            ("NVIDIA L40S", 46068, "595.80", 350.0, 2520),
        ),
        (
            "name, memory.total [MiB], driver_version, power.limit [W], clocks.max.sm [MHz]\n" + L40S,
            ("NVIDIA L40S", 46068, "595.80", 350.0, 2520),
        ),
        ("NVIDIA L40S, [N/A], [N/A], 350.00, 2520", ("NVIDIA L40S", None, None, 350.0, 2520)),
    ],
)
def test_nvidia_smi_parses_robustly(monkeypatch, text, expected):
    fake_nvidia_smi_process(monkeypatch, text)
    rows = device.nvidia_smi()
    assert [tuple(r[k] for k in device.SMI_KEYS) for r in rows] == [expected]


def test_nvidia_smi_skips_lines_that_are_not_gpus():
    text = (
        "WARNING: infoROM is corrupted at gpu 0000:3B:00.0\n\n"
        + recorded("geforce-rtx-4090")
        + "garbage, 1, 2\n"
    )
    rows = device.parse_nvidia_smi(text)
    assert [r["name"] for r in rows] == ["NVIDIA GeForce RTX 4090"]
    assert device.parse_nvidia_smi("") == [] and device.parse_nvidia_smi("No devices were found\n") == []


@pytest.mark.parametrize(
    "kw",
    [
        {"found": False},
        {"returncode": 9},
        {"raises": subprocess.TimeoutExpired("smi", 20)},
        {"raises": FileNotFoundError("nvidia-smi")},
    ],
)
def test_nvidia_smi_missing_or_failing_is_no_gpus(monkeypatch, kw):
    seen = fake_nvidia_smi_process(monkeypatch, recorded("h100-80gb-hbm3"), **kw)
    assert device.nvidia_smi() == []
    assert len(seen) == (0 if kw.get("found") is False else 1)


# --------------------------------------------------------------------------- describe_attached on a fake GPU


@pytest.mark.parametrize(
    "cc, text", [((8, 0), "8.0"), ((9, 0), "9.0"), ([8, 6], "8.6"), ("8.9", "8.9"), (None, None), ((), None)]
)
def test_compute_capability_text(cc, text):
    assert device.compute_capability_text(cc) == text


def test_describe_attached_a100_sxm4_80gb(monkeypatch):
    asked = fake_gpu(monkeypatch, "a100-sxm4-80gb", cc=(8, 0))
    info = device.describe_attached()
    assert asked == ["/physical_device:GPU:0"]
    assert info["kind"] == "gpu" and info["name"] == "NVIDIA A100-SXM4-80GB"
    assert info["compute_capability"] == "8.0" and info["gpu_count"] == 1
    assert info["memory_mib"] == 81920.0
    assert info["catalogue_gpu"] == "A100 SXM4 80GB"
    assert info["catalogue_note"] == "NVIDIA A100-SXM4-80GB matched to A100 SXM4 80GB"
    assert info["catalogue_row"] == catalogue_row("A100 SXM4 80GB")
    assert info["nvidia_smi"] == device.parse_nvidia_smi(recorded("a100-sxm4-80gb"))
    dev, described = bench.attached_device()
    assert (
        dev == DeviceInfo("gpu", "8.0")
        and dev.ampere_or_later
        and described["catalogue_gpu"] == "A100 SXM4 80GB"
    )


@pytest.mark.parametrize(
    "smi_file, cc, gpu",
    [
        ("a100-sxm4-40gb", (8, 0), "A100 SXM4 40GB"),
        ("h100-80gb-hbm3", (9, 0), "H100 SXM5"),  # nvidia-smi's "HBM3" names the SXM5 board
        ("h200", (9, 0), "H200 SXM"),
        ("l40s", (8, 9), "L40S"),
        ("geforce-rtx-4090", (8, 9), "GeForce RTX 4090"),
        ("rtx-a5000", (8, 6), "RTX A5000"),
        ("tesla-v100-sxm2-32gb", (7, 0), "V100 SXM2 32GB"),
    ],
)
def test_describe_attached_matches_recorded_gpus(monkeypatch, smi_file, cc, gpu):
    fake_gpu(monkeypatch, smi_file, cc=cc)
    info = device.describe_attached()
    assert info["catalogue_gpu"] == gpu
    assert info["compute_capability"] == ".".join(map(str, cc))
    assert info["memory_mib"] == float(RECORDED_ROWS[smi_file][0][1])
    assert info["catalogue_row"]["gpu"] == gpu


def test_two_gpu_machine(monkeypatch):
    fake_gpu(monkeypatch, "h100-80gb-hbm3-x2", cc=(9, 0))
    info = device.describe_attached()
    assert info["gpu_count"] == 2 and len(info["nvidia_smi"]) == 2
    assert info["catalogue_gpu"] == "H100 SXM5" and info["memory_mib"] == 81559.0


def test_memory_size_breaks_the_tie_between_variants(monkeypatch):
    # The old nvidia-smi table in Wan-Video/Wan2.1#5 shows this V100 only as "Tesla V100-SXM2..."; with
    # its recorded 32768 MiB the name's two SXM2 variants are told apart by memory.
    fake_gpu(monkeypatch, "tesla-v100-sxm2-32gb", device_name="Tesla V100-SXM2", cc=(7, 0))
    info = device.describe_attached()
    assert info["catalogue_gpu"] == "V100 SXM2 32GB"
    assert info["catalogue_note"] == "Tesla V100-SXM2 with 32 GiB matched to V100 SXM2 32GB"
    assert bench.attached_device()[0] == DeviceInfo("gpu", "7.0")


def test_memory_tie_break_only_among_the_variants_the_name_allows():
    # 16 GiB (the catalogue's own size, in MiB) fits both the PCIe and the SXM2 16 GB cards; "SXM2" in
    # the name leaves only one. Without a form factor the name stays ambiguous: the default, said so.
    mib_16 = float(specs.lookup("V100 SXM2 16GB")["memory_gb"]) * 1024
    assert device.match_catalogue("Tesla V100-SXM2", mib_16) == (
        "V100 SXM2 16GB",
        "Tesla V100-SXM2 with 16 GiB matched to V100 SXM2 16GB",
    )
    gpu, note = device.match_catalogue("Tesla V100", mib_16)
    assert gpu == specs.resolve("Tesla V100").gpu and "default variant" in note


def test_a_newer_catalogued_gpu_is_matched(monkeypatch):
    fake_gpu(monkeypatch, "rtx-6000-ada-generation", cc=(8, 9))
    info = device.describe_attached()
    assert info["catalogue_gpu"] == "RTX 6000 Ada Generation"
    assert info["catalogue_row"]["fp32_tflops"] == specs.lookup("RTX 6000 Ada Generation")["fp32_tflops"]


def without(monkeypatch, name: str) -> None:
    """The shipped catalogue less one GPU: a recorded card the catalogue does not know."""
    shipped = specs.load_catalogue()
    monkeypatch.setattr(specs, "load_catalogue", lambda path=None: shipped[shipped["gpu"] != name].copy())


def test_the_4080_super_capture_is_matched_to_its_catalogue_row(monkeypatch):
    fake_gpu(monkeypatch, "geforce-rtx-4080-super", cc=(8, 9))
    info = device.describe_attached()
    assert info["catalogue_gpu"] == "GeForce RTX 4080 Super"
    assert info["catalogue_row"]["memory_gb"] == specs.lookup("RTX 4080 Super")["memory_gb"]


@pytest.mark.parametrize("smi_file, cc", [("geforce-rtx-4080-super", (8, 9))])
def test_uncatalogued_gpu_is_measured_without_a_peak(monkeypatch, smi_file, cc):
    without(monkeypatch, "GeForce RTX 4080 Super")
    fake_gpu(monkeypatch, smi_file, cc=cc)
    info = device.describe_attached()
    name = RECORDED_ROWS[smi_file][0][0]
    assert info["kind"] == "gpu" and info["name"] == name and info["compute_capability"] == "8.9"
    assert info["catalogue_gpu"] is None and info["catalogue_row"] is None
    assert (
        info["catalogue_note"]
        == f"{name} is not in the catalogue: measured, but with no datasheet peak to compare"
    )
    assert info["memory_mib"] == float(RECORDED_ROWS[smi_file][0][1])


def test_memory_comes_from_the_row_of_the_gpu_tensorflow_uses(monkeypatch):
    # Constructed from two recorded lines (RTX 4090, then L40S): nvidia-smi lists by PCI bus, CUDA by
    # speed, so TensorFlow's GPU 0 can be nvidia-smi's second row.
    text = recorded("geforce-rtx-4090") + recorded("l40s")
    monkeypatch.setattr(device, "physical_gpus", lambda: [FakePhysicalDevice(0), FakePhysicalDevice(1)])
    monkeypatch.setattr(
        device, "gpu_details", lambda gpu: {"device_name": "NVIDIA L40S", "compute_capability": (8, 9)}
    )
    fake_nvidia_smi_process(monkeypatch, text)
    info = device.describe_attached()
    assert info["catalogue_gpu"] == "L40S" and info["memory_mib"] == 46068.0


def test_gpu_without_nvidia_smi_still_matches_by_name(monkeypatch):
    fake_gpu(monkeypatch, None, device_name="NVIDIA A100-SXM4-80GB", cc=(8, 0))
    info = device.describe_attached()
    assert info["nvidia_smi"] == [] and info["memory_mib"] is None
    assert info["catalogue_gpu"] == "A100 SXM4 80GB"


def test_cpu_machine_has_no_catalogue_peak(monkeypatch):
    monkeypatch.setattr(device, "physical_gpus", lambda: [])
    monkeypatch.setattr(device, "gpu_details", lambda gpu: pytest.fail("no GPU to ask about"))
    fake_nvidia_smi_process(monkeypatch, found=False)
    info = device.describe_attached()
    assert info["kind"] == "cpu" and info["gpu_count"] == 0 and info["catalogue_gpu"] is None
    assert bench.attached_device()[0] == DeviceInfo("cpu", None)


@pytest.mark.tensorflow
def test_the_real_seams_on_this_cpu_machine():
    assert device.physical_gpus() == []  # this machine has no GPU
    info = device.describe_attached()
    assert info["kind"] == "cpu" and info["catalogue_gpu"] is None


# --------------------------------------------------------------------------- datasheet peaks by the math that ran

A100 = "A100 SXM4 80GB"
SQUARE = {"shape": "square", "m": 8192, "n": 8192, "k": 8192}


@pytest.mark.parametrize(
    "precision, math_, column",
    [
        ("tf32", "TF32", "tf32_tensor_tflops"),
        ("float32", "TF32", "tf32_tensor_tflops"),
        ("fp32", "FP32", "fp32_tflops"),
        ("fp16", "FP16", "fp16_tensor_tflops"),
        ("bf16", "BF16", "bf16_tensor_tflops"),
    ],
)
def test_peak_for_the_math_that_ran_on_an_a100(precision, math_, column):
    assert device_math(precision, "gpu", "8.0") == math_
    assert MATH_PEAK_COLUMN[math_] == column
    got = bench._peak_for(Config("matmul", precision, SQUARE), math_, catalogue_row(A100))
    assert got == peak(A100, column)


def test_peak_for_bandwidth_and_missing_figures():
    row = catalogue_row(A100)
    bw = Config("bandwidth", "fp32", {"kernel": "scale", "elements": 2**27})
    assert bench._peak_for(bw, "FP32", row) == peak(A100, "memory_bandwidth_gbs")
    v100 = catalogue_row("V100 SXM2 32GB")
    assert v100["tf32_tensor_tflops"] is None
    assert bench._peak_for(Config("matmul", "tf32", SQUARE), "TF32", v100) is None  # no such figure
    assert bench._peak_for(Config("matmul", "fp32", SQUARE), "FP32", None) is None  # uncatalogued GPU


@pytest.fixture
def fake_workload(monkeypatch):
    """run_config without TensorFlow: the precision scope says the math the device runs; the step is a no-op
    of known FLOPs and bytes."""

    @contextlib.contextmanager
    def precision_scope(config, dev):
        yield device_math(config.precision, dev.kind, dev.compute_capability)

    def build(config, math_mode):
        if config.workload == "bandwidth":
            return workloads.Built(lambda: None, 0.0, 2 * 4 * 2**27, None, "GB/s", math_mode)
        return workloads.Built(lambda: None, 2.0 * 8192**3, 3 * 4 * 8192**2, None, "TFLOP/s", math_mode)

    monkeypatch.setattr(workloads, "precision_scope", precision_scope)
    monkeypatch.setattr(workloads, "build", build)


@pytest.mark.parametrize(
    "precision, math_, column",
    [("tf32", "TF32", "tf32_tensor_tflops"), ("fp16", "FP16", "fp16_tensor_tflops")],
)
def test_peak_fraction_of_a_record_on_an_a100(fake_workload, precision, math_, column):
    rec = bench.run_config(
        Config("matmul", precision, SQUARE), DeviceInfo("gpu", "8.0"), FAST, catalogue_row(A100)
    )
    assert rec.status == "ok" and rec.math_mode == math_
    assert rec.peak == peak(A100, column)
    assert rec.achieved_tflops == pytest.approx(2.0 * 8192**3 / rec.median_s / 1e12)
    assert rec.peak_fraction == pytest.approx(rec.achieved_tflops / rec.peak)


def test_peak_fraction_of_bandwidth_and_of_skipped_math(fake_workload):
    bw = bench.run_config(
        Config("bandwidth", "fp32", {"kernel": "scale", "elements": 2**27}),
        DeviceInfo("gpu", "8.0"),
        FAST,
        catalogue_row(A100),
    )
    assert bw.peak == peak(A100, "memory_bandwidth_gbs")
    assert bw.peak_fraction == pytest.approx(bw.throughput / bw.peak)
    skipped = bench.run_config(
        Config("matmul", "tf32", SQUARE), DeviceInfo("gpu", "7.0"), FAST, catalogue_row("V100 SXM2 32GB")
    )
    assert skipped.status == "skipped" and "no TF32 tensor cores" in skipped.error and skipped.peak is None


# --------------------------------------------------------------------------- plan() on a fake A100 and V100

ALL = ["float32", "fp32", "tf32", "fp16", "bf16"]


def plan_by_precision(frame) -> dict:
    return {p: group.reset_index(drop=True) for p, group in frame.groupby("precision")}


def test_plan_on_a_fake_a100(monkeypatch):
    fake_gpu(monkeypatch, "a100-sxm4-80gb", cc=(8, 0))
    rows = plan_by_precision(bench.plan(workloads=["matmul"], precisions=ALL))
    expected = {"float32": "TF32", "fp32": "FP32", "tf32": "TF32", "fp16": "FP16", "bf16": "BF16"}
    assert sorted(rows) == sorted(expected)
    for prec, math_ in expected.items():
        assert set(rows[prec]["math"]) == {math_}
        assert set(rows[prec]["peak"]) == {peak(A100, MATH_PEAK_COLUMN[math_])}
        assert set(rows[prec]["note"]) == {""}


def test_plan_on_a_fake_v100(monkeypatch):
    fake_gpu(monkeypatch, "tesla-v100-sxm2-32gb", cc=(7, 0))
    frame = bench.plan(workloads=["matmul", "bandwidth"], precisions=ALL)
    rows = plan_by_precision(frame[frame["configuration"].str.startswith("matmul")])
    v100 = "V100 SXM2 32GB"
    for prec in ("tf32", "bf16"):
        assert rows[prec]["math"].isna().all() and rows[prec]["peak"].isna().all()
        assert all(n.startswith("skipped: ") and prec.upper() in n for n in rows[prec]["note"])
    for prec, math_ in {"float32": "FP32", "fp32": "FP32", "fp16": "FP16"}.items():
        assert set(rows[prec]["math"]) == {math_}
        assert set(rows[prec]["peak"]) == {peak(v100, MATH_PEAK_COLUMN[math_])}
    bw = frame[frame["configuration"].str.startswith("bandwidth")]
    assert len(bw) == 2 and set(bw["peak"]) == {peak(v100, "memory_bandwidth_gbs")}


def test_plan_on_an_uncatalogued_gpu_has_no_peaks(monkeypatch):
    without(monkeypatch, "GeForce RTX 4080 Super")
    fake_gpu(monkeypatch, "geforce-rtx-4080-super", cc=(8, 9))
    frame = bench.plan(workloads=["matmul"], precisions=["float32", "bf16"])
    assert set(frame["math"]) == {"TF32", "BF16"} and frame["peak"].isna().all()


# --------------------------------------------------------------------------- one child process per configuration


class FakeChildren:
    """Stands in for ``gpukit.bench.runner.run``: answers as ``bench.config_child`` in a child would (an ok
    record, a skipped one for math the device lacks), or with the failure given per configuration label."""

    def __init__(self, failures: dict | None = None):
        self.failures = failures or {}
        self.calls: list[tuple[str, dict, float]] = []

    def __call__(self, target, payload, timeout_s=1800, env=None, unset=()):
        self.calls.append((target, payload, timeout_s))
        config = Config.from_dict(payload["config"])
        if config.label() in self.failures:
            return self.failures[config.label()]
        dev = payload["device"]
        try:
            math_ = device_math(config.precision, dev["kind"], dev["compute_capability"])
        except Unsupported as exc:
            return runner.ChildResult("ok", asdict(bench._record(config, "skipped", error=str(exc))), None, 0)
        median = 0.01
        flops = 2.0 * config.params.get("m", 1) * config.params.get("n", 1) * config.params.get("k", 1)
        pk = bench._peak_for(config, math_, payload["peak_row"])
        achieved = flops / median / 1e12
        rec = bench._record(
            config,
            "ok",
            math_mode=math_,
            warmup_s=[0.5],
            times_s=[median] * 5,
            loops=1,
            median_s=median,
            iqr_s=0.0,
            mad_s=0.0,
            cv=0.0,
            noisy=False,
            throughput=achieved,
            throughput_unit="TFLOP/s",
            achieved_tflops=achieved,
            flops_per_step=flops,
            bytes_per_step=0.0,
            items_per_step=None,
            peak=pk,
            peak_fraction=achieved / pk if pk else None,
        )
        return runner.ChildResult("ok", asdict(rec), None, 0)


def died_with(stderr: str, returncode: int = -6) -> runner.ChildResult:
    """What ``runner.run`` returns for a child that died without a result, from its stderr."""
    status, message = runner.classify(stderr)
    return runner.ChildResult(
        status, error=f"the child process exited with status {returncode}: {message}", returncode=returncode
    )


def test_run_benchmarks_isolates_each_configuration_on_a_gpu(monkeypatch, no_tensorflow_environment):
    info = {
        "kind": "gpu",
        "name": "NVIDIA A100-SXM4-80GB",
        "compute_capability": "8.0",
        "gpu_count": 1,
        "memory_mib": 81920.0,
        "catalogue_gpu": A100,
        "catalogue_note": "matched",
        "catalogue_row": catalogue_row(A100),
    }
    monkeypatch.setattr(bench, "attached_device", lambda: (DeviceInfo("gpu", "8.0"), info))
    configs = [
        Config("matmul", "tf32", SQUARE),
        Config("matmul", "fp16", {**SQUARE, "m": 65536}),
        Config("matmul", "bf16", SQUARE),
        Config("matmul", "fp32", {**SQUARE, "k": 4096}),
    ]
    children = FakeChildren(
        {configs[1].label(): died_with(CUDA_OOM), configs[3].label(): died_with(ILLEGAL_ADDRESS, 134)}
    )
    monkeypatch.setattr(runner, "run", children)
    seen = []
    results = bench.run_benchmarks(
        configs=configs, settings=FAST, progress=lambda i, n, r: seen.append((i, n, r.status))
    )
    assert results.isolation == "subprocess"
    assert len(children.calls) == len(configs)
    for (target, payload, _), config in zip(children.calls, configs):
        assert target == "gpukit.bench:config_child"
        assert payload["config"] == config.to_dict() and payload["device"] == {
            "kind": "gpu",
            "compute_capability": "8.0",
        }
        assert payload["settings"] == asdict(FAST) and payload["peak_row"]["gpu"] == A100
    assert [r.status for r in results.records] == ["ok", "oom", "ok", "error"]
    assert seen == [(1, 4, "ok"), (2, 4, "oom"), (3, 4, "ok"), (4, 4, "error")]
    ok, oom, after, err = results.records
    assert ok.math_mode == "TF32" and ok.peak == peak(A100, "tf32_tensor_tflops")
    assert ok.peak_fraction == pytest.approx(ok.achieved_tflops / ok.peak)
    assert after.math_mode == "BF16" and after.peak == peak(
        A100, "bf16_tensor_tflops"
    )  # the OOM did not stop it
    assert "CUDA_ERROR_OUT_OF_MEMORY: out of memory" in oom.error and oom.label == configs[1].label()
    assert oom.throughput is None and oom.times_s == []
    assert (
        err.error.startswith("the child process exited with status 134:") and "Unexpected Event" in err.error
    )
    assert results.device.kind == "gpu" and results.device.name == "NVIDIA A100-SXM4-80GB"
    assert results.device.catalogue_gpu == A100 and results.device.compute_capability == "8.0"
    assert "catalogue_row" not in results.device.to_dict()
    again = Results.from_dict(results.to_dict())
    assert [r.status for r in again.records] == [
        "ok",
        "oom",
        "ok",
        "error",
    ] and again.isolation == "subprocess"


def test_run_benchmarks_on_a_fake_v100_end_to_end(monkeypatch, no_tensorflow_environment):
    fake_gpu(monkeypatch, "tesla-v100-sxm2-32gb", cc=(7, 0))
    children = FakeChildren()
    monkeypatch.setattr(runner, "run", children)
    results = bench.run_benchmarks(workloads=["matmul"], precisions=["fp32", "tf32", "fp16"], settings=FAST)
    expected = workloads.default_configs(DeviceInfo("gpu", "7.0"), True, ["matmul"], ["fp32", "tf32", "fp16"])
    assert results.isolation == "subprocess" and len(children.calls) == len(expected) == len(results.records)
    v100 = "V100 SXM2 32GB"
    assert results.device.catalogue_gpu == v100 and results.device.details["memory_mib"] == 32768.0
    by_precision = {}
    for rec in results.records:
        by_precision.setdefault(rec.precision, set()).add((rec.status, rec.math_mode, rec.peak))
    assert by_precision["fp32"] == {("ok", "FP32", peak(v100, "fp32_tflops"))}
    assert by_precision["fp16"] == {("ok", "FP16", peak(v100, "fp16_tensor_tflops"))}
    assert by_precision["tf32"] == {("skipped", None, None)}
    assert all("no TF32 tensor cores" in r.error for r in results.records if r.precision == "tf32")


def test_record_from_a_child_round_trips():
    rec = bench._record(Config("matmul", "fp16", SQUARE), "ok", math_mode="FP16", peak=1.0)
    assert Record(**asdict(rec)) == rec


# --------------------------------------------------------------------------- OOM in every form TensorFlow raises it


@pytest.mark.parametrize(
    "text",
    [
        BFC_RAN_OUT,
        CUDA_OOM,
        XLA_OOM,
        CUBLAS_ALLOC_FAILED,
        DST_TENSOR,
        TENSOR_OOM,
        "2020-11-24 17:10:41.561920: E tensorflow/stream_executor/cuda/cuda_dnn.cc:] "
        "CUDNN_STATUS_ALLOC_FAILED",
    ],
)
def test_gpu_out_of_memory_texts_are_oom(text):
    status, message = runner.classify(text)
    assert runner.is_oom(text) and status == "oom"
    assert message == [ln.strip() for ln in text.splitlines() if ln.strip()][-1]


@pytest.mark.parametrize("text", [ILLEGAL_ADDRESS, DNN_NOT_FOUND, CUBLAS_NOT_INITIALIZED, CONV_ALGORITHM, ""])
def test_other_gpu_failures_stay_errors(text):
    assert not runner.is_oom(text)
    assert runner.classify(text)[0] == "error"


def test_oom_exception_types_without_tensorflow():
    assert runner.classify(MemoryError("fake GPU: batch 64 does not fit")) == (
        "oom",
        "MemoryError: fake GPU: batch 64 does not fit",
    )
    assert runner.classify(RuntimeError(CUBLAS_ALLOC_FAILED))[0] == "oom"
    assert runner.classify(RuntimeError("kernel launch failed\nsecond line")) == (
        "error",
        "RuntimeError: kernel launch failed",
    )


@pytest.mark.tensorflow
def test_tensorflow_exception_types():
    tf = quiet_tensorflow()
    exhausted = tf.errors.ResourceExhaustedError(None, None, TENSOR_OOM.split(": ", 1)[1])
    assert runner.classify(exhausted) == ("oom", "ResourceExhaustedError: " + TENSOR_OOM.split(": ", 1)[1])
    cublas = tf.errors.InternalError(None, None, "failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED")
    dst = tf.errors.InternalError(
        None, None, "Dst tensor is not initialized.\n\t [[{{node _arg_input/x-input_0_1}}]]"
    )
    assert runner.classify(cublas) == (
        "oom",
        "InternalError: failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
    )
    assert runner.classify(dst) == ("oom", "InternalError: Dst tensor is not initialized.")
    other = tf.errors.InternalError(
        None, None, "failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED"
    )
    assert runner.classify(other)[0] == "error"
    with pytest.raises(tf.errors.InvalidArgumentError) as bad_shapes:  # raised by TensorFlow itself
        tf.linalg.matmul(tf.ones((2, 3)), tf.ones((4, 5)))
    assert runner.classify(bad_shapes.value)[0] == "error"
    # A ResourceExhaustedError TensorFlow raises itself (1 TiB on a CPU) is test_bench's
    # test_out_of_memory_is_a_result; the CPU allocator retries it for 10 s, so not repeated here.


# --------------------------------------------------------------------------- OOM bisection on a fake GPU


@pytest.fixture
def one_fake_gpu(monkeypatch):
    monkeypatch.setattr(device, "physical_gpus", lambda: [FakePhysicalDevice(0)])


def fitting_up_to(largest: int, failure: str = CUBLAS_ALLOC_FAILED, fail_at: int | None = None):
    """A probe whose GPU fits batches up to ``largest``; above, it fails with ``failure`` classified as
    ``runner.run`` would; at ``fail_at`` it fails with a non-memory error. Returns (probe, batches asked)."""
    asked: list[int] = []

    def probe(model_name, batch, precision, optimizer, mode, input_shape):
        asked.append(batch)
        if batch == fail_at:
            status, message = runner.classify(ILLEGAL_ADDRESS)
            return {"status": status, "error": message}
        if batch <= largest:
            return {"status": "ok", "peak_bytes": 1_000_000 * batch}
        status, message = runner.classify(failure)
        return {"status": status, "error": message}

    return probe, asked


def test_bisection_finds_the_largest_batch_with_few_probes(one_fake_gpu):
    probe, asked = fitting_up_to(37)
    out = memory.bisect_largest_batch("ResNet50", "fp16", probe=probe)
    assert out["largest_batch"] == 37 and "note" not in out
    assert asked == [1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37]  # doubling, then halving the gap
    assert out["probes"] == [(b, "ok" if b <= 37 else "oom") for b in asked]


@pytest.mark.parametrize("largest", [1, 2, 3, 100, 1000, 4095])
@pytest.mark.parametrize("failure", [CUBLAS_ALLOC_FAILED, CUDA_OOM, BFC_RAN_OUT, XLA_OOM, DST_TENSOR])
def test_bisection_is_exact_and_logarithmic(one_fake_gpu, largest, failure):
    probe, asked = fitting_up_to(largest, failure)
    out = memory.bisect_largest_batch("ResNet50", probe=probe)
    assert out["largest_batch"] == largest
    assert (largest, "ok") in out["probes"] and (largest + 1, "oom") in out["probes"]
    assert len(asked) <= 2 * math.ceil(math.log2(largest + 1)) + 1
    assert len(set(asked)) == len(asked)  # no batch probed twice


def test_bisection_edges(one_fake_gpu):
    probe, asked = fitting_up_to(0)
    assert memory.bisect_largest_batch("ResNet50", probe=probe) == {
        "largest_batch": 0,
        "probes": [(1, "oom")],
    }
    probe, asked = fitting_up_to(10**6)
    out = memory.bisect_largest_batch("ResNet50", limit=64, probe=probe)
    assert out == {
        "largest_batch": 64,
        "probes": [(b, "ok") for b in (1, 2, 4, 8, 16, 32, 64)],
        "note": "stopped at the limit 64",
    }
    probe, asked = fitting_up_to(20)
    assert memory.bisect_largest_batch("ResNet50", start=3, probe=probe)["largest_batch"] == 20
    assert asked[:4] == [3, 6, 12, 24]


def test_bisection_stops_on_another_failure_naming_the_batch(one_fake_gpu):
    probe, asked = fitting_up_to(100, fail_at=8)
    with pytest.raises(GpukitError, match=r"probe at batch 8 failed: .*Unexpected Event status: 1"):
        memory.bisect_largest_batch("ResNet50", probe=probe)
    assert asked == [1, 2, 4, 8]


# --------------------------------------------------------------------------- the real child runner, no TensorFlow


def child_env(largest: int, how: str) -> dict:
    path = os.pathsep.join(p for p in (str(FAKES), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "FAKE_GPU_LARGEST_BATCH": str(largest), "FAKE_GPU_OOM": how}


def test_real_child_raising_memory_error_is_oom():
    child = runner.run("fake_child:measure", {"batch": 5}, timeout_s=60, env=child_env(1, "raise"))
    assert child.status == "oom" and child.returncode == 0
    assert child.error == "MemoryError: fake GPU: batch 5 does not fit"


def test_real_child_dying_of_a_non_memory_error_is_error():
    child = runner.run("fake_child:measure", {"batch": 5}, timeout_s=60, env=child_env(1, "crash"))
    assert child.status == "error" and child.returncode == 134
    assert child.error == (
        "the child process exited with status 134: 2019-02-21 16:43:26.984939: F "
        "tensorflow/core/common_runtime/gpu/gpu_event_mgr.cc:274] Unexpected Event status: 1"
    )


@pytest.mark.slow  # a second or more: the full tier's
def test_bisection_through_real_children(monkeypatch, one_fake_gpu):
    real_run = runner.run
    targets = []

    def redirected(target, payload, timeout_s=1800, env=None, unset=()):
        targets.append((target, dict(env or {})))
        return real_run(
            "fake_child:measure", payload, 60, env={**(env or {}), **child_env(3, "abort")}, unset=unset
        )

    monkeypatch.setattr(runner, "run", redirected)
    out = memory.bisect_largest_batch("ResNet50", "fp16")  # the default probe: measure_in_subprocess
    assert out == {"largest_batch": 3, "probes": [(1, "ok"), (2, "ok"), (4, "oom"), (3, "ok")]}
    # a token model's sequence length reaches every probe
    seen = []
    memory.bisect_largest_batch(
        "keras-encoder", probe=lambda *a, **kw: seen.append(kw) or {"status": "oom"}, seq_len=512
    )
    assert seen == [{"seq_len": 512}]
    assert [t for t, _ in targets] == ["gpukit.memory.measure:measure_child"] * 4
    assert all(env.items() >= memory.measure_env().items() for _, env in targets)
    # The 4 was an abort with the CUDA driver's line on stderr, classified by the parent:
    child = real_run("fake_child:measure", {"batch": 4}, 60, env=child_env(3, "abort"))
    assert child.status == "oom" and child.returncode == 134 and "CUDA_ERROR_OUT_OF_MEMORY" in child.error


# --------------------------------------------------------------------------- the CPU's 16-bit instructions


@pytest.mark.parametrize(
    "flags, native",
    [
        ({"fpu", "avx2", "fma"}, []),
        ({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"}, ["bf16"]),
        ({"avx512_bf16", "avx512_fp16"}, ["bf16", "fp16"]),
        ({"amx_tile", "amx_bf16", "amx_fp16"}, ["bf16", "fp16"]),
        ({"avx512_vnni", "avx_vnni"}, []),  # integer dot products only
    ],
)
def test_cpu_native_16bit_reads_the_dot_product_flags(flags, native):
    assert device.cpu_native_16bit(frozenset(flags)) == native


def test_cpu_flags_come_from_cpuinfo(monkeypatch, tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512_bf16\n\n"
        "processor\t: 1\nflags\t\t: fpu avx2 avx512_bf16\n"
    )
    real_open = open
    monkeypatch.setattr(
        device,
        "open",
        lambda path, *a, **k: real_open(info if path == "/proc/cpuinfo" else path, *a, **k),
        raising=False,
    )
    assert device.cpu_flags() == {"fpu", "avx2", "avx512_bf16"}
    assert device.cpu_model() == "AMD EPYC"  # the same file, another field
    assert device.cpu_native_16bit() == ["bf16"]
    assert device.environment()["cpu_native_16bit"] == ["bf16"]


def test_cpu_flags_unreadable_is_none_native(monkeypatch):
    def refuse(*a, **k):
        raise OSError("no /proc here")

    monkeypatch.setattr(device, "open", refuse, raising=False)
    assert device.cpu_flags() == frozenset() and device.cpu_native_16bit() == []
