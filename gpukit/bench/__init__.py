"""The device benchmark: what the attached device delivers.

``harness`` plans and runs the configurations (each in a child process: ``runner``) and times
them; ``workloads`` builds what they run and ``counts`` the work each does; ``device`` says what
the device is and matches it to the catalogue; ``distributed`` runs the data-parallel
configurations; ``results`` writes and reads the results document; ``fleet`` joins several
machines' results.

The package re-exports ``harness``'s names (``gpukit.bench.run_benchmarks``), as the module
``gpukit.bench`` had them before it became this package.
"""

from __future__ import annotations

from .harness import (
    BRIEF,
    MEASURING,
    NOISY_SPREAD,
    Settings,
    Timing,
    attached_device,
    config_child,
    measure,
    measuring_note,
    plan,
    run_benchmarks,
    run_config,
    run_config_subprocess,
    summarize,
    sync,
)

__all__ = [
    "BRIEF",
    "MEASURING",
    "NOISY_SPREAD",
    "Settings",
    "Timing",
    "attached_device",
    "config_child",
    "measure",
    "measuring_note",
    "plan",
    "run_benchmarks",
    "run_config",
    "run_config_subprocess",
    "summarize",
    "sync",
]
