"""What executes one notebook of a run: the :class:`Engine` seam, papermill behind it by default,
and the per-cell time limit it is given."""

from __future__ import annotations

import abc
import contextlib
import math
import os
import signal
import threading
from pathlib import Path

import papermill
from jupyter_client.manager import AsyncKernelManager

from ..errors import ParameterError
from ..quiet import stderr_redirected
from .kernel import KERNEL_NAME, ensure_kernel

#: Longest a single cell may run, in seconds, before the run fails (``None`` or 0: no limit).
DEFAULT_CELL_TIMEOUT_S = 600


class Engine(abc.ABC):
    """What executes one notebook of a run: the seam papermill's own ``engines.py`` has.

    :func:`render_report` calls :meth:`execute` once per rendering; :class:`PapermillEngine`
    is the default, and tests pass an engine that starts no kernel. An engine that may execute
    several notebooks at once, each from its own thread, says so with :attr:`concurrent`, and
    stops them with :meth:`interrupt` when the run is interrupted.
    """

    #: Whether :meth:`execute` may run in several threads at once (one notebook each).
    concurrent: bool = False

    def interrupt(self, force: bool = False) -> None:  # noqa: B027 -- optional; most engines need none
        """Stop every notebook this engine is executing: their :meth:`execute` calls return soon,
        raising. ``force``: the first request went unheeded; stop them now, whatever is lost.
        Only called on a :attr:`concurrent` engine; the default stops nothing."""

    @abc.abstractmethod
    def execute(
        self,
        notebook: Path,
        output: Path,
        parameters: dict,
        kernel_name: str,
        cwd: Path,
        cell_timeout_s: float | None,
    ) -> None:
        """Execute ``notebook`` with ``parameters`` injected, writing the executed notebook to ``output``.

        The kernel ``kernel_name`` runs in folder ``cwd``; a cell running longer than
        ``cell_timeout_s`` seconds (``None``: no limit) raises
        :class:`nbclient.exceptions.CellTimeoutError`. On any failure ``output`` must hold what
        ran so far (papermill-style cell metadata), and the exception is raised.
        """


class PapermillEngine(Engine):
    """Runs notebooks with papermill; the kernel's own log lines go to ``kernel.log`` beside the output.

    Each notebook runs in its own kernel, so several may run at once, one a thread; the engine
    keeps each running kernel's manager so that :meth:`interrupt` can reach it.
    """

    concurrent = True

    def __init__(self) -> None:
        self._kernels: set[AsyncKernelManager] = set()
        self._lock = threading.Lock()

    def _manager_class(self) -> type[AsyncKernelManager]:
        """A kernel manager class whose instances this engine knows while their kernel runs."""
        engine = self

        class Tracked(AsyncKernelManager):
            async def start_kernel(self, **kw):
                await super().start_kernel(**kw)
                with engine._lock:
                    engine._kernels.add(self)

            async def shutdown_kernel(self, *args, **kw):
                with engine._lock:
                    engine._kernels.discard(self)
                await super().shutdown_kernel(*args, **kw)

            async def cleanup_resources(self, *args, **kw):  # also after a kernel that died
                with engine._lock:
                    engine._kernels.discard(self)
                await super().cleanup_resources(*args, **kw)

        return Tracked

    def interrupt(self, force: bool = False) -> None:
        """Interrupt every running kernel as Jupyter's stop button does (SIGINT to its process group:
        the running cell raises KeyboardInterrupt); ``force`` kills them (SIGKILL)."""
        with self._lock:
            kernels = list(self._kernels)
        for km in kernels:
            process = getattr(km.provisioner, "process", None)
            if process is None or process.poll() is not None:
                continue
            try:
                os.killpg(os.getpgid(process.pid), signal.SIGKILL if force else signal.SIGINT)
            except (OSError, AttributeError):  # gone already, or no process groups here
                with contextlib.suppress(OSError):
                    process.kill() if force else process.send_signal(signal.SIGINT)

    def execute(
        self,
        notebook: Path,
        output: Path,
        parameters: dict,
        kernel_name: str,
        cwd: Path,
        cell_timeout_s: float | None,
    ) -> None:
        """Execute one notebook with papermill (see :meth:`Engine.execute`).

        nbclient takes whole seconds, so a fractional ``cell_timeout_s`` is rounded up.
        """
        if kernel_name == KERNEL_NAME:
            ensure_kernel(kernel_name)
        timeout = math.ceil(cell_timeout_s) if cell_timeout_s else None
        with _kernel_log(Path(output).parent / "kernel.log"):
            papermill.execute_notebook(
                str(notebook),
                str(output),
                parameters=parameters,
                kernel_name=kernel_name,
                progress_bar=False,
                log_output=False,
                cwd=str(cwd),
                execution_timeout=timeout,
                kernel_manager_class=self._manager_class(),
            )


_log_lock = threading.Lock()
_log = {"users": 0, "redirect": contextlib.ExitStack()}


@contextlib.contextmanager
def _kernel_log(target: Path):
    """Descriptor 2 pointed at ``target`` while any notebook runs (kernels inherit it as they start).

    Shared by the notebooks running at once: a process has one descriptor 2, and two threads each
    pointing it elsewhere and back would leave it wrong. The first to start points it at
    ``target``, the last to finish restores it."""
    with _log_lock:
        if _log["users"] == 0:
            _log["redirect"].enter_context(stderr_redirected(target))
        _log["users"] += 1
    try:
        yield
    finally:
        with _log_lock:
            _log["users"] -= 1
            if _log["users"] == 0:
                _log["redirect"].close()


def _cell_limit(cell_timeout_s: float | None) -> float | None:
    """A per-cell timeout in seconds, checked: ``None`` for no limit (``None``, 0 or infinity)."""
    if cell_timeout_s is None:
        return None
    try:
        value = float(cell_timeout_s)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(cell_timeout_s, bool) or not value >= 0:
        raise ParameterError(
            f"cell timeout {cell_timeout_s!r} must be a number of seconds, at least 0 (0 means no limit)"
        )
    return None if value == 0 or math.isinf(value) else value
