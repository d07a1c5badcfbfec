"""Memory fit: how many bytes a model needs to train or infer at a batch size, and where it fits.

Two figures, in bytes:

* ``tensor_bytes`` — the peak of TensorFlow's allocator for this step's tensors: weights,
  gradients, optimizer slots, the activations kept for the backward pass, the transient
  gradients of activations, the input batch. It is what
  ``tf.config.experimental.get_memory_info(device)["peak"]`` reports, and what
  :func:`measure_peak` measures.
* ``total_bytes`` — ``tensor_bytes`` plus the runtime's own reserve on a GPU (CUDA context,
  cuDNN and cuBLAS workspaces), :data:`DEFAULT_RUNTIME_RESERVE_BYTES` unless overridden.

:mod:`.estimate` simulates one step over the model's layer walk (:class:`Estimator`), with the
optimizer's update from :mod:`.update` (its temporaries, and the one fitted part of the estimate).
:mod:`.family` names the family of measured models a model belongs to, and :mod:`.bands` gives that
family's measured error band and what it makes of a fit (fits, borderline, does not fit).
:mod:`.tables` lays the estimates out per model, batch size and GPU; :mod:`.measure`, the only module
that imports TensorFlow (inside its functions), runs a real step in a fresh process and reads the
allocator's peak. The model explained: docs/explanation/memory-model.md; how right it is:
docs/accuracy/memory.md.

GPU memory is binary: a catalogue "24 GB" card holds 24 GiB (:func:`gpukit.specs.memory_bytes`).
"""

from ..models.registry import MODES
from .bands import MODE_WORDS, error_band, error_bands, largest_batch_band, model_error_bands, verdict
from .estimate import (
    DEFAULT_RUNTIME_RESERVE_BYTES,
    WALK_POLICY,
    Estimate,
    Estimator,
    estimate_transformer,
    logits_bytes,
    simulate,
)
from .family import CNN_FAMILY, family_of
from .measure import (
    MEASURE_INTER_OP_THREADS,
    MEASURE_ONEDNN,
    MEASURE_ONEDNN_RECURRENT,
    PEAK_PHASES,
    bisect_largest_batch,
    has_fused_recurrent_layers,
    live_at_peak,
    loss_for,
    measure_env,
    measure_in_subprocess,
    measure_peak,
    onednn_enabled,
)
from .tables import (
    batch_range,
    breakdown,
    error_note,
    fit_report,
    fit_summary,
    fit_table,
    format_fit,
    summarize_runs,
    with_measurements,
)
from .update import (
    PENDING_UPDATE_TEMPORARIES,
    UPDATE_WORKSPACE_FIT,
    bounded_least_squares,
    fit_update_terms,
    pending_update_bytes,
    update_term_bounds,
    with_update,
)

# Not re-exported: the bands files' paths (ERROR_BANDS_PATH, MODEL_BANDS_PATH), which the readers look up
# in gpukit.memory.bands (replace them there), and measure_child, the runner's target in gpukit.memory.measure.
__all__ = [
    "MODE_WORDS",
    "error_band",
    "error_bands",
    "largest_batch_band",
    "model_error_bands",
    "verdict",
    "DEFAULT_RUNTIME_RESERVE_BYTES",
    "MODES",
    "WALK_POLICY",
    "Estimate",
    "Estimator",
    "estimate_transformer",
    "logits_bytes",
    "simulate",
    "CNN_FAMILY",
    "family_of",
    "MEASURE_INTER_OP_THREADS",
    "MEASURE_ONEDNN",
    "MEASURE_ONEDNN_RECURRENT",
    "PEAK_PHASES",
    "bisect_largest_batch",
    "has_fused_recurrent_layers",
    "live_at_peak",
    "loss_for",
    "measure_env",
    "measure_in_subprocess",
    "measure_peak",
    "onednn_enabled",
    "batch_range",
    "breakdown",
    "error_note",
    "fit_report",
    "fit_summary",
    "fit_table",
    "format_fit",
    "summarize_runs",
    "with_measurements",
    "PENDING_UPDATE_TEMPORARIES",
    "UPDATE_WORKSPACE_FIT",
    "bounded_least_squares",
    "fit_update_terms",
    "pending_update_bytes",
    "update_term_bounds",
    "with_update",
]
