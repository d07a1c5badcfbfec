"""TensorFlow without its noise: the environment that keeps its and CUDA's start-up logs out of
a console or a report, a file descriptor redirected for the C++ loggers that write to it, and
TensorFlow imported quietly. Every layer that loads TensorFlow (the benchmark, the memory and
LLM measurements, the model builders, the report's kernels) goes through here.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

# TensorFlow and CUDA write their start-up logs from C++; these keep them out of reports.
QUIET_ENV = {
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_CPP_MIN_VLOG_LEVEL": "0",
    "GRPC_VERBOSITY": "ERROR",
    "ABSL_MIN_LOG_LEVEL": "3",
    "KMP_WARNINGS": "0",
}


@contextlib.contextmanager
def stderr_redirected(target: str | os.PathLike = os.devnull):
    """Point file descriptor 2 at ``target`` (appending) for the duration.

    C++ logging and child processes (a Jupyter kernel) write to the descriptor, not to
    Python's ``sys.stderr``, so only this keeps their noise out of a console or a report.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def quiet_tensorflow():
    """Import TensorFlow without its start-up log noise and return the module."""
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    with stderr_redirected(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import keras  # noqa: F401,PLC0415 -- its import logs too
        import tensorflow as tf  # noqa: PLC0415 (imported lazily on purpose)

        tf.get_logger().setLevel("ERROR")
        tf.config.list_physical_devices()  # CUDA initialises (and logs) here
        (tf.constant(1.0) + 1.0).numpy()  # so does the eager context's first kernel (CPU feature guard)
    return tf
