"""Shared fixtures: the shipped catalogue, and bad copies of it made cell by cell."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from gpukit import cache, resources, specs
from gpukit.models import walk_cache

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def catalogue():
    return specs.load_catalogue()


@pytest.fixture
def catalogue_copy(tmp_path):
    """A function ``edit(changes)`` writing a copy of data/gpus.csv with ``{(gpu, column): value}``
    changed (``(gpu, None)`` drops the row); returns the copy's path."""

    def edit(changes: dict | None = None, drop_columns=(), rename=None, extra_lines=()) -> Path:
        with specs.CATALOGUE_PATH.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        changes = changes or {}
        out_rows = []
        for row in rows:
            if (row["gpu"], None) in changes:
                continue
            for (gpu, col), value in changes.items():
                if gpu == row["gpu"] and col is not None:
                    row[col] = value
            out_rows.append(row)
        header = [c for c in specs.COLUMNS if c not in drop_columns]
        names = [(rename or {}).get(c, c) for c in header]
        path = tmp_path / "gpus.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(names)
            for row in out_rows:
                w.writerow([row[c] for c in header])
            for line in extra_lines:
                fh.write(line + "\n")
        return path

    return edit


@pytest.fixture
def shipped_copy(tmp_path):
    path = tmp_path / "gpus.csv"
    shutil.copy(specs.CATALOGUE_PATH, path)
    return path


@pytest.fixture(autouse=True, scope="session")
def _a_cache_of_the_tests_own(tmp_path_factory):
    """Derived results (gpukit.cache) go to a folder of this test session's, never the user's
    cache; notebook kernels and children the tests start inherit it."""
    import os

    os.environ[cache.ENV] = str(tmp_path_factory.mktemp("gpukit-cache"))
    # the walks shipped with the kit are not read: a test that walks a model builds it (the ones in
    # test_walk_cache.py that check the shipped walks turn them on)
    os.environ[walk_cache.SEED_ENV] = "off"
    # tables print whole unless a test asks for a width (pytest-xdist's workers set COLUMNS=80)
    os.environ.pop("COLUMNS", None)
    # and never read the user's refreshed cloud prices (gpukit prices refresh)
    os.environ[resources.PRICES_DIR_ENV] = str(tmp_path_factory.mktemp("gpukit-prices"))


@pytest.fixture(autouse=True)
def _tiers_keep_tensorflow_out_of_the_fast_tier(request):
    """The fast tier (`make test-fast`: neither `notebooks` nor `tensorflow`) must not import
    TensorFlow: an unmarked test that does fails here, naming the marker it needs."""
    import sys

    marked = request.node.get_closest_marker("tensorflow") or request.node.get_closest_marker("notebooks")
    before = "tensorflow" in sys.modules
    yield
    if not marked and not before and "tensorflow" in sys.modules:
        pytest.fail("this test imported TensorFlow; mark it @pytest.mark.tensorflow (the fast tier has none)")


class CatalogueGPU:
    """One catalogue row, read as ``g.memory_bandwidth_gbs`` or ``g["fp16_tensor_tflops"]``.

    Values are plain Python numbers (``NaN`` for a mode the GPU lacks); ``g.row`` is the Series
    itself, for the functions that take a catalogue row. An unknown column is an error, not ``None``.
    """

    def __init__(self, row):
        self.row = row

    def __getitem__(self, column: str):
        if column not in specs.COLUMNS:
            raise KeyError(f"{column!r} is not a catalogue column; columns: {', '.join(specs.COLUMNS)}")
        value = self.row[column]
        return value.item() if hasattr(value, "item") else value

    def __getattr__(self, column: str):
        if column.startswith("_") or column == "row":
            raise AttributeError(column)
        try:
            return self[column]
        except KeyError as exc:
            raise AttributeError(exc.args[0]) from None

    def __repr__(self) -> str:
        return f"CatalogueGPU({self.row['gpu']!r})"


@pytest.fixture(scope="session")
def gpu(catalogue):
    """``gpu(name)``: the catalogue row of a GPU (natural names, as :func:`specs.lookup` takes them).

    The tests read every catalogue figure through this fixture, so correcting a datasheet figure in
    data/gpus.csv changes their expectations with it. The one place figures are pinned to the
    datasheets is ``DATASHEET`` in test_specs.py.
    """
    rows: dict[str, CatalogueGPU] = {}

    def get(name: str) -> CatalogueGPU:
        if name not in rows:
            rows[name] = CatalogueGPU(specs.lookup(name, catalogue))
        return rows[name]

    return get
