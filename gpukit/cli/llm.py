"""``gpukit llm``: an open LLM on every catalogue GPU: the memory to serve or fine-tune it, the largest
context and batch, the GPUs it needs, prefill and decode speed, and the cost of a million tokens;
``--list`` shows the shipped models and weights formats."""

from __future__ import annotations

import argparse

from .. import llm
from ..errors import ParameterError
from .formatting import emit, format_table, rounded
from .options import add_format_option, add_gpu_option

#: Columns of ``--list``'s models table.
MODEL_COLUMNS = (
    "model",
    "family",
    "layers",
    "experts",
    "attention",
    "params_b",
    "active_params_b",
    "published_params_b",
    "published_active_params_b",
    "max_context",
    "kv_cache_mib_per_1k_tokens",
)

#: Columns of ``--list``'s weights formats table.
WEIGHTS_COLUMNS = ("weights", "bits_per_weight", "basis")

#: Columns of the serving table (``--mode infer``), the ones that answer first (a table fitted to the
#: terminal keeps them); ``--format csv``/``json`` carry every column.
SERVING_COLUMNS = (
    "gpu",
    "fits",
    "total_gib",
    "decode_tokens_per_s",
    "usd_per_million_tokens",
    "prefill_tokens_per_s",
    "gpus_needed",
    "weights_gib",
    "kv_cache_gib",
    "kv_cache_tokens",
    "max_concurrency",
    "max_context",
    "graded",
    "note",
)

#: Columns of the fine-tuning table: memory only.
FINETUNE_COLUMNS = (
    "gpu",
    "fits",
    "total_gib",
    "weights_gib",
    "max_context",
    "max_batch",
    "gpus_needed",
    "note",
)

#: The weights served when ``--weights`` is left out.
DEFAULT_WEIGHTS = "q4_k_m"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "llm",
        help="which LLMs fit on which GPU, how fast they generate, what a million tokens cost",
        description="An open LLM on every catalogue GPU: memory to serve it (weights, KV cache, one "
        "step's activations, runtime reserve) or fine-tune it (full, LoRA, QLoRA), the largest context "
        "and batch, how many GPUs it needs, prefill and decode tokens per second, and dollars per "
        "million generated tokens.",
    )
    p.add_argument(
        "--model",
        default=llm.DEFAULT_MODEL,
        help="a model of data/llm_models.csv (gpukit llm --list), a model's own Hugging Face config.json, "
        "or a .json/.yaml file of its shape",
    )
    p.add_argument(
        "--weights",
        help="weights format served (--mode infer; default q4_k_m): f16, bf16, int8, q8_0, "
        "q4_0, q4_k_m, q5_k_m, fp8, fp4, mxfp4, gptq-4bit, awq-4bit (data/llm_weights.csv)",
    )
    p.add_argument(
        "--context", type=int, default=4096, help="tokens of context (sequence length to fine-tune)"
    )
    p.add_argument(
        "--batch",
        type=_batch,
        default=None,
        metavar="N|max",
        help="sequences served at once (or per fine-tuning step; default 1); max: as many as the KV cache "
        "holds, served at batch",
    )
    p.add_argument(
        "--input-tokens",
        type=int,
        metavar="I",
        help="serve at batch: prompt tokens per request (default 1024 with --output-tokens or --batch max)",
    )
    p.add_argument(
        "--output-tokens",
        type=int,
        metavar="O",
        help="serve at batch: generated tokens per request (default 256 with --input-tokens or --batch max)",
    )
    p.add_argument("--mode", choices=("infer", "lora", "qlora", "full"), default="infer")
    p.add_argument(
        "--kv-cache",
        choices=("f16", "q8_0", "fp8"),
        default="f16",
        help="KV cache format (fp8: TensorRT-LLM, vLLM)",
    )
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument(
        "--lora-targets",
        choices=("attention", "all"),
        default="all",
        help="the matrices LoRA adapts: attention only, or all linear maps",
    )
    p.add_argument(
        "--no-checkpointing", action="store_true", help="fine-tune without activation checkpointing"
    )
    p.add_argument(
        "--gpus", type=int, default=1, metavar="N", help="split the model over N GPUs of each kind"
    )
    p.add_argument(
        "--engine",
        choices=tuple(llm.ENGINES),
        help="serving engine, a dated profile: llama.cpp (builds of 2025 on; layer split), llama.cpp-2024 "
        "(builds 2824-2843), vllm or trt-llm (tensor parallel); default llama.cpp for GGUF quantisations, "
        "vllm otherwise",
    )
    p.add_argument(
        "--flash-attention",
        choices=("on", "off"),
        help="run attention fused (on) or through memory (off); default: the engine's own",
    )
    p.add_argument(
        "--gpu-memory-utilization",
        type=_share,
        metavar="U",
        help="vLLM: the share of each GPU's memory it takes (default 0.9, vLLM's); TensorRT-LLM: the share "
        "of the free memory its KV cache takes (default 0.9)",
    )
    add_gpu_option(p)
    p.add_argument("--prices", action="append", metavar="FILE", help="your own price file(s)")
    p.add_argument("--list", action="store_true", help="list the shipped models and weights formats")
    add_format_option(p)
    p.set_defaults(func=run)


def _batch(text: str):
    """``--batch``: a whole number of sequences, or ``max``."""
    if str(text).strip().lower() == "max":
        return "max"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of sequences or max") from None


def _share(text: str) -> float:
    """``--gpu-memory-utilization``: a share above 0 and at most 1."""
    try:
        return llm.check_utilization(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a share such as 0.9") from None
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _serving(args: argparse.Namespace) -> bool:
    """Whether the question is serving at batch: lengths given, or the largest batch asked for."""
    return args.mode == "infer" and (
        args.input_tokens is not None or args.output_tokens is not None or args.batch == "max"
    )


def run(args: argparse.Namespace) -> int:
    if args.list:
        _print_shipped()
        return 0
    if _serving(args):
        return _run_serving(args)
    if args.batch == "max":
        raise ParameterError("--batch max serves at batch (--mode infer); fine-tuning takes a number")
    args.batch = 1 if args.batch is None else args.batch
    weights = _weights_served(args)
    frame = llm.llm_table(
        args.model,
        weights,
        args.context,
        args.batch,
        args.gpu,
        args.mode,
        args.kv_cache,
        args.lora_rank,
        args.lora_targets,
        not args.no_checkpointing,
        args.gpus,
        args.prices,
        args.engine,
        flash_attention=None if args.flash_attention is None else args.flash_attention == "on",
        gpu_memory_utilization=args.gpu_memory_utilization,
    )
    if emit(frame, args.format):
        return 0
    m = llm.resolve_model(args.model)
    engine = llm.resolve_engine(args.engine or llm.default_engine(weights))
    _print_heading(args, frame, m, engine, frame.attrs.get("engine", engine.label))
    if args.mode == "infer":
        cols = list(SERVING_COLUMNS)
        # graded in each setting the rows ran in (a GPU too small for the model runs on several)
        print(llm.grading_statement([args.gpus, *frame.attrs["cards"]], m.name, weights))
        print(llm.engine_scope(engine.name, weights))
    else:  # a memory answer; speed and cost are for serving
        cols = list(FINETUNE_COLUMNS)
        print(
            "Memory only (where one GPU is too small, gpus_needed shards weights, gradients and optimizer state "
            "over several as ZeRO-3/FSDP); serving speed and cost: --mode infer."
        )
    print(format_table(rounded(frame[cols].to_dict(orient="records")), cols))
    _print_published(frame)
    return 0


def _print_shipped() -> None:
    """``--list``: the shipped models, then the weights formats."""
    models = llm.models_frame()
    cols = list(MODEL_COLUMNS)
    print(format_table(rounded(models[cols].to_dict(orient="records")), cols))
    print()
    weights = llm.weights_frame()
    cols = list(WEIGHTS_COLUMNS)
    print(format_table(rounded(weights[cols].to_dict(orient="records")), cols))


def _weights_served(args: argparse.Namespace) -> str:
    """The weights format to serve; fine-tuning sets its own, so ``--weights`` there is an error."""
    if args.weights is not None and args.mode != "infer":
        raise ParameterError(
            f"--weights {args.weights} is the format served (--mode infer); {args.mode} fine-tunes "
            f"{llm.FINETUNE_WEIGHTS[args.mode]} weights, so leave --weights out"
        )
    return args.weights or DEFAULT_WEIGHTS


def _print_heading(args: argparse.Namespace, frame, m, engine, label: str) -> None:
    """One line: the model, what it does (served with which engine, or fine-tuned), on how many GPUs."""
    what = "inference" if args.mode == "infer" else f"{args.mode} fine-tuning"
    many = f" on {args.gpus} GPUs each (split by {engine.split})" if args.gpus > 1 else ""
    what += f" with {label}" if args.mode == "infer" else ""
    print(
        f"{m.name} ({m.params() / 1e9:.1f} B parameters), {what}, {frame['weights'].iloc[0]}, context "
        f"{args.context}, batch {args.batch}{many}"
    )
    if llm.moe_note(m):
        print(llm.moe_note(m)[0].upper() + llm.moe_note(m)[1:] + ".")


def _print_published(frame) -> None:
    """Beside the rows a source published the same configuration for: its figure and the error there."""
    checked = frame.dropna(subset=["published_source"])
    if len(checked):
        cols = ["gpu", *llm.PUBLISHED_COLUMNS]
        print(
            "\nPublished for the same configuration (GPU, cards, model, weights, engine) at the nearest length; "
            "error: predicted against published there, in %:"
        )
        print(format_table(rounded(checked[cols].to_dict(orient="records")), cols))


#: Columns of the serving-at-batch table.
SERVED_COLUMNS = (
    "gpu",
    "batch",
    "max_batch",
    "serving_tokens_per_s",
    "ttft_s",
    "tpot_ms",
    "batch1_tokens_per_s",
    "usd_per_million_tokens",
    "usd_per_million_tokens_batch1",
    "note",
)


def _run_serving(args: argparse.Namespace) -> int:
    """``--batch max`` or lengths given: every GPU serving many sequences at once, its largest batch,
    throughput, latencies and cost per million output tokens beside batch 1."""
    weights = args.weights or DEFAULT_WEIGHTS
    batch = "max" if args.batch is None else args.batch
    frame = llm.serving_table(
        args.model,
        weights,
        args.engine,
        args.gpu,
        args.gpus,
        batch,
        1024 if args.input_tokens is None else args.input_tokens,
        256 if args.output_tokens is None else args.output_tokens,
        args.kv_cache,
        args.prices,
        gpu_memory_utilization=args.gpu_memory_utilization,
    )
    served = frame.dropna(subset=["serving_tokens_per_s"])
    if served.empty:
        # nothing can serve it: the reason, once, as the error
        raise ParameterError(
            frame["note"].iloc[0] if len(frame) == 1 else "; ".join(frame["gpu"] + ": " + frame["note"])
        )
    if emit(frame, args.format):
        return 0
    m = llm.resolve_model(args.model)
    first = served.iloc[0]
    many = f" on {args.gpus} GPUs each (tensor parallel)" if args.gpus > 1 else ""
    print(
        f"{m.name} ({m.params() / 1e9:.1f} B parameters) served at batch with {frame.attrs['engine']}, {weights}, "
        f"{int(first['input_tokens'])} prompt + {int(first['output_tokens'])} output tokens per request{many}"
    )
    print(llm.serving_bottom_line(frame))
    print(llm.serving_error_text(frame.attrs["engine_name"]))
    if frame.attrs.get("moe"):
        print(frame.attrs["moe"][0].upper() + frame.attrs["moe"][1:] + ".")
    cols = list(SERVED_COLUMNS)
    print(format_table(rounded(frame[cols].to_dict(orient="records")), cols))
    return 0
