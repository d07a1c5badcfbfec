"""The modules that moved into packages, found at their old names for one release.

``import gpukit.cost`` and ``from gpukit import cost`` give ``gpukit.prices.cost``, the same module
object (a patch of one is a patch of the other). The CHANGELOG lists the moves; the next release
drops this finder.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: Old module -> where it lives now. ``gpukit.prices``, ``gpukit.bench`` and ``gpukit.models`` are
#: packages of those names now, re-exporting what the old modules offered.
MOVED = {
    "gpukit._rates": "gpukit.specs.rates",
    "gpukit.matmul_rates": "gpukit.specs.matmul_rates",
    "gpukit.bandwidth_rates": "gpukit.specs.bandwidth_rates",
    "gpukit.price_checks": "gpukit.prices.checks",
    "gpukit.price_refresh": "gpukit.prices.refresh",
    "gpukit.cost": "gpukit.prices.cost",
    "gpukit.workloads": "gpukit.bench.workloads",
    "gpukit.workload_counts": "gpukit.bench.counts",
    "gpukit.runner": "gpukit.bench.runner",
    "gpukit.distributed": "gpukit.bench.distributed",
    "gpukit.fleet": "gpukit.bench.fleet",
    "gpukit.device": "gpukit.bench.device",
    "gpukit.results": "gpukit.bench.results",
    "gpukit.walk_cache": "gpukit.models.walk_cache",
    "gpukit.zoo": "gpukit.models.zoo",
    "gpukit.labels": "gpukit.present.labels",
    "gpukit.tables": "gpukit.present.tables",
    "gpukit.claims": "gpukit.compare.claims",
    "gpukit.explore": "gpukit.lab.explore",
    "gpukit.workshop": "gpukit.lab.workshop",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and hands back the module of its new one."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(MOVED[spec.name])
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system gave the module the old name's spec: give it back its own, so that its
        # own relative imports resolve from where it lives
        module.__spec__ = self._own_spec


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
