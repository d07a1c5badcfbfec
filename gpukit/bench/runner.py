"""One child-process runner, and one out-of-memory classifier.

TensorFlow keeps GPU memory for the life of a process, configures logical devices and
multi-worker clusters only before its runtime starts, and can abort a process on a failed
allocation. So the benchmark (one configuration per process on a GPU), memory measurement and
its bisection, and distributed training each run in a fresh Python:

* :func:`run` starts ``python -m gpukit.bench.runner MODULE:FUNCTION``, hands it a JSON payload on
  stdin, and reads one marked JSON line back from its stdout (TensorFlow may print anything
  else around it). It returns a :class:`ChildResult`: ``ok`` with the function's value, or
  ``oom`` / ``error`` with a one-line message, never raising for the child's failure; a
  timeout is an ``error`` that says so.
* In the child, the function's exception is classified by :func:`classify`; a child that dies
  without a result (a CUDA abort, a signal) is classified from the tail of its stderr.

:func:`is_oom` knows every form TensorFlow reports an out-of-memory in, on a CPU and on a GPU:
``ResourceExhaustedError`` ("OOM when allocating tensor ..."), the BFC allocator's
``ALLOC_FAILED`` / "Allocator ran out of memory", cuBLAS/cuDNN's ``CUBLAS_STATUS_ALLOC_FAILED``
and ``CUDNN_STATUS_ALLOC_FAILED``, the driver's ``CUDA_ERROR_OUT_OF_MEMORY``, XLA's "Out of
memory while trying to allocate", and "Dst tensor is not initialized" (a failed GPU copy).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_MARK = "GPUKIT-CHILD-RESULT "

#: Exception type names that mean out of memory whatever their message.
OOM_TYPES = ("ResourceExhaustedError", "OutOfMemoryError", "MemoryError")
#: Message fragments (case-insensitive) that mean out of memory.
OOM_TEXT = (
    "resourceexhausted",
    "oom when allocating",
    "out of memory",
    "alloc_failed",
    "ran out of memory",
    "cuda_error_out_of_memory",
    "failed to allocate memory",
    "dst tensor is not initialized",
)


def is_oom(error: BaseException | str) -> bool:
    """Whether an exception (or a child's stderr text) is an out-of-memory (see the module doc)."""
    if isinstance(error, BaseException):
        if type(error).__name__ in OOM_TYPES:
            return True
        error = f"{type(error).__name__}: {error}"
    text = str(error).casefold()
    return any(t in text for t in OOM_TEXT)


def first_line(error: BaseException | str, limit: int = 400) -> str:
    """``Type: first line of the message`` of an exception (or the last non-empty line of a text)."""
    if isinstance(error, BaseException):
        lines = [ln.strip() for ln in str(error).strip().splitlines() if ln.strip()]
        return f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")[:limit]
    lines = [ln.strip() for ln in str(error).strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "no output")[:limit]


def classify(error: BaseException | str) -> tuple[str, str]:
    """(``oom`` or ``error``, one-line message) of a failure."""
    return ("oom" if is_oom(error) else "error"), first_line(error)


@dataclass(frozen=True)
class ChildResult:
    """What a child process returned: ``status`` ok, oom or error; ``value`` when ok."""

    status: str
    value: Any = None
    error: str | None = None
    returncode: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def run(
    target: str,
    payload: Any,
    timeout_s: float = 1800,
    env: Mapping[str, str] | None = None,
    unset: Sequence[str] = (),
) -> ChildResult:
    """Call ``target`` (``"package.module:function"``, taking the payload and returning a
    JSON-able value) in a fresh Python. ``env`` is added to this process's environment (with
    TensorFlow's logging quietened) and ``unset`` names variables the child must not see."""
    from ..quiet import QUIET_ENV

    child_env = {**os.environ, **QUIET_ENV, **(env or {})}
    for name in unset:
        child_env.pop(name, None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "gpukit.bench.runner", target],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=child_env,
        )
    except subprocess.TimeoutExpired:
        return ChildResult("error", error=f"timed out after {timeout_s:g} s")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_MARK):
            reply = json.loads(line[len(_MARK) :])
            return ChildResult(reply["status"], reply.get("value"), reply.get("error"), proc.returncode)
    status, message = classify(proc.stderr)
    return ChildResult(
        status,
        error=f"the child process exited with status {proc.returncode}: {message}",
        returncode=proc.returncode,
    )


def _main(argv: Sequence[str]) -> int:
    """The child side: ``python -m gpukit.bench.runner MODULE:FUNCTION`` with the payload on stdin."""
    from ..errors import GpukitError

    module, _, name = argv[0].partition(":")
    payload = json.loads(sys.stdin.read() or "null")
    try:
        value = getattr(importlib.import_module(module), name)(payload)
        reply = {"status": "ok", "value": value}
    except GpukitError as exc:
        reply = {"status": "error", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 -- the parent gets every failure as a result
        status, message = classify(exc)
        reply = {"status": status, "error": message}
    sys.stdout.write(_MARK + json.dumps(reply, allow_nan=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
