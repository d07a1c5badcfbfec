"""The walk of a built-in transformer shape without building it: the ops TensorFlow runs for its
equivalent made of Keras layers, by the same per-op rules as the walk of a built model, so that a
7-billion-parameter shape is walked in milliseconds.
"""

from __future__ import annotations

from .attention import attention_ops
from .builder import Walk, dense_like, dropout_op, norm_op
from .records import Graph
from .rules import ELEMENTWISE

#: Output heads of a built-in transformer shape: ``lm`` (the vocabulary projection: BERT's masked-LM
#: head, a decoder's next-token head) and ``span`` (extractive question answering as in SQuAD
#: fine-tuning: a start and an end logit per token, straight from the last layer).
HEADS = ("lm", "span")


def transformer_graph(
    spec, seq_len: int | None = None, tied_head: bool | None = None, head: str = "lm"
) -> Graph:
    """The walk of a built-in transformer shape (:class:`gpukit.models.TransformerSpec`) without
    building it: the ops TensorFlow runs for its equivalent made of Keras layers
    (:func:`gpukit.models.zoo.spec_model`), with the same per-op rules as :func:`gpukit.graph.graph_of`,
    so that a 7-billion-parameter shape is walked in milliseconds. ``tests/test_memory_layers.py``
    checks that the two walks agree.

    Encoders are BERT-shaped (learned positions, post-norm, GELU, dropout 0.1, a masked-LM head);
    decoders without a gated FFN GPT-2-shaped (pre-norm, causal, dropout 0.1); gated decoders
    LLaMA-shaped (RMS norms, SwiGLU, no biases, no dropout; the rotary position embedding's
    rotated Q and K are not walked: Keras has no layer for it). ``tied_head`` (default: tied
    unless the FFN is gated, as the published models) counts the output projection's kernel as
    the token embedding's. ``head="span"`` replaces the vocabulary head by the two-logit span
    head of SQuAD fine-tuning (:data:`HEADS`).
    """
    if head not in HEADS:
        raise ValueError(f"head {head!r}: use one of {', '.join(HEADS)}")
    t = _TransformerWalk(spec, int(seq_len or spec.seq_len))
    tied = (not spec.gated_ffn) if tied_head is None else tied_head
    x = t.embeddings()
    for i in range(spec.layers):
        x = t.encoder_layer(f"layer{i}", x) if not spec.decoder else t.decoder_layer(f"layer{i}", x)
    if spec.decoder:
        x = t.norm("final/norm", x)
    if head == "span":
        logits = t.dense("span_head", x, t.h, 2, float32=True)
        tied = True  # no vocabulary projection: the largest dense kernel is the FFN's
    else:
        logits = t.lm_head(x, tied)
    ops = t.w.ops
    params = sum(o.params for o in ops)
    h, ffn, vocab = spec.hidden, spec.ffn, spec.vocab
    return Graph(
        spec.name,
        ops,
        t.w.sizes,
        [t.tokens],
        t.s,
        params,
        params,
        t.w.float32,
        max(h * ffn, 0 if tied else vocab * h),
        [logits],
        vocab * h,
    )


class _TransformerWalk:
    """The ops of one transformer shape at ``s`` tokens, block by block; each method appends its
    ops and returns the id of the tensor it writes."""

    def __init__(self, spec, s: int):
        self.spec, self.s = spec, s
        self.h = spec.hidden
        self.bias = not spec.gated_ffn
        self.drop = 0.0 if spec.gated_ffn else 0.1
        self.w = Walk()
        self.tokens = self.w.tensor(s)
        self.seq = s * self.h

    def dense(self, name, x, d_in, d_out, act=None, params=None, float32=False):
        s = self.s
        out = self.w.tensor(s * d_out, float32=float32)
        n = d_in * d_out + (d_out if self.bias else 0) if params is None else params
        dense_like(
            self.w,
            name,
            "Dense",
            [x],
            [out],
            s * d_out,
            2.0 * s * d_out * d_in,
            act,
            n,
            float32=float32,
            extra_saved_mixed=s * d_in if float32 else 0,
        )
        return out

    def norm(self, name, x):
        out = self.w.tensor(self.seq)
        gated = self.spec.gated_ffn
        kind = "RMSNormalization" if gated else "LayerNormalization"
        n = self.h if gated else 2 * self.h
        norm_op(self.w, name, kind, [x], [out], self.seq, n, n)
        return out

    def dropout(self, name, x):
        if not self.drop:
            return x
        out = self.w.tensor(self.seq)
        dropout_op(self.w, name, [x], [out], self.seq)
        return out

    def add(self, name, a, b):
        out = self.w.tensor(self.seq)
        self.w.add(name, "Add", [a, b], [out], in_place=True)
        return out

    def attention(self, name, x):
        s, h, heads = self.s, self.h, self.spec.heads
        out = self.w.tensor(self.seq)
        proj = h * h + (h if self.bias else 0)
        attention_ops(
            self.w,
            name,
            x,
            x,
            x,
            [out],
            s_q=s,
            s_k=s,
            d_q=h,
            d_k=h,
            d_v=h,
            d_out=h,
            heads=heads,
            key_dim=h // heads,
            value_dim=h // heads,
            dropout=bool(self.drop),
            masked=self.spec.decoder,
            params=(proj, proj, proj, proj),
        )
        return out

    def embeddings(self):
        """The token embedding, learned positions unless the FFN is gated, and an encoder's norm."""
        w, spec, h, s = self.w, self.spec, self.h, self.s
        x = w.tensor(self.seq)
        w.add(
            "token_embedding",
            "Embedding",
            [self.tokens],
            [x],
            spec.vocab * h,
            spec.vocab * h,
            needs_input=True,
        )
        if not spec.gated_ffn:  # learned positions, computed from the token ids (zoo.positions)
            ids = self.tokens
            for kind in ("OnesLike", "Cumsum", "Subtract", "Cast"):
                nxt = w.tensor(s)
                w.add(f"positions/{kind}", kind, [ids], [nxt], in_place=kind in ELEMENTWISE)
                ids = nxt
            pos = w.tensor(self.seq)
            w.add(
                "position_embedding",
                "Embedding",
                [ids],
                [pos],
                spec.seq_len * h,
                spec.seq_len * h,
                needs_input=True,
            )
            x = self.add("embeddings", x, pos)
        if not spec.decoder:
            return self.dropout("embeddings/dropout", self.norm("embeddings/norm", x))
        return self.dropout("embeddings/dropout", x)

    def encoder_layer(self, n: str, x):
        """A BERT-shaped layer: post-norm, a GELU FFN."""
        h, ffn = self.h, self.spec.ffn
        a = self.dropout(f"{n}/attention/dropout", self.attention(f"{n}/attention", x))
        x = self.norm(f"{n}/attention/norm", self.add(f"{n}/attention/add", x, a))
        f = self.dense(f"{n}/ffn/out", self.dense(f"{n}/ffn/in", x, h, ffn, "gelu"), ffn, h)
        return self.norm(f"{n}/ffn/norm", self.add(f"{n}/ffn/add", x, self.dropout(f"{n}/ffn/dropout", f)))

    def decoder_layer(self, n: str, x):
        """A decoder layer: pre-norm, causal, a GELU FFN or a gated one (SwiGLU)."""
        h, ffn = self.h, self.spec.ffn
        a = self.dropout(
            f"{n}/attention/dropout", self.attention(f"{n}/attention", self.norm(f"{n}/attention/norm", x))
        )
        x = self.add(f"{n}/attention/add", x, a)
        y = self.norm(f"{n}/ffn/norm", x)
        if self.spec.gated_ffn:
            gate, up = self.dense(f"{n}/ffn/gate", y, h, ffn, "silu"), self.dense(f"{n}/ffn/up", y, h, ffn)
            m = self.w.tensor(self.s * ffn)
            self.w.add(f"{n}/ffn/multiply", "Multiply", [gate, up], [m], needs_input=True)
            f = self.dense(f"{n}/ffn/down", m, ffn, h)
        else:
            f = self.dense(f"{n}/ffn/out", self.dense(f"{n}/ffn/in", y, h, ffn, "gelu"), ffn, h)
        return self.add(f"{n}/ffn/add", x, self.dropout(f"{n}/ffn/dropout", f))

    def lm_head(self, x, tied: bool):
        """The vocabulary projection, after BERT's masked-LM transform on an encoder."""
        h, vocab = self.h, self.spec.vocab
        if not self.spec.decoder:  # BERT's masked-LM transform
            x = self.norm("mlm/norm", self.dense("mlm/dense", x, h, h, "gelu"))
        head_params = (0 if tied else vocab * h) + (vocab if self.bias else 0)
        return self.dense("head", x, h, vocab, params=head_params, float32=True)
