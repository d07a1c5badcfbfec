"""What executes one notebook of a run: the :class:`Engine` seam, papermill behind it by default,
and the per-cell time limit it is given."""

from __future__ import annotations

import abc
import math
from pathlib import Path

import papermill

from ..device import stderr_redirected
from ..errors import ParameterError
from .kernel import KERNEL_NAME, ensure_kernel

#: Longest a single cell may run, in seconds, before the run fails (``None`` or 0: no limit).
DEFAULT_CELL_TIMEOUT_S = 600


class Engine(abc.ABC):
    """What executes one notebook of a run: the seam papermill's own ``engines.py`` has.

    :func:`render_report` calls :meth:`execute` once per rendering; :class:`PapermillEngine`
    is the default, and tests pass an engine that starts no kernel.
    """

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
    """Runs notebooks with papermill; the kernel's own log lines go to ``kernel.log`` beside the output."""

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
        with stderr_redirected(Path(output).parent / "kernel.log"):
            papermill.execute_notebook(
                str(notebook),
                str(output),
                parameters=parameters,
                kernel_name=kernel_name,
                progress_bar=False,
                log_output=False,
                cwd=str(cwd),
                execution_timeout=timeout,
            )


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
