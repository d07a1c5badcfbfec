"""Models by name, and their layer walks.

``registry`` resolves a name to a model (Keras applications, saved ``.keras`` files, the built-in
transformer shapes, ``zoo``'s models of plain Keras layers) and builds it, its optimizer and its
training step; ``walk_cache`` keeps each model's layer walk on disk so that a process that needs
one need not load TensorFlow.

The package re-exports ``registry``'s names (``gpukit.models.resolve_model``), as the module
``gpukit.models`` had them before it became this package.
"""

from __future__ import annotations

from .registry import (
    MODES,
    OPTIMIZER_SLOTS,
    TASKS,
    TRANSFORMERS,
    ModelSpec,
    TransformerSpec,
    UnknownModelError,
    build_model,
    build_optimizer,
    check_mode,
    check_optimizer,
    default_input_shape,
    keras_application_names,
    keras_policy,
    load_in_global_policy,
    make_optimizer,
    resolve_model,
    synthetic_batch,
    train_step,
    transformer_model,
    transformer_task,
)

__all__ = [
    "MODES",
    "OPTIMIZER_SLOTS",
    "TASKS",
    "TRANSFORMERS",
    "ModelSpec",
    "TransformerSpec",
    "UnknownModelError",
    "build_model",
    "build_optimizer",
    "check_mode",
    "check_optimizer",
    "default_input_shape",
    "keras_application_names",
    "keras_policy",
    "load_in_global_policy",
    "make_optimizer",
    "resolve_model",
    "synthetic_batch",
    "train_step",
    "transformer_model",
    "transformer_task",
]
