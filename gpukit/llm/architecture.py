"""An open decoder's architecture (:class:`LLM`): its weights, part by part, and its key-value cache
as the serving engines store it.

What the layouts of 2024-2026 change, and how each is counted:

* **Attention.** Grouped-query attention (``attention="gqa"``) caches a key and a value per KV head;
  multi-head latent attention (``"mla"``, DeepSeek-V2/V3) caches one compressed latent of
  ``kv_lora_rank`` plus the rotary key of ``rope_dim`` per layer, which every GPU of a
  tensor-parallel group holds whole (vLLM's ``MLAAttentionSpec`` is one head, not split).
* **Local layers.** ``local_layers`` of the ``layers`` attend over a window of ``local_window``
  tokens: a sliding window (``local_kind="sliding"``: gpt-oss, Gemma 2/3) or a chunk
  (``"chunked"``: Llama 4's chunked attention). Those layers keep at most the window in the cache.
* **Mixtures of experts.** ``experts`` routed experts of inner size ``ffn``, ``experts_per_token``
  of them per token, plus ``shared_experts`` every token passes (DeepSeek, Llama 4); the first or
  interleaved ``dense_layers`` have a dense FFN of ``dense_ffn`` instead. Every expert is held in
  memory; a token reads its active ones.
* **The checkpoint's own format.** ``native_weights`` is the format a checkpoint ships in (``bf16``,
  ``mxfp4`` for gpt-oss, ``fp8`` for DeepSeek-V3); ``unquantized`` names the parts it leaves at
  16 bits (gpt-oss: attention, router, embeddings, head), which stay 16-bit under any format of
  fewer bits (:meth:`LLM.weight_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError

#: Bytes per element of the key-value cache.
KV_CACHE_BYTES = {"f32": 4.0, "f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "fp8": 1.0}
#: The attention layouts :class:`LLM` counts.
ATTENTION = ("gqa", "mla")
#: How a local layer limits its keys: a sliding window, or a chunk (Llama 4).
LOCAL_KINDS = ("", "sliding", "chunked")
#: The parts of a model's weights (:meth:`LLM.param_parts`).
PARTS = ("embeddings", "head", "attention", "router", "experts", "shared", "dense", "norms")
#: Bits a part left unquantized keeps.
UNQUANTIZED_BITS = 16

_COUNTS = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn",
    "vocab",
    "experts",
    "experts_per_token",
    "max_context",
)
_OPTIONAL = (
    "q_lora_rank",
    "kv_lora_rank",
    "rope_dim",
    "v_head_dim",
    "local_window",
    "local_layers",
    "dense_layers",
    "dense_ffn",
    "shared_experts",
)


def _kv_bytes(kv: str) -> float:
    key = str(kv).strip().lower()
    if key not in KV_CACHE_BYTES:
        raise ParameterError(f"KV cache {kv!r}: use one of {', '.join(KV_CACHE_BYTES)}")
    return KV_CACHE_BYTES[key]


@dataclass(frozen=True)
class LLM:
    """An open decoder architecture: gated FFN (dense, or a mixture of experts), grouped-query or
    multi-head latent attention, optionally local (windowed or chunked) layers."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    experts: int = 1
    experts_per_token: int = 1
    tied_embeddings: bool = False
    max_context: int = 4096
    family: str = ""
    published_params_b: float | None = None
    config_url: str = ""
    source_read: str = ""
    attention: str = "gqa"
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    rope_dim: int = 0
    v_head_dim: int = 0
    local_kind: str = ""
    local_window: int = 0
    local_layers: int = 0
    dense_layers: int = 0
    dense_ffn: int = 0
    shared_experts: int = 0
    native_weights: str = "bf16"
    unquantized: tuple[str, ...] = ()
    published_active_params_b: float | None = None

    def __post_init__(self):
        def refuse(what: str) -> None:
            raise ParameterError(f"model {self.name!r}: {what}")

        for f in _COUNTS:
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                refuse(f"{f} must be a whole number of at least 1, not {v!r}")
        for f in _OPTIONAL:
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                refuse(f"{f} must be a whole number of at least 0, not {v!r}")
        if self.attention not in ATTENTION:
            refuse(f"attention {self.attention!r}: use one of {', '.join(ATTENTION)}")
        if self.heads % self.kv_heads:
            refuse(
                f"{self.heads} heads do not split into {self.kv_heads} key-value groups; heads must be "
                "a multiple of kv_heads"
            )
        if self.experts_per_token > self.experts:
            refuse(f"{self.experts_per_token} experts per token of {self.experts}; use at most experts")
        if self.attention == "mla" and not (self.kv_lora_rank and self.rope_dim):
            refuse("multi-head latent attention needs kv_lora_rank and rope_dim")
        if self.local_kind not in LOCAL_KINDS:
            refuse(f"local_kind {self.local_kind!r}: use sliding, chunked or leave it empty")
        if bool(self.local_kind) != bool(self.local_window and self.local_layers):
            refuse("local_kind, local_window and local_layers go together: give all three or none")
        if self.local_layers > self.layers:
            refuse(f"{self.local_layers} local layers of {self.layers}; use at most layers")
        if self.dense_layers > self.layers or (self.dense_layers and self.experts == 1):
            refuse("dense_layers counts the dense layers of a mixture of experts: at most layers")
        unknown = sorted(set(self.unquantized) - set(PARTS))
        if unknown:
            refuse(f"unquantized part(s) {', '.join(unknown)}: use {', '.join(PARTS)}")

    # -- shapes ------------------------------------------------------------------------------------

    @property
    def q_dim(self) -> int:
        """Width of the queries (heads x the query-key head size)."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the keys (and values) attention multiplies: the KV heads', or under latent
        attention every head's decompressed key."""
        return self.q_dim if self.attention == "mla" else self.kv_heads * self.head_dim

    @property
    def value_dim(self) -> int:
        """Width of the attention output the output projection reads (heads x value head size)."""
        return self.heads * (self.v_head_dim or self.head_dim)

    @property
    def moe_layers(self) -> int:
        """Layers with experts (none in a dense model)."""
        return 0 if self.experts == 1 else self.layers - self.dense_layers

    @property
    def global_layers(self) -> int:
        """Layers attending over the whole context."""
        return self.layers - self.local_layers

    # -- weights -----------------------------------------------------------------------------------

    def attention_params(self) -> int:
        """One layer's attention weights (and its latent norms)."""
        h = self.hidden
        if self.attention == "gqa":
            return h * (self.q_dim + 2 * self.kv_dim) + self.value_dim * h
        q = (
            h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.q_dim
            if self.q_lora_rank
            else h * self.q_dim
        )
        nope = self.head_dim - self.rope_dim
        kv = (
            h * (self.kv_lora_rank + self.rope_dim)
            + self.kv_lora_rank
            + self.kv_lora_rank * self.heads * (nope + (self.v_head_dim or self.head_dim))
        )
        return q + kv + self.value_dim * h

    def param_parts(self, experts: float | None = None) -> dict[str, float]:
        """Weights by part (:data:`PARTS`), with ``experts`` routed experts in each mixture layer
        (default all of them: the weights held; ``experts_per_token``: one token's)."""
        e = self.experts if experts is None else experts
        gated = 3 * self.hidden
        dense_ffn = self.dense_ffn or self.ffn
        if self.experts == 1:
            experts_p, shared, router, dense = 0.0, 0.0, 0.0, self.layers * gated * self.ffn
        else:
            experts_p = self.moe_layers * e * gated * self.ffn
            shared = self.moe_layers * self.shared_experts * gated * self.ffn
            router = self.moe_layers * self.hidden * self.experts
            dense = self.dense_layers * gated * dense_ffn
        return {
            "embeddings": self.vocab * self.hidden,
            "head": 0 if self.tied_embeddings else self.vocab * self.hidden,
            "attention": self.layers * self.attention_params(),
            "router": router,
            "experts": experts_p,
            "shared": shared,
            "dense": dense,
            "norms": 2 * self.layers * self.hidden + self.hidden,
        }

    def layer_params(self, experts: float | None = None) -> float:
        """Weights of the average layer (attention, FFN or experts, router, norms), with
        ``experts`` routed experts per mixture layer (default all)."""
        p = self.param_parts(experts)
        return (sum(p.values()) - p["embeddings"] - p["head"] - self.hidden) / self.layers

    def params(self) -> int:
        """Every weight: the token embedding, the layers, the final norm and (untied) the output head."""
        return int(round(sum(self.param_parts().values())))

    def active_params(self) -> int:
        """Weights one token's forward pass multiplies: the layers with the experts it is routed to,
        and the output head (tied or not); the embedding is a look-up."""
        return int(round(self.layers * self.layer_params(self.experts_per_token) + self.vocab * self.hidden))

    def weight_bytes(self, bits_per_weight: float, experts: float | None = None) -> float:
        """Bytes of the weights in a format of ``bits_per_weight``, the ``unquantized`` parts kept
        at 16 bits when the format has fewer (``experts`` as :meth:`param_parts`)."""
        bits = self._part_bits(bits_per_weight)
        return sum(n * bits(part) for part, n in self.param_parts(experts).items()) / 8

    def active_weight_bytes(self, bits_per_weight: float, experts: float | None = None) -> float:
        """Bytes a forward pass reads in a format of ``bits_per_weight``: the layers with
        ``experts`` routed experts per mixture layer (default a token's own) and the output head
        (tied or not); the embedding is a look-up."""
        k = self.experts_per_token if experts is None else experts
        p = self.param_parts(k)
        bits = self._part_bits(bits_per_weight)
        layers = sum(n * bits(part) for part, n in p.items() if part not in ("embeddings", "head"))
        head = self.vocab * self.hidden * bits("embeddings" if self.tied_embeddings else "head")
        return (layers - self.hidden * bits("norms") + head) / 8

    def _part_bits(self, bits_per_weight: float):
        def bits(part: str) -> float:
            keep = part in self.unquantized and bits_per_weight < UNQUANTIZED_BITS
            return UNQUANTIZED_BITS if keep else bits_per_weight

        return bits

    def ffn_width(self) -> float:
        """FFN inner width a token passes through, averaged over the layers."""
        if self.experts == 1:
            return float(self.ffn)
        moe = (self.experts_per_token + self.shared_experts) * self.ffn
        return (self.moe_layers * moe + self.dense_layers * (self.dense_ffn or self.ffn)) / self.layers

    def peak_ffn_width(self) -> int:
        """The widest FFN a token passes through in one layer."""
        if self.experts == 1:
            return self.ffn
        moe = (self.experts_per_token + self.shared_experts) * self.ffn
        return max(moe, self.dense_ffn or self.ffn) if self.dense_layers else moe

    def matmuls(self, experts: float | None = None) -> list[tuple[int, int, float]]:
        """(output features, input features, how many over the layers) of each matrix a token
        passes through (``experts`` routed experts per mixture layer; default its own)."""
        k = self.experts_per_token if experts is None else experts
        h, n = self.hidden, self.layers
        mats: list[tuple[int, int, float]] = [
            (self.q_dim, h, n),
            (self.kv_dim, h, n),
            (self.kv_dim, h, n),
            (h, self.value_dim, n),
        ]
        if self.experts == 1:
            return mats + [(self.ffn, h, 2 * n), (h, self.ffn, n)]
        per = self.moe_layers * (k + self.shared_experts)
        mats += [(self.ffn, h, 2 * per), (h, self.ffn, per)]
        if self.dense_layers:
            d = self.dense_ffn or self.ffn
            mats += [(d, h, 2 * self.dense_layers), (h, d, self.dense_layers)]
        return mats

    # -- key-value cache ---------------------------------------------------------------------------

    def kv_elements_per_layer(self) -> int:
        """Cache elements one token stores in one layer: a key and a value per KV head, or (latent
        attention) the latent and the rotary key."""
        if self.attention == "mla":
            return self.kv_lora_rank + self.rope_dim
        return 2 * self.kv_heads * self.head_dim

    def kv_bytes_per_token(self, kv: str = "f16") -> float:
        """Cache bytes per token of context while every layer still keeps it (the context within
        the local window); :meth:`kv_cache_bytes` counts a long context."""
        return self.layers * self.kv_elements_per_layer() * _kv_bytes(kv)

    def cached_tokens(self, context: int) -> float:
        """Token-layers the cache holds for one sequence at ``context``, over the layers: local
        layers keep at most their window."""
        local = min(context, self.local_window) if self.local_layers else 0
        return self.global_layers * context + self.local_layers * local

    def kv_cache_bytes(self, context: int, kv: str = "f16", gpus: int = 1) -> float:
        """Bytes one sequence's cache takes at ``context`` on each of ``gpus`` tensor-parallel GPUs:
        KV heads split over the GPUs (each keeps at least one), a latent cache held whole on each."""
        per_layer_token = self.kv_elements_per_layer() * _kv_bytes(kv) * self.kv_share(gpus)
        return self.cached_tokens(context) * per_layer_token

    def kv_share(self, gpus: int) -> float:
        """Share of a token's cache each of ``gpus`` tensor-parallel GPUs keeps."""
        if self.attention == "mla":
            return 1.0
        return 1 / min(gpus, self.kv_heads)

    def attention_flops(self, context: float) -> float:
        """Multiply-add FLOPs of one token's attention over ``context`` positions, every layer
        (QK^T and PV; latent attention multiplies in the latent space, as engines absorb the up
        projections while decoding)."""
        if self.attention == "mla":
            per_position = 2 * self.heads * (2 * self.kv_lora_rank + self.rope_dim)
        else:
            per_position = 2 * self.q_dim + 2 * self.value_dim
        return per_position * self.cached_tokens(context)

    def splits_over(self, gpus: int) -> bool:
        """Whether tensor parallelism over ``gpus`` GPUs splits the attention heads evenly."""
        if self.attention == "mla":
            return self.heads % gpus == 0
        return gpus <= self.kv_heads and self.kv_heads % gpus == 0
