"""Files are replaced whole or not at all."""

from __future__ import annotations

import os

import pytest

from gpukit import _atomic


def test_write_text_replaces_and_leaves_no_temporary_files(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old")
    _atomic.write_text(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert os.listdir(tmp_path) == ["report.html"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_atomic._umask())


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "results.json"
    target.write_text("good")

    def boom(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        _atomic.write_text(target, "half")
    assert target.read_text() == "good"
    assert os.listdir(tmp_path) == ["results.json"]
