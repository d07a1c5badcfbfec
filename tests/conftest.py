"""Shared fixtures: the shipped catalogue, and bad copies of it made cell by cell."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from gpukit import specs

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
