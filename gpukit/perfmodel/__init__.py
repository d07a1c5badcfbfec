"""Performance model: measure here, predict every catalogue GPU, and grade the predictions.

A workload is profiled op by op (:mod:`.profiles`: FLOPs, bytes moved through device memory
and whether the op is a matrix multiply) for the forward pass, the backward pass and the
optimizer update. On each catalogue GPU the roofline (:mod:`.roofline`, one implementation)
gives each op the longer of its compute time at the unit it runs on
(:func:`gpukit.precision.math_unit`: TF32 for ``float32`` on Ampere and later, FP32 CUDA cores
for ``fp32``, FP16/BF16 tensor cores for mixed precision) and its memory time, plus a launch cost
per kernel. :mod:`.predictions` turns that into a table per GPU, with measured rows merged in;
:mod:`.calibration` sets the efficiency factors from a catalogued GPU's benchmark results;
:mod:`.scaling` adds the all-reduce of several GPUs over the link they really have. The published
measurements (:mod:`.reference`: ``data/reference_benchmarks.csv``, never read by a prediction)
grade the predictions per workload family and on several GPUs (:mod:`.grading`, with
:mod:`gpukit.grading`'s pairs), which gives every prediction its family's measured error;
:mod:`.fitting` fits the factors to them and leaves each GPU and each source out in turn.
"""

from ..models.registry import MODES
from .bands import Band, error_bands, held_out_errors, with_error_bands, within_error
from .calibration import calibrate
from .fitting import (
    FIT_GRID,
    REFIT_MARGIN,
    fit_efficiency,
    fit_error,
    held_out_systems,
    leave_one_gpu_out,
    leave_one_source_out,
    refit_verdict,
    scan_error,
)
from .grading import (
    FAMILY_TARGET,
    KEY_PAIRS,
    RATIO_TOLERANCE,
    WINNER_MARGIN,
    accuracy_text,
    family_accuracy,
    gpu_factors,
    grading_statement,
    key_pairs,
    scaling_validation,
    summarize_by_family,
    summarize_validation,
    system_throughputs,
    system_validation,
    throughput_ratios,
    validation_table,
)
from .predictions import PREDICTION_COLUMNS, predict_table, speedup
from .profiles import (
    DEFAULT_PARAMS,
    ELEMENTWISE_FLOPS,
    UPDATE_BYTES_PER_PARAM,
    UPDATES,
    WORKLOADS,
    OpCost,
    Profile,
    hidden_state_bytes,
    profile,
)
from .reference import (
    REFERENCE_PATH,
    REFERENCE_SCHEMA,
    family,
    graded_gpus,
    graded_workloads,
    load_reference,
)
from .roofline import DEFAULT_EFFICIENCY, Efficiency, Placed, Prediction, op_times, place, predict, step_time
from .scaling import (
    LINK_EFFICIENCY,
    PCIE_X16_GBS,
    interconnect,
    predict_scaling,
    scaling_summary,
    scaling_table,
)

__all__ = [
    "Band",
    "error_bands",
    "held_out_errors",
    "with_error_bands",
    "within_error",
    "calibrate",
    "FAMILY_TARGET",
    "FIT_GRID",
    "KEY_PAIRS",
    "RATIO_TOLERANCE",
    "REFERENCE_PATH",
    "REFERENCE_SCHEMA",
    "REFIT_MARGIN",
    "WINNER_MARGIN",
    "accuracy_text",
    "family",
    "family_accuracy",
    "fit_efficiency",
    "fit_error",
    "refit_verdict",
    "gpu_factors",
    "graded_gpus",
    "graded_workloads",
    "grading_statement",
    "hidden_state_bytes",
    "key_pairs",
    "held_out_systems",
    "leave_one_gpu_out",
    "leave_one_source_out",
    "load_reference",
    "scaling_validation",
    "system_throughputs",
    "system_validation",
    "scan_error",
    "summarize_by_family",
    "summarize_validation",
    "throughput_ratios",
    "validation_table",
    "PREDICTION_COLUMNS",
    "predict_table",
    "speedup",
    "DEFAULT_PARAMS",
    "ELEMENTWISE_FLOPS",
    "MODES",
    "UPDATE_BYTES_PER_PARAM",
    "UPDATES",
    "WORKLOADS",
    "OpCost",
    "Profile",
    "profile",
    "DEFAULT_EFFICIENCY",
    "Efficiency",
    "Placed",
    "Prediction",
    "op_times",
    "place",
    "predict",
    "step_time",
    "LINK_EFFICIENCY",
    "PCIE_X16_GBS",
    "interconnect",
    "predict_scaling",
    "scaling_summary",
    "scaling_table",
]
