"""Layer walks kept on disk, so that a process that needs a Keras model's walk need not load TensorFlow.

Walking a ``keras.applications`` or Keras-layer model means importing TensorFlow (seconds) and
building the model; the walk itself (a :class:`gpukit.graph.Graph`) is plain data. The first
process to need a walk builds it and stores it as JSON in the user's cache folder
(:func:`gpukit.cache.cache_dir`, under ``walks/``); later ones read it.

A stored walk is kept for what is built (the model's name and sizes, the Keras policy it is built
under, how it is walked) and holds the rest of what it depends on: the versions of Keras and
TensorFlow and a digest of gpukit's own code that builds and walks models (:data:`WALK_CODE`).
Where any of these differ from this process's, the walk is built again and stored over it, so a
walk the code at hand would not produce is never read. Only the walk's own code counts, not the
whole package's (as :mod:`gpukit.cache` keys its results): an edit elsewhere does not cost every
model a TensorFlow import again. A cache that cannot be read or written is passed over: the model
is built, as without one; ``GPUKIT_CACHE_DIR=off`` turns it off.

The kit ships the walks its README's questions need (:data:`SEED_DIR`, written by ``make walks``):
where the user's cache lacks a walk, a shipped one with the same stamp is read, so the first answer
after installing loads no TensorFlow either. A shipped walk made by other code or versions is
passed over like a stored one (``tests/test_walk_cache.py`` fails until ``make walks`` remakes it).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from .. import _atomic, cache
from ..graph import Graph, Op
from ..resources import PACKAGE_DIR

#: gpukit's code that decides what a walk holds: the walk itself and what builds the models.
WALK_CODE = ("graph", "models")
#: Bumped when the stored form changes in a way the code digest would not show.
FORMAT = 1
#: The walks shipped with the package (``make walks``).
SEED_DIR = Path(__file__).resolve().parent / "walks"
#: Set to ``off``, the shipped walks are not read (``make walks`` builds them afresh; the tests).
SEED_ENV = "GPUKIT_WALK_SEEDS"


def seed_dir() -> Path | None:
    """Where the shipped walks are read from; ``None`` where ``$GPUKIT_WALK_SEEDS`` is ``off``."""
    return None if os.environ.get(SEED_ENV, "").strip().lower() == "off" else SEED_DIR


def cache_dir() -> Path | None:
    """The folder of stored walks, or ``None`` where the cache is turned off."""
    folder = cache.cache_dir()
    return None if folder is None else folder / "walks"


@functools.lru_cache(maxsize=1)
def code_digest() -> str | None:
    """A digest of :data:`WALK_CODE`'s source; ``None`` where a source cannot be read (then nothing
    is kept: a walk could not be told apart from one older code made)."""
    h = hashlib.sha256()
    try:
        for name in WALK_CODE:
            path = PACKAGE_DIR / name
            for file in sorted(path.glob("*.py")) if path.is_dir() else [path]:
                h.update(file.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
                h.update(file.read_bytes())
    except OSError:
        return None
    return h.hexdigest()


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _stamp() -> dict | None:
    """What a stored walk must have been made with to be read here; ``None``: keep nothing."""
    digest = code_digest()
    if digest is None:
        return None
    return {
        "keras": _version("keras"),
        "tensorflow": _version("tensorflow"),
        "code": digest,
        "format": FORMAT,
    }


def load_or_build(kind: str, key: Mapping, build: Callable[[], dict]) -> dict:
    """The stored value of ``kind`` at ``key`` (a JSON-able mapping), or the shipped one
    (:data:`SEED_DIR`), or ``build()``'s (a JSON-able dict), stored for the next process over any
    older one. Reading and writing failures only cost the build."""
    folder = cache_dir()
    stamp = _stamp() if folder is not None else None
    if stamp is None:
        return build()
    what = {"kind": kind, "key": json.loads(json.dumps(dict(key), default=list))}  # tuples as read back
    name = f"{kind}-{hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:24]}.json"
    for place in (folder, seed_dir()):
        value = _read(place / name, what, stamp) if place is not None else None
        if value is not None:
            return value
    value = build()
    try:
        _atomic.write_text(folder / name, json.dumps({"what": what, "stamp": stamp, "value": value}))
    except OSError:
        pass  # a read-only home: the next process builds it too
    return value


def _stored(path: Path) -> dict | None:
    """The record stored at ``path`` (what it is, its stamp, its value); ``None`` where it is
    missing, torn or not one of these records."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        return stored if {"what", "stamp", "value"} <= set(stored) else None
    except (OSError, ValueError, TypeError):
        return None


def _read(path: Path, what: dict, stamp: dict) -> dict | None:
    """The value stored at ``path`` for ``what`` under ``stamp``; ``None`` where there is none, or
    it is another's, or made by other code or versions."""
    stored = _stored(path)
    return stored["value"] if stored and stored["what"] == what and stored["stamp"] == stamp else None


def stale_seeds() -> list[str]:
    """The shipped walks this code and these versions would not read (``make walks`` remakes them)."""
    stamp = _stamp()
    return [p.name for p in sorted(SEED_DIR.glob("*.json")) if (_stored(p) or {}).get("stamp") != stamp]


def graph_to_dict(graph: Graph) -> dict:
    """A walk as JSON-able data (tensor ids as strings where they key a mapping)."""
    data = asdict(graph)
    data["sizes"] = {str(k): v for k, v in graph.sizes.items()}
    data["float32_outputs"] = sorted(graph.float32_outputs)
    return data


def graph_from_dict(data: Mapping) -> Graph:
    """The walk :func:`graph_to_dict` stored."""
    return Graph(
        **{
            **data,
            "ops": [Op(**op) for op in data["ops"]],
            "sizes": {int(k): v for k, v in data["sizes"].items()},
            "float32_outputs": set(data["float32_outputs"]),
        }
    )


def graph(kind: str, key: Mapping, build: Callable[[], Graph]) -> Graph:
    """The walk of ``kind`` at ``key``: stored, or ``build()``'s (:func:`load_or_build`)."""
    return graph_from_dict(load_or_build(kind, key, lambda: graph_to_dict(build())))
