"""How right is gpukit's serving memory? Grade vLLM's KV pool against published startup logs.

Predicts every log of ``data/reference_vllm_kv.csv`` with its own settings (model, weights, KV
cache format, GPU and tensor-parallel size, ``gpu_memory_utilization``, ``max_model_len``, vLLM
version) by :func:`gpukit.llm.vllm_pool`, and compares the tokens vLLM logged as "GPU KV cache
size" (or, where a log gives no count, its "Available KV cache memory").

    .venv/bin/python -m benchmarks.kv_pool_accuracy --write docs/accuracy/kv-pool.md
"""

from __future__ import annotations

import sys

from gpukit import llm
from gpukit.llm import pool
from gpukit.units import GIB

from ._report import page_main, table_head


def _num(x, digits: int = 0) -> str:
    return "" if x != x else f"{x:,.{digits}f}"


def markdown() -> str:
    frame = llm.predict_pool()
    v = llm.pool_validation(frame)
    tol = v["tolerance"]
    lines = [
        "# Serving memory: vLLM's KV pool against its own startup logs",
        "",
        f"**{v['within']} of {v['logs']} published vLLM startup logs within ±{tol:.0%}** of the KV pool "
        f"vLLM logged (median error {v['median_abs_error_pct']:.1f}%); of the {v['held_out_logs']} logs the "
        f"constants below were not read off, {v['held_out_within']} (target: {v['target']:.0%} of logs within "
        f"±{tol:.0%}). `gpukit llm --engine vllm` and serving at batch take their largest batch from this pool.",
        "",
        "Most logs are of H100 and A100 cards (the public ones with a pinned source); a GDDR card's "
        "figure rests on the same rules with its ECC share (`gpukit.llm.pool.visible_bytes`), graded by none.",
        "",
        "## How the pool is counted",
        "",
        "As vLLM's V1 engine sizes it at start-up (`gpukit.llm.pool.vllm_pool`):",
        "",
        "- the budget: `gpu_memory_utilization` (default 0.9) of the memory CUDA reports, "
        f"{pool.CUDA_VISIBLE_SHARE:.0%} of the card's (less ECC's sixteenth on a GDDR data-centre card);",
        "- less the weights on each GPU (the checkpoint's own format, parts it keeps in BF16 at 16 bits);",
        "- less the profiling step's peak: a forward pass of `max_num_batched_tokens` tokens or the sampler's "
        "float32 logits over `max_num_seqs` sequences, whichever is higher;",
        "- less the memory outside PyTorch's allocator, and from 0.20 on the CUDA graphs' estimate;",
        "- what is left holds `kv_cache_tokens` (every layer counted as keeping them, as the log counts) and "
        "`max_concurrency` sequences of `max_model_len` (a sliding or chunked layer needing its window and one "
        "step's tokens).",
        "",
        "The constants by release, read off the logs marked *constants* below:",
        "",
        *table_head(
            "| vLLM | logit copies at the sampler's peak | non-torch, 1 GPU (GiB) | non-torch, tensor parallel (GiB) "
            "| CUDA graphs subtracted |",
            "lllll",
        ),
    ]
    for ver in pool.VLLM_VERSIONS:
        lines.append(
            f"| {ver.name} | {ver.sampler_copies:g} | {ver.non_torch / GIB:.2f} | {ver.non_torch_nvlink / GIB:.2f} "
            f"| {'yes, ' + format(pool.CUDA_GRAPH_BYTES / GIB, '.1f') + ' GiB' if ver.counts_cuda_graphs else 'no'} |"
        )
    lines += [
        "",
        "## Every log",
        "",
        'Logged and predicted: tokens of the pool ("GPU KV cache size"), or GiB where the log gives no count; '
        "concurrency: sequences of `max_model_len`.",
        "",
        *table_head(
            "| model (served as) | weights / KV | GPU | util | max_model_len | vLLM | logged | predicted | error "
            "| concurrency logged / predicted | log |",
            "lllllllllll",
        ),
    ]
    for _, r in frame.iterrows():
        unit = "" if r["graded_on"] == "tokens" else " GiB"
        digits = 0 if r["graded_on"] == "tokens" else 2
        mark = " (constants)" if r["calibrates"] else ""
        lines.append(
            f"| {r['model']} ({r['hub_model']}) | {r['weights']} / {r['kv_cache']} | {r['gpus']} x {r['gpu']} "
            f"| {r['gpu_memory_utilization']:g} | {int(r['max_model_len']):,} | {r['vllm_version']} "
            f"| {_num(r['logged'], digits)}{unit} | {_num(r['predicted'], digits)}{unit} | {r['error_pct']:+.1f}% "
            f"| {_num(r['logged_max_concurrency'], 1)} / {_num(r['predicted_max_concurrency'], 1)} "
            f"| [source]({r['source_url']}){mark} |"
        )
    worst = frame.reindex(frame["error_pct"].abs().sort_values(ascending=False).index).head(3)
    lines += ["", "## Where it is furthest", ""]
    for _, r in worst.iterrows():
        lines.append(
            f"- {r['model']} on {r['gpus']} x {r['gpu']} (vLLM {r['vllm_version']}, utilization "
            f"{r['gpu_memory_utilization']:g}): {r['error_pct']:+.1f}%."
        )
    lines += [
        "",
        "Llama 4 Scout's log loads more weights per GPU than its text model's BF16 parameters over four "
        "(the vision encoder and what vLLM replicates); the kit counts the language model only. A small "
        "pool (utilization 0.25) magnifies any error in what is subtracted.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    return page_main(markdown, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
