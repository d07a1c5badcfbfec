"""The model with one part changed while a block runs, each a context manager: what the ablation,
per-GPU and pipeline sections of docs/accuracy/llm.md grade beside the model as it is."""

from __future__ import annotations

import contextlib
import dataclasses

from gpukit import llm, specs


@contextlib.contextmanager
def engines(flag: str, value, names=None):
    """``flag`` of the profiles of :data:`gpukit.llm.ENGINES` named ``names`` (every one by default) set
    to ``value`` while the block runs: ``gemv_bytes_per_sm_cycle`` holds decode to a per-SM streaming
    cap (None: none), ``scalar_kernels`` the prompt's other kernels, ``pipeline_across_passes`` and
    ``sched_copies`` a layer split's pipeline."""
    chosen = list(llm.ENGINES) if names is None else list(names)
    saved = {name: llm.ENGINES[name] for name in chosen}
    for name in chosen:
        llm.ENGINES[name] = dataclasses.replace(saved[name], **{flag: value})
    try:
        yield
    finally:
        llm.ENGINES.update(saved)


#: The decode cap as a rate per second per SM that fits the first source best (the model's form before
#: it counted cycles), for the ablation.
PER_SECOND_CAP = 9e9


@contextlib.contextmanager
def decode_cap_per_second():
    """llama.cpp's decode cap at :data:`PER_SECOND_CAP` per SM whatever the GPU's clock."""
    saved = llm.speed.gemv_rate
    llm.speed.gemv_rate = lambda row, per_sm=None: specs.sm_count(row) * PER_SECOND_CAP
    try:
        yield
    finally:
        llm.speed.gemv_rate = saved


def streaming_prompts():
    """llama.cpp's prompt kernels at the streaming rate, as if they loaded several elements a thread."""
    return engines("scalar_kernels", False, ["llama.cpp"])


@contextlib.contextmanager
def without_prefill_traffic():
    """A prompt without the memory traffic between its matrix multiplies."""
    saved = llm.speed.prefill_traffic_bytes
    llm.speed.prefill_traffic_bytes = lambda *args, **kwargs: 0.0
    try:
        yield
    finally:
        llm.speed.prefill_traffic_bytes = saved


@contextlib.contextmanager
def equal_layers():
    """Every GPU of a layer split holding the same share of the layers."""
    saved = llm.speed.layer_stages
    llm.speed.layer_stages = lambda layers, gpus: [layers / gpus] * gpus
    try:
        yield
    finally:
        llm.speed.layer_stages = saved


@contextlib.contextmanager
def hop_latency_only():
    """A layer split's hand-off at ``LAYER_HOP_S`` alone: its bytes through the host take no time."""
    saved = llm.speed.layer_hop_s
    llm.speed.layer_hop_s = lambda *args, **kwargs: llm.LAYER_HOP_S
    try:
        yield
    finally:
        llm.speed.layer_hop_s = saved


@contextlib.contextmanager
def earlier_rule():
    """A layer split's pipeline as the model ran it before it followed llama.cpp's scheduler."""
    with (
        engines("sched_copies", None, ["llama.cpp"]),
        engines("pipeline_across_passes", False, ["llama.cpp"]),
    ):
        yield
