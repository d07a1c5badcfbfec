"""The Jupyter kernel the report's notebooks run in: registering this Python as ``gpukit``, with
TensorFlow's C++ logging turned down, and doing so on first use."""

from __future__ import annotations

import sys

from ipykernel.kernelspec import install as install_kernelspec
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

from ..quiet import QUIET_ENV

KERNEL_NAME = "gpukit"


def install_kernel(name: str = KERNEL_NAME, user: bool = False) -> str:
    """Register this Python as the Jupyter kernel ``name`` (in this environment unless
    ``user``), with TensorFlow's C++ logging turned down. Returns the kernelspec folder."""
    return install_kernelspec(
        kernel_name=name,
        display_name=f"Python ({name})",
        user=user,
        prefix=None if user else sys.prefix,
        env=dict(QUIET_ENV),
    )


def ensure_kernel(name: str = KERNEL_NAME) -> None:
    """Register the ``gpukit`` kernel for this Python if Jupyter does not know it yet (a plain
    ``pip install`` has not run ``gpukit kernel``)."""
    try:
        KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        install_kernel(name)
