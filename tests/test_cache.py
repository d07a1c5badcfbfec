"""gpukit.cache: a derived result is read back only for the same code and the same input files."""

from __future__ import annotations

import pytest

from gpukit import cache


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def counter():
    calls = []

    def compute():
        calls.append(1)
        return {"n": len(calls)}

    return compute, calls


def test_computed_once_then_read_back(folder, tmp_path):
    data = tmp_path / "a.csv"
    data.write_text("x\n1\n")
    compute, calls = counter()
    assert cache.cached("thing", [data], compute) == {"n": 1}
    assert cache.cached("thing", [data], compute) == {"n": 1}
    assert len(calls) == 1 and len(list(folder.glob("thing-*.pickle"))) == 1


def test_a_changed_input_file_is_a_new_key_and_the_old_entry_goes(folder, tmp_path):
    data = tmp_path / "a.csv"
    data.write_text("x\n1\n")
    compute, calls = counter()
    cache.cached("thing", [data], compute)
    data.write_text("x\n2\n")
    assert cache.cached("thing", [data], compute) == {"n": 2}
    assert len(calls) == 2 and len(list(folder.glob("thing-*.pickle"))) == 1


def test_a_change_to_the_code_is_a_new_key(folder, monkeypatch):
    compute, calls = counter()
    cache.cached("thing", [], compute)
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "other code")
    assert cache.cached("thing", [], compute) == {"n": 2}


def test_a_torn_entry_is_computed_again(folder):
    compute, calls = counter()
    cache.cached("thing", [], compute)
    (entry,) = folder.glob("thing-*.pickle")
    entry.write_bytes(b"\x80\x05 not a pickle")
    assert cache.cached("thing", [], compute) == {"n": 2}
    assert cache.cached("thing", [], compute) == {"n": 2}  # and written whole again


@pytest.mark.parametrize("off", ["off", "", "0"])
def test_off_computes_every_time_and_writes_nothing(monkeypatch, tmp_path, off):
    monkeypatch.setenv(cache.ENV, off)
    monkeypatch.chdir(tmp_path)
    compute, calls = counter()
    cache.cached("thing", [], compute)
    cache.cached("thing", [], compute)
    assert len(calls) == 2 and cache.cache_dir() is None


def test_an_unwritable_folder_still_answers(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder would go")
    monkeypatch.setenv(cache.ENV, str(blocked / "cache"))
    compute, calls = counter()
    assert cache.cached("thing", [], compute) == {"n": 1}


def test_the_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "gpukit"
