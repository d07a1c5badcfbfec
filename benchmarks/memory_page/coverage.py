"""What the estimate counts, and what a measurement on a CPU holds or cannot see that a GPU would:
the page's list of both."""

from __future__ import annotations


def counted_lines(kernels: bool) -> list[str]:
    """What the estimate counts, and what moves a measurement on a CPU (``kernels``: the report compares
    the CPU kernels in a section of its own)."""
    return [
        "## What the estimate counts, and what it cannot see here",
        "",
        "- Every layer's kept tensors were read off TensorFlow's own gradient graph and are tested against it "
        "(`tests/test_memory_layers.py`): attention keeps Q, K, V, the probabilities (and their dropout and "
        "mask), the heads' output; exact GELU three tensors; normalisations float32 copies; recurrent layers "
        "every time step's gates and state; `TimeDistributed` over a static time axis a slice per step, and "
        "its backward pass a full-size gradient per step. The built-in transformer shapes are walked as their "
        "Keras-layer equivalents (`keras-bert` here is BERT's shape at small sizes).",
        "- An optimizer's update makes temporaries that read no gradient (momentum's `m * momentum`, RMSprop's "
        "`rho * velocity`): TensorFlow runs them as the step starts, and each waits for its variable's gradient, so "
        "the forward pass and the backward pass hold one variable-sized temporary for every weight not yet updated "
        "(`gpukit.memory.PENDING_UPDATE_TEMPORARIES`; TensorFlow's profiler shows them at the peak, as many bytes as "
        "the trainable weights: `docs/accuracy/memory-peaks.md`, made by `benchmarks/memory_peaks.py`, lists what "
        "a few cases hold at their peaks). The fitted update terms count the rest.",
        "- Run-to-run spread is seen where the loss may write the logits' gradient into the logits' buffer "
        "(only when nothing else still holds them: a logits-sized difference, large for token-level heads; "
        "seen at batch 8, not at 2 or 32). The estimate takes the common case; the rest is the family's band, "
        "which `gpukit fit` reports and calls borderline.",
        "- The number of TensorFlow's inter-op threads moves one thing a lot: with a single thread a recurrent "
        "layer's backward loop runs its time steps ahead of the weight-gradient accumulation, each holding a "
        "kernel-sized gradient (up to 32, Keras's `parallel_iterations`), and an LSTM peaks at two to seven "
        "times what it does with two or more, at every batch, more the larger its kernels; "
        "`benchmarks/rnn_runahead.py` measures both (`docs/accuracy/rnn-runahead.md`). Every measurement runs "
        "at least two (TensorFlow's default on two or "
        "more cores), and the estimate counts the one gradient a loop then holds. With oneDNN's kernels some "
        "two-thread runs still run ahead (keras-lstm at batch 32 with RMSprop: one run of 112 MiB against 67-68, "
        "in the comparison below), so models with LSTM or GRU layers are measured with Eigen's kernels "
        "(`gpukit.memory.MEASURE_ONEDNN_RECURRENT`), under which two threads keep up; a GPU runs those layers "
        "as one cuDNN kernel, which accumulates nothing per step. The forward loop's 16-bit "
        "casts move the other way: the estimate counts them running ahead by Keras's `parallel_iterations`, "
        "which one thread lets them do and two, for the bidirectional GRU's two loops, in some runs only (the "
        "range of its 16-bit inference below).",
        "- TensorFlow's CPU kernels matter for convolutions: its Eigen kernels (its default on CPUs without "
        "AVX-512 VNNI/BF16, AVX-VNNI or AMX) hold buffers of their own in a convolution's gradients, which "
        "oneDNN's do not and a GPU's cuDNN replaces with workspaces of its own (GPU-only, below). Every "
        "measurement but the LSTM's and GRU's runs oneDNN's (`gpukit.memory.MEASURE_ONEDNN`), so that "
        "machines with different CPUs measure the same thing"
        + ("; the section after this list compares the two." if kernels else "."),
        "- The allocator rounds too: TensorFlow's BFC allocator (the one GPUs use) does not split a free chunk "
        "smaller than twice a request, so a tensor can hold up to twice its bytes. Small models show it most: "
        "an LSTM's weights alone are held in more than their size, because the orthogonal initialiser's "
        "temporaries leave free chunks that the kernels then fill whole. `docs/accuracy/memory-peaks.md` gives, at "
        "each profiled peak, the live tensors' own bytes and the chunks the allocator holds them in.",
        "- Inference holds what a step has in flight, not what a backward pass keeps: TensorFlow's einsum "
        "kernel transposes its operands into copies of its own beside the projections' outputs, Keras's own "
        "attention path (with dropout) transposes its scores into a second tensor, and scaling and softmax "
        "write over the scores (`forward_input_or_allocate_output`). Found by measuring each model cut after "
        "each of its layers; the encoder and the decoder at 512 tokens (the rows below), where the scores "
        "outweigh everything else, check it.",
    ]


def unseen_lines(other_cpu: bool) -> list[str]:
    """What a CPU measures that a GPU does not hold, and what it cannot measure (``other_cpu``: the report
    compares 16-bit runs on another CPU in a section of its own)."""
    return [
        "- Under a 16-bit policy every layer casts its kernel, and a cast reads only its variable: TensorFlow "
        "runs it as soon as the step starts, and it lives until its layer has run (in training, until its "
        "layer's backward pass). A static time axis (`TimeDistributed`) casts once per step; a recurrent loop "
        "casts every step, and in inference its casts run ahead by up to Keras's `parallel_iterations` (32) "
        "steps, every loop of the model at once (a loop starts its first steps before its input sequence is "
        "ready); in training each step's cast is kept for the backward pass (TensorFlow's loop pushes it).",
        "- A CPU without instructions for a 16-bit format multiplies its matrices through float32 copies of both "
        "operands and the result (TensorFlow's `MatMul` and `BatchMatMul` kernels; its `Einsum` does not): "
        "inference of the encoder, whose attention and projections outweigh its float32 parts, then peaks above "
        "its float32 run. A GPU's tensor cores multiply 16-bit matrices as they are, and so does this CPU for "
        "bfloat16 where it has AVX-512 BF16 or AMX (`gpukit.bench.device.NATIVE_16BIT_FLAGS`) and runs "
        "oneDNN's kernels (Eigen's, which the models with LSTM or GRU layers run, go through the copies all "
        "the same), so the grid's bfloat16 cases are measured on such a CPU: the line above says which each "
        "family's runs had"
        + (
            "; '16-bit formats on a CPU without their instructions' below compares them with runs on a CPU "
            "without."
            if other_cpu
            else "."
        )
        + " The CPU the float16 cases ran on has no float16 dot products (AVX-512 FP16 or AMX-FP16; the line "
        "above says what each run's CPU had): they hold the copies, which the estimate, counting what a GPU "
        "holds, does not count, so they stay in the families' bands (the encoder's float16 inference). "
        "Nor has oneDNN float16 convolutions here: their gradients run Eigen's kernels, with buffers of their own "
        "(MobileNetV2's float16 training holds two at its peak, `docs/accuracy/memory-peaks.md`).",
        "- float16 training is measured on a step that updates the weights: the dynamic loss scale skips the "
        "first steps' updates, and a skipped step holds no optimizer state.",
        "- A training step is measured with the optimizer's slots made inside the first, unmeasured step "
        "(`gpukit.memory.measure_peak`, `build_first=False`), as every case here was. Keras's `fit()` makes them "
        "before its first step; measured that way on 2026-12-01 (two runs each), keras-encoder at batch 8 with "
        "AdamW peaked the same, and keras-lstm at batch 2 with Adam, keras-bert at batch 8 in bfloat16 with "
        "Adam, MobileNetV2 at batch 8 in float16 with Adam and keras-decoder at batch 2 with RMSprop 0 to 5% "
        "lower: the allocator's chunks lie differently. The errors here lean, if anything, to over-estimating "
        "such a run.",
        "- Not measurable without a GPU: cuDNN's fused LSTM/GRU kernel (used on a GPU for default "
        "configurations; it keeps a reserve space instead of per-step tensors) and GPU-only workspaces. "
        "Keras on TensorFlow runs attention unfused on a GPU too, so the attention terms carry over; the "
        "runtime reserve (CUDA context, cuDNN/cuBLAS workspaces) is added separately on a GPU.",
    ]
