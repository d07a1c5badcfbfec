"""Derived results kept between runs: what the kit computes from its own code and data files alone
(the grading of every published run, say) is computed once and read back, so that a command
answers in a second or two instead of grading again each time.

A result is keyed by a name and a fingerprint of everything it is derived from: the source of the
installed ``gpukit`` package and the contents of the data files it read. Change either and the
key changes, so a stale result is never read. Entries live in ``$GPUKIT_CACHE_DIR``, or
``$XDG_CACHE_HOME/gpukit``, or ``~/.cache/gpukit``; ``GPUKIT_CACHE_DIR=off`` turns the cache off.
An entry that cannot be read is computed again; one that cannot be written is not kept. Nothing
here is ever needed for a right answer, only for a fast one.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from . import _atomic
from .resources import DATA_DIR, refreshed_path

T = TypeVar("T")

ENV = "GPUKIT_CACHE_DIR"
PACKAGE_DIR = Path(__file__).resolve().parent


def cache_dir() -> Path | None:
    """Where entries live, or None when the cache is off."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "none") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gpukit"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of every Python file of the package: any change to the code makes a new key."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def data_files() -> list[Path]:
    """The shipped data files (``data/*.csv``) and the refreshed cloud prices (``gpukit prices
    refresh``): what a result derived from the kit's data reads."""
    return sorted(DATA_DIR.glob("*.csv")) + [refreshed_path()]


def _key(name: str, inputs: Iterable[str | os.PathLike], also: str = "") -> str:
    digest = hashlib.sha256(code_fingerprint().encode())
    digest.update(name.encode())
    digest.update(also.encode())
    for path in inputs:
        p = Path(path)
        digest.update(str(p).encode())
        digest.update(p.read_bytes() if p.is_file() else b"(missing)")
    return digest.hexdigest()[:32]


def cached(name: str, inputs: Iterable[str | os.PathLike], compute: Callable[[], T], also: str = "") -> T:
    """``compute()``, or what it returned before for the same ``name``, code and ``inputs`` files
    (and ``also``: what else the result depends on, such as the day it is counted from)."""
    folder = cache_dir()
    if folder is None:
        return compute()
    path = folder / f"{name}-{_key(name, inputs, also)}.pickle"
    try:
        return pickle.loads(path.read_bytes())
    except FileNotFoundError:
        pass
    except Exception:  # a torn or foreign entry: compute again, write over it
        pass
    value = compute()
    try:
        _atomic.write_bytes(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        for older in folder.glob(f"{name}-*.pickle"):  # what earlier code or data left
            if older != path:
                older.unlink(missing_ok=True)
    except OSError:  # a read-only home: answer all the same
        pass
    return value
