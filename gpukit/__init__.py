"""gpukit: choose GPUs for deep learning with numbers you can trust.

The public face is small: the catalogue (:func:`load_catalogue`, :func:`lookup`,
:func:`resolve`), the report (:func:`render_report`) and the error family
(:class:`GpukitError`). Everything else lives in its own module.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import _moved
from .errors import DataError, GpukitError, ParameterError, ReportError, UnknownGPUError
from .specs import load_catalogue, lookup, resolve

_moved.install()  # the modules that moved into packages, at their old names for one release

try:
    __version__ = version("gpukit")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"


def render_report(*args, **kwargs):
    """Render the report; see :func:`gpukit.report.render_report` (imported lazily)."""
    from .report import render_report as _render

    return _render(*args, **kwargs)


__all__ = [
    "DataError",
    "GpukitError",
    "ParameterError",
    "ReportError",
    "UnknownGPUError",
    "load_catalogue",
    "lookup",
    "render_report",
    "resolve",
    "__version__",
]
