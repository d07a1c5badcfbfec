"""Prefill on several GPUs (docs/accuracy/llm.md): published over predicted per configuration, the
overlap of a layer split's micro-batches, and the pipeline graded with each of its parts undone."""

from __future__ import annotations

import contextlib

from gpukit import llm

from .._report import table_head
from .variants import earlier_rule, engines, equal_layers, hop_latency_only


def several_gpus_section(ref) -> list[str]:
    """Prompt processing on several GPUs: published over predicted at the shortest and longest
    prompt. A layer split gains nothing on one micro-batch and pipelines the micro-batches of a longer
    prompt, so the change from the short to the long prompt shows how much of that pipelining happened."""
    pp = ref[(ref["test"] == "pp") & (ref["gpus"] > 1)]
    if pp.empty:
        return []
    pp = pp.assign(predicted=llm.predict_reference(pp))
    pp = pp.assign(ratio=pp["throughput_tokens_s"] / pp["predicted"])
    short, long = pp["tokens"].min(), pp["tokens"].max()
    second = 2 * llm.PROMPT_CHUNK
    out = [
        "",
        "## Prefill on several GPUs, measured over predicted",
        "",
        f"A layer split (llama.cpp's) gains nothing on a single {llm.PROMPT_CHUNK}-token micro-batch and pipelines "
        "the micro-batches of a longer prompt as llama.cpp's scheduler runs them (`gpukit.llm.pipeline_makespan`); "
        f"the ratio at pp{short} and at pp{long} shows whether the published runs pipelined as much. The next two "
        f"columns isolate the overlap: what the second micro-batch of a pp{second} adds to the time of the first "
        f"(pp{short}), as a share of it, published and predicted; 1 where the cards run one micro-batch at a time, "
        "1/N where N cards overlap two perfectly. The last two set the cards' single micro-batch (pp"
        f"{short}) against one card of the same GPU on the same model, where the source ran one: the cards run "
        "their layers one after another and hand the hidden state on, so no more than 1 is predicted; a "
        "published figure above it is cards running faster than the one card did.",
        "",
        *table_head(
            f"| GPU | cards | model | weights | pp{short} | pp{long} | second micro-batch, published | predicted "
            f"| pp{short} over one card, published | predicted |",
            "lrllrrrrrr",
        ),
    ]
    keys = ["gpu", "gpus", "model", "weights"]
    grid = pp.pivot_table(index=keys, columns="tokens", values="ratio", aggfunc="median")
    rates = {
        col: pp.pivot_table(index=keys, columns="tokens", values=col, aggfunc="median")
        for col in ("throughput_tokens_s", "predicted")
    }
    one = ref[(ref["test"] == "pp") & (ref["gpus"] == 1) & (ref["tokens"] == short)]
    one = one.assign(predicted=llm.predict_reference(one))
    alone = {
        col: one.groupby(["gpu", "model", "weights"])[col].median()
        for col in ("throughput_tokens_s", "predicted")
    }
    for key, r in grid.iterrows():
        added = [
            f"{2 * t.loc[key, short] / t.loc[key, second] - 1:.2f}" if second in t.columns else ""
            for t in rates.values()
        ]
        solo = (key[0], key[2], key[3])
        against = [
            f"{rates[col].loc[key, short] / alone[col][solo]:.2f}" if solo in alone[col].index else ""
            for col in ("throughput_tokens_s", "predicted")
        ]
        out.append(
            "| {} | {} | {} | {} | ".format(*key)
            + f"{r[short]:.2f} | {r[long]:.2f} | "
            + " | ".join(added + against)
            + " |"
        )
    return out + _pipeline_variants(ref, grid, short, long)


def _pipeline_variants(ref, grid, short, long) -> list[str]:
    """The layer split's pipeline as the model runs it, graded beside each of its parts undone."""
    rise = (grid[long] / grid[short]).groupby(level="model").median()

    def several(table):
        return table[(table["test"] == "pp") & (table["setting"] == llm.SETTINGS[1])]

    variants = [
        ("the model", contextlib.nullcontext()),
        (
            "each pass of the prompt drained before the next",
            engines("pipeline_across_passes", False, ["llama.cpp"]),
        ),
        ("no wait for the scheduler's copies", engines("sched_copies", 10**6, ["llama.cpp"])),
        ("the same number of layers on every GPU", equal_layers()),
        (f"each hand-off {llm.LAYER_HOP_S * 1e6:.0f} µs whatever its bytes", hop_latency_only()),
        (
            "the earlier rule: each pass drained, m micro-batches through n equal stages in m + n - 1 stage "
            "times",
            earlier_rule(),
        ),
    ]
    tables = []
    for label, context in variants:
        with context:
            tables.append((label, several(llm.validation_table(ref))))
    models = sorted(tables[0][1]["model"].unique())
    out = [
        "",
        f"The model follows llama.cpp's source at the benchmarked build (2824). Each GPU holds the layers "
        "`llm_load_tensors` gives it (`gpukit.llm.layer_stages`: the extra layer on the first GPU, the output "
        "layer on the last; Llama 3 8B on four GPUs 9, 8, 8 and 7 layers, as a published run's log shows in its "
        "KV-cache buffers, 288, 256, 256 and 224 MiB). The hidden state passes to the next GPU on the sending "
        "GPU's stream, through host memory, as llama.cpp enables peer access only for row-split weights "
        f"(`LAYER_HOP_S` plus its float32 bytes over PCIe through the host). llama-bench calls `llama_decode` once "
        f"a pass of {llm.PROMPT_BATCH} tokens and synchronises only when the prompt is done, so the pipeline runs "
        f"on from one pass into the next; and the scheduler keeps {llm.SCHED_COPIES} copies of each GPU's inputs "
        "(`GGML_SCHED_MAX_COPIES`; the runs' logs print `pipeline parallelism enabled (n_copies=4)`), so before "
        f"it copies a micro-batch's inputs to a GPU the host waits until that GPU has finished the micro-batch "
        f"{llm.SCHED_COPIES} earlier (`ggml_backend_sched_compute_splits`), which on more GPUs than copies paces "
        "the pipeline. Prefill pairs with several GPUs within ±20 %, with each part undone in turn:",
        "",
        *table_head(
            "| pipeline | " + " | ".join(models) + " | all | winners right |", "l" + "r" * (len(models) + 2)
        ),
    ]
    for label, table in tables:
        cells = [
            f"{int(table[table['model'] == m]['within_tolerance'].sum())} of {int((table['model'] == m).sum())}"
            for m in models
        ]
        decisive = table[table["decisive"]]
        out.append(
            f"| {label} | "
            + " | ".join(cells)
            + f" | {int(table['within_tolerance'].sum())} of {len(table)} "
            f"| {int(decisive['winner_right'].sum())} of {len(decisive)} |"
        )
    return out + [
        "",
        "Over the table above, published over predicted from the shortest to the longest prompt "
        "changes by a median factor of "
        + ", ".join(f"{rise[m]:.2f} for {m}" for m in rise.index)
        + "; below 1, the runs pipelined less than the model lets them. The 70B runs on two to four GPUs "
        "in Q4_K_M hardly pipeline at all, and nothing read in that build's source (the scheduler, the graph "
        "allocator's reserve for the largest graph, `llama_decode_internal`, the CUDA backend's memory "
        "pools and peer access) tells them apart, so the model keeps one rule for both and the "
        "difference stays in these errors.",
    ]
