"""The serving engines as dated profiles (:class:`Engine`, :data:`ENGINES`: ``llama.cpp`` of 2025 on,
``llama.cpp-2024``, ``vllm``, ``trt-llm``): how each multiplies a prompt, what its activations cost
in memory traffic, how it spreads a model over several GPUs, the kernels it launches and the rates
they stream at, how its scheduler serves at batch, which published runs it describes
(:func:`engine_of_run`), which engine serves a weights format by default, and the roofline's
factors the LLM model takes."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..errors import ParameterError
from ..perfmodel import DEFAULT_EFFICIENCY
from ..precision import Unsupported

#: Tokens of the prompt processed per step (llama.cpp's default micro-batch, vLLM's chunked prefill).
PROMPT_CHUNK = 512

#: Kernels a decoder layer launches per generated token (norms, Q/K/V, rotary, attention, output
#: projection, residual adds, gate/up/down and activation): llama.cpp's CUDA graph of a LLaMA
#: layer has this order of nodes.
KERNELS_PER_LAYER = 14
#: The same for vLLM, which fuses more: its ``LlamaDecoderLayer`` (``vllm/model_executor/models/llama.py``
#: at commit 0035bdf2) runs a residual add fused into each RMS norm (2), the merged QKV and gate-up
#: projections, rotary embedding, the output and down projections and a fused SiLU-and-multiply (6),
#: and its attention (``vllm/attention/backends/flash_attn.py`` at commit 00df3429) writes the new key
#: and value into the paged cache, runs the decode kernel and copies the result out (3).
VLLM_KERNELS_PER_LAYER = 11
#: Fixed cost per kernel launched in a decode step (launch and synchronisation).
LAUNCH_S = 5e-6

#: Tokens llama.cpp takes from a prompt per pass (``n_batch``, its default); each pass is split
#: into micro-batches of :data:`PROMPT_CHUNK` (``n_ubatch``) that fill a layer split's pipeline.
PROMPT_BATCH = 2048
#: Cost of handing a token's hidden state from one GPU to the next in a layer split (llama.cpp
#: synchronises the stream and copies between devices at each boundary): read off the published
#: one-to-N-GPU decode speeds of ``data/reference_llm.csv``, where each boundary adds 0.1 to 0.4 ms.
#: A prompt's micro-batch adds its hidden states' bytes over PCIe through host memory.
LAYER_HOP_S = 250e-6
#: Copies of each GPU's inputs llama.cpp's scheduler keeps for a layer split's pipeline
#: (``GGML_SCHED_MAX_COPIES`` in ``ggml-backend.c`` at build 2824; the published runs' logs print
#: ``pipeline parallelism enabled (n_copies=4)``): the host reuses a GPU's input buffers every this
#: many micro-batches, and waits for the GPU to be done with them first.
SCHED_COPIES = 4

#: Bytes one SM streams per clock cycle through llama.cpp's matrix-vector products (a decode step's
#: kernels): by Little's law, the loads it keeps in flight over the memory latency, the latency
#: counted in the SM's own cycles (most of a load's round trip, through the load units, the
#: on-chip network and L2, runs in the core clock's domain), so the rate rises with the clock. A
#: GPU whose streaming bandwidth (:func:`gpukit.specs.bandwidth_rates.streaming_gbs`) exceeds SMs x boost
#: clock x this cannot reach it at batch 1 (the HBM data-centre cards). Read off the first source's
#: decode measurements (``xiongjiedai-llama3``), where it fits more pairs than half a byte either
#: side of it, and more than the best rate per second does (``docs/accuracy/llm.md`` grades the
#: model with that per-second form): the H100 PCIe (1755 MHz) then streams 25 % more per SM than the
#: A100 (1410 MHz), as SpareCores' measurements of both, which it was not fitted to, show. It belongs
#: to llama.cpp's kernels (``ENGINES[...]["gemv_per_sm"]``). A PyTorch engine's decode streams at the
#: streaming rate: vLLM's runs in ``data/reference_llm.csv`` decode on the HBM cards faster than
#: predicted with the cap (``docs/accuracy/llm.md``'s per-GPU decode table gives both).
GEMV_BYTES_PER_SM_CYCLE = 6.0
#: Bytes per second one SM streams through kernels that load one element a thread (``scalar_kernels``):
#: llama.cpp's conversions (``convert_unary``) and dequantisation (one warp a block) at the
#: benchmarked build, between a prompt's matrix multiplies. Read off the first source's prefill
#: measurements: as a rate per second it fits them better than the best rate per clock cycle, and
#: from 8 to 11 GB/s the fit moves without a trend, so the round figure stands
#: (``docs/accuracy/llm.md`` shows each GPU's prompts with and without it).
SCALAR_BYTES_PER_SM_S = 10e9
#: Weights formats llama.cpp serves (GGUF); the others default to a PyTorch engine.
GGUF = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_k_m", "q5_k_m")
#: ... and since its 2025 builds MXFP4 as well (gpt-oss's own format).
GGUF_2025 = GGUF + ("mxfp4",)
#: Weights formats the PyTorch engines (vLLM, TensorRT-LLM) serve.
PYTORCH_WEIGHTS = ("f32", "f16", "bf16", "int8", "fp8", "fp4", "mxfp4", "gptq-4bit", "awq-4bit")
#: Kernels a decoder layer launches per step in TensorRT-LLM, which fuses more than vLLM: the
#: norm with the residual add (2), QKV with rotary embedding into the paged cache (1), attention
#: (1), the output projection (1), gate-up with the activation (1) and down (1).
TRT_KERNELS_PER_LAYER = 7
#: TensorRT-LLM serving at batch, fitted by ``benchmarks/llm_accuracy.py`` to NVIDIA's published
#: max-throughput runs (``data/reference_serving.csv``; ``docs/accuracy/llm.md`` gives the fit and
#: each page version held out): the most sequences its scheduler keeps in flight, and the share of
#: the link's bandwidth a tensor-parallel all-reduce reaches.
TRT_LLM_SERVING = {"max_batch": 512, "link_share": 0.5}
#: Tokens one TensorRT-LLM step may hold (``Max Runtime Tokens: 8192`` in the trtllm-bench report the
#: performance overview prints, NVIDIA/TensorRT-LLM@258c7540 docs/source/performance/perf-overview.md):
#: its activations' workspace is sized for them.
TRT_MAX_NUM_TOKENS = 8192
#: llama.cpp from 2025 on (build 4753 measured): what ``benchmarks/llm_accuracy.py`` fits to
#: SpareCores' runs with a GPU family held out (``docs/accuracy/llm.md`` gives the fit and the
#: held-out error): the per-SM rate of its matrix-vector products, the fixed time per kernel of a
#: decode step (CUDA graphs replay the step), the share of the int8 tensor rate its MMQ prompt
#: kernels reach, and the CUDA-core operations per weight and 128-token column tile they spend
#: unpacking and rescaling.
LLAMA_CPP_2025 = {
    "gemv_bytes_per_sm_cycle": 6.0,
    "launch_s": 0.0,
    "mmq_tensor_share": 0.7,
    "mmq_ops_per_weight": 24.0,
}


@dataclass(frozen=True)
class Engine:
    """A serving engine as a dated profile: what it is (``name``, the ``versions`` and ``dates`` its
    figures describe, the published ``sources`` it is calibrated and graded on) and how it runs a
    model, the parts :func:`gpukit.llm.speeds` takes from it.

    * ``accumulate``: the accumulator of its prompt's matrix multiplies (llama.cpp's cuBLAS path:
      FP16, ``CUBLAS_COMPUTE_16F``; PyTorch engines: FP32); ``split``: how it spreads a model over
      several GPUs (by ``layer`` or by ``tensor``);
    * ``activation_bytes``, ``converts``: its activations' size, and whether each matrix multiply's
      input is converted to FP16 and its output back (llama.cpp's float32 activations,
      ``to_fp16_cuda``/``to_fp32_cuda``);
    * ``flash_attention``: attention without the scores in memory, over the causal half of the
      window (its default; ``--flash-attention`` sets it);
    * ``scalar_kernels``: the prompt's elementwise kernels load one element a thread
      (:data:`SCALAR_BYTES_PER_SM_S`); ``gemv_bytes_per_sm_cycle``: the per-SM rate its decode's
      matrix-vector products stream at (None: at the streaming rate);
    * ``kernels_per_layer`` and ``launch_s``: the kernels a decoder layer launches per step and the
      fixed time each costs (launch, synchronisation, the tail of a small grid);
    * ``pipeline_across_passes``, ``sched_copies``: a layer split's prompt pipeline as llama.cpp's
      scheduler runs it (:func:`gpukit.llm.speed.pipeline_makespan`);
    * ``quantised_prefill``: how a quantised prompt multiplies: ``unpack`` (to FP16, then cuBLAS)
      or ``mmq`` (llama.cpp's int8 kernels on compute capability :data:`MMQ_COMPUTE_CAPABILITY`
      and later: ``ggml_cuda_should_use_mmq``), with ``mmq_tensor_share`` of the int8 tensor rate
      and ``mmq_ops_per_weight`` CUDA-core operations per weight and column tile to unpack and
      rescale;
    * ``weights``: the formats it serves (``None``: every format of ``data/llm_weights.csv``);
    * ``max_batch``, ``kv_read_share``, ``link_share``, ``step_tokens``: serving at batch
      (:mod:`gpukit.llm.serving`): the most sequences its scheduler runs at once, the share of the
      streaming rate its attention reads the KV cache at, the share of the link's bandwidth its
      all-reduces reach, and the tokens one step's activations are reserved for."""

    name: str
    versions: str
    dates: str
    sources: tuple[str, ...]
    accumulate: str
    split: str
    activation_bytes: int
    converts: bool
    flash_attention: bool
    scalar_kernels: bool
    gemv_bytes_per_sm_cycle: float | None
    kernels_per_layer: int
    launch_s: float
    pipeline_across_passes: bool
    sched_copies: int | None
    quantised_prefill: str = "unpack"
    mmq_tensor_share: float = 0.0
    mmq_ops_per_weight: float = 0.0
    weights: tuple[str, ...] | None = None
    #: serving at batch: the most sequences the scheduler runs at once (None: as many as fit), and
    #: the share of the streaming rate its attention kernels read the KV cache at
    max_batch: int | None = None
    kv_read_share: float = 1.0
    #: tensor parallel: the share of the link's bandwidth its all-reduces reach
    link_share: float = 1.0
    #: tokens one step of a serving batch may hold (its activations' workspace; None: one prompt chunk)
    step_tokens: int | None = None
    #: the vendors whose devices the profile describes (its build for them), and why it stops there
    vendors: tuple[str, ...] = ("NVIDIA",)
    scope_note: str = ""
    #: a profile that predicts decode from memory bandwidth alone, at ``stream_share`` of the
    #: datasheet's, and no prompt speed (a device whose vendor states no compute peak: Apple's)
    bandwidth_only: bool = False
    stream_share: float = 1.0
    #: a bandwidth-only profile's rate of unpacking quantised weights, in operations per second per
    #: GPU core (0: no unpacking term)
    core_ops_per_s: float = 0.0

    @property
    def label(self) -> str:
        """The engine with its versions, as every table and page names it."""
        fa = (
            ""
            if not self.name.startswith("llama.cpp")
            else f", flash attention {'on' if self.flash_attention else 'off'}"
        )
        return f"{self.name} ({self.versions}{fa})"


#: llama.cpp's Metal build on Apple silicon: the share of the datasheet memory bandwidth its decode
#: streams at, and its GPU cores' rate of unpacking quantised weights (operations per second per
#: core), fitted by :func:`gpukit.llm.calibrate.fit_bandwidth_profile` on the published runs of
#: ``xiongjiedai-llama3-apple`` (M1 Max, M2 Ultra, M3 Max; ``docs/accuracy/llm-metal.md`` gives the
#: fit and each chip held out). Apple states no GPU compute peak for these chips, so the profile
#: predicts no prompt speed.
LLAMA_CPP_METAL = {"stream_share": 0.7, "core_ops_per_s": 5e10}
#: llama.cpp's ROCm/HIP build on AMD GPUs, as :data:`LLAMA_CPP_METAL` is fitted, on the published
#: runs of ``kyuz0-strix-halo-rocm`` (build 9187 on a Ryzen AI Max+ 395: the one AMD device with
#: primary published llama-bench runs found; ``docs/accuracy/llm-rocm.md`` holds each model out).
#: A bandwidth-only profile: the kit's CUDA constants do not carry over to HIP kernels, and one
#: device's prompt runs cannot fit a compute term, so it predicts no prompt speed.
LLAMA_CPP_ROCM = {"stream_share": 1.0, "core_ops_per_s": 5e10}
#: llama.cpp's Vulkan build on AMD GPUs, fitted as :data:`LLAMA_CPP_ROCM` is, on the published runs
#: of ``kyuz0-strix-halo-vulkan`` (the same build and device on Mesa's RADV driver).
LLAMA_CPP_VULKAN = {"stream_share": 1.0, "core_ops_per_s": 5e10}

#: The first llama.cpp build of the current profile: builds of 2025 on (build 4400 is of early
#: January 2025); the published runs of earlier builds belong to ``llama.cpp-2024``.
LLAMA_CPP_2025_BUILD = 4400
#: The first CUDA compute capability llama.cpp's int8 prompt kernels (MMQ) run on (Turing's int8 ``mma``).
MMQ_COMPUTE_CAPABILITY = 7.5


def _bandwidth_llama_cpp(
    name: str,
    versions: str,
    dates: str,
    source: str,
    vendor: str,
    constants: dict,
    scope_note: str,
    flash_attention: bool = True,
    weights: tuple[str, ...] = GGUF_2025,
) -> Engine:
    """A bandwidth-only profile of a llama.cpp build on ``vendor``'s GPUs, with the constants fitted
    on ``source``'s runs (:data:`LLAMA_CPP_METAL`, :data:`LLAMA_CPP_ROCM`, :data:`LLAMA_CPP_VULKAN`)."""
    return Engine(
        name=name,
        versions=versions,
        dates=dates,
        sources=(source,),
        accumulate="fp16",
        split="layer",
        activation_bytes=4,
        converts=True,
        flash_attention=flash_attention,
        scalar_kernels=False,
        gemv_bytes_per_sm_cycle=None,
        kernels_per_layer=KERNELS_PER_LAYER,
        launch_s=0.0,
        pipeline_across_passes=True,
        sched_copies=SCHED_COPIES,
        weights=weights,
        vendors=(vendor,),
        scope_note=scope_note,
        bandwidth_only=True,
        stream_share=constants["stream_share"],
        core_ops_per_s=constants["core_ops_per_s"],
    )


#: What the AMD profiles can say, in an error that names them.
_ONE_AMD_DEVICE = (
    "it predicts decode from bandwidth, fitted on one AMD device (a Ryzen AI Max+ 395), and no prompt speed"
)


#: Engines as dated profiles. ``llama.cpp`` is the current one (builds from 2025 on), fitted to
#: SpareCores' runs of build 4753 by ``benchmarks/llm_accuracy.py`` with a GPU family held out
#: (``docs/accuracy/llm.md``); ``llama.cpp-2024`` keeps the calibration of builds 2824-2843 for the
#: runs it describes.
ENGINES: dict[str, Engine] = {
    "llama.cpp": Engine(
        name="llama.cpp",
        versions="builds 4400 and later",
        dates="2025 on",
        sources=("sparecores-llamacpp",),
        accumulate="fp16",
        split="layer",
        activation_bytes=4,
        converts=True,
        flash_attention=True,
        scalar_kernels=True,
        gemv_bytes_per_sm_cycle=LLAMA_CPP_2025["gemv_bytes_per_sm_cycle"],
        kernels_per_layer=KERNELS_PER_LAYER,
        launch_s=LLAMA_CPP_2025["launch_s"],
        pipeline_across_passes=True,
        sched_copies=SCHED_COPIES,
        quantised_prefill="mmq",
        mmq_tensor_share=LLAMA_CPP_2025["mmq_tensor_share"],
        mmq_ops_per_weight=LLAMA_CPP_2025["mmq_ops_per_weight"],
        weights=GGUF_2025,
        scope_note="its constants are fitted on CUDA builds; llama.cpp-rocm, llama.cpp-vulkan and "
        "llama.cpp-metal describe its other builds",
    ),
    "llama.cpp-2024": Engine(
        name="llama.cpp-2024",
        versions="builds 2824-2843",
        dates="May 2024",
        sources=("xiongjiedai-llama3",),
        accumulate="fp16",
        split="layer",
        activation_bytes=4,
        converts=True,
        flash_attention=False,
        scalar_kernels=True,
        gemv_bytes_per_sm_cycle=GEMV_BYTES_PER_SM_CYCLE,
        kernels_per_layer=KERNELS_PER_LAYER,
        launch_s=LAUNCH_S,
        pipeline_across_passes=True,
        sched_copies=SCHED_COPIES,
        weights=GGUF,
    ),
    "llama.cpp-metal": _bandwidth_llama_cpp(
        "llama.cpp-metal",
        "builds 2795-2797, Metal",
        "May 2024",
        "xiongjiedai-llama3-apple",
        "Apple",
        LLAMA_CPP_METAL,
        "it predicts decode from bandwidth and core count fitted on Apple silicon, and no prompt speed, as Apple "
        "states no GPU compute peak",
        flash_attention=False,
        weights=GGUF,
    ),
    "llama.cpp-rocm": _bandwidth_llama_cpp(
        "llama.cpp-rocm",
        "build 9187, ROCm/HIP",
        "2026",
        "kyuz0-strix-halo-rocm",
        "AMD",
        LLAMA_CPP_ROCM,
        _ONE_AMD_DEVICE,
    ),
    "llama.cpp-vulkan": _bandwidth_llama_cpp(
        "llama.cpp-vulkan",
        "build 9187, Vulkan",
        "2026",
        "kyuz0-strix-halo-vulkan",
        "AMD",
        LLAMA_CPP_VULKAN,
        _ONE_AMD_DEVICE,
    ),
    "vllm": Engine(
        name="vllm",
        versions="vLLM 0.22",
        dates="2026",
        sources=("sparecores-vllm",),
        accumulate="fp32",
        split="tensor",
        activation_bytes=2,
        converts=False,
        flash_attention=True,
        scalar_kernels=False,
        gemv_bytes_per_sm_cycle=None,
        kernels_per_layer=VLLM_KERNELS_PER_LAYER,
        launch_s=LAUNCH_S,
        pipeline_across_passes=False,
        sched_copies=None,
        weights=PYTORCH_WEIGHTS,
        vendors=("NVIDIA", "AMD"),
        scope_note="it describes vLLM's CUDA and ROCm builds, on NVIDIA and AMD GPUs",
    ),
    "trt-llm": Engine(
        name="trt-llm",
        versions="TensorRT-LLM 0.14-1.0",
        dates="late 2024 to 2025",
        sources=(
            "trtllm-perf-overview-v0.14",
            "trtllm-perf-overview-v0.17",
            "trtllm-perf-overview-v0.20",
            "trtllm-perf-overview-v1.0",
        ),
        accumulate="fp32",
        split="tensor",
        activation_bytes=2,
        converts=False,
        flash_attention=True,
        scalar_kernels=False,
        gemv_bytes_per_sm_cycle=None,
        kernels_per_layer=TRT_KERNELS_PER_LAYER,
        launch_s=LAUNCH_S,
        pipeline_across_passes=False,
        sched_copies=None,
        weights=PYTORCH_WEIGHTS,
        max_batch=TRT_LLM_SERVING["max_batch"],
        link_share=TRT_LLM_SERVING["link_share"],
        step_tokens=TRT_MAX_NUM_TOKENS,
        scope_note="TensorRT-LLM runs on NVIDIA GPUs only",
    ),
}
#: How several GPUs can share a model: a slice of every layer each (``tensor``) or whole layers each (``layer``).
SPLITS = ("tensor", "layer")
#: Bytes of memory traffic per attention score and head without flash attention (llama.cpp's
#: ``llm_build_kqv``): cuBLAS writes Q.K^T in FP16 (2), a kernel widens it to float32 (read 2,
#: write 4), the masked softmax reads and writes it (8), a kernel narrows it to FP16 for the
#: multiply by V (read 4, write 2), which reads it (2).
SCORE_BYTES = 24
#: Bytes a conversion kernel moves per element (float32 read and FP16 written, or the reverse).
CONVERT_BYTES = 6


def resolve_engine(engine: str | Engine, flash_attention: bool | None = None) -> Engine:
    """The :class:`Engine` named ``engine`` (or ``engine`` itself), with flash attention set where
    ``flash_attention`` is given; a clear error for a name not in :data:`ENGINES`."""
    if isinstance(engine, Engine):
        e = engine
    elif engine in ENGINES:
        e = ENGINES[engine]
    else:
        raise ParameterError(f"engine {engine!r}: use one of {', '.join(ENGINES)}")
    return e if flash_attention is None else replace(e, flash_attention=bool(flash_attention))


def engine_of_run(published_engine: str) -> str:
    """The profile of :data:`ENGINES` a published run's ``engine`` text belongs to: llama.cpp builds
    before :data:`LLAMA_CPP_2025_BUILD` to ``llama.cpp-2024``, later ones to ``llama.cpp``; vLLM and
    TensorRT-LLM to theirs."""
    text = str(published_engine)
    if "llama.cpp" in text and "(Metal)" in text:
        return "llama.cpp-metal"
    if "llama.cpp" in text and "(ROCm)" in text:
        return "llama.cpp-rocm"
    if "llama.cpp" in text and "(Vulkan)" in text:
        return "llama.cpp-vulkan"
    build = re.search(r"llama\.cpp build (\d+)", text)
    if build:
        return "llama.cpp" if int(build.group(1)) >= LLAMA_CPP_2025_BUILD else "llama.cpp-2024"
    if text.lower().startswith(("tensorrt", "trt")):
        return "trt-llm"
    return "vllm"


def default_engine(weights: str) -> str:
    """llama.cpp for GGUF quantisations, vLLM (a PyTorch engine) for 16-bit and GPTQ/AWQ weights."""
    key = str(weights).strip().lower()
    return "llama.cpp" if key in GGUF and key.startswith("q") else "vllm"


def default_efficiency():
    """The roofline's factors as the LLM model takes them: :data:`gpukit.perfmodel.DEFAULT_EFFICIENCY`
    with every GPU streaming at the measured GPUs' median share of its datasheet bandwidth
    (``measured_bandwidth`` off), not at its own copy share as the performance model does. A copy
    reads one array and writes another; decode reads its weights and writes next to nothing, and a
    GPU's read rate is not its copy rate (te42kyfo's gpu-stream in ``data/bandwidth_rates.csv``'s
    sources: an H100 PCIe reads at 1942 GB/s and scales at 1704, an A40 679 and 652). Graded both
    ways (``docs/accuracy/llm.md`` gives both counts), each GPU's copy share fits fewer pairs, in
    decode and in prefill."""
    return replace(DEFAULT_EFFICIENCY, measured_bandwidth=False)


def check_engine_weights(engine: Engine, weights: str) -> None:
    """A clear error where ``engine`` does not serve ``weights`` (llama.cpp serves GGUF files, the
    PyTorch engines their own formats), naming the engines that do."""
    key = str(weights).strip().lower()
    if key not in engine.weights:
        serving = [e.name for e in ENGINES.values() if key in e.weights]
        raise ParameterError(
            f"{engine.name} does not serve {weights} weights (it serves {', '.join(engine.weights)}); "
            + (f"use --engine {' or '.join(serving)}" if serving else "no engine here serves them")
        )


def check_engine_device(engine: Engine, row) -> None:
    """A clear error (:class:`gpukit.precision.Unsupported`) where the engine's profile does not
    describe the device's vendor, naming the engines whose profiles do."""
    vendor = str(row.get("vendor") or "NVIDIA")
    if vendor in engine.vendors:
        return
    others = [e.name for e in ENGINES.values() if vendor in e.vendors]
    hint = (
        f"use --engine {' or '.join(others)}"
        if others
        else f"no engine profile here describes {vendor} devices yet"
    )
    why = f" ({engine.scope_note})" if engine.scope_note else ""
    raise Unsupported(f"the {engine.name} profile does not describe {row['gpu']} ({vendor}){why}; {hint}")


def for_device(engine: Engine, row) -> Engine:
    """The profile of ``engine``'s family that describes the device of ``row``: ``engine`` itself
    where it does, else the first of :data:`ENGINES` named after it (``llama.cpp-metal`` for
    ``llama.cpp`` on Apple silicon) that does; ``engine`` where none does (the check then says why)."""
    vendor = str(row.get("vendor") or "NVIDIA")
    if vendor in engine.vendors:
        return engine
    family = engine.name.split("-")[0]
    return next(
        (e for e in ENGINES.values() if e.name.startswith(family + "-") and vendor in e.vendors), engine
    )
