"""A stand-in for ``gpukit.memory.measure:measure_child`` run by the real ``gpukit.bench.runner`` in a real child.

The tests put this folder on the child's ``PYTHONPATH`` and redirect ``runner.run``'s target here.
The "GPU" fits batches up to ``$FAKE_GPU_LARGEST_BATCH``; above it the child fails the way
``$FAKE_GPU_OOM`` says:

* ``raise`` — raises ``MemoryError`` (the child's ``classify`` reports ``oom``);
* ``abort`` — writes TensorFlow's CUDA-driver out-of-memory line to stderr and exits without a
  result, as a process killed by a failed allocation does (the parent classifies its stderr);
* ``crash`` — writes a non-memory CUDA failure and exits without a result (must stay ``error``).

Imports no TensorFlow: the point is the process plumbing, in well under a second per child.
"""

from __future__ import annotations

import os
import sys

# Recorded in tensorflow/tensorflow#30912 (https://github.com/tensorflow/tensorflow/issues/30912).
CUDA_OOM = (
    "2019-07-21 23:23:06.228049: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to "
    "allocate 32.00M (33554432 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"
)
# Recorded in tensorflow/tensorflow#25866 (https://github.com/tensorflow/tensorflow/issues/25866).
CUDA_ILLEGAL_ADDRESS = (
    "2019-02-21 16:43:26.973428: E tensorflow/stream_executor/cuda/cuda_driver.cc:1011] "
    "could not synchronize on CUDA context: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory "
    "access was encountered ::\n2019-02-21 16:43:26.984939: F "
    "tensorflow/core/common_runtime/gpu/gpu_event_mgr.cc:274] Unexpected Event status: 1"
)


def measure(args: dict) -> dict:
    """What ``measure_child`` returns for a batch that fits; a GPU-like failure above the limit."""
    batch = int(args["batch"])
    largest = int(os.environ.get("FAKE_GPU_LARGEST_BATCH", "0"))
    if batch <= largest:
        return {"peak_bytes": 1_000_000 * batch, "batch": batch}
    how = os.environ.get("FAKE_GPU_OOM", "raise")
    if how == "raise":
        raise MemoryError(f"fake GPU: batch {batch} does not fit")
    sys.stderr.write((CUDA_OOM if how == "abort" else CUDA_ILLEGAL_ADDRESS) + "\n")
    sys.stderr.flush()
    os._exit(134)  # like SIGABRT after a CHECK failure: no result line on stdout
