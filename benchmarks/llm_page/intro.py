"""The head of docs/accuracy/llm.md: what it grades, each source and how its rows were read, the
model's constants and where each was read."""

from __future__ import annotations

from datetime import UTC, datetime

from gpukit import llm


def intro_lines(rows, everything, why) -> list[str]:
    """The page's title and what it grades: the published speeds and their sources, the model's
    constants and where each was read, what the second source's rows grade out of sample."""
    return [
        "# LLM speed accuracy",
        "",
        f"Written by `benchmarks/llm_accuracy.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Nothing here "
        "ran on a GPU: `gpukit.llm` predicts from the catalogue, and the published measurements it is graded "
        "against are in `data/reference_llm.csv` (every row with its source, engine and test conditions).",
        "",
        f"- {len(rows)} published speeds, {len(everything)} configurations ({int((why != '').sum())} left out, "
        f"below): {everything['gpu'].nunique()} GPUs, "
        f"models {', '.join(sorted(everything['model'].unique()))}, "
        f"weights {', '.join(sorted(everything['weights'].unique()))}, "
        f"sources {', '.join(sorted(everything['source'].unique()))}.",
        *source_lines(everything),
        f"- The model's constants: {llm.KERNELS_PER_LAYER} kernels per layer for llama.cpp and "
        f"{llm.VLLM_KERNELS_PER_LAYER} for vLLM (counted in its source), at {llm.LAUNCH_S * 1e6:g} µs each per "
        f"decode step, {llm.DEQUANT_OPS} CUDA-core operations to unpack a quantised weight, prompts in chunks of "
        f"{llm.PROMPT_CHUNK} tokens in passes of {llm.PROMPT_BATCH} (llama.cpp's defaults; a run's own where "
        f"it set them: {own_sizes(everything)} of the configurations, in `n_ubatch` and `n_batch`), llama.cpp's FP16 "
        "accumulation in prefill (GeForce cards at their FP16-accumulate rate), matrix multiplies in waves of "
        f"{llm.GEMM_TILE[0]} x {llm.GEMM_TILE[1]} tiles over the GPU's SMs, the prompt's memory traffic between "
        f"the matrix multiplies (llama.cpp's float32 activations, their conversions to FP16 and back, and "
        f"{llm.SCORE_BYTES} bytes per attention score without flash attention, read in its source at the "
        "benchmarked build), a layer split's prompt pipelined as llama.cpp's scheduler runs it (its layers per "
        f"GPU, {llm.SCHED_COPIES} copies of each GPU's inputs, the hand-offs through host memory; below); "
        "the roofline's tensor, CUDA-core and "
        "streaming efficiencies (`gpukit.perfmodel.DEFAULT_EFFICIENCY`, fitted to training benchmarks, not to "
        "these), the tensor cores at the share of their datasheet peak each GPU sustains in a large matrix "
        "multiply (`gpukit.specs.matmul_rates`: published measurements, the median share where none names the GPU), "
        "memory at the median share of their datasheet bandwidth published copy kernels reach "
        "(`gpukit.specs.bandwidth_rates`; not each GPU's own, `llm.default_efficiency`). "
        "Three constants were read off the first source's measurements (`xiongjiedai-llama3`): "
        f"{llm.GEMV_BYTES_PER_SM_CYCLE:g} bytes per SM per clock cycle (at the boost clock) that llama.cpp's "
        "matrix-vector products stream (Little's law: the loads an SM keeps in flight over the memory "
        "latency, counted in the SM's cycles), which caps the HBM data-centre cards' decode below their "
        f"datasheet bandwidth; {llm.SCALAR_BYTES_PER_SM_S / 1e9:g} GB/s per SM for their prompts' conversions, "
        "elementwise kernels and dequantisation, llama.cpp's kernels loading one element a thread (the "
        "tables below show each GPU with and without it); and "
        f"{llm.LAYER_HOP_S * 1e6:g} µs per GPU boundary of a layer split.",
        "- Each row is predicted with the engine profile its run belongs to (`gpukit.llm.engine_of_run`): "
        f"llama.cpp builds before {llm.LLAMA_CPP_2025_BUILD} with `llama.cpp-2024` (the constants above), later "
        "builds with `llama.cpp`, whose profile follows their path: flash attention as the run set it, and a "
        "quantised prompt multiplied on the int8 tensor cores of Turing and later GPUs (the MMQ kernels: "
        "`ggml_cuda_should_use_mmq` in `ggml/src/ggml-cuda/mmq.cu`, read at build 4748; on the V100 a prompt "
        "still goes to cuBLAS unpacked), each weight unpacked and rescaled on the CUDA cores once per column tile. "
        "vLLM's rows (`sparecores-vllm`: 16-bit weights, one request at a time, tensor parallel on several GPUs) "
        "are graded on decode only: its benchmark times the first token of a request served over HTTP, which "
        "adds the server's handling to the prompt.",
        "- The per-SM cap belongs to llama.cpp's kernels: vLLM's decode is predicted at the streaming rate, "
        "as its runs show (the per-GPU decode table below gives both).",
        "",
    ]


def own_sizes(everything) -> int:
    """How many configurations name the run's own micro-batch or pass size (llama-bench -ub, -b)."""
    return int((everything["n_ubatch"].notna() | everything["n_batch"].notna()).sum())


def source_lines(everything) -> list[str]:
    """What each source is and how its rows were read (one line each)."""
    out = []
    for source, part in everything.groupby("source", sort=True):
        hosts = part[part["hosts"] > 1]
        line = (
            f"- `{source}`: {part['engine'].iloc[0]}; {len(part)} configurations on "
            f"{part['gpu'].nunique()} GPUs, tests {', '.join(sorted(part['test'].unique()))}."
        )
        if len(hosts):
            line += (
                f" It ran {int(hosts['gpu'].nunique())} of its GPUs on several machines (cloud instance types, "
                f"`host`): each configuration is graded at the median of its hosts "
                f"(`gpukit.llm.by_configuration`), which lie {hosts['host_low'].min():+.1%} to "
                f"{hosts['host_high'].max():+.1%} from it."
            )
        out.append(line)
    return out
